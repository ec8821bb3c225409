/* test_mixed_precision.c: bf16, f16 and TF32 on one device: tensor_convert
 * against the single-value functions of labkit/precision.h, bit for bit, and
 * the low-precision matrix products against float64 references, within the
 * error bounds their formats predict.
 *
 *   test_mixed_precision cpu | sim:0 | cuda:0      (exits 77 when it is absent)
 *
 * The refusals and the cpu/sim comparison need a second device: the CPU when
 * testing a GPU, else GPU 0 (CTest sets LABKIT_SIM_GPUS=1 for the cpu run). */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/counters.h"
#include "labkit/device.h"
#include "labkit/ops.h"
#include "labkit/precision.h"
#include "labkit/tensor.h"

static device dev;   /* the device under test (argv[1]) */
static device other; /* a second device; == dev when there is none */

/* ============================================================================
 * helpers
 * ========================================================================== */

/* The values a conversion must get right, then random ones of every
 * magnitude: n >= 64. */
static void conversion_inputs(float *x, int64_t n, uint64_t seed)
{
    const float special[] = {
        0.0f,
        -0.0f,
        1.0f,
        -1.0f,
        INFINITY,
        -INFINITY,
        NAN,
        -NAN,
        float_from(0x7f800001u),
        FLT_MAX,
        -FLT_MAX,
        FLT_MIN,
        0x1p-149f, /* float32's extremes */
        65504.0f,
        65520.0f,
        nextafterf(65520.0f, 0),
        -65520.0f,
        1e6f, /* f16's largest finite, overflow */
        0x1p-14f,
        0x1p-24f,
        0x1p-25f,
        nextafterf(0x1p-25f, 1),
        3 * 0x1p-25f,
        1023 * 0x1p-24f, /* f16 subnormals */
        1.0f + 0x1p-11f,
        1.0f + 3 * 0x1p-11f,
        1.0f + 0x1p-8f,
        1.0f + 3 * 0x1p-8f, /* ties to even */
        float_from(0x7f7f8000u),
        float_from(0x7f7f7fffu),
        0x1p-133f,
        0x1p-134f, /* bf16's edges */
        3.14159265f,
        -2.71828183f,
        0.1f,
        1.0f / 3.0f,
    };
    const int64_t k = (int64_t)(sizeof special / sizeof special[0]);
    test_rng rng = test_rng_seeded(seed);
    for (int64_t i = 0; i < n; i++) x[i] = i < k ? special[i] : float_from((uint32_t)test_rng_next(&rng));
}

/* A tensor of `type` and shape s on d, NULL on failure (recorded). */
static tensor *empty_on(device d, dtype type, shape s)
{
    tensor *t = NULL;
    status st = tensor_empty(&t, d, type, s);
    if (st != STATUS_OK)
        harness_fail(__FILE__, __LINE__, "tensor_empty %s on %s: %s: %s", dtype_name(type), device_name(d),
                     status_name(st), last_error());
    return t;
}

static uint64_t launches_on(device d)
{
    device_counters c;
    return counters_read(d, &c) == STATUS_OK ? c.launches : UINT64_MAX;
}

static uint64_t copies_on(device d)
{
    device_counters c;
    if (counters_read(d, &c) != STATUS_OK) return UINT64_MAX;
    return c.h2d_copies + c.d2h_copies + c.d2d_copies;
}

/* ============================================================================
 * tensor_convert
 * ========================================================================== */

/* f32 -> `type` on dev equals the host function on every element; and back. */
static void check_convert_round_trip(dtype type, uint16_t (*narrow)(float), float (*widen)(uint16_t))
{
    /* x is f32 [37, 53]; h its conversion, y h widened again */
    const int64_t n = 37 * 53;
    float *hx = NULL, *hy = NULL;
    uint16_t *got = NULL, *want = NULL;
    uint32_t *widened = NULL;
    tensor *x = NULL, *h = NULL, *y = NULL;
    char what[64];
    REQUIRE((hx = test_malloc((size_t)n * sizeof(float))));
    REQUIRE((hy = test_malloc((size_t)n * sizeof(float))));
    REQUIRE((got = test_malloc((size_t)n * sizeof(uint16_t))));
    REQUIRE((want = test_malloc((size_t)n * sizeof(uint16_t))));
    REQUIRE((widened = test_malloc((size_t)n * sizeof(uint32_t))));
    conversion_inputs(hx, n, 601 + (uint64_t)type);
    REQUIRE_OK(tensor_from_host(&x, dev, shape2(37, 53), hx));
    REQUIRE((h = empty_on(dev, type, shape2(37, 53))));
    REQUIRE((y = empty_on(dev, DTYPE_F32, shape2(37, 53))));
    REQUIRE_OK(tensor_convert(x, h));
    REQUIRE_OK(tensor_convert(h, y));
    REQUIRE_OK(tensor_to_host_raw(h, got, (size_t)n * sizeof(uint16_t)));
    REQUIRE_OK(tensor_to_host(y, hy, n));
    long wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        want[i] = narrow(hx[i]);
        widened[i] = bits_of(widen(want[i]));
        if (got[i] != want[i] && wrong++ < HARNESS_MISMATCHES_SHOWN)
            fprintf(stderr, "    %s(%.9g = 0x%08x) on %s: 0x%04x, the host function says 0x%04x\n",
                    dtype_name(type), (double)hx[i], (unsigned)bits_of(hx[i]), device_name(dev),
                    (unsigned)got[i], (unsigned)want[i]);
    }
    EXPECT_MSG(wrong == 0, "f32 -> %s on %s: %ld of %lld elements differ from the host's rounding",
               dtype_name(type), device_name(dev), wrong, (long long)n);
    snprintf(what, sizeof what, "%s -> f32 on %s", dtype_name(type), device_name(dev));
    EXPECT_BITWISE_EQUAL(what, hy, widened, n);
cleanup:
    tensor_free(x);
    tensor_free(h);
    tensor_free(y);
    free(hx);
    free(hy);
    free(got);
    free(want);
    free(widened);
}

static void test_convert_rounds_exactly_as_the_host_functions(void)
{
    check_convert_round_trip(DTYPE_BF16, float_to_bf16, bf16_to_float);
    check_convert_round_trip(DTYPE_F16, float_to_f16, f16_to_float);
}

/* One launch each way, no copy; on a GPU it is queued like any operation. */
static void test_convert_is_one_launch_and_no_copy(void)
{
    tensor *x = NULL, *h = NULL, *y = NULL;
    REQUIRE_OK(tensor_full(&x, dev, shape1(1000), 1.5f));
    REQUIRE((h = empty_on(dev, DTYPE_BF16, shape1(1000))));
    REQUIRE((y = empty_on(dev, DTYPE_F32, shape1(1000))));
    REQUIRE_OK(device_synchronize(dev));
    REQUIRE_OK(counters_reset(dev));
    REQUIRE_OK(tensor_convert(x, h));
    REQUIRE_OK(tensor_convert(h, y));
    EXPECT_EQ_I64(launches_on(dev), 2);
    EXPECT_EQ_I64(copies_on(dev), 0);
cleanup:
    tensor_free(x);
    tensor_free(h);
    tensor_free(y);
}

static void test_convert_refuses_other_pairs_shapes_and_devices(void)
{
    tensor *f = NULL, *f2 = NULL, *b = NULL, *h = NULL, *i = NULL, *wrong_shape = NULL, *elsewhere = NULL;
    REQUIRE_OK(tensor_zeros(&f, dev, shape2(4, 6)));
    REQUIRE_OK(tensor_zeros(&f2, dev, shape2(4, 6)));
    REQUIRE((b = empty_on(dev, DTYPE_BF16, shape2(4, 6))));
    REQUIRE((h = empty_on(dev, DTYPE_F16, shape2(4, 6))));
    REQUIRE((i = empty_on(dev, DTYPE_I32, shape2(4, 6))));
    REQUIRE((wrong_shape = empty_on(dev, DTYPE_BF16, shape2(6, 4))));
    EXPECT_REFUSED(tensor_convert(f, f2), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "tensor_copy");
    EXPECT_REFUSED(tensor_convert(b, h), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "through f32");
    EXPECT_REFUSED(tensor_convert(h, b), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_convert(i, b), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_convert(f, i), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_convert(f, wrong_shape), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[6, 4]");
    EXPECT_REFUSED(tensor_convert(NULL, b), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_convert(f, NULL), STATUS_BAD_ARGUMENT);
    if (!device_equal(dev, other)) {
        REQUIRE((elsewhere = empty_on(other, DTYPE_BF16, shape2(4, 6))));
        EXPECT_REFUSED(tensor_convert(f, elsewhere), STATUS_WRONG_DEVICE);
        EXPECT_CONTAINS(last_error(), device_name(dev));
        EXPECT_CONTAINS(last_error(), device_name(other));
    }
cleanup:
    tensor_free(f);
    tensor_free(f2);
    tensor_free(b);
    tensor_free(h);
    tensor_free(i);
    tensor_free(wrong_shape);
    tensor_free(elsewhere);
}

/* ============================================================================
 * matrix products in low precision
 * ========================================================================== */

/* The three ways of multiplying in low precision, with the unit roundoff of
 * their inputs: half the gap between 1 and the next value, 2^-p for p bits of
 * precision (the implicit leading bit included). */
typedef struct lowp_kind {
    const char *name;
    dtype type; /* of a and b: bf16, f16, or f32 read as TF32 */
    bool tf32;
    double unit; /* relative rounding error of one input */
    uint16_t (*narrow)(float);
    float (*widen)(uint16_t);
} lowp_kind;

static float tf32_value(float x) { return float_to_tf32(x); }

static const lowp_kind BF16 = { "bf16", DTYPE_BF16, false, 0x1p-8, float_to_bf16, bf16_to_float };
static const lowp_kind F16 = { "f16", DTYPE_F16, false, 0x1p-11, float_to_f16, f16_to_float };
static const lowp_kind TF32 = { "tf32", DTYPE_F32, true, 0x1p-11, NULL, NULL };

/* The value a tensor core multiplies in place of x. */
static float as_read(const lowp_kind *k, float x) { return k->tf32 ? tf32_value(x) : k->widen(k->narrow(x)); }

/* The relative error of one input as the device under test reads it. cuBLAS's
 * TF32 kernels may drop the low 13 bits instead of rounding them
 * (labkit/precision.h): twice the error, so twice the bound there. */
static double unit_on_device(const lowp_kind *k)
{
    return k->tf32 && dev.kind == DEVICE_CUDA ? 2 * k->unit : k->unit;
}

/* The operands of one product: a [M,K] (or [K,M]), b [K,N] (or [N,K]), bias
 * [N], as float32 on the host; the reference and sum|a||b| in float64. */
typedef struct problem {
    int64_t M, K, N;
    bool trans_a, trans_b, with_bias;
    float *a, *b, *bias;
    double *ref, *mag;
} problem;

static void free_problem(problem *p)
{
    free(p->a), free(p->b), free(p->bias), free(p->ref), free(p->mag);
    memset(p, 0, sizeof *p);
}

static bool make_problem(problem *p, int64_t M, int64_t K, int64_t N, bool ta, bool tb, bool bias,
                         uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->M = M, p->K = K, p->N = N, p->trans_a = ta, p->trans_b = tb, p->with_bias = bias;
    p->a = test_malloc((size_t)(M * K) * sizeof(float));
    p->b = test_malloc((size_t)(K * N) * sizeof(float));
    p->bias = test_malloc((size_t)N * sizeof(float));
    p->ref = test_malloc((size_t)(M * N) * sizeof(double));
    p->mag = test_malloc((size_t)(M * N) * sizeof(double));
    if (!p->a || !p->b || !p->bias || !p->ref || !p->mag) return false;
    test_rng rng = test_rng_seeded(seed);
    test_fill_nonzero(&rng, p->a, M * K, 0.1f, 1.0f);
    test_fill_nonzero(&rng, p->b, K * N, 0.1f, 1.0f);
    test_fill_nonzero(&rng, p->bias, N, 0.1f, 1.0f);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = bias ? p->bias[j] : 0.0, mag = bias ? fabs(p->bias[j]) : 0.0;
            for (int64_t k = 0; k < K; k++) {
                const double aik = ta ? p->a[k * M + i] : p->a[i * K + k];
                const double bkj = tb ? p->b[j * K + k] : p->b[k * N + j];
                acc += aik * bkj;
                mag += fabs(aik * bkj);
            }
            p->ref[i * N + j] = acc, p->mag[i * N + j] = mag;
        }
    return true;
}

static shape a_shape(const problem *p) { return p->trans_a ? shape2(p->K, p->M) : shape2(p->M, p->K); }
static shape b_shape(const problem *p) { return p->trans_b ? shape2(p->N, p->K) : shape2(p->K, p->N); }

/* op(a) op(b) (+ bias) on d in the precision of k (k NULL: plain float32),
 * with the inputs uploaded as float32 and converted there; the result on the
 * host (malloc'd), NULL on failure (recorded). */
static float *product_on(device d, const problem *p, const lowp_kind *k)
{
    tensor *a = NULL, *b = NULL, *a16 = NULL, *b16 = NULL, *bias = NULL, *out = NULL;
    float *result = NULL;
    REQUIRE_OK(tensor_from_host(&a, d, a_shape(p), p->a));
    REQUIRE_OK(tensor_from_host(&b, d, b_shape(p), p->b));
    if (p->with_bias) REQUIRE_OK(tensor_from_host(&bias, d, shape1(p->N), p->bias));
    REQUIRE_OK(tensor_full(&out, d, shape2(p->M, p->N), NAN));
    if (k == NULL) {
        REQUIRE_OK(op_matmul(a, p->trans_a, b, p->trans_b, bias, out));
    } else if (k->tf32) {
        REQUIRE_OK(op_matmul_precision(a, p->trans_a, b, p->trans_b, bias, out, MATMUL_TF32));
    } else {
        REQUIRE((a16 = empty_on(d, k->type, a_shape(p))));
        REQUIRE((b16 = empty_on(d, k->type, b_shape(p))));
        REQUIRE_OK(tensor_convert(a, a16));
        REQUIRE_OK(tensor_convert(b, b16));
        REQUIRE_OK(op_matmul(a16, p->trans_a, b16, p->trans_b, bias, out));
    }
    REQUIRE((result = test_malloc((size_t)(p->M * p->N) * sizeof(float))));
    if (tensor_to_host(out, result, p->M * p->N) != STATUS_OK) {
        harness_fail(__FILE__, __LINE__, "reading the product back: %s", last_error());
        free(result);
        result = NULL;
    }
cleanup:
    tensor_free(a), tensor_free(b), tensor_free(a16), tensor_free(b16), tensor_free(bias), tensor_free(out);
    return result;
}

/* float32 accumulation of n terms: gamma_n = n u / (1 - n u), u = 2^-24. */
static double fp32_gamma(int64_t n) { return (double)n * 0x1p-24 / (1.0 - (double)n * 0x1p-24); }

static double rms_error(const float *got, const double *ref, int64_t n)
{
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) total += (got[i] - ref[i]) * (got[i] - ref[i]);
    return sqrt(total / (double)n);
}

/* Every element within the bound that k's inputs and float32 accumulation
 * predict: each product a b read as a(1+d1) b(1+d2), |d| <= u, then K + 1
 * float32 additions (bias included), so
 *     |got - ref| <= ((1 + u)^2 (1 + gamma_{K+1}) - 1) sum |a||b|;
 * and the error, in the mean, far above float32's own (the inputs were
 * really rounded: a product that quietly stayed in float32 fails here). */
static void check_lowp_product(const lowp_kind *k, const problem *p, const char *what)
{
    const int64_t n = p->M * p->N;
    float *got = NULL, *exact32 = NULL;
    const double u = unit_on_device(k);
    const double factor = (1 + u) * (1 + u) * (1 + fp32_gamma(p->K + 1)) - 1;
    REQUIRE((got = product_on(dev, p, k)));
    REQUIRE((exact32 = product_on(dev, p, NULL)));
    long outside = 0;
    for (int64_t i = 0; i < n; i++) {
        const double bound = factor * p->mag[i];
        if (fabs(got[i] - p->ref[i]) <= bound) continue;
        if (outside++ < HARNESS_MISMATCHES_SHOWN)
            fprintf(stderr, "    %s[%lld]: got %.9g, float64 says %.9g: |diff| %.3g > bound %.3g\n", what,
                    (long long)i, (double)got[i], p->ref[i], fabs(got[i] - p->ref[i]), bound);
    }
    EXPECT_MSG(outside == 0, "%s: %ld of %lld elements outside the %s bound", what, outside, (long long)n,
               k->name);
    const double low = rms_error(got, p->ref, n), high = rms_error(exact32, p->ref, n);
    printf("    %s: rms error %.3g, float32's %.3g (%.0fx)\n", what, low, high, low / high);
    EXPECT_MSG(low >= 100 * high, "%s: rms error %.3g is not 100x float32's %.3g: were the inputs rounded?",
               what, low, high);
cleanup:
    free(got);
    free(exact32);
}

static void check_every_layout(const lowp_kind *k, uint64_t seed)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            problem p;
            char what[96];
            const bool bias = (ta + tb) % 2 == 0;
            snprintf(what, sizeof what, "%s 37x300x29 trans_a=%d trans_b=%d bias=%d", k->name, ta, tb, bias);
            if (make_problem(&p, 37, 300, 29, ta, tb, bias, seed + (uint64_t)(2 * ta + tb)))
                check_lowp_product(k, &p, what);
            free_problem(&p);
        }
}

static void test_bf16_product_is_within_its_bound_for_every_layout(void) { check_every_layout(&BF16, 701); }
static void test_f16_product_is_within_its_bound_for_every_layout(void) { check_every_layout(&F16, 711); }
static void test_tf32_product_is_within_its_bound_for_every_layout(void) { check_every_layout(&TF32, 721); }

/* Without tensor cores the library's low-precision product is, by its
 * definition, the float32 product of the inputs as a tensor core reads them:
 * equal bit for bit (the same OpenBLAS call on the same values). A real GPU's
 * tensor cores add in another order: there the bounds above are the test. */
static void check_equals_float32_product_of_rounded_inputs(const lowp_kind *k)
{
    problem p, rounded;
    float *got = NULL, *want = NULL;
    char what[64];
    memset(&rounded, 0, sizeof rounded);
    REQUIRE(make_problem(&p, 33, 129, 17, true, false, true, 731));
    rounded = p;
    rounded.a = rounded.b = NULL;
    REQUIRE((rounded.a = test_malloc((size_t)(p.M * p.K) * sizeof(float))));
    REQUIRE((rounded.b = test_malloc((size_t)(p.K * p.N) * sizeof(float))));
    for (int64_t i = 0; i < p.M * p.K; i++) rounded.a[i] = as_read(k, p.a[i]);
    for (int64_t i = 0; i < p.K * p.N; i++) rounded.b[i] = as_read(k, p.b[i]);
    REQUIRE((got = product_on(dev, &p, k)));
    REQUIRE((want = product_on(dev, &rounded, NULL)));
    snprintf(what, sizeof what, "%s product on %s", k->name, device_name(dev));
    EXPECT_BITWISE_EQUAL(what, got, want, p.M * p.N);
cleanup:
    free(got);
    free(want);
    free(rounded.a);
    free(rounded.b);
    free_problem(&p);
}

static void test_without_tensor_cores_a_low_precision_product_is_float32_of_rounded_inputs(void)
{
    if (dev.kind == DEVICE_CUDA) {
        harness_skip("a real GPU's tensor cores sum in their own order; the bounds are its test");
        return;
    }
    check_equals_float32_product_of_rounded_inputs(&BF16);
    check_equals_float32_product_of_rounded_inputs(&F16);
    check_equals_float32_product_of_rounded_inputs(&TF32);
}

/* cpu and sim: the same conversion, the same OpenBLAS call, the same bits. */
static void test_cpu_and_simulated_gpu_agree_bit_for_bit(void)
{
    const lowp_kind *kinds[] = { &BF16, &F16, &TF32 };
    if (device_equal(dev, other) || dev.kind == DEVICE_CUDA || other.kind == DEVICE_CUDA) {
        harness_skip("needs the CPU and a simulated GPU");
        return;
    }
    for (size_t i = 0; i < 3; i++) {
        problem p;
        float *here = NULL, *there = NULL;
        char what[64];
        snprintf(what, sizeof what, "%s on %s and %s", kinds[i]->name, device_name(dev), device_name(other));
        if (make_problem(&p, 37, 211, 29, false, true, true, 741 + i) &&
            (here = product_on(dev, &p, kinds[i])) && (there = product_on(other, &p, kinds[i])))
            EXPECT_BITWISE_EQUAL(what, here, there, p.M * p.N);
        free(here);
        free(there);
        free_problem(&p);
    }
}

static void test_low_precision_products_refuse_mixed_dtypes_and_16_bit_results(void)
{
    tensor *a = NULL, *b = NULL, *ab = NULL, *bb = NULL, *bh = NULL, *ai = NULL, *out = NULL, *outb = NULL,
           *bias = NULL, *biasb = NULL;
    REQUIRE_OK(tensor_zeros(&a, dev, shape2(4, 6)));
    REQUIRE_OK(tensor_zeros(&b, dev, shape2(6, 5)));
    REQUIRE_OK(tensor_zeros(&out, dev, shape2(4, 5)));
    REQUIRE_OK(tensor_zeros(&bias, dev, shape1(5)));
    REQUIRE((ab = empty_on(dev, DTYPE_BF16, shape2(4, 6))));
    REQUIRE((bb = empty_on(dev, DTYPE_BF16, shape2(6, 5))));
    REQUIRE((bh = empty_on(dev, DTYPE_F16, shape2(6, 5))));
    REQUIRE((ai = empty_on(dev, DTYPE_I32, shape2(4, 6))));
    REQUIRE((outb = empty_on(dev, DTYPE_BF16, shape2(4, 5))));
    REQUIRE((biasb = empty_on(dev, DTYPE_BF16, shape1(5))));
    EXPECT_REFUSED(op_matmul(ab, false, bh, false, NULL, out), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "one dtype");
    EXPECT_REFUSED(op_matmul(ab, false, b, false, NULL, out), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "tensor_convert");
    EXPECT_REFUSED(op_matmul(a, false, bb, false, NULL, out), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul(ab, false, bb, false, NULL, outb), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "must be f32");
    EXPECT_REFUSED(op_matmul(ab, false, bb, false, biasb, out), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "bias");
    EXPECT_REFUSED(op_matmul(ai, false, b, false, NULL, out), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul_precision(ab, false, bb, false, NULL, out, MATMUL_TF32), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "MATMUL_DEFAULT");
    EXPECT_REFUSED(op_matmul_precision(a, false, b, false, NULL, out, (matmul_precision)7),
                   STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul_precision(NULL, false, b, false, NULL, out, MATMUL_TF32), STATUS_BAD_ARGUMENT);
    /* and the right ones pass, the 16-bit inputs with a float32 bias */
    EXPECT_OK(op_matmul(ab, false, bb, false, bias, out));
    EXPECT_OK(op_matmul_precision(a, false, b, false, bias, out, MATMUL_TF32));
    EXPECT_OK(op_matmul_precision(a, false, b, false, NULL, out, MATMUL_DEFAULT));
    EXPECT_OK(device_synchronize(dev));
cleanup:
    tensor_free(a), tensor_free(b), tensor_free(ab), tensor_free(bb), tensor_free(bh), tensor_free(ai);
    tensor_free(out), tensor_free(outb), tensor_free(bias), tensor_free(biasb);
}

/* ============================================================================ */

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "DEVICE   (cpu, sim:0, cuda:0, ...)", &dev);
    if (rc != 0) return rc;
    other = device_is_gpu(dev) ? device_cpu() : try_gpu(0);
    printf("testing low precision on %s (second device: %s)\n", device_name(dev), device_name(other));

    RUN_TEST(test_convert_rounds_exactly_as_the_host_functions);
    RUN_TEST(test_convert_is_one_launch_and_no_copy);
    RUN_TEST(test_convert_refuses_other_pairs_shapes_and_devices);
    RUN_TEST(test_bf16_product_is_within_its_bound_for_every_layout);
    RUN_TEST(test_f16_product_is_within_its_bound_for_every_layout);
    RUN_TEST(test_tf32_product_is_within_its_bound_for_every_layout);
    RUN_TEST(test_without_tensor_cores_a_low_precision_product_is_float32_of_rounded_inputs);
    RUN_TEST(test_cpu_and_simulated_gpu_agree_bit_for_bit);
    RUN_TEST(test_low_precision_products_refuse_mixed_dtypes_and_16_bit_results);
    return harness_finish();
}
