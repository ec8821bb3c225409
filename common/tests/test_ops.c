/* test_ops.c: every operation of ops.h on one device, against float64 references
 * computed here from host copies of the inputs.
 *
 *   test_ops cpu | sim:0 | cuda:0      (exits 77 when the device is absent)
 *
 * Inputs are random and never zero, shapes are odd (37x53, 53x29, ...), and every
 * output is poisoned with NaN before the call, so an element the operation forgets
 * to write shows up as a mismatch. Tolerances are atol + rtol*|ref|.
 * The refusals (two devices, shapes, NULLs, dtypes) need a second device: the CPU
 * when testing a GPU, else GPU 0 (CTest sets LABKIT_SIM_GPUS=2 for every run). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/device.h"
#include "labkit/ops.h"
#include "labkit/counters.h"
#include "labkit/tensor.h"

/* float32 results of one rounding (or a few) from a float64 reference */
#define ELEMENTWISE_ATOL 1e-6
#define ELEMENTWISE_RTOL 1e-6
/* exp/log in float32 */
#define TRANSCENDENTAL_ATOL 1e-6
#define TRANSCENDENTAL_RTOL 1e-5
/* dot products of 53 terms of magnitude <= 1, accumulated in float32 */
#define MATMUL_ATOL 1e-4
#define MATMUL_RTOL 1e-5
/* reductions accumulate in float64: one final rounding to float32 */
#define REDUCTION_ATOL 1e-5
#define REDUCTION_RTOL 1e-6

static device dev;   /* the device under test (argv[1]) */
static device other; /* a second device for the refusals; == dev when there is none */

/* ============================================================================
 * helpers: tensors on `dev` with host copies, poisoned outputs, reading back
 * ========================================================================== */

/* A tensor on dev of shape s with random values of magnitude in [min_mag, max_mag]
 * and random signs; *host receives a malloc'd copy of its values. NULL on failure
 * (recorded). */
static tensor *random_tensor_on(device d, shape s, float min_mag, float max_mag, uint64_t seed, float **host)
{
    const int64_t n = shape_numel(s);
    tensor *t = NULL;
    float *h = test_malloc((size_t)n * sizeof(float));
    *host = NULL;
    if (h == NULL) return NULL;
    test_rng rng = test_rng_seeded(seed);
    test_fill_nonzero(&rng, h, n, min_mag, max_mag);
    status s_ = tensor_from_host(&t, d, s, h);
    if (s_ != STATUS_OK) {
        harness_fail(__FILE__, __LINE__, "tensor_from_host on %s: %s: %s", device_name(d), status_name(s_),
                     last_error());
        free(h);
        return NULL;
    }
    *host = h;
    return t;
}

static tensor *random_tensor(shape s, float min_mag, float max_mag, uint64_t seed, float **host)
{
    return random_tensor_on(dev, s, min_mag, max_mag, seed, host);
}

/* A float32 output on dev, filled with NaN (on the device, by op_fill). */
static tensor *poisoned_output(shape s)
{
    tensor *t = NULL;
    status s_ = tensor_empty(&t, dev, DTYPE_F32, s);
    if (s_ == STATUS_OK) s_ = op_fill(t, NAN);
    if (s_ != STATUS_OK) {
        harness_fail(__FILE__, __LINE__, "making a poisoned output on %s: %s: %s", device_name(dev),
                     status_name(s_), last_error());
        tensor_free(t);
        return NULL;
    }
    return t;
}

/* An int32 tensor on dev from host values. */
static tensor *int_tensor(shape s, const int32_t *values)
{
    tensor *t = NULL;
    status s_ = tensor_from_host_i32(&t, dev, s, values);
    if (s_ != STATUS_OK)
        harness_fail(__FILE__, __LINE__, "tensor_from_host_i32 on %s: %s: %s", device_name(dev),
                     status_name(s_), last_error());
    return t;
}

/* The tensor's values in a malloc'd host buffer (a blocking read). */
static float *download(const tensor *t)
{
    const int64_t n = tensor_numel(t);
    float *h = test_malloc((size_t)n * sizeof(float));
    if (h == NULL) return NULL;
    status s_ = tensor_to_host(t, h, n);
    if (s_ != STATUS_OK) {
        harness_fail(__FILE__, __LINE__, "tensor_to_host: %s: %s", status_name(s_), last_error());
        free(h);
        return NULL;
    }
    return h;
}

/* Reads t back and compares it with want[numel(t)]. */
static void expect_tensor_close(const char *what, const tensor *t, const double *want, double atol,
                                double rtol)
{
    float *got = download(t);
    if (got != NULL) EXPECT_CLOSE(what, got, want, tensor_numel(t), atol, rtol);
    free(got);
}

/* Reads a one-element result back and compares it with want. */
static void expect_scalar_close(const char *what, const tensor *t, double want, double atol, double rtol)
{
    float got = NAN;
    status s_ = tensor_item(t, &got);
    if (s_ != STATUS_OK) {
        harness_fail(__FILE__, __LINE__, "%s: tensor_item: %s: %s", what, status_name(s_), last_error());
        return;
    }
    EXPECT_CLOSE(what, &got, &want, 1, atol, rtol);
}

/* Zeroed, so that the compiler sees every reference initialised. */
static double *reference(int64_t n)
{
    double *r = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (r == NULL) harness_fail(__FILE__, __LINE__, "out of host memory");
    return r;
}

/* Random labels in 0..classes-1. */
static void random_labels(int32_t *labels, int64_t n, int classes, uint64_t seed)
{
    test_rng rng = test_rng_seeded(seed);
    for (int64_t i = 0; i < n; i++) labels[i] = (int32_t)(test_rng_next(&rng) % (uint64_t)classes);
}

/* ============================================================================
 * element-wise operations
 * ========================================================================== */

typedef status (*binary_op)(const tensor *, const tensor *, tensor *);

static double ref_add(double a, double b) { return a + b; }
static double ref_sub(double a, double b) { return a - b; }
static double ref_mul(double a, double b) { return a * b; }

/* out = op(a, b) on shape s, against ref(a, b) in float64. */
static void check_binary(const char *what, binary_op op, double (*ref)(double, double), shape s,
                         uint64_t seed)
{
    const int64_t n = shape_numel(s);
    float *ha = NULL, *hb = NULL;
    double *want = NULL;
    tensor *a = NULL, *b = NULL, *out = NULL;
    REQUIRE((a = random_tensor(s, 0.1f, 1.0f, seed, &ha)) != NULL);
    REQUIRE((b = random_tensor(s, 0.1f, 1.0f, seed + 1, &hb)) != NULL);
    REQUIRE((out = poisoned_output(s)) != NULL);
    REQUIRE_OK(op(a, b, out));
    REQUIRE((want = reference(n)) != NULL);
    for (int64_t i = 0; i < n; i++) want[i] = ref(ha[i], hb[i]);
    expect_tensor_close(what, out, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(out);
    free(ha);
    free(hb);
    free(want);
}

static void test_fill_writes_every_element(void)
{
    /* out is [37, 53], then [3, 5, 7, 11] */
    const shape shapes[] = { shape2(37, 53), shape4(3, 5, 7, 11) };
    const float value = -2.375f;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const int64_t n = shape_numel(shapes[k]);
        tensor *out = poisoned_output(shapes[k]);
        double *want = reference(n);
        if (out != NULL && want != NULL) {
            for (int64_t i = 0; i < n; i++) want[i] = value;
            EXPECT_OK(op_fill(out, value));
            expect_tensor_close("fill", out, want, 0.0, 0.0);
        }
        tensor_free(out);
        free(want);
    }
}

static void test_add_matches_reference(void)
{
    check_binary("add [37, 53]", op_add, ref_add, shape2(37, 53), 101);
    check_binary("add [3, 5, 7, 11]", op_add, ref_add, shape4(3, 5, 7, 11), 103);
    check_binary("add [1]", op_add, ref_add, shape1(1), 105);
}

static void test_sub_matches_reference(void)
{
    check_binary("sub [37, 53]", op_sub, ref_sub, shape2(37, 53), 111);
    check_binary("sub [5, 7, 9]", op_sub, ref_sub, shape3(5, 7, 9), 113);
}

static void test_mul_matches_reference(void)
{
    check_binary("mul [37, 53]", op_mul, ref_mul, shape2(37, 53), 121);
    check_binary("mul [1001]", op_mul, ref_mul, shape1(1001), 123);
}

static void test_scale_matches_reference(void)
{
    /* a, out are [37, 53] */
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    const float alpha = -1.75f;
    float *ha = NULL;
    double *want = NULL;
    tensor *a = NULL, *out = NULL;
    REQUIRE((a = random_tensor(s, 0.1f, 1.0f, 131, &ha)) != NULL);
    REQUIRE((out = poisoned_output(s)) != NULL);
    REQUIRE_OK(op_scale(a, alpha, out));
    REQUIRE((want = reference(n)) != NULL);
    for (int64_t i = 0; i < n; i++) want[i] = (double)alpha * ha[i];
    expect_tensor_close("scale", out, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
cleanup:
    tensor_free(a);
    tensor_free(out);
    free(ha);
    free(want);
}

static void test_axpy_adds_alpha_x_to_y(void)
{
    /* x, y are [37, 53]; y is both input and output */
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    const float alpha = 0.625f;
    float *hx = NULL, *hy = NULL;
    double *want = NULL;
    tensor *x = NULL, *y = NULL;
    REQUIRE((x = random_tensor(s, 0.1f, 1.0f, 141, &hx)) != NULL);
    REQUIRE((y = random_tensor(s, 0.1f, 1.0f, 142, &hy)) != NULL);
    REQUIRE_OK(op_axpy(alpha, x, y));
    REQUIRE((want = reference(n)) != NULL);
    for (int64_t i = 0; i < n; i++) want[i] = (double)hy[i] + (double)alpha * hx[i];
    expect_tensor_close("axpy", y, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
cleanup:
    tensor_free(x);
    tensor_free(y);
    free(hx);
    free(hy);
    free(want);
}

/* Each element-wise op with its output one of its inputs. */
static void test_elementwise_ops_work_in_place(void)
{
    /* a, b are [37, 53]; every result lands in a or b */
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    float *ha = NULL, *hb = NULL;
    double *want = NULL;
    tensor *a = NULL, *b = NULL;
    REQUIRE((want = reference(n)) != NULL);

    /* a = a + b */
    REQUIRE((a = random_tensor(s, 0.1f, 1.0f, 151, &ha)) != NULL);
    REQUIRE((b = random_tensor(s, 0.1f, 1.0f, 152, &hb)) != NULL);
    REQUIRE_OK(op_add(a, b, a));
    for (int64_t i = 0; i < n; i++) want[i] = (double)ha[i] + hb[i];
    expect_tensor_close("add(a, b, a)", a, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
    for (int64_t i = 0; i < n; i++) ha[i] = (float)want[i]; /* a's values now */

    /* b = a - b */
    REQUIRE_OK(op_sub(a, b, b));
    for (int64_t i = 0; i < n; i++) want[i] = (double)ha[i] - hb[i];
    expect_tensor_close("sub(a, b, b)", b, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
    tensor_free(b);
    b = NULL;
    free(hb);
    hb = NULL;

    /* a = a * a */
    tensor_free(a);
    a = NULL;
    free(ha);
    ha = NULL;
    REQUIRE((a = random_tensor(s, 0.1f, 1.0f, 153, &ha)) != NULL);
    REQUIRE_OK(op_mul(a, a, a));
    for (int64_t i = 0; i < n; i++) want[i] = (double)ha[i] * ha[i];
    expect_tensor_close("mul(a, a, a)", a, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
    tensor_free(a);
    a = NULL;
    free(ha);
    ha = NULL;

    /* a = -3 a */
    REQUIRE((a = random_tensor(s, 0.1f, 1.0f, 154, &ha)) != NULL);
    REQUIRE_OK(op_scale(a, -3.0f, a));
    for (int64_t i = 0; i < n; i++) want[i] = -3.0 * ha[i];
    expect_tensor_close("scale(a, -3, a)", a, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
    tensor_free(a);
    a = NULL;
    free(ha);
    ha = NULL;

    /* y = y + 0.5 y (x is y) */
    REQUIRE((a = random_tensor(s, 0.1f, 1.0f, 155, &ha)) != NULL);
    REQUIRE_OK(op_axpy(0.5f, a, a));
    for (int64_t i = 0; i < n; i++) want[i] = 1.5 * ha[i];
    expect_tensor_close("axpy(0.5, y, y)", a, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
cleanup:
    tensor_free(a);
    tensor_free(b);
    free(ha);
    free(hb);
    free(want);
}

/* ============================================================================
 * matrix product
 * ========================================================================== */

/* out[M,N] = op(a) op(b) (+ bias) for one choice of transposes and bias. */
static void check_matmul(int64_t M, int64_t K, int64_t N, bool trans_a, bool trans_b, bool with_bias,
                         uint64_t seed)
{
    /* a is [M,K] or, transposed, [K,M]; b is [K,N] or [N,K]; bias [N]; out [M,N] */
    char what[96];
    float *ha = NULL, *hb = NULL, *hbias = NULL;
    double *want = NULL;
    tensor *a = NULL, *b = NULL, *bias = NULL, *out = NULL;
    snprintf(what, sizeof what, "matmul %lldx%lldx%lld trans_a=%d trans_b=%d bias=%d", (long long)M,
             (long long)K, (long long)N, trans_a, trans_b, with_bias);
    REQUIRE((a = random_tensor(trans_a ? shape2(K, M) : shape2(M, K), 0.1f, 1.0f, seed, &ha)));
    REQUIRE((b = random_tensor(trans_b ? shape2(N, K) : shape2(K, N), 0.1f, 1.0f, seed + 1, &hb)));
    if (with_bias) REQUIRE((bias = random_tensor(shape1(N), 0.1f, 1.0f, seed + 2, &hbias)));
    REQUIRE((out = poisoned_output(shape2(M, N))));
    REQUIRE_OK(op_matmul(a, trans_a, b, trans_b, bias, out));
    REQUIRE((want = reference(M * N)));
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            double acc = with_bias ? hbias[j] : 0.0;
            for (int64_t k = 0; k < K; k++) {
                double aik = trans_a ? ha[k * M + i] : ha[i * K + k];
                double bkj = trans_b ? hb[j * K + k] : hb[k * N + j];
                acc += aik * bkj;
            }
            want[i * N + j] = acc;
        }
    }
    expect_tensor_close(what, out, want, MATMUL_ATOL, MATMUL_RTOL);
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(bias);
    tensor_free(out);
    free(ha);
    free(hb);
    free(hbias);
    free(want);
}

static void test_matmul_matches_reference_for_every_transpose_and_bias(void)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int bias = 0; bias < 2; bias++)
                check_matmul(37, 53, 29, ta, tb, bias, 200 + (uint64_t)(4 * ta + 2 * tb + bias) * 7);
}

static void test_matmul_handles_vectors_and_thin_shapes(void)
{
    check_matmul(1, 53, 29, false, false, true, 260);  /* a row vector times a matrix */
    check_matmul(37, 53, 1, false, false, false, 270); /* a matrix times a column */
    check_matmul(37, 1, 29, true, false, true, 280);   /* an outer product */
    check_matmul(3, 129, 5, false, true, false, 290);  /* long inner dimension */
}

static void test_matmul_refuses_an_output_that_is_an_input(void)
{
    /* a, b, out are [5, 5] so that any of them could serve as the output */
    float *ha = NULL, *hb = NULL;
    tensor *a = NULL, *b = NULL;
    REQUIRE((a = random_tensor(shape2(5, 5), 0.1f, 1.0f, 301, &ha)));
    REQUIRE((b = random_tensor(shape2(5, 5), 0.1f, 1.0f, 302, &hb)));
    EXPECT_REFUSED(op_matmul(a, false, b, false, NULL, a), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul(a, false, b, true, NULL, b), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(a);
    tensor_free(b);
    free(ha);
    free(hb);
}

/* ============================================================================
 * activations
 * ========================================================================== */

static void test_relu_matches_reference(void)
{
    /* x, out are [37, 53] with both signs */
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    float *hx = NULL;
    double *want = NULL;
    tensor *x = NULL, *out = NULL;
    REQUIRE((x = random_tensor(s, 0.1f, 2.0f, 401, &hx)));
    REQUIRE((out = poisoned_output(s)));
    REQUIRE_OK(op_relu(x, out));
    REQUIRE((want = reference(n)));
    for (int64_t i = 0; i < n; i++) want[i] = hx[i] > 0.0f ? hx[i] : 0.0;
    expect_tensor_close("relu", out, want, 0.0, 0.0);

    /* in place */
    REQUIRE_OK(op_relu(x, x));
    expect_tensor_close("relu(x, x)", x, want, 0.0, 0.0);
cleanup:
    tensor_free(x);
    tensor_free(out);
    free(hx);
    free(want);
}

static void test_relu_backward_passes_gradient_where_input_is_positive(void)
{
    /* x, grad_out, grad_in are [37, 53] */
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    float *hx = NULL, *hg = NULL;
    double *want = NULL;
    tensor *x = NULL, *g = NULL, *gin = NULL;
    REQUIRE((x = random_tensor(s, 0.1f, 2.0f, 411, &hx)));
    REQUIRE((g = random_tensor(s, 0.1f, 1.0f, 412, &hg)));
    REQUIRE((gin = poisoned_output(s)));
    REQUIRE_OK(op_relu_backward(x, g, gin));
    REQUIRE((want = reference(n)));
    for (int64_t i = 0; i < n; i++) want[i] = hx[i] > 0.0f ? hg[i] : 0.0;
    expect_tensor_close("relu_backward", gin, want, 0.0, 0.0);

    /* in place: grad_in is grad_out */
    REQUIRE_OK(op_relu_backward(x, g, g));
    expect_tensor_close("relu_backward(x, g, g)", g, want, 0.0, 0.0);
cleanup:
    tensor_free(x);
    tensor_free(g);
    tensor_free(gin);
    free(hx);
    free(hg);
    free(want);
}

static void test_sigmoid_matches_reference(void)
{
    /* x, out are [37, 53], x in [-6, 6] */
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    float *hx = NULL;
    double *want = NULL;
    tensor *x = NULL, *out = NULL;
    REQUIRE((x = random_tensor(s, 0.05f, 6.0f, 421, &hx)));
    REQUIRE((out = poisoned_output(s)));
    REQUIRE_OK(op_sigmoid(x, out));
    REQUIRE((want = reference(n)));
    for (int64_t i = 0; i < n; i++) want[i] = 1.0 / (1.0 + exp(-(double)hx[i]));
    expect_tensor_close("sigmoid", out, want, TRANSCENDENTAL_ATOL, TRANSCENDENTAL_RTOL);

    /* in place */
    REQUIRE_OK(op_sigmoid(x, x));
    expect_tensor_close("sigmoid(x, x)", x, want, TRANSCENDENTAL_ATOL, TRANSCENDENTAL_RTOL);
cleanup:
    tensor_free(x);
    tensor_free(out);
    free(hx);
    free(want);
}

static void test_sigmoid_saturates_without_nan(void)
{
    /* x is [4]: large magnitudes where a careless exp overflows */
    const float hx[4] = { -100.0f, -30.0f, 30.0f, 100.0f };
    double want[4];
    float *got = NULL;
    tensor *x = NULL, *out = NULL;
    REQUIRE_OK(tensor_from_host(&x, dev, shape1(4), hx));
    REQUIRE((out = poisoned_output(shape1(4))));
    REQUIRE_OK(op_sigmoid(x, out));
    for (int i = 0; i < 4; i++) want[i] = 1.0 / (1.0 + exp(-(double)hx[i]));
    REQUIRE((got = download(out)));
    EXPECT_CLOSE("sigmoid of large |x|", got, want, 4, TRANSCENDENTAL_ATOL, TRANSCENDENTAL_RTOL);
cleanup:
    tensor_free(x);
    tensor_free(out);
    free(got);
}

static void test_sigmoid_backward_matches_reference(void)
{
    /* y (a sigmoid's output, in (0, 1)), grad_out, grad_in are [37, 53] */
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    float *hy = NULL, *hg = NULL;
    double *want = NULL;
    tensor *y = NULL, *g = NULL, *gin = NULL;
    REQUIRE((hy = test_malloc((size_t)n * sizeof(float))));
    test_rng rng = test_rng_seeded(431);
    for (int64_t i = 0; i < n; i++) hy[i] = test_rng_uniform(&rng, 0.02f, 0.98f);
    REQUIRE_OK(tensor_from_host(&y, dev, s, hy));
    REQUIRE((g = random_tensor(s, 0.1f, 1.0f, 432, &hg)));
    REQUIRE((gin = poisoned_output(s)));
    REQUIRE_OK(op_sigmoid_backward(y, g, gin));
    REQUIRE((want = reference(n)));
    for (int64_t i = 0; i < n; i++) want[i] = (double)hg[i] * hy[i] * (1.0 - hy[i]);
    expect_tensor_close("sigmoid_backward", gin, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);

    /* in place: grad_in is grad_out */
    REQUIRE_OK(op_sigmoid_backward(y, g, g));
    expect_tensor_close("sigmoid_backward(y, g, g)", g, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);
cleanup:
    tensor_free(y);
    tensor_free(g);
    tensor_free(gin);
    free(hy);
    free(hg);
    free(want);
}

/* ============================================================================
 * softmax cross-entropy
 * ========================================================================== */

/* probs[B,C] and the mean loss of logits[B,C] and labels[B], in float64 with the
 * row maximum subtracted. */
static double softmax_cross_entropy_reference(const float *logits, const int32_t *labels, int64_t B,
                                              int64_t C, double *probs)
{
    double loss = 0.0;
    for (int64_t r = 0; r < B; r++) {
        const float *x = logits + r * C;
        double max = x[0], sum = 0.0;
        for (int64_t c = 1; c < C; c++) max = x[c] > max ? x[c] : max;
        for (int64_t c = 0; c < C; c++) sum += exp((double)x[c] - max);
        for (int64_t c = 0; c < C; c++) probs[r * C + c] = exp((double)x[c] - max) / sum;
        loss += -(((double)x[labels[r]] - max) - log(sum));
    }
    return loss / (double)B;
}

/* logits [B, C] = offset + random values of magnitude in [0.1, 4]. */
static void check_softmax_cross_entropy(int64_t B, int64_t C, float offset, uint64_t seed)
{
    char what[96];
    float *hl = NULL;
    int32_t *hlab = NULL;
    double *want = NULL;
    tensor *logits = NULL, *labels = NULL, *probs = NULL, *loss = NULL;
    snprintf(what, sizeof what, "softmax probs [%lld, %lld] offset %g", (long long)B, (long long)C, offset);
    REQUIRE((hl = test_malloc((size_t)(B * C) * sizeof(float))));
    test_rng rng = test_rng_seeded(seed);
    test_fill_nonzero(&rng, hl, B * C, 0.1f, 4.0f);
    for (int64_t i = 0; i < B * C; i++) hl[i] += offset;
    REQUIRE((hlab = test_malloc((size_t)B * sizeof(int32_t))));
    random_labels(hlab, B, (int)C, seed + 1);
    REQUIRE_OK(tensor_from_host(&logits, dev, shape2(B, C), hl));
    REQUIRE((labels = int_tensor(shape1(B), hlab)));
    REQUIRE((probs = poisoned_output(shape2(B, C))));
    REQUIRE((loss = poisoned_output(shape1(1))));
    REQUIRE_OK(op_softmax_cross_entropy(logits, labels, probs, loss));
    REQUIRE((want = reference(B * C)));
    double want_loss = softmax_cross_entropy_reference(hl, hlab, B, C, want);
    expect_tensor_close(what, probs, want, TRANSCENDENTAL_ATOL, TRANSCENDENTAL_RTOL);
    expect_scalar_close("softmax cross-entropy mean loss", loss, want_loss, 1e-5, 1e-5);
cleanup:
    tensor_free(logits);
    tensor_free(labels);
    tensor_free(probs);
    tensor_free(loss);
    free(hl);
    free(hlab);
    free(want);
}

static void test_softmax_cross_entropy_matches_reference(void)
{
    check_softmax_cross_entropy(37, 13, 0.0f, 501);
    check_softmax_cross_entropy(1, 7, 0.0f, 503);    /* a single row */
    check_softmax_cross_entropy(5, 1001, 0.0f, 505); /* wide rows */
    check_softmax_cross_entropy(7, 1, 0.0f, 507);    /* one class: p = 1, loss 0 */
}

/* Logits around 300 overflow exp() in float32 unless the row max is subtracted. */
static void test_softmax_cross_entropy_is_stable_for_large_logits(void)
{
    check_softmax_cross_entropy(37, 13, 300.0f, 511);
    check_softmax_cross_entropy(37, 13, -300.0f, 513);
}

static void test_softmax_cross_entropy_backward_matches_reference(void)
{
    /* probs, grad_logits are [B, C] = [37, 13]; labels [37] */
    const int64_t B = 37, C = 13;
    float *hp = NULL;
    int32_t hlab[37];
    double *want = NULL;
    tensor *probs = NULL, *labels = NULL, *grad = NULL;
    REQUIRE((hp = test_malloc((size_t)(B * C) * sizeof(float))));
    test_rng rng = test_rng_seeded(521);
    for (int64_t i = 0; i < B * C; i++) hp[i] = test_rng_uniform(&rng, 0.01f, 1.0f);
    random_labels(hlab, B, (int)C, 522);
    REQUIRE_OK(tensor_from_host(&probs, dev, shape2(B, C), hp));
    REQUIRE((labels = int_tensor(shape1(B), hlab)));
    REQUIRE((grad = poisoned_output(shape2(B, C))));
    REQUIRE_OK(op_softmax_cross_entropy_backward(probs, labels, grad));
    REQUIRE((want = reference(B * C)));
    for (int64_t r = 0; r < B; r++)
        for (int64_t c = 0; c < C; c++)
            want[r * C + c] = ((double)hp[r * C + c] - (c == hlab[r] ? 1.0 : 0.0)) / (double)B;
    expect_tensor_close("softmax_cross_entropy_backward", grad, want, ELEMENTWISE_ATOL, ELEMENTWISE_RTOL);

    /* in place: grad_logits is probs */
    REQUIRE_OK(op_softmax_cross_entropy_backward(probs, labels, probs));
    expect_tensor_close("softmax_cross_entropy_backward(p, y, p)", probs, want, ELEMENTWISE_ATOL,
                        ELEMENTWISE_RTOL);
cleanup:
    tensor_free(probs);
    tensor_free(labels);
    tensor_free(grad);
    free(hp);
    free(want);
}

/* ops.h: an output may be one of the inputs unless the function says otherwise,
 * and op_softmax_cross_entropy does not say otherwise. */
static void test_softmax_cross_entropy_works_in_place(void)
{
    /* logits (then probs) [37, 13], labels [37] */
    const int64_t B = 37, C = 13;
    float *hl = NULL;
    int32_t hlab[37];
    double *want = NULL;
    tensor *logits = NULL, *labels = NULL, *loss = NULL;
    REQUIRE((logits = random_tensor(shape2(B, C), 0.1f, 4.0f, 531, &hl)));
    random_labels(hlab, B, (int)C, 532);
    REQUIRE((labels = int_tensor(shape1(B), hlab)));
    REQUIRE((loss = poisoned_output(shape1(1))));
    REQUIRE((want = reference(B * C)));
    double want_loss = softmax_cross_entropy_reference(hl, hlab, B, C, want);
    REQUIRE_OK(op_softmax_cross_entropy(logits, labels, logits, loss));
    expect_tensor_close("softmax probs written over the logits", logits, want, TRANSCENDENTAL_ATOL,
                        TRANSCENDENTAL_RTOL);
    expect_scalar_close("loss with probs written over the logits", loss, want_loss, 1e-5, 1e-5);
cleanup:
    tensor_free(logits);
    tensor_free(labels);
    tensor_free(loss);
    free(hl);
    free(want);
}

/* ============================================================================
 * reductions
 * ========================================================================== */

static void check_sum_mean_norm(shape s, uint64_t seed)
{
    const int64_t n = shape_numel(s);
    char what[64], dims[48];
    float *hx = NULL;
    tensor *x = NULL, *sum = NULL, *mean = NULL, *norm = NULL;
    shape_format(s, dims, sizeof dims);
    REQUIRE((x = random_tensor(s, 0.1f, 1.0f, seed, &hx)));
    REQUIRE((sum = poisoned_output(shape1(1))));
    REQUIRE((mean = poisoned_output(shape1(1))));
    REQUIRE((norm = poisoned_output(shape1(1))));
    REQUIRE_OK(op_sum(x, sum));
    REQUIRE_OK(op_mean(x, mean));
    REQUIRE_OK(op_norm(x, norm));
    double want_sum = 0.0, want_squares = 0.0;
    for (int64_t i = 0; i < n; i++) {
        want_sum += hx[i];
        want_squares += (double)hx[i] * hx[i];
    }
    snprintf(what, sizeof what, "sum %s", dims);
    expect_scalar_close(what, sum, want_sum, REDUCTION_ATOL, REDUCTION_RTOL);
    snprintf(what, sizeof what, "mean %s", dims);
    expect_scalar_close(what, mean, want_sum / (double)n, REDUCTION_ATOL, REDUCTION_RTOL);
    snprintf(what, sizeof what, "norm %s", dims);
    expect_scalar_close(what, norm, sqrt(want_squares), REDUCTION_ATOL, REDUCTION_RTOL);
cleanup:
    tensor_free(x);
    tensor_free(sum);
    tensor_free(mean);
    tensor_free(norm);
    free(hx);
}

static void test_sum_mean_norm_match_reference(void)
{
    check_sum_mean_norm(shape2(37, 53), 601);
    check_sum_mean_norm(shape4(3, 5, 7, 11), 603);
    check_sum_mean_norm(shape1(1), 605);
    check_sum_mean_norm(shape1(100003), 607);        /* more than one block of any size; a short last run */
    check_sum_mean_norm(shape1((1 << 20) + 3), 609); /* a GPU's most blocks: partials folded thrice */
}

/* 1 followed by 65535 values of 2^-24: a float32 running sum never moves from 1,
 * a float64 one reaches 1 + 65535 * 2^-24. */
static void test_sum_and_mean_keep_small_terms(void)
{
    const int64_t n = 65536;
    const double tiny = ldexp(1.0, -24);
    float *hx = NULL;
    tensor *x = NULL, *sum = NULL, *mean = NULL;
    REQUIRE((hx = test_malloc((size_t)n * sizeof(float))));
    hx[0] = 1.0f;
    for (int64_t i = 1; i < n; i++) hx[i] = (float)tiny;
    REQUIRE_OK(tensor_from_host(&x, dev, shape1(n), hx));
    REQUIRE((sum = poisoned_output(shape1(1))));
    REQUIRE((mean = poisoned_output(shape1(1))));
    REQUIRE_OK(op_sum(x, sum));
    REQUIRE_OK(op_mean(x, mean));
    const double want = 1.0 + (double)(n - 1) * tiny;
    expect_scalar_close("sum of 1 and many 2^-24", sum, want, 0.0, 1e-6);
    expect_scalar_close("mean of 1 and many 2^-24", mean, want / (double)n, 0.0, 1e-6);
cleanup:
    tensor_free(x);
    tensor_free(sum);
    tensor_free(mean);
    free(hx);
}

static void test_column_sum_matches_reference(void)
{
    /* x is [R, C], out [C] */
    const int64_t shapes[][2] = { { 37, 53 }, { 1, 29 }, { 1001, 3 } };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const int64_t R = shapes[k][0], C = shapes[k][1];
        char what[64];
        float *hx = NULL;
        double *want = NULL;
        tensor *x = NULL, *out = NULL;
        snprintf(what, sizeof what, "column_sum [%lld, %lld]", (long long)R, (long long)C);
        x = random_tensor(shape2(R, C), 0.1f, 1.0f, 611 + k, &hx);
        out = poisoned_output(shape1(C));
        want = reference(C);
        if (x != NULL && out != NULL && want != NULL) {
            EXPECT_OK(op_column_sum(x, out));
            for (int64_t c = 0; c < C; c++) {
                want[c] = 0.0;
                for (int64_t r = 0; r < R; r++) want[c] += hx[r * C + c];
            }
            expect_tensor_close(what, out, want, REDUCTION_ATOL, 1e-5);
        }
        tensor_free(x);
        tensor_free(out);
        free(hx);
        free(want);
    }
}

/* ============================================================================
 * argmax and accuracy
 * ========================================================================== */

/* x [R, C] with one clear maximum per row, at a random column except row 0 (first
 * column), row 1 (last column), and row 2 whose values are all negative. */
static void make_rows_with_clear_maxima(float *x, int64_t R, int64_t C, uint64_t seed)
{
    test_rng rng = test_rng_seeded(seed);
    test_fill_nonzero(&rng, x, R * C, 0.1f, 1.0f);
    for (int64_t r = 0; r < R; r++) {
        int64_t at = (int64_t)(test_rng_next(&rng) % (uint64_t)C);
        if (r == 0) at = 0;
        if (r == 1) at = C - 1;
        if (r == 2) {
            for (int64_t c = 0; c < C; c++) x[r * C + c] = -1.0f - (float)c / (float)C;
            x[r * C + at] = -0.5f;
        } else {
            x[r * C + at] = 1.5f + 0.01f * (float)r;
        }
    }
}

static int32_t host_argmax(const float *row, int64_t C)
{
    int64_t best = 0;
    for (int64_t c = 1; c < C; c++)
        if (row[c] > row[best]) best = c;
    return (int32_t)best;
}

static void test_argmax_finds_each_rows_largest_value(void)
{
    /* x is [37, 13], out int32 [37] */
    const int64_t R = 37, C = 13;
    float hx[37 * 13];
    int32_t poison[37], want[37], got[37];
    tensor *x = NULL, *out = NULL;
    make_rows_with_clear_maxima(hx, R, C, 701);
    for (int64_t r = 0; r < R; r++) {
        poison[r] = -7;
        want[r] = host_argmax(hx + r * C, C);
    }
    REQUIRE_OK(tensor_from_host(&x, dev, shape2(R, C), hx));
    REQUIRE((out = int_tensor(shape1(R), poison)));
    REQUIRE_OK(op_argmax(x, out));
    REQUIRE_OK(tensor_to_host_i32(out, got, R));
    EXPECT_BITWISE_EQUAL("argmax", got, want, R);
cleanup:
    tensor_free(x);
    tensor_free(out);
}

static void test_accuracy_is_the_fraction_of_rows_predicted_right(void)
{
    /* logits [37, 13]; labels [37] right on two rows of three */
    const int64_t B = 37, C = 13;
    float hx[37 * 13];
    int32_t labels_host[37];
    int64_t right = 0;
    tensor *logits = NULL, *labels = NULL, *acc = NULL;
    make_rows_with_clear_maxima(hx, B, C, 711);
    for (int64_t r = 0; r < B; r++) {
        int32_t best = host_argmax(hx + r * C, C);
        labels_host[r] = r % 3 == 0 ? (int32_t)((best + 1) % C) : best;
        right += labels_host[r] == best;
    }
    REQUIRE_OK(tensor_from_host(&logits, dev, shape2(B, C), hx));
    REQUIRE((labels = int_tensor(shape1(B), labels_host)));
    REQUIRE((acc = poisoned_output(shape1(1))));
    REQUIRE_OK(op_accuracy(logits, labels, acc));
    expect_scalar_close("accuracy", acc, (double)right / (double)B, 1e-6, 1e-6);
cleanup:
    tensor_free(logits);
    tensor_free(labels);
    tensor_free(acc);
}

/* ============================================================================
 * refusals
 * ========================================================================== */

/* The operands used by the refusal tests: valid ones on dev, and some on other. */
typedef struct operands {
    tensor *x, *y;          /* [37, 53] */
    tensor *xt;             /* [53, 37]: same count, other shape */
    tensor *a, *b, *mm;     /* [37, 53] @ [53, 29] -> [37, 29] */
    tensor *bias;           /* [29] */
    tensor *logits, *probs; /* [37, 13] */
    tensor *labels;         /* int32 [37] */
    tensor *scalar;         /* [1] */
    tensor *columns;        /* [53] */
    tensor *indices;        /* int32 [37] */
    tensor *ints;           /* int32 [37, 53] */
    tensor *rows;           /* float32 [37]: the shape of labels, the wrong dtype */
    float *host[6];
} operands;

static bool make_operands(operands *o)
{
    int32_t labels[37];
    memset(o, 0, sizeof *o);
    random_labels(labels, 37, 13, 801);
    o->x = random_tensor(shape2(37, 53), 0.1f, 1.0f, 802, &o->host[0]);
    o->y = random_tensor(shape2(37, 53), 0.1f, 1.0f, 803, &o->host[1]);
    o->xt = random_tensor(shape2(53, 37), 0.1f, 1.0f, 804, &o->host[2]);
    o->b = random_tensor(shape2(53, 29), 0.1f, 1.0f, 805, &o->host[3]);
    o->bias = random_tensor(shape1(29), 0.1f, 1.0f, 806, &o->host[4]);
    o->logits = random_tensor(shape2(37, 13), 0.1f, 1.0f, 807, &o->host[5]);
    o->a = poisoned_output(shape2(37, 53));
    o->mm = poisoned_output(shape2(37, 29));
    o->probs = poisoned_output(shape2(37, 13));
    o->scalar = poisoned_output(shape1(1));
    o->columns = poisoned_output(shape1(53));
    o->rows = poisoned_output(shape1(37));
    o->labels = int_tensor(shape1(37), labels);
    o->indices = int_tensor(shape1(37), labels);
    int32_t *zeros = calloc(37 * 53, sizeof(int32_t));
    if (zeros != NULL) o->ints = int_tensor(shape2(37, 53), zeros);
    free(zeros);
    return o->x && o->y && o->xt && o->a && o->b && o->mm && o->bias && o->logits && o->probs && o->labels &&
           o->scalar && o->columns && o->indices && o->ints && o->rows;
}

static void free_operands(operands *o)
{
    tensor *all[] = { o->x,     o->y,      o->xt,     o->a,       o->b,       o->mm,   o->bias, o->logits,
                      o->probs, o->labels, o->scalar, o->columns, o->indices, o->ints, o->rows };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
    for (size_t i = 0; i < sizeof o->host / sizeof o->host[0]; i++) free(o->host[i]);
    memset(o, 0, sizeof *o);
}

static void expect_refused_across_devices(const char *call, status s, int line)
{
    const char *msg = last_error();
    if (s != STATUS_WRONG_DEVICE) {
        harness_fail(__FILE__, line,
                     "%s with operands on %s and %s returned %s, want "
                     "STATUS_WRONG_DEVICE (message: \"%s\")",
                     call, device_name(dev), device_name(other), status_name(s), msg);
        return;
    }
    if (strstr(msg, device_name(dev)) == NULL || strstr(msg, device_name(other)) == NULL)
        harness_fail(__FILE__, line, "%s: the message does not name both %s and %s: \"%s\"", call,
                     device_name(dev), device_name(other), msg);
}

#define EXPECT_REFUSED_ACROSS_DEVICES(call)                 \
    do {                                                    \
        clear_error();                                      \
        status s_ = (call);                                 \
        expect_refused_across_devices(#call, s_, __LINE__); \
    } while (0)

static uint64_t copies_counted(device d)
{
    device_counters c;
    if (counters_read(d, &c) != STATUS_OK) return UINT64_MAX;
    return c.h2d_copies + c.d2h_copies + c.d2d_copies;
}

static void test_ops_refuse_operands_on_two_devices_and_copy_nothing(void)
{
    operands o;
    float *h[4] = { NULL, NULL, NULL, NULL };
    tensor *xo = NULL, *bo = NULL, *biaso = NULL, *labelso = NULL, *scalaro = NULL;
    int32_t labels[37];
    if (device_equal(dev, other)) {
        harness_skip("no second device here (set LABKIT_SIM_GPUS=1 to test the refusals)");
        return;
    }
    const bool made = make_operands(&o);
    REQUIRE(made);
    random_labels(labels, 37, 13, 811);
    REQUIRE((xo = random_tensor_on(other, shape2(37, 53), 0.1f, 1.0f, 812, &h[0])));
    REQUIRE((bo = random_tensor_on(other, shape2(53, 29), 0.1f, 1.0f, 813, &h[1])));
    REQUIRE((biaso = random_tensor_on(other, shape1(29), 0.1f, 1.0f, 814, &h[2])));
    REQUIRE((scalaro = random_tensor_on(other, shape1(1), 0.1f, 1.0f, 815, &h[3])));
    REQUIRE_OK(tensor_from_host_i32(&labelso, other, shape1(37), labels));
    REQUIRE_OK(device_synchronize(dev));
    REQUIRE_OK(device_synchronize(other));
    REQUIRE_OK(counters_reset(dev));
    REQUIRE_OK(counters_reset(other));

    EXPECT_REFUSED_ACROSS_DEVICES(op_add(o.x, xo, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_add(xo, o.x, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_add(o.x, o.y, xo)); /* only the output elsewhere */
    EXPECT_REFUSED_ACROSS_DEVICES(op_sub(o.x, xo, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_mul(xo, o.x, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_scale(xo, 2.0f, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_axpy(2.0f, xo, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_axpy(2.0f, o.x, xo));
    EXPECT_REFUSED_ACROSS_DEVICES(op_matmul(o.x, false, bo, false, NULL, o.mm));
    EXPECT_REFUSED_ACROSS_DEVICES(op_matmul(o.x, false, o.b, false, biaso, o.mm));
    EXPECT_REFUSED_ACROSS_DEVICES(op_relu(xo, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_relu_backward(o.x, xo, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_sigmoid(o.x, xo));
    EXPECT_REFUSED_ACROSS_DEVICES(op_sigmoid_backward(xo, o.x, o.y));
    EXPECT_REFUSED_ACROSS_DEVICES(op_softmax_cross_entropy(o.logits, labelso, o.probs, o.scalar));
    EXPECT_REFUSED_ACROSS_DEVICES(op_softmax_cross_entropy(o.logits, o.labels, o.probs, scalaro));
    EXPECT_REFUSED_ACROSS_DEVICES(op_softmax_cross_entropy_backward(o.probs, labelso, o.logits));
    EXPECT_REFUSED_ACROSS_DEVICES(op_sum(xo, o.scalar));
    EXPECT_REFUSED_ACROSS_DEVICES(op_mean(o.x, scalaro));
    EXPECT_REFUSED_ACROSS_DEVICES(op_norm(xo, o.scalar));
    EXPECT_REFUSED_ACROSS_DEVICES(op_column_sum(xo, o.columns));
    EXPECT_REFUSED_ACROSS_DEVICES(op_argmax(o.logits, labelso));
    EXPECT_REFUSED_ACROSS_DEVICES(op_accuracy(o.logits, labelso, o.scalar));

    EXPECT_EQ_I64(copies_counted(dev), 0);
    EXPECT_EQ_I64(copies_counted(other), 0);
cleanup:
    free_operands(&o);
    tensor_free(xo);
    tensor_free(bo);
    tensor_free(biaso);
    tensor_free(labelso);
    tensor_free(scalaro);
    for (int i = 0; i < 4; i++) free(h[i]);
}

static void test_ops_refuse_mismatched_shapes_and_name_them(void)
{
    operands o;
    tensor *b52 = NULL, *bias28 = NULL, *labels36 = NULL, *two = NULL, *columns52 = NULL;
    float *hb = NULL, *hbias = NULL, *y_after = NULL;
    double *y_want = NULL;
    int32_t labels[36] = { 0 };
    const bool made = make_operands(&o);
    REQUIRE(made);
    REQUIRE((b52 = random_tensor(shape2(52, 29), 0.1f, 1.0f, 821, &hb)));
    REQUIRE((bias28 = random_tensor(shape1(28), 0.1f, 1.0f, 822, &hbias)));
    REQUIRE((labels36 = int_tensor(shape1(36), labels)));
    REQUIRE((two = poisoned_output(shape1(2))));
    REQUIRE((columns52 = poisoned_output(shape1(52))));
    REQUIRE_OK(op_fill(o.y, 7.0f)); /* a refused call must leave it as it is */

    /* the same number of elements in another shape is still another shape */
    EXPECT_REFUSED(op_add(o.x, o.xt, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[37, 53]");
    EXPECT_CONTAINS(last_error(), "[53, 37]");
    EXPECT_REFUSED(op_sub(o.x, o.x, o.xt), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[53, 37]");
    EXPECT_REFUSED(op_mul(o.xt, o.x, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_scale(o.xt, 2.0f, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_axpy(2.0f, o.xt, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_relu(o.xt, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_relu_backward(o.x, o.xt, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sigmoid(o.xt, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sigmoid_backward(o.xt, o.x, o.y), STATUS_BAD_ARGUMENT);

    /* [37, 53] @ [52, 29]: inner dimensions differ */
    EXPECT_REFUSED(op_matmul(o.x, false, b52, false, NULL, o.mm), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[37, 53]");
    EXPECT_CONTAINS(last_error(), "[52, 29]");
    /* transposing a makes it [53, 37]: inner 37 against 53 */
    EXPECT_REFUSED(op_matmul(o.x, true, o.b, false, NULL, o.mm), STATUS_BAD_ARGUMENT);
    /* an output of the wrong shape, a bias of the wrong length, a vector operand */
    EXPECT_REFUSED(op_matmul(o.x, false, o.b, false, NULL, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul(o.x, false, o.b, false, bias28, o.mm), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[28]");
    EXPECT_REFUSED(op_matmul(o.bias, false, o.b, false, NULL, o.mm), STATUS_BAD_ARGUMENT);

    EXPECT_REFUSED(op_softmax_cross_entropy(o.logits, labels36, o.probs, o.scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_softmax_cross_entropy(o.logits, o.labels, o.x, o.scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_softmax_cross_entropy(o.logits, o.labels, o.probs, two), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_softmax_cross_entropy_backward(o.probs, labels36, o.logits), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_softmax_cross_entropy_backward(o.probs, o.labels, o.x), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sum(o.x, two), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_mean(o.x, two), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_norm(o.x, two), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_column_sum(o.x, columns52), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_argmax(o.x, labels36), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_accuracy(o.logits, labels36, o.scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_accuracy(o.logits, o.labels, two), STATUS_BAD_ARGUMENT);

    /* nothing written by the refused calls */
    REQUIRE((y_after = download(o.y)));
    REQUIRE((y_want = reference(37 * 53)));
    for (int i = 0; i < 37 * 53; i++) y_want[i] = 7.0;
    EXPECT_CLOSE("output of refused calls", y_after, y_want, 37 * 53, 0.0, 0.0);
cleanup:
    free_operands(&o);
    tensor_free(b52);
    tensor_free(bias28);
    tensor_free(labels36);
    tensor_free(two);
    tensor_free(columns52);
    free(hb);
    free(hbias);
    free(y_after);
    free(y_want);
}

static void test_ops_refuse_null_operands(void)
{
    operands o;
    const bool made = make_operands(&o);
    REQUIRE(made);
    EXPECT_REFUSED(op_fill(NULL, 1.0f), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_add(NULL, o.x, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_add(o.x, NULL, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_add(o.x, o.x, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sub(NULL, o.x, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_mul(o.x, NULL, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_scale(NULL, 1.0f, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_scale(o.x, 1.0f, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_axpy(1.0f, NULL, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_axpy(1.0f, o.x, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul(NULL, false, o.b, false, NULL, o.mm), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul(o.x, false, NULL, false, NULL, o.mm), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul(o.x, false, o.b, false, o.bias, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_relu(NULL, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_relu_backward(o.x, NULL, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sigmoid(o.x, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sigmoid_backward(NULL, o.x, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_softmax_cross_entropy(o.logits, NULL, o.probs, o.scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_softmax_cross_entropy(o.logits, o.labels, o.probs, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_softmax_cross_entropy_backward(o.probs, o.labels, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sum(NULL, o.scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_mean(o.x, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_norm(NULL, o.scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_column_sum(o.x, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_argmax(NULL, o.indices), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_accuracy(o.logits, NULL, o.scalar), STATUS_BAD_ARGUMENT);
cleanup:
    free_operands(&o);
}

static void test_ops_refuse_int32_where_float32_is_expected(void)
{
    operands o;
    const bool made = make_operands(&o);
    REQUIRE(made);
    /* o.ints is int32 [37, 53], the shape of o.x */
    EXPECT_REFUSED(op_add(o.ints, o.x, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_add(o.x, o.x, o.ints), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_mul(o.x, o.ints, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_scale(o.ints, 2.0f, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_axpy(2.0f, o.ints, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_relu(o.ints, o.y), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sigmoid(o.x, o.ints), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_matmul(o.ints, false, o.b, false, NULL, o.mm), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sum(o.ints, o.scalar), STATUS_BAD_ARGUMENT);
    /* labels must be int32, argmax's output too */
    EXPECT_REFUSED(op_softmax_cross_entropy(o.logits, o.rows, o.probs, o.scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_softmax_cross_entropy_backward(o.probs, o.rows, o.logits), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_accuracy(o.logits, o.rows, o.scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_argmax(o.logits, o.rows), STATUS_BAD_ARGUMENT);
cleanup:
    free_operands(&o);
}

/* A bf16 or f16 operand, in any place of any operation but op_matmul's inputs,
 * is refused with the hint to convert it, and nothing is written. */
static void expect_refused_16_bit(const char *call, status s, const char *type, int line)
{
    const char *msg = last_error();
    if (s != STATUS_BAD_ARGUMENT)
        harness_fail(__FILE__, line, "%s with a %s operand returned %s, want STATUS_BAD_ARGUMENT (\"%s\")",
                     call, type, status_name(s), msg);
    else if (strstr(msg, type) == NULL || strstr(msg, "tensor_convert") == NULL)
        harness_fail(__FILE__, line, "%s: the message does not name %s and tensor_convert: \"%s\"", call,
                     type, msg);
}

#define EXPECT_REFUSED_16_BIT(call, type)                 \
    do {                                                  \
        clear_error();                                    \
        status s_ = (call);                               \
        expect_refused_16_bit(#call, s_, type, __LINE__); \
    } while (0)

/* Every operation with one operand of `type`, the others right. */
static void check_16_bit_refusals(const operands *o, dtype type)
{
    /* h is [37, 53] like o->x; hl [37, 13] like the logits; h1 [1]; hc [53]; hr [37] */
    tensor *h = NULL, *hl = NULL, *h1 = NULL, *hc = NULL, *hr = NULL;
    const char *name = dtype_name(type);
    REQUIRE_OK(tensor_empty(&h, dev, type, shape2(37, 53)));
    REQUIRE_OK(tensor_empty(&hl, dev, type, shape2(37, 13)));
    REQUIRE_OK(tensor_empty(&h1, dev, type, shape1(1)));
    REQUIRE_OK(tensor_empty(&hc, dev, type, shape1(53)));
    REQUIRE_OK(tensor_empty(&hr, dev, type, shape1(37)));
    EXPECT_REFUSED_16_BIT(op_fill(h, 1.0f), name);
    EXPECT_REFUSED_16_BIT(op_fill(h, 0.0f), name);
    EXPECT_REFUSED_16_BIT(op_add(h, o->x, o->y), name);
    EXPECT_REFUSED_16_BIT(op_add(o->x, h, o->y), name);
    EXPECT_REFUSED_16_BIT(op_add(o->x, o->x, h), name);
    EXPECT_REFUSED_16_BIT(op_sub(h, o->x, o->y), name);
    EXPECT_REFUSED_16_BIT(op_mul(o->x, h, o->y), name);
    EXPECT_REFUSED_16_BIT(op_scale(h, 2.0f, o->y), name);
    EXPECT_REFUSED_16_BIT(op_scale(o->x, 2.0f, h), name);
    EXPECT_REFUSED_16_BIT(op_axpy(2.0f, h, o->y), name);
    EXPECT_REFUSED_16_BIT(op_axpy(2.0f, o->x, h), name);
    EXPECT_REFUSED_16_BIT(op_relu(h, o->y), name);
    EXPECT_REFUSED_16_BIT(op_relu_backward(o->x, h, o->y), name);
    EXPECT_REFUSED_16_BIT(op_sigmoid(o->x, h), name);
    EXPECT_REFUSED_16_BIT(op_sigmoid_backward(h, o->x, o->y), name);
    EXPECT_REFUSED_16_BIT(op_softmax_cross_entropy(hl, o->labels, o->probs, o->scalar), name);
    EXPECT_REFUSED_16_BIT(op_softmax_cross_entropy(o->logits, o->labels, hl, o->scalar), name);
    EXPECT_REFUSED_16_BIT(op_softmax_cross_entropy(o->logits, o->labels, o->probs, h1), name);
    EXPECT_REFUSED_16_BIT(op_softmax_cross_entropy_backward(hl, o->labels, o->logits), name);
    EXPECT_REFUSED_16_BIT(op_softmax_cross_entropy_backward(o->probs, o->labels, hl), name);
    EXPECT_REFUSED_16_BIT(op_sum(h, o->scalar), name);
    EXPECT_REFUSED_16_BIT(op_mean(o->x, h1), name);
    EXPECT_REFUSED_16_BIT(op_norm(h, o->scalar), name);
    EXPECT_REFUSED_16_BIT(op_column_sum(h, o->columns), name);
    EXPECT_REFUSED_16_BIT(op_column_sum(o->x, hc), name);
    EXPECT_REFUSED_16_BIT(op_argmax(hl, o->indices), name);
    EXPECT_REFUSED_16_BIT(op_accuracy(hl, o->labels, o->scalar), name);
    EXPECT_REFUSED_16_BIT(op_accuracy(o->logits, o->labels, h1), name);
    /* the matrix product takes 16-bit inputs, but writes float32 only */
    EXPECT_REFUSED(op_matmul(o->x, false, o->b, false, NULL, hl), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), name);
    /* labels and argmax's indices must be int32 */
    EXPECT_REFUSED(op_softmax_cross_entropy(o->logits, hr, o->probs, o->scalar), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_argmax(o->logits, hr), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(h);
    tensor_free(hl);
    tensor_free(h1);
    tensor_free(hc);
    tensor_free(hr);
}

static void test_ops_refuse_bf16_and_f16_operands_and_say_convert(void)
{
    operands o;
    float *y_after = NULL;
    double *y_want = NULL;
    const bool made = make_operands(&o);
    REQUIRE(made);
    REQUIRE_OK(op_fill(o.y, 7.0f)); /* a refused call must leave it as it is */
    check_16_bit_refusals(&o, DTYPE_BF16);
    check_16_bit_refusals(&o, DTYPE_F16);
    REQUIRE((y_after = download(o.y)));
    REQUIRE((y_want = reference(37 * 53)));
    for (int i = 0; i < 37 * 53; i++) y_want[i] = 7.0;
    EXPECT_CLOSE("output of refused calls", y_after, y_want, 37 * 53, 0.0, 0.0);
cleanup:
    free_operands(&o);
    free(y_after);
    free(y_want);
}

/* ============================================================================ */

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "DEVICE   (cpu, sim:0, cuda:0, ...)", &dev);
    if (rc != 0) return rc;
    other = device_is_gpu(dev) ? device_cpu() : try_gpu(0);
    printf("testing the operations on %s (refusals against %s)\n", device_name(dev), device_name(other));

    RUN_TEST(test_fill_writes_every_element);
    RUN_TEST(test_add_matches_reference);
    RUN_TEST(test_sub_matches_reference);
    RUN_TEST(test_mul_matches_reference);
    RUN_TEST(test_scale_matches_reference);
    RUN_TEST(test_axpy_adds_alpha_x_to_y);
    RUN_TEST(test_elementwise_ops_work_in_place);
    RUN_TEST(test_matmul_matches_reference_for_every_transpose_and_bias);
    RUN_TEST(test_matmul_handles_vectors_and_thin_shapes);
    RUN_TEST(test_matmul_refuses_an_output_that_is_an_input);
    RUN_TEST(test_relu_matches_reference);
    RUN_TEST(test_relu_backward_passes_gradient_where_input_is_positive);
    RUN_TEST(test_sigmoid_matches_reference);
    RUN_TEST(test_sigmoid_saturates_without_nan);
    RUN_TEST(test_sigmoid_backward_matches_reference);
    RUN_TEST(test_softmax_cross_entropy_matches_reference);
    RUN_TEST(test_softmax_cross_entropy_is_stable_for_large_logits);
    RUN_TEST(test_softmax_cross_entropy_backward_matches_reference);
    RUN_TEST(test_softmax_cross_entropy_works_in_place);
    RUN_TEST(test_sum_mean_norm_match_reference);
    RUN_TEST(test_sum_and_mean_keep_small_terms);
    RUN_TEST(test_column_sum_matches_reference);
    RUN_TEST(test_argmax_finds_each_rows_largest_value);
    RUN_TEST(test_accuracy_is_the_fraction_of_rows_predicted_right);
    RUN_TEST(test_ops_refuse_operands_on_two_devices_and_copy_nothing);
    RUN_TEST(test_ops_refuse_mismatched_shapes_and_name_them);
    RUN_TEST(test_ops_refuse_null_operands);
    RUN_TEST(test_ops_refuse_int32_where_float32_is_expected);
    RUN_TEST(test_ops_refuse_bf16_and_f16_operands_and_say_convert);
    return harness_finish();
}
