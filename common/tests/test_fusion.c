/* test_fusion.c: the fused operations (one launch, one kernel on a GPU) against
 * the unfused ones they replace, on one device.
 *
 *   test_fusion cpu | sim:0 | cuda:0      (exits 77 when the device is absent)
 *
 * Where the order of the float operations is the same, the results must be
 * the same bits: the SGD step on every device; the bias added in the
 * product's epilogue on the cpu and the simulated GPU. Where it is not, the
 * bound is stated next to the test: the column sums (float64 totals added in
 * another order), the softmax cross-entropy's mean loss (likewise), and on a
 * real GPU the epilogue (cuBLASLt may pick another algorithm than cuBLAS) and
 * the softmax (nvcc's expf). Each comparison is shown to fail on a plausible
 * wrong result first (a known-wrong version computed here), so that a
 * comparison that cannot fail is itself a failure. */
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
#include "labkit/tensor.h"

static device dev;

#define EPS32 (1.0 / 16777216.0)         /* 2^-24: float32's unit roundoff */
#define EPS64 (1.0 / 9007199254740992.0) /* 2^-53 */

/* ---- helpers ---------------------------------------------------------------- */

static float *random_host(int64_t n, float min_mag, float max_mag, uint64_t seed)
{
    float *h = test_malloc((size_t)n * sizeof(float));
    if (!h) return NULL;
    test_rng rng = test_rng_seeded(seed);
    test_fill_nonzero(&rng, h, n, min_mag, max_mag);
    return h;
}

static tensor *on_device(shape s, const float *host)
{
    tensor *t = NULL;
    const status st = tensor_from_host(&t, dev, s, host);
    if (st != STATUS_OK)
        harness_fail(__FILE__, __LINE__, "tensor_from_host on %s: %s: %s", device_name(dev), status_name(st),
                     last_error());
    return t;
}

static float *download(const tensor *t)
{
    const int64_t n = tensor_numel(t);
    float *h = test_malloc((size_t)n * sizeof(float));
    if (h && tensor_to_host(t, h, n) != STATUS_OK) {
        harness_fail(__FILE__, __LINE__, "tensor_to_host: %s", last_error());
        free(h);
        return NULL;
    }
    return h;
}

static uint64_t launches(void)
{
    device_counters c;
    return counters_read(dev, &c) == STATUS_OK ? c.launches : 0;
}

/* Whether got[i] is within bound[i] of want[i] for every i; the first few
 * that are not are printed when `say` is set (a comparison expected to hold). */
static bool within(const char *what, const float *got, const double *want, const double *bound, int64_t n,
                   bool say)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double diff = fabs((double)got[i] - want[i]);
        if (diff <= bound[i]) continue;
        if (say && bad < 5)
            fprintf(stderr, "    %s[%lld]: got %.9g, want %.9g, |diff| %.3g > bound %.3g\n", what,
                    (long long)i, (double)got[i], want[i], diff, bound[i]);
        ++bad;
    }
    return bad == 0;
}

static bool same_bits(const float *a, const float *b, int64_t n) { return memcmp(a, b, (size_t)n * 4) == 0; }

/* ============================================================================
 * SGD with momentum over a list of tensors, in one launch
 * ========================================================================== */

#define SGD_TENSORS 4
static const int64_t sgd_rows[SGD_TENSORS] = { 37, 1, 53, 7 }, sgd_cols[SGD_TENSORS] = { 53, 29, 1, 3 };

/* params, grads, velocities: two identical sets on dev, from the same seeds. */
typedef struct sgd_set {
    tensor *p[SGD_TENSORS], *g[SGD_TENSORS], *v[SGD_TENSORS];
} sgd_set;

static bool sgd_set_make(sgd_set *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < SGD_TENSORS; ++i) {
        const int64_t n = sgd_rows[i] * sgd_cols[i];
        const shape sh = shape2(sgd_rows[i], sgd_cols[i]);
        float *hp = random_host(n, 0.1f, 2.0f, seed + 3 * (uint64_t)i);
        float *hg = random_host(n, 1e-3f, 1.0f, seed + 3 * (uint64_t)i + 1);
        float *hv = random_host(n, 1e-3f, 1.0f, seed + 3 * (uint64_t)i + 2);
        if (hp && hg && hv)
            s->p[i] = on_device(sh, hp), s->g[i] = on_device(sh, hg), s->v[i] = on_device(sh, hv);
        free(hp), free(hg), free(hv);
        if (!s->p[i] || !s->g[i] || !s->v[i]) return false;
    }
    return true;
}

static void sgd_set_free(sgd_set *s)
{
    for (int i = 0; i < SGD_TENSORS; ++i) tensor_free(s->p[i]), tensor_free(s->g[i]), tensor_free(s->v[i]);
}

/* labs/common/mlp.c's unfused update, tensor by tensor. */
static status sgd_unfused(sgd_set *s, float lr, float momentum)
{
    for (int i = 0; i < SGD_TENSORS; ++i) {
        if (momentum == 0.0f) {
            TRY(op_axpy(-lr, s->g[i], s->p[i]));
            continue;
        }
        TRY(op_scale(s->v[i], momentum, s->v[i]));
        TRY(op_axpy(1.0f, s->g[i], s->v[i]));
        TRY(op_axpy(-lr, s->v[i], s->p[i]));
    }
    return STATUS_OK;
}

/* Every tensor of a and b the same bits (params and velocities). */
static bool sgd_sets_equal(const sgd_set *a, const sgd_set *b)
{
    bool equal = true;
    for (int i = 0; i < SGD_TENSORS; ++i) {
        const tensor *pairs[2][2] = { { a->p[i], b->p[i] }, { a->v[i], b->v[i] } };
        for (int k = 0; k < 2; ++k) {
            float *x = download(pairs[k][0]), *y = download(pairs[k][1]);
            equal = equal && x && y && same_bits(x, y, tensor_numel(pairs[k][0]));
            free(x), free(y);
        }
    }
    return equal;
}

static void check_sgd(float lr, float momentum)
{
    sgd_set fused, unfused, wrong;
    const bool made = sgd_set_make(&fused, 11) && sgd_set_make(&unfused, 11) && sgd_set_make(&wrong, 11);
    REQUIRE(made);
    REQUIRE_OK(sgd_unfused(&unfused, lr, momentum));
    REQUIRE_OK(sgd_unfused(&unfused, lr, momentum)); /* twice: the velocities matter the second time */
    const uint64_t before = launches();
    for (int step = 0; step < 2; ++step)
        REQUIRE_OK(
            op_sgd_momentum(fused.p, (const tensor *const *)fused.g, fused.v, SGD_TENSORS, lr, momentum));
    EXPECT_EQ_I64(launches() - before, 2); /* one launch per step, whatever the number of tensors */
    /* The comparison catches a step whose learning rate is one float32 ulp off. */
    const float lr_off = nextafterf(lr, 1.0f);
    for (int step = 0; step < 2; ++step)
        REQUIRE_OK(
            op_sgd_momentum(wrong.p, (const tensor *const *)wrong.g, wrong.v, SGD_TENSORS, lr_off, momentum));
    EXPECT_MSG(!sgd_sets_equal(&wrong, &unfused), "the comparison did not catch a learning rate one ulp off");
    EXPECT_MSG(sgd_sets_equal(&fused, &unfused),
               "op_sgd_momentum (lr %g, momentum %g) on %s: not the bits of op_scale, op_axpy, op_axpy",
               (double)lr, (double)momentum, device_name(dev));
cleanup:
    sgd_set_free(&fused), sgd_set_free(&unfused), sgd_set_free(&wrong);
}

static void test_sgd_momentum_is_the_unfused_update_bit_for_bit(void) { check_sgd(0.05f, 0.9f); }
static void test_sgd_without_momentum_is_the_unfused_update_bit_for_bit(void) { check_sgd(0.3f, 0.0f); }

static void test_sgd_momentum_refuses_bad_lists_and_says_why(void)
{
    sgd_set s;
    tensor *other = NULL, *elsewhere = NULL;
    REQUIRE(sgd_set_make(&s, 5));
    const tensor *const *g = (const tensor *const *)s.g;
    EXPECT_REFUSED(op_sgd_momentum(NULL, g, s.v, 1, 0.1f, 0.9f), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sgd_momentum(s.p, g, NULL, 1, 0.1f, 0.9f), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "velocities");
    EXPECT_REFUSED(op_sgd_momentum(s.p, g, s.v, 0, 0.1f, 0.9f), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(op_sgd_momentum(s.p, g, s.v, OP_SGD_MAX_TENSORS + 1, 0.1f, 0.9f), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "OP_SGD_MAX_TENSORS");
    EXPECT_REFUSED(op_sgd_momentum(s.p, g, s.v, 1, NAN, 0.9f), STATUS_BAD_ARGUMENT);
    /* a gradient of another shape */
    tensor *p1[] = { s.p[0] }, *v1[] = { s.v[0] };
    const tensor *g1[] = { s.g[1] };
    EXPECT_REFUSED(op_sgd_momentum(p1, g1, v1, 1, 0.1f, 0.9f), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "grads[0]");
    /* a parameter listed twice */
    tensor *p2[] = { s.p[0], s.p[0] }, *v2[] = { s.v[0], s.v[0] };
    const tensor *g2[] = { s.g[0], s.g[0] };
    EXPECT_REFUSED(op_sgd_momentum(p2, g2, v2, 2, 0.1f, 0.9f), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "share memory");
    /* a tensor on another device */
    const device d2 = device_is_gpu(dev) ? device_cpu() : try_gpu(0);
    if (!device_equal(d2, dev)) {
        REQUIRE_OK(tensor_zeros(&elsewhere, d2, tensor_shape(s.p[1])));
        tensor *p3[] = { s.p[0], elsewhere }, *v3[] = { s.v[0], s.v[1] };
        const tensor *g3[] = { s.g[0], s.g[1] };
        EXPECT_REFUSED(op_sgd_momentum(p3, g3, v3, 2, 0.1f, 0.9f), STATUS_WRONG_DEVICE);
    }
    /* int32 */
    REQUIRE_OK(tensor_empty(&other, dev, DTYPE_I32, tensor_shape(s.p[0])));
    const tensor *g4[] = { other };
    EXPECT_REFUSED(op_sgd_momentum(p1, g4, v1, 1, 0.1f, 0.9f), STATUS_BAD_ARGUMENT);
cleanup:
    sgd_set_free(&s);
    tensor_free(other), tensor_free(elsewhere);
}

/* ============================================================================
 * the bias in the product's epilogue
 * ========================================================================== */

/* out = a b + bias against out = a b, then the bias added on the host (one
 * float32 addition per element, as the kernel that added it did). */
static void test_bias_in_the_epilogue_is_the_product_then_the_bias(void)
{
    const int64_t m = 37, k = 53, n = 29;
    float *ha = random_host(m * k, 0.1f, 1.0f, 21), *hb = random_host(k * n, 0.1f, 1.0f, 22);
    float *hbias = random_host(n, 0.1f, 1.0f, 23), *fused = NULL, *plain = NULL;
    double *unfused = calloc((size_t)(m * n), sizeof(double)),
           *wrong = calloc((size_t)(m * n), sizeof(double));
    double *bound = calloc((size_t)(m * n), sizeof(double));
    tensor *a = NULL, *b = NULL, *bias = NULL, *out = NULL, *out_plain = NULL;
    REQUIRE(ha && hb && hbias && unfused && wrong && bound);
    REQUIRE((a = on_device(shape2(m, k), ha)) && (b = on_device(shape2(k, n), hb)));
    REQUIRE((bias = on_device(shape1(n), hbias)));
    REQUIRE_OK(tensor_empty(&out, dev, DTYPE_F32, shape2(m, n)));
    REQUIRE_OK(tensor_empty(&out_plain, dev, DTYPE_F32, shape2(m, n)));
    const uint64_t before = launches();
    REQUIRE_OK(op_matmul(a, false, b, false, bias, out));
    EXPECT_EQ_I64(launches() - before, 1);
    REQUIRE_OK(op_matmul(a, false, b, false, NULL, out_plain));
    REQUIRE((fused = download(out)) && (plain = download(out_plain)));
    /* On a real GPU cuBLASLt's algorithm may add the k products in another
     * order than cuBLAS's: each result is then within k 2^-24 sum |a b| of
     * the exact dot product (the standard bound for float32 sums), so the two
     * within twice that, plus the bias's rounding. Elsewhere: the same bits. */
    const bool exact = !device_is_gpu(dev) || dev.kind == DEVICE_SIM;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double magnitude = 0.0;
            for (int64_t p = 0; p < k; ++p) magnitude += fabs((double)ha[i * k + p] * hb[p * n + j]);
            const float sum = plain[i * n + j] + hbias[j];
            unfused[i * n + j] = sum;
            wrong[i * n + j] = (double)(plain[i * n + j] + hbias[i % n]); /* the bias by row, not by column */
            bound[i * n + j] = exact ? 0.0 : 2.0 * (double)k * EPS32 * magnitude + EPS32 * fabs((double)sum);
        }
    EXPECT_MSG(!within("bias by row", fused, wrong, bound, m * n, false),
               "the comparison did not catch a bias added by row");
    EXPECT_MSG(within("matmul + bias", fused, unfused, bound, m * n, true),
               "op_matmul with a bias on %s is not the product then the bias (%s)", device_name(dev),
               exact ? "bit for bit" : "within 2 k 2^-24 sum|a b|");
cleanup:
    free(ha), free(hb), free(hbias), free(fused), free(plain), free(unfused), free(wrong), free(bound);
    tensor_free(a), tensor_free(b), tensor_free(bias), tensor_free(out), tensor_free(out_plain);
}

/* ============================================================================
 * column sums, a block per group of columns
 * ========================================================================== */

/* Odd sizes: rows not a multiple of the slices, columns not of the group.
 * Bound: each side is a float64 sum of the same terms in some order, within
 * rows 2^-53 sum|x| of the exact sum, then rounded once to float32. */
static void test_column_sum_is_the_row_order_sum_within_its_bound(void)
{
    const int64_t rows = 301, cols = 77;
    float *hx = random_host(rows * cols, 0.01f, 3.0f, 31), *got = NULL;
    double *want = calloc((size_t)cols, sizeof(double)), *wrong = calloc((size_t)cols, sizeof(double));
    double *bound = calloc((size_t)cols, sizeof(double));
    tensor *x = NULL, *out = NULL;
    REQUIRE(hx && want && wrong && bound);
    REQUIRE((x = on_device(shape2(rows, cols), hx)));
    REQUIRE_OK(tensor_empty(&out, dev, DTYPE_F32, shape1(cols)));
    REQUIRE_OK(op_column_sum(x, out));
    REQUIRE((got = download(out)));
    for (int64_t c = 0; c < cols; ++c) {
        double total = 0.0, magnitude = 0.0;
        for (int64_t r = 0; r < rows; ++r)
            total += hx[r * cols + c], magnitude += fabs((double)hx[r * cols + c]);
        want[c] = (float)total;
        wrong[c] = (float)(total - hx[(rows - 1) * cols + c]); /* the last row left out */
        bound[c] = EPS32 * fabs(total) * 2.0 + 2.0 * (double)rows * EPS64 * magnitude;
    }
    EXPECT_MSG(!within("last row left out", got, wrong, bound, cols, false),
               "the comparison did not catch a sum without its last row");
    EXPECT(within("column sums", got, want, bound, cols, true));
cleanup:
    free(hx), free(got), free(want), free(wrong), free(bound);
    tensor_free(x), tensor_free(out);
}

/* ============================================================================
 * the softmax cross-entropy in one kernel
 * ========================================================================== */

/* More rows than the kernel's threads (each thread takes several), a row of
 * very large logits (1e30: exp overflows unless shifted by the row's max),
 * labels in range. The probabilities are the same expressions as the CPU's
 * (cpu_ops.c) computed here: the same bits on the cpu and a simulated GPU,
 * within 4 ulps on a real one (nvcc's expf). The mean loss: float64 terms
 * added in another order, within rows 2^-52 sum|term| and one float32
 * rounding. */
static void test_softmax_cross_entropy_in_one_kernel_matches_its_rows(void)
{
    const int64_t rows = 600, cols = 10;
    float *hx = random_host(rows * cols, 0.01f, 4.0f, 41), *probs = NULL, *replica = NULL;
    int32_t *hl = calloc((size_t)rows, sizeof(int32_t));
    double *want = calloc((size_t)(rows * cols), sizeof(double)), *bound = calloc((size_t)(rows * cols), 8);
    tensor *x = NULL, *labels = NULL, *p = NULL, *loss = NULL;
    REQUIRE(hx && hl && want && bound && (replica = test_malloc((size_t)(rows * cols) * 4)));
    for (int64_t c = 0; c < cols; ++c) hx[5 * cols + c] = 1e30f * (float)(c + 1) / (float)cols;
    test_rng rng = test_rng_seeded(42);
    for (int64_t r = 0; r < rows; ++r) hl[r] = (int32_t)(test_rng_next(&rng) % (uint64_t)cols);
    hl[5] = (int32_t)(cols - 1); /* its largest logit: a loss near 0, not 1e29, which would hide the others */
    REQUIRE((x = on_device(shape2(rows, cols), hx)));
    REQUIRE_OK(tensor_from_host_i32(&labels, dev, shape1(rows), hl));
    REQUIRE_OK(tensor_empty(&p, dev, DTYPE_F32, shape2(rows, cols)));
    REQUIRE_OK(tensor_zeros(&loss, dev, shape1(1)));
    const uint64_t before = launches();
    REQUIRE_OK(op_softmax_cross_entropy(x, labels, p, loss));
    EXPECT_EQ_I64(launches() - before, 1);
    REQUIRE((probs = download(p)));
    double total = 0.0, magnitude = 0.0, first_rows = 0.0;
    for (int64_t r = 0; r < rows; ++r) {
        const float *in = hx + r * cols;
        float *q = replica + r * cols;
        int64_t best = 0;
        for (int64_t c = 1; c < cols; ++c)
            if (in[c] > in[best]) best = c;
        const float max = in[best];
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) sum += (q[c] = expf(in[c] - max));
        for (int64_t c = 0; c < cols; ++c) q[c] = (float)(q[c] / sum);
        const double term = log(sum) - (double)(in[hl[r]] - max);
        total += term, magnitude += fabs(term);
        if (r < 256) first_rows += term;
    }
    const bool exact = !device_is_gpu(dev) || dev.kind == DEVICE_SIM;
    for (int64_t i = 0; i < rows * cols; ++i)
        want[i] = replica[i], bound[i] = exact ? 0.0 : 4.0 * EPS32 * 2.0 * fabs(want[i]);
    EXPECT_MSG(within("probs", probs, want, bound, rows * cols, true), "softmax probabilities on %s: not %s",
               device_name(dev), exact ? "the CPU's bits" : "within 4 float32 ulps of the CPU's");
    float got_loss = NAN;
    REQUIRE_OK(tensor_item(loss, &got_loss));
    const double mean = total / (double)rows;
    const double loss_bound =
        2.0 * EPS32 * fabs(mean) + 2.0 * (double)rows * EPS64 * magnitude / (double)rows;
    const double wrong_mean = first_rows / (double)rows; /* the first block of rows only */
    EXPECT_MSG(!(fabs((double)(float)wrong_mean - mean) <= loss_bound),
               "the bound did not catch a loss over the first 256 rows only");
    EXPECT_MSG(fabs((double)got_loss - mean) <= loss_bound, "mean loss %.9g on %s, want %.9g within %.3g",
               (double)got_loss, device_name(dev), mean, loss_bound);
cleanup:
    free(hx), free(hl), free(want), free(bound), free(probs), free(replica);
    tensor_free(x), tensor_free(labels), tensor_free(p), tensor_free(loss);
}

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "DEVICE   (cpu, sim:0, cuda:0, ...)", &dev);
    if (rc != 0) return rc;
    printf("testing the fused operations on %s\n", device_name(dev));
    RUN_TEST(test_sgd_momentum_is_the_unfused_update_bit_for_bit);
    RUN_TEST(test_sgd_without_momentum_is_the_unfused_update_bit_for_bit);
    RUN_TEST(test_sgd_momentum_refuses_bad_lists_and_says_why);
    RUN_TEST(test_bias_in_the_epilogue_is_the_product_then_the_bias);
    RUN_TEST(test_column_sum_is_the_row_order_sum_within_its_bound);
    RUN_TEST(test_softmax_cross_entropy_in_one_kernel_matches_its_rows);
    return harness_finish();
}
