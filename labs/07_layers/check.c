/* check.c: lab 07's claims, on the device given with --device (default: cpu).
 *
 *   - the convolution's output shape, on exact inputs, and the refusal of
 *     shapes that have none;
 *   - the direct convolution and the one through im2col match float64, on
 *     odd shapes, padding 0 and 1, a filter that is not square, C and K that
 *     are multiples of nothing;
 *   - the im2col buffer holds x's windows exactly, zeros in the padding, and
 *     is C R S x H_out W_out floats per image: the im2col path's peak memory
 *     is that buffer plus the product's result, and both are released;
 *   - the softmax matches float64 with its scale, its rows sum to 1 (also
 *     past the first block's 256 rows), rows of huge scores neither overflow
 *     nor give NaN (at scale 1 and 1/8), the causal mask zeroes the future
 *     (square, wider and taller: a row past the last column keeps them all),
 *     even a future that holds the largest scores;
 *   - attention matches float64, with and without the mask; its peak memory
 *     is one n x n matrix, released afterwards; it runs on its operands'
 *     device (sim:1 as well as sim:0) and on no other;
 *   - attention in one pass (step 7) matches float64 and the two products, on
 *     partial tiles, with and without the mask, on scores of +-1e4; it is one
 *     launch, and its memory (the operands) doubles from n = 256 to 512 where
 *     the two products' nearly quadruples;
 *   - ./lab check 07 --kernels: the kernels under the kernel sanitizer, and
 *     the profiler's counts: im2col's and the direct convolution's stores 4
 *     sectors per request or fewer,
 *     the one pass's tiles without bank conflicts, each copied once (2
 *     barriers a tile), each row's keys shared among its parts (shared
 *     load requests), q, K and V loaded once (global load requests), and
 *     fewer loads with the mask than without;
 *   - each layer is the launches it should be, queued without waiting;
 *   - when a call inside a layer fails (each allocation, view, product and
 *     launch in turn, by the calls' wrappers below), the layer returns the
 *     failure and leaves no memory behind;
 *   - on a real GPU: im2col and one product beat the direct kernel by a wide
 *     margin at a realistic size; the products' share of attention's time at
 *     n = 4096 is reported.
 * Every claim but the GPU's speed is an exact count or a comparison with
 * float64 whose tolerance is far above float32's rounding and far below what a
 * wrong index or a missing term gives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "given.h"
#include "lab.h"
#include "labkit/check_kernels.h"

/* A convolution's output against float64, relative to the size of its terms
 * (given.h): a float32 sum of the check's at most 45 terms is off by less than
 * 3e-6 of it; a wrong tap or a missing term, by 0.01 or more. */
#define CONV_TOLERANCE 1e-5
/* Softmax probabilities, relative to each one; attention's outputs, relative
 * to sum p |v| (given.h). float32 gets them to about 1e-6. */
#define SOFTMAX_TOLERANCE 1e-4
#define ATTENTION_TOLERANCE 1e-4

/* A [shape] tensor of uniform values in [low, high) on d, and its values on the host. */
static tensor *uniform(device d, shape s, float low, float high, uint64_t seed, float **host)
{
    tensor *t;
    CHECK(tensor_uniform(&t, d, s, low, high, seed));
    CHECK(host_copy(t, host));
    return t;
}

/* What the check puts in an output before a call: a NaN whose bits no
 * arithmetic makes (0 / 0 or inf - inf gives the default NaN, 0x7fc00000 or
 * 0xffc00000, 0x7fffffff on a GPU), so that an element still holding it was
 * never written, and NaN that a kernel wrote is a wrong value like any other.
 * It goes over from the host bit for bit: a fill on the device could pass it
 * through conversions that change a NaN's bits. */
#define UNWRITTEN_BITS 0x7fe11ce5u

static tensor *unwritten_tensor(device d, shape s)
{
    const int64_t numel = shape_numel(s);
    const uint32_t bits = UNWRITTEN_BITS;
    float *host = malloc((size_t)numel * sizeof *host);
    if (!host) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
    for (int64_t i = 0; i < numel; ++i) memcpy(&host[i], &bits, sizeof bits);
    tensor *t;
    CHECK(tensor_from_host(&t, d, s, host));
    free(host);
    return t;
}

static bool unwritten(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits == UNWRITTEN_BITS;
}

/* A relative error as a figure: a value computed from terms that are all
 * zeros (a window over the padding) has no size to be relative to; NaN or
 * inf in the output (or an element never written) counts as infinite. */
static const char *error_text(double e)
{
    static char text[80];
    if (!isfinite(e))
        snprintf(text, sizeof text, "largest infinite: NaN, inf or an unwritten element in the output");
    else if (e > 1e3)
        snprintf(text, sizeof text, "largest over 1000: a value that must be 0 is not");
    else
        snprintf(text, sizeof text, "largest %.2g", e);
    return text;
}

/* ---- step 1: the output's size ----------------------------------------------------- */

typedef struct conv_case {
    int64_t n, c, h, w, k, r, s, pad;
} conv_case;

/* Odd sizes, multiples of nothing; a filter that is not square; padding 0 and 1;
 * a 1 x 1 filter with padding, whose border outputs see nothing but zeros. */
static const conv_case cases[] = {
    { 2, 3, 7, 5, 5, 3, 2, 0 },
    { 1, 5, 6, 9, 3, 3, 3, 1 },
    { 3, 2, 4, 4, 7, 1, 1, 1 },
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static shape x_shape(const conv_case *c) { return shape4(c->n, c->c, c->h, c->w); }
static shape w_shape(const conv_case *c) { return shape4(c->k, c->c, c->r, c->s); }
static conv_dims dims_of(const conv_case *c)
{
    const conv_dims d = { c->n,
                          c->c,
                          c->h,
                          c->w,
                          c->k,
                          c->r,
                          c->s,
                          c->pad,
                          c->h + 2 * c->pad - c->r + 1,
                          c->w + 2 * c->pad - c->s + 1 };
    return d;
}

static void check_output_shape(void)
{
    static const struct {
        conv_case c;
        int64_t h_out, w_out;
    } good[] = { { { 2, 3, 7, 5, 5, 3, 2, 0 }, 5, 4 },        { { 1, 5, 6, 9, 3, 3, 3, 1 }, 6, 9 },
                 { { 32, 64, 56, 56, 64, 3, 3, 1 }, 56, 56 }, { { 1, 1, 5, 5, 1, 5, 5, 0 }, 1, 1 },
                 { { 1, 1, 2, 2, 4, 5, 5, 2 }, 2, 2 },        { { 3, 2, 4, 4, 7, 1, 1, 1 }, 6, 6 } };
    char figures[1024] = "6 shapes, padding 0 to 2, filters 1x1 to 5x5";
    bool right = true;
    for (size_t i = 0; right && i < sizeof good / sizeof good[0]; ++i) {
        const conv_case *c = &good[i].c;
        shape y = { 0 };
        const status s = CHECK_YOURS(lab_conv_output_shape(x_shape(c), w_shape(c), c->pad, &y));
        const shape want = shape4(c->n, c->k, good[i].h_out, good[i].w_out);
        right = s == STATUS_OK && y.ndim == 4 && memcmp(y.dims, want.dims, sizeof want.dims) == 0;
        if (!right) {
            char xs[64], ws[64], ys[64], wants[64];
            snprintf(figures, sizeof figures, "x %s, w %s, pad %lld: got %s, want %s%s",
                     shape_format(x_shape(c), xs, sizeof xs), shape_format(w_shape(c), ws, sizeof ws),
                     (long long)c->pad, s == STATUS_OK ? shape_format(y, ys, sizeof ys) : "a failure",
                     shape_format(want, wants, sizeof wants), check_failure_text(s));
        }
    }
    check_that(right, "the output shape is [N, K, H + 2 pad - R + 1, W + 2 pad - S + 1]", "%s", figures);

    static const struct {
        shape x, w;
        int64_t pad;
        const char *what;
    } bad[] = {
        { { 4, { 1, 3, 5, 5 } }, { 4, { 2, 4, 3, 3 } }, 0, "3 channels against filters of 4" },
        { { 4, { 1, 1, 3, 3 } }, { 4, { 1, 1, 5, 5 } }, 0, "a 5x5 filter on a 3x3 image, no padding" },
        { { 4, { 1, 1, 8, 3 } }, { 4, { 1, 1, 3, 5 } }, 0, "a 3x5 filter on an 8x3 image, no padding" },
        { { 4, { 1, 1, 8, 8 } }, { 4, { 1, 1, 3, 3 } }, -1, "padding -1" },
        { { 3, { 1, 8, 8 } }, { 4, { 1, 1, 3, 3 } }, 0, "a 3-D x" },
        { { 4, { 1, 1, 8, 8 } }, { 3, { 1, 1, 3 } }, 0, "a 3-D w" }
    };
    bool refused = true;
    snprintf(figures, sizeof figures, "%s",
             "different channels, a filter too tall, a filter too wide, a negative pad, a 3-D x, a 3-D w");
    for (size_t i = 0; refused && i < sizeof bad / sizeof bad[0]; ++i) {
        shape y = { 0 };
        const status s = CHECK_YOURS(lab_conv_output_shape(bad[i].x, bad[i].w, bad[i].pad, &y));
        refused = s == STATUS_BAD_ARGUMENT && last_error()[0] != '\0';
        if (!refused)
            snprintf(figures, sizeof figures, "%s: returned %s, want STATUS_BAD_ARGUMENT with a message",
                     bad[i].what, status_name(s));
    }
    check_that(refused, "a convolution that has no output is refused with a message", "%s", figures);
}

/* ---- steps 2 and 4: the two convolutions ---------------------------------------------- */

typedef status (*conv_fn)(const tensor *x, const tensor *w, int64_t pad, tensor *y);

/* The bytes in use on d once its queue is done. */
static long long bytes_in_use(device d)
{
    device_counters c;
    CHECK(device_synchronize(d));
    CHECK(counters_read(d, &c));
    return (long long)c.memory_current;
}

/* Every case through `conv` on d: the largest error against float64 and what
 * the device did in the worst call (the most launches, memory, ...). The
 * bytes left are read once the check has freed x, w and y: a view of w that
 * the call never freed keeps w's memory alive after the check's own free. */
static double run_conv_cases(device d, conv_fn conv, call_usage *most, char *figures, size_t size)
{
    double worst = 0.0;
    memset(most, 0, sizeof *most);
    snprintf(figures, size, "%d shapes, padding 0 and 1: |error| <= %g of sum |x w|", NCASES, CONV_TOLERANCE);
    for (int i = 0; i < NCASES; ++i) {
        const conv_case *c = &cases[i];
        const conv_dims dims = dims_of(c);
        float *hx, *hw, *hy;
        const long long held = bytes_in_use(d);
        tensor *x = uniform(d, x_shape(c), -1.0f, 1.0f, 70 + (uint64_t)i, &hx);
        tensor *w = uniform(d, w_shape(c), -1.0f, 1.0f, 80 + (uint64_t)i, &hw);
        tensor *y = unwritten_tensor(d, shape4(c->n, c->k, dims.h_out, dims.w_out));
        const size_t before = usage_begin(d);
        const status s = CHECK_YOURS(conv(x, w, c->pad, y));
        const call_usage u = usage_end(d, before);
        most->launches = u.launches > most->launches ? u.launches : most->launches;
        most->syncs += u.syncs;
        most->peak_bytes = u.peak_bytes > most->peak_bytes ? u.peak_bytes : most->peak_bytes;
        CHECK(host_copy(y, &hy));
        int64_t at = 0;
        const double e = s == STATUS_OK ? conv_error(hx, hw, &dims, hy, INT64_MAX, &at) : INFINITY;
        if (!(e <= CONV_TOLERANCE) && worst <= CONV_TOLERANCE) {
            int64_t never_written = 0;
            for (int64_t j = 0; j < tensor_numel(y); ++j) never_written += unwritten(hy[j]);
            char xs[64], ws[64];
            snprintf(figures, size, "x %s, w %s, pad %lld: y[%lld] = %.6g, float64 says %.6g%s%s",
                     shape_format(x_shape(c), xs, sizeof xs), shape_format(w_shape(c), ws, sizeof ws),
                     (long long)c->pad, (long long)at, (double)hy[at],
                     conv_reference(hx, hw, &dims, at, NULL),
                     s == STATUS_OK && never_written == tensor_numel(y)
                         ? " (no element of y was written: is the kernel still empty?)"
                         : "",
                     check_failure_text(s));
        }
        worst = fmax(worst, e);
        tensor_free(x), tensor_free(w), tensor_free(y), free(hx), free(hw), free(hy);
        const long long left = bytes_in_use(d) - held;
        most->left_bytes = left > most->left_bytes ? left : most->left_bytes;
    }
    return worst;
}

static void check_direct(device d)
{
    call_usage u;
    char figures[1024];
    const double worst = run_conv_cases(d, lab_conv_direct, &u, figures, sizeof figures);
    check_that(worst <= CONV_TOLERANCE, "the direct convolution matches float64", "%s (%s)", figures,
               error_text(worst));
    check_that(u.launches == 1 && u.syncs == 0 && u.peak_bytes == 0 && u.left_bytes == 0,
               "the direct convolution is one launch, queued, and needs no memory beyond y",
               "on %s: launches %llu, waits %llu, %lld bytes at its peak, %lld left once x, w and y were "
               "freed (want 1, 0, 0, 0)",
               device_name(d), (unsigned long long)u.launches, (unsigned long long)u.syncs, u.peak_bytes,
               u.left_bytes);
}

/* ---- step 3: the im2col buffer ------------------------------------------------------- */

static void check_im2col(device d)
{
    char figures[1024];
    bool exact = true;
    call_usage most = { 0 };
    snprintf(figures, sizeof figures, "%d shapes, every element of the buffer, padding 0 and 1", NCASES);
    for (int i = 0; i < NCASES && exact; ++i) {
        const conv_case *c = &cases[i];
        const conv_dims dims = dims_of(c);
        const int64_t rows = c->c * c->r * c->s, width = c->n * dims.h_out * dims.w_out;
        float *hx, *hcols;
        tensor *x = uniform(d, x_shape(c), -1.0f, 1.0f, 90 + (uint64_t)i, &hx), *cols;
        CHECK(tensor_full(&cols, d, shape2(rows, width), NAN));
        const size_t before = usage_begin(d);
        const status s = CHECK_YOURS(lab_im2col(x, c->r, c->s, c->pad, cols));
        const call_usage u = usage_end(d, before);
        most.launches = u.launches > most.launches ? u.launches : most.launches, most.syncs += u.syncs;
        most.peak_bytes = u.peak_bytes > most.peak_bytes ? u.peak_bytes : most.peak_bytes;
        most.left_bytes = u.left_bytes > most.left_bytes ? u.left_bytes : most.left_bytes;
        CHECK(host_copy(cols, &hcols));
        for (int64_t j = 0; j < rows * width && exact; ++j) {
            const float want = im2col_reference(hx, &dims, j / width, j % width);
            exact = s == STATUS_OK && hcols[j] == want;
            if (exact) continue;
            const int64_t row = j / width, col = j % width, pixels = dims.h_out * dims.w_out;
            char xs[64];
            snprintf(
                figures, sizeof figures,
                "x %s, %lldx%lld filter, pad %lld: cols[%lld, %lld] (c %lld, r %lld, s %lld; image %lld, "
                "oh %lld, ow %lld) = %.6g, want %.6g%s",
                shape_format(x_shape(c), xs, sizeof xs), (long long)c->r, (long long)c->s, (long long)c->pad,
                (long long)row, (long long)col, (long long)(row / (c->r * c->s)),
                (long long)(row / c->s % c->r), (long long)(row % c->s), (long long)(col / pixels),
                (long long)(col % pixels / dims.w_out), (long long)(col % dims.w_out), (double)hcols[j],
                (double)want, check_failure_text(s));
        }
        tensor_free(x), tensor_free(cols), free(hx), free(hcols);
    }
    check_that(exact,
               "the im2col buffer holds x's windows: row (c, r, s), column (n, oh, ow), zeros in the padding",
               "%s", figures);
    check_that(most.launches == 1 && most.syncs == 0 && most.peak_bytes == 0 && most.left_bytes == 0,
               "im2col is one launch, queued, and needs no memory beyond its buffer",
               "on %s: launches %llu, waits %llu, %lld bytes at its peak, %lld left (want 1, 0, 0, 0)",
               device_name(d), (unsigned long long)most.launches, (unsigned long long)most.syncs,
               most.peak_bytes, most.left_bytes);
}

/* ---- step 4: convolution as one product ---------------------------------------------- */

static void check_conv_im2col(device d)
{
    call_usage u;
    char figures[1024];
    const double worst = run_conv_cases(d, lab_conv_im2col, &u, figures, sizeof figures);
    check_that(worst <= CONV_TOLERANCE, "the convolution through im2col and one product matches float64",
               "%s (%s)", figures, error_text(worst));
    /* The peak of the largest case: the buffer [C R S, N H_out W_out] and the
     * product's [K, N H_out W_out], both alive while the product runs. */
    long long want = 0, buffer = 0;
    for (int i = 0; i < NCASES; ++i) {
        const conv_dims d7 = dims_of(&cases[i]);
        const long long pixels = (long long)(d7.n * d7.h_out * d7.w_out),
                        taps = (long long)(d7.c * d7.r * d7.s);
        if ((taps + d7.k) * pixels * 4 > want) want = (taps + d7.k) * pixels * 4, buffer = taps * pixels * 4;
    }
    check_that(
        u.peak_bytes == want && u.left_bytes == 0,
        "the im2col path's peak memory is its buffer (C R S x H_out W_out floats per image) and the "
        "product's result, both released",
        "largest case: %lld bytes at the peak, want %lld (buffer %lld + product %lld); %lld bytes left "
        "once the check freed x, w and y (want 0: w's memory outlives the check's free while a view of "
        "it lives)",
        u.peak_bytes, want, buffer, want - buffer, u.left_bytes);
    check_that(u.launches == 3 && u.syncs == 0,
               "the im2col path is 3 launches, queued: im2col, the product, the reorder",
               "on %s: launches %llu, waits %llu (want 3, 0: the buffer needs no zeroing, im2col writes it "
               "all)",
               device_name(d), (unsigned long long)u.launches, (unsigned long long)u.syncs);
}

/* ---- step 5: the softmax --------------------------------------------------------------- */

/* Softmax of rows x cols host values through lab_softmax_rows on d: the
 * largest relative error against float64, the largest |sum - 1|, and whether
 * every masked value is exactly 0. */
typedef struct softmax_result {
    double error, sum_error;
    bool future_zero, finite;
    call_usage u;
    status s;
} softmax_result;

static softmax_result run_softmax(device d, const float *values, int64_t rows, int64_t cols, float scale,
                                  bool causal)
{
    softmax_result r = { 0.0, 0.0, true, true, { 0 }, STATUS_OK };
    tensor *t;
    float *p;
    double *want = malloc((size_t)cols * sizeof *want);
    if (!want) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
    CHECK(tensor_from_host(&t, d, shape2(rows, cols), values));
    const size_t before = usage_begin(d);
    r.s = CHECK_YOURS(lab_softmax_rows(t, scale, causal));
    r.u = usage_end(d, before);
    CHECK(host_copy(t, &p));
    for (int64_t i = 0; i < rows; ++i) {
        const int64_t seen = causal && i + 1 < cols ? i + 1 : cols;
        softmax_reference(values + i * cols, cols, seen, scale, want);
        double sum = 0.0;
        for (int64_t j = 0; j < cols; ++j) {
            const double got = p[i * cols + j];
            r.finite = r.finite && isfinite(got);
            r.future_zero = r.future_zero && (j < seen || got == 0.0);
            /* Relative, down to 1e-30: below, float32 has only subnormals and 0 to offer. */
            const double e = fabs(got - want[j]) / fmax(want[j], 1e-30);
            r.error = isnan(got) ? INFINITY : fmax(r.error, e);
            sum += got;
        }
        r.sum_error = isnan(sum) ? INFINITY : fmax(r.sum_error, fabs(sum - 1.0));
    }
    if (r.s != STATUS_OK) r.error = r.sum_error = INFINITY, r.finite = r.future_zero = false;
    tensor_free(t), free(p), free(want);
    return r;
}

static void check_softmax(device d)
{
    enum { ROWS = 37, COLS = 53, SQUARE = 64, BIG_COLS = 40 };
    float *plain, *square;
    tensor *a = uniform(device_cpu(), shape2(ROWS, COLS), -8.0f, 8.0f, 101, &plain);
    tensor *b = uniform(device_cpu(), shape2(SQUARE, SQUARE), -8.0f, 8.0f, 102, &square);
    const softmax_result r = run_softmax(d, plain, ROWS, COLS, 0.35f, false);
    check_that(r.error <= SOFTMAX_TOLERANCE, "the softmax matches float64, scale included",
               "[%d, %d] scores in [-8, 8), scale 0.35: largest relative error %.2g (tolerance %g)%s", ROWS,
               COLS, r.error, SOFTMAX_TOLERANCE, check_failure_text(r.s));
    check_that(r.sum_error <= 1e-5, "every row of the softmax sums to 1",
               "largest |sum - 1| %.2g (want <= 1e-5)", r.sum_error);
    check_that(r.u.launches == 1 && r.u.syncs == 0 && r.u.peak_bytes == 0,
               "the softmax is one launch, queued, in place",
               "on %s: launches %llu, waits %llu, %lld bytes at its peak (want 1, 0, 0)", device_name(d),
               (unsigned long long)r.u.launches, (unsigned long long)r.u.syncs, r.u.peak_bytes);

    /* More rows than one block has threads (LAUNCH_BLOCK), and not a multiple
     * of it: a row index taken from threadIdx.x alone is right on every
     * matrix above, and here leaves the rows past the first block untouched. */
    enum { TALL_ROWS = LAUNCH_BLOCK + 44, TALL_COLS = 5 };
    float *tall;
    tensor *c = uniform(device_cpu(), shape2(TALL_ROWS, TALL_COLS), -8.0f, 8.0f, 103, &tall);
    const softmax_result t = run_softmax(d, tall, TALL_ROWS, TALL_COLS, 0.35f, false);
    check_that(t.error <= SOFTMAX_TOLERANCE && t.sum_error <= 1e-5,
               "the softmax covers every row, past the first block of threads",
               "[%d, %d] scores, more rows than the %d threads of a block: largest relative error %.2g "
               "(tolerance %g), largest |sum - 1| %.2g%s",
               TALL_ROWS, TALL_COLS, LAUNCH_BLOCK, t.error, SOFTMAX_TOLERANCE, t.sum_error,
               t.error <= SOFTMAX_TOLERANCE ? ""
                                            : " (the rows past the first block's: does each block take rows "
                                              "of its own?)");
    tensor_free(c), free(tall);

    /* Huge scores: exp(1000) overflows a float (and a double), exp(-1000) is 0. */
    static float big[4 * BIG_COLS];
    for (int j = 0; j < BIG_COLS; ++j) {
        big[j] = 1000.0f + 50.0f * plain[j] / 8.0f;
        big[BIG_COLS + j] = -1000.0f + 50.0f * plain[COLS + j] / 8.0f;
        big[2 * BIG_COLS + j] = j % 2 ? 3e4f : -3e4f;
        big[3 * BIG_COLS + j] = 1e30f;
    }
    const softmax_result h = run_softmax(d, big, 4, BIG_COLS, 1.0f, false);
    /* The same rows around +-1000 at attention's scale for d = 64, 1/8: the
     * largest scaled value is then about 125, not 1000. A max taken over the
     * unscaled scores leaves exp(125 - 1000) = 0 in every column (0 / 0), or
     * exp(-125 + 1000) = inf. */
    const softmax_result e = run_softmax(d, big, 2, BIG_COLS, 0.125f, false);
    check_that(h.finite && h.error <= SOFTMAX_TOLERANCE && h.sum_error <= 1e-5 && e.finite &&
                   e.error <= SOFTMAX_TOLERANCE && e.sum_error <= 1e-5,
               "a row of large scores neither overflows nor gives NaN",
               "rows around +1000, around -1000, of +-3e4 and of 1e30, scale 1: %s, largest relative error "
               "%.2g, largest |sum - 1| %.2g; rows around +-1000 at scale 1/8 (scaled: about +-125): %s, "
               "largest relative error %.2g, largest |sum - 1| %.2g%s",
               h.finite ? "all finite" : "inf or NaN in the result", h.error, h.sum_error,
               e.finite ? "all finite"
                        : "inf or NaN in the result (is the largest value the largest scaled one?)",
               e.error, e.sum_error, check_failure_text(h.s != STATUS_OK ? h.s : e.s));

    /* Square, wider than tall (the last row keeps columns 0 to 36 of 53) and
     * taller than wide (rows 37 to 52 keep all 37 columns, no more: a row
     * that counted i + 1 columns would run into the next row). The same
     * values for the two rectangles, read as [37, 53] and as [53, 37]. */
    static const struct {
        int rows, cols;
    } masked[] = { { SQUARE, SQUARE }, { ROWS, COLS }, { COLS, ROWS } };
    char figures[512] = "";
    bool masks = true;
    for (size_t i = 0; masks && i < sizeof masked / sizeof masked[0]; ++i) {
        const int rows = masked[i].rows, cols = masked[i].cols;
        const softmax_result c = run_softmax(d, rows == SQUARE ? square : plain, rows, cols, 0.25f, true);
        masks = c.future_zero && c.error <= SOFTMAX_TOLERANCE && c.sum_error <= 1e-5;
        check_append(figures, sizeof figures,
                     "%s[%d, %d]: the future %s, largest relative error %.2g, largest "
                     "|sum - 1| %.2g%s",
                     i ? "; " : "", rows, cols, c.future_zero ? "exactly 0" : "not all 0", c.error,
                     c.sum_error, check_failure_text(c.s));
    }
    check_that(masks, "the causal mask zeroes the future: p[i, j] = 0 for j > i, each row still a softmax",
               "scale 0.25, row i keeping columns 0 to min(i, cols - 1): %s", figures);

    /* What a language model's scores can hold: the masked future with the
     * row's largest scores, here 1000 against a past in [-8, 8) at scale 1/8.
     * Only the past counts, so only the past may set the row's largest value:
     * the future's would leave exp(1 - 125) = 0 for every column of the past. */
    static float ahead[SQUARE * SQUARE];
    for (int i = 0; i < SQUARE; ++i)
        for (int j = 0; j < SQUARE; ++j)
            ahead[i * SQUARE + j] = j <= i ? square[i * SQUARE + j] : 1000.0f + j;
    const softmax_result f = run_softmax(d, ahead, SQUARE, SQUARE, 0.125f, true);
    check_that(
        f.finite && f.future_zero && f.error <= SOFTMAX_TOLERANCE && f.sum_error <= 1e-5,
        "a causal row is a softmax of its past alone, even where the masked future holds the largest "
        "scores",
        "[%d, %d], the past in [-8, 8), the future's scores 1000 and more, scale 1/8: %s, the future %s; "
        "largest relative error %.2g, largest |sum - 1| %.2g%s",
        SQUARE, SQUARE, f.finite ? "all finite" : "inf or NaN in the result (did the future's scores count?)",
        f.future_zero ? "exactly 0" : "not all 0", f.error, f.sum_error, check_failure_text(f.s));
    tensor_free(a), tensor_free(b), free(plain), free(square);
}

/* ---- step 6: attention ----------------------------------------------------------------- */

static void check_attention(device d)
{
    static const struct {
        int64_t n, d;
        bool causal;
    } shapes[] = { { 37, 8, false }, { 37, 8, true }, { 64, 16, false }, { 64, 16, true }, { 1, 3, false } };
    char figures[1024] = "";
    double worst = 0.0;
    call_usage most = { 0 };
    long long peak_want = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        const int64_t n = shapes[i].n, dim = shapes[i].d;
        float *hq, *hk, *hv, *hout;
        tensor *q = uniform(d, shape2(n, dim), -2.0f, 2.0f, 110 + i, &hq);
        tensor *k = uniform(d, shape2(n, dim), -2.0f, 2.0f, 120 + i, &hk);
        tensor *v = uniform(d, shape2(n, dim), -1.0f, 1.0f, 130 + i, &hv), *out;
        CHECK(tensor_full(&out, d, shape2(n, dim), NAN));
        const size_t before = usage_begin(d);
        const status s = CHECK_YOURS(lab_attention(q, k, v, shapes[i].causal, out));
        const call_usage u = usage_end(d, before);
        most.peak_bytes = u.peak_bytes > most.peak_bytes ? u.peak_bytes : most.peak_bytes;
        peak_want = n * n * 4 > peak_want ? (long long)(n * n * 4) : peak_want;
        most.launches = u.launches > most.launches ? u.launches : most.launches;
        most.syncs += u.syncs,
            most.left_bytes = u.left_bytes > most.left_bytes ? u.left_bytes : most.left_bytes;
        CHECK(host_copy(out, &hout));
        int64_t at = 0;
        const double e =
            s == STATUS_OK ? attention_error(hq, hk, hv, n, dim, shapes[i].causal, hout, n, &at) : INFINITY;
        if (!(e <= ATTENTION_TOLERANCE) && worst <= ATTENTION_TOLERANCE) {
            double want[16];
            attention_reference(hq, hk, hv, n, dim, shapes[i].causal, at / dim, want, NULL);
            snprintf(figures, sizeof figures,
                     "; n %lld, d %lld%s: out[%lld, %lld] = %.6g, float64 says %.6g%s", (long long)n,
                     (long long)dim, shapes[i].causal ? ", causal" : "", (long long)(at / dim),
                     (long long)(at % dim), (double)hout[at], want[at % dim], check_failure_text(s));
        }
        worst = fmax(worst, e);
        tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(out), free(hq), free(hk), free(hv),
            free(hout);
    }
    check_that(worst <= ATTENTION_TOLERANCE, "attention matches float64, with and without the causal mask",
               "n 37 and 64 (d 8 and 16) and n 1: largest error %.2g of sum p |v| (tolerance %g)%s", worst,
               ATTENTION_TOLERANCE, figures);
    check_that(most.peak_bytes == peak_want && most.left_bytes == 0,
               "attention's peak memory is one n x n score matrix, released afterwards",
               "n = 64: %lld bytes at the peak, want %lld (64 x 64 floats); %lld bytes left afterwards",
               most.peak_bytes, peak_want, most.left_bytes);
    check_that(most.launches == 3 && most.syncs == 0,
               "attention is 3 launches, queued: Q K^T, the softmax, the product with V",
               "on %s: launches %llu, waits %llu (want 3, 0)", device_name(d),
               (unsigned long long)most.launches, (unsigned long long)most.syncs);
}

/* ---- attention on its operands' device, whichever it is --------------------------------- */

/* Attention of [n, dim] operands on `on`, the counters of every device read
 * around it: whether it was right, its 3 launches on `on` and nothing on any
 * other device. Appends what went wrong to figures. */
static bool attention_stays_on(device on, char *figures, size_t size)
{
    enum { N = 37, DIM = 8 };
    device all[LABKIT_MAX_DEVICES];
    device_counters before[LABKIT_MAX_DEVICES], after;
    const int count = device_list(all, LABKIT_MAX_DEVICES);
    float *hq, *hk, *hv, *hout;
    tensor *q = uniform(on, shape2(N, DIM), -2.0f, 2.0f, 160, &hq);
    tensor *k = uniform(on, shape2(N, DIM), -2.0f, 2.0f, 161, &hk);
    tensor *v = uniform(on, shape2(N, DIM), -1.0f, 1.0f, 162, &hv), *out;
    CHECK(tensor_full(&out, on, shape2(N, DIM), NAN));
    for (int i = 0; i < count; ++i) {
        CHECK(device_synchronize(all[i]));
        CHECK(counters_reset(all[i]));
        CHECK(counters_read(all[i], &before[i]));
    }
    const status s = CHECK_YOURS(lab_attention(q, k, v, true, out));
    bool stays = s == STATUS_OK;
    if (!stays) check_append(figures, size, "; on %s, %s", device_name(on), check_failure_text(s) + 2);
    for (int i = 0; i < count; ++i) {
        CHECK(counters_read(all[i], &after));
        const bool here = device_equal(all[i], on);
        const long long extra = (long long)after.memory_peak - (long long)before[i].memory_current;
        if (here ? after.launches == 3 : after.launches == 0 && extra == 0) continue;
        stays = false;
        check_append(figures, size,
                     "; attention on %s made %llu launches and used %lld bytes on %s (want %s)",
                     device_name(on), (unsigned long long)after.launches, extra, device_name(all[i]),
                     here ? "3 launches" : "none, and no memory");
    }
    CHECK(host_copy(out, &hout));
    if (stays && !(attention_error(hq, hk, hv, N, DIM, true, hout, N, NULL) <= ATTENTION_TOLERANCE)) {
        stays = false;
        check_append(figures, size, "; on %s the result is not float64's", device_name(on));
    }
    tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(out), free(hq), free(hk), free(hv),
        free(hout);
    return stays;
}

/* On the device checked and, where there is one, another of its kind (sim:1
 * beside sim:0): a layer that makes its scores on "the GPU", try_gpu(0), or
 * launches on a device of its own choosing is right on one device only. */
static void check_attention_device(device d)
{
    char figures[1024];
    device other = d;
    if (d.kind != DEVICE_CPU && device_count(d.kind) > 1) other.index = d.index == 0 ? 1 : 0;
    snprintf(figures, sizeof figures, "on %s%s%s: right, 3 launches there and none elsewhere", device_name(d),
             device_equal(other, d) ? "" : " and on ", device_equal(other, d) ? "" : device_name(other));
    bool stays = attention_stays_on(d, figures, sizeof figures);
    if (!device_equal(other, d)) stays = attention_stays_on(other, figures, sizeof figures) && stays;
    check_that(stays, "attention runs on its operands' device, and on no other", "%s", figures);
    if (d.kind != DEVICE_CPU && device_equal(other, d))
        check_second_gpu_absent(d, "attention on a second GPU, where try_gpu(0) is the wrong device,");
}

/* ---- step 7: attention in one pass ------------------------------------------------------ */

/* Attention of host values q, k, v [n, dim] in one pass and as two products
 * (step 6) on d: the one pass's largest error against float64, relative to
 * sum p |v| (given.h), and where; the largest difference between the two
 * versions on the same scale; whether out was written and is all finite. */
typedef struct flash_result {
    double error, apart, got, want;
    int64_t at; /* the worst element */
    bool finite, written;
    status s;
} flash_result;

static flash_result run_flash(device d, const float *hq, const float *hk, const float *hv, int64_t n,
                              int64_t dim, bool causal)
{
    flash_result r = { INFINITY, INFINITY, NAN, NAN, 0, false, false, STATUS_OK };
    tensor *q, *k, *v, *out, *two;
    float *hout, *htwo;
    double want[FLASH_MAX_HEAD], size[FLASH_MAX_HEAD];
    CHECK(tensor_from_host(&q, d, shape2(n, dim), hq));
    CHECK(tensor_from_host(&k, d, shape2(n, dim), hk));
    CHECK(tensor_from_host(&v, d, shape2(n, dim), hv));
    out = unwritten_tensor(d, shape2(n, dim));
    CHECK(tensor_full(&two, d, shape2(n, dim), NAN));
    r.s = CHECK_YOURS(lab_flash_attention(q, k, v, causal, out));
    if (r.s == STATUS_OK) r.s = device_synchronize(d); /* a launch the device stopped fails here */
    const status two_s = CHECK_YOURS(lab_attention(q, k, v, causal, two));
    CHECK(host_copy(out, &hout));
    CHECK(host_copy(two, &htwo));
    if (r.s == STATUS_OK) {
        r.error = attention_error(hq, hk, hv, n, dim, causal, hout, n, &r.at);
        r.finite = true, r.apart = two_s == STATUS_OK ? 0.0 : INFINITY;
        for (int64_t i = 0; i < n * dim; ++i)
            r.finite = r.finite && isfinite(hout[i]), r.written = r.written || !unwritten(hout[i]);
        for (int64_t row = 0; row < n && two_s == STATUS_OK; ++row) {
            attention_reference(hq, hk, hv, n, dim, causal, row, want, size);
            for (int64_t c = 0; c < dim; ++c) {
                const double gap = fabs((double)hout[row * dim + c] - htwo[row * dim + c]) / size[c];
                r.apart = isnan(gap) ? INFINITY : fmax(r.apart, gap);
            }
        }
        attention_reference(hq, hk, hv, n, dim, causal, r.at / dim, want, NULL);
        r.got = hout[r.at], r.want = want[r.at % dim];
    }
    tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(out), tensor_free(two), free(hout),
        free(htwo);
    return r;
}

/* The worst case's figures, appended to `figures` once: the element and what
 * float64 says, or the failed call. */
static void flash_worst(const flash_result *r, int64_t n, int64_t dim, bool causal, char *figures,
                        size_t size)
{
    if (r->s != STATUS_OK) {
        check_append(figures, size, "; n %lld, d %lld%s%s", (long long)n, (long long)dim,
                     causal ? ", causal" : "", check_failure_text(r->s));
        return;
    }
    check_append(figures, size, "; n %lld, d %lld%s: out[%lld, %lld] = %.6g, float64 says %.6g%s",
                 (long long)n, (long long)dim, causal ? ", causal" : "", (long long)(r->at / dim),
                 (long long)(r->at % dim), r->got, r->want,
                 r->written ? "" : " (no element of out was written: is the kernel still empty?)");
}

/* Random q, k and v: n not a multiple of FLASH_TILE (77: a last tile of 13
 * keys and a last block with 19 threads past n; 45), a multiple of it, one
 * row; head sizes from 3 to 64. */
static void check_flash_matches(device d, bool causal)
{
    static const int64_t sizes[][2] = { { 77, 8 }, { 64, 16 }, { 1, 3 }, { 45, 64 } };
    char figures[1024] = "";
    double worst = 0.0, apart = 0.0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const int64_t n = sizes[i][0], dim = sizes[i][1];
        float *hq, *hk, *hv;
        tensor *q = uniform(device_cpu(), shape2(n, dim), -2.0f, 2.0f, 180 + i, &hq);
        tensor *k = uniform(device_cpu(), shape2(n, dim), -2.0f, 2.0f, 190 + i, &hk);
        tensor *v = uniform(device_cpu(), shape2(n, dim), -1.0f, 1.0f, 200 + i, &hv);
        const flash_result r = run_flash(d, hq, hk, hv, n, dim, causal);
        if (!(r.error <= ATTENTION_TOLERANCE) && worst <= ATTENTION_TOLERANCE)
            flash_worst(&r, n, dim, causal, figures, sizeof figures);
        worst = fmax(worst, r.error), apart = fmax(apart, r.apart);
        tensor_free(q), tensor_free(k), tensor_free(v), free(hq), free(hk), free(hv);
    }
    /* A barrier left out gives wrong values only in the order the threads
     * happen to run in; the kernel sanitizer names it whatever the order. */
    if (!(worst <= ATTENTION_TOLERANCE))
        check_append(figures, sizeof figures,
                     " (if the values change from run to run, a missing __syncthreads(): "
                     "./lab check 07 --kernels names it)");
    if (causal)
        check_that(worst <= ATTENTION_TOLERANCE,
                   "attention in one pass keeps the causal mask: row i sees keys j <= i, in every tile",
                   "n 77, 64, 1 and 45 (d 8, 16, 3 and 64), causal: largest error %.2g of sum p |v| "
                   "(tolerance %g); largest difference from the two products %.2g%s",
                   worst, ATTENTION_TOLERANCE, apart, figures);
    else
        check_that(worst <= ATTENTION_TOLERANCE,
                   "attention in one pass gives the two-product version's output, tile by tile",
                   "n 77, 64, 1 and 45 (d 8, 16, 3 and 64): largest error %.2g of sum p |v| against float64 "
                   "(tolerance %g, step 6's); largest difference from the two products %.2g%s",
                   worst, ATTENTION_TOLERANCE, apart, figures);
}

/* Scores of +-1e4: integer q and k, whose products float32 holds exactly,
 * and a scale of 1/4 (d = 16), so that the scores are exact and float64 has
 * nothing to forgive. k in [20, 50]; by row, q in [20, 50] (every score
 * 1600 to 10000: e^score overflows), in [-50, -20] (every score -10000 to
 * -1600: e^score is 0, whatever the row's max started at) or in [-50, 50]
 * (a max that jumps by thousands from tile to tile). With and without the
 * mask. */
static void check_flash_large(device d)
{
    enum { N = 77, DIM = 16 };
    static float hq[N * DIM], hk[N * DIM], hv[N * DIM];
    uint64_t x = 12345;
    for (int i = 0; i < N * DIM; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull; /* a fixed sequence: exact inputs */
        const int draw = (int)(x >> 33) % 31, kind = i / DIM % 3;
        hk[i] = (float)(20 + draw);
        hq[i] = (float)(kind == 0 ? 20 + draw : kind == 1 ? -20 - draw : (int)(x >> 40) % 101 - 50);
        hv[i] = ((float)((int)(x >> 20) % 16) - 7.5f) / 8.0f; /* never 0: each row's winner counts */
    }
    char figures[1024] = "";
    bool right = true;
    double worst = 0.0;
    for (int causal = 0; causal <= 1; ++causal) {
        const flash_result r = run_flash(d, hq, hk, hv, N, DIM, causal);
        const bool here = r.finite && r.error <= ATTENTION_TOLERANCE;
        if (!here && right) {
            flash_worst(&r, N, DIM, causal, figures, sizeof figures);
            if (r.s == STATUS_OK && !r.finite) check_append(figures, sizeof figures, " (inf or NaN in out)");
        }
        right = right && here, worst = fmax(worst, r.error);
    }
    check_that(right, "attention in one pass survives scores of +-1e4: no overflow, no 0 / 0",
               "n %d, d %d, rows whose scores are all 1600 to 1e4, all -1e4 to -1600, or both, with and "
               "without the mask: largest error %.2g of sum p |v| (tolerance %g)%s",
               N, DIM, worst, ATTENTION_TOLERANCE, figures);
}

/* The memory of attention of [n, 4] operands on d, at its peak, the operands
 * included: the one pass's (with its launches and waits) and the two
 * products'. Scores of 256 x 256 and more dwarf the operands (16 n floats). */
typedef struct flash_memory {
    long long one_pass, two_products;
    call_usage u;
    status s, two_s;
} flash_memory;

static flash_memory attention_memory(device d, int64_t n)
{
    enum { DIM = 4 };
    flash_memory m = { 0, 0, { 0 }, STATUS_OK, STATUS_OK };
    tensor *q, *k, *v, *out;
    CHECK(tensor_uniform(&q, d, shape2(n, DIM), -2.0f, 2.0f, 210));
    CHECK(tensor_uniform(&k, d, shape2(n, DIM), -2.0f, 2.0f, 211));
    CHECK(tensor_uniform(&v, d, shape2(n, DIM), -1.0f, 1.0f, 212));
    CHECK(tensor_empty(&out, d, DTYPE_F32, shape2(n, DIM)));
    const long long operands = 4LL * n * DIM * (long long)sizeof(float);
    size_t before = usage_begin(d);
    m.s = CHECK_YOURS(lab_flash_attention(q, k, v, false, out));
    m.u = usage_end(d, before);
    m.one_pass = operands + m.u.peak_bytes;
    before = usage_begin(d);
    m.two_s = CHECK_YOURS(lab_attention(q, k, v, false, out));
    m.two_products = operands + usage_end(d, before).peak_bytes;
    tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(out);
    return m;
}

static void check_flash_memory(device d)
{
    enum { N = 256 };
    const flash_memory a = attention_memory(d, N), b = attention_memory(d, 2 * N);
    const double one = (double)b.one_pass / (double)a.one_pass,
                 two = (double)b.two_products / (double)a.two_products;
    const status s = a.s != STATUS_OK       ? a.s
                     : b.s != STATUS_OK     ? b.s
                     : a.two_s != STATUS_OK ? a.two_s
                                            : b.two_s;
    check_that(s == STATUS_OK && b.u.launches == 1 && b.u.syncs == 0 && b.u.left_bytes == 0 && one <= 2.2 &&
                   two >= 3.5,
               "attention in one pass is one launch, queued, whose memory grows as n (the two products' as "
               "n^2)",
               "on %s, d 4, the operands included: at n = %d %lld bytes at the peak, at n = %d %lld: %.2fx "
               "(want about 2); two products: %lld and %lld bytes, %.2fx (about 4: the n x n scores); at n = "
               "%d launches %llu, waits %llu, %lld bytes left (want 1, 0, 0)%s",
               device_name(d), N, a.one_pass, 2 * N, b.one_pass, one, a.two_products, b.two_products, two,
               2 * N, (unsigned long long)b.u.launches, (unsigned long long)b.u.syncs, b.u.left_bytes,
               check_failure_text(s));
}

static void check_flash(device d)
{
    check_flash_matches(d, false);
    check_flash_matches(d, true);
    check_flash_large(d);
    check_flash_memory(d);
}

/* ---- a step that fails inside a layer ----------------------------------------------- */

/* lab.cmake links this check with -Wl,--wrap for the calls a layer makes
 * (tensor_empty, tensor_reshape, op_matmul, device_launch): each comes here
 * first. While a layer is tried with a failure, the refuse_at-th of them
 * fails, as a full device, a refused launch or a failed product would. */

status __real_tensor_empty(tensor **out, device d, dtype type, shape s);
status __wrap_tensor_empty(tensor **out, device d, dtype type, shape s);
status __wrap_tensor_empty(tensor **out, device d, dtype type, shape s)
{
    if (!check_refuse("tensor_empty")) return __real_tensor_empty(out, d, type, s);
    if (out) *out = NULL;
    return fail(STATUS_OUT_OF_MEMORY,
                "tensor_empty: %s has no memory left (the check refused this allocation)", device_name(d));
}

status __real_tensor_reshape(tensor *t, shape s, tensor **out);
status __wrap_tensor_reshape(tensor *t, shape s, tensor **out);
status __wrap_tensor_reshape(tensor *t, shape s, tensor **out)
{
    if (!check_refuse("tensor_reshape")) return __real_tensor_reshape(t, s, out);
    if (out) *out = NULL;
    return fail(STATUS_OUT_OF_MEMORY, "tensor_reshape: no host memory left (the check refused this view)");
}

status __real_op_matmul(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                        tensor *out);
status __wrap_op_matmul(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                        tensor *out);
status __wrap_op_matmul(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                        tensor *out)
{
    if (!check_refuse("op_matmul")) return __real_op_matmul(a, trans_a, b, trans_b, bias, out);
    return fail(STATUS_BACKEND_FAILED, "op_matmul: the product failed (the check refused it)");
}

status __real_device_launch(device d, const kernel_launchers *k, const void *args, size_t args_size);
status __wrap_device_launch(device d, const kernel_launchers *k, const void *args, size_t args_size);
status __wrap_device_launch(device d, const kernel_launchers *k, const void *args, size_t args_size)
{
    if (!check_refuse("device_launch")) return __real_device_launch(d, k, args, args_size);
    return fail(STATUS_BACKEND_FAILED, "device_launch: %s refused the launch of %s (the check refused it)",
                device_name(d), k && k->name ? k->name : "a kernel");
}

enum { LAYERS = 6 };
static const char *const layer_names[LAYERS] = { "lab_conv_direct",  "lab_im2col",    "lab_conv_im2col",
                                                 "lab_softmax_rows", "lab_attention", "lab_flash_attention" };

/* The operands of every layer, small: x [2, 3, 5, 4], w [4, 3, 3, 2], pad 1,
 * y [2, 4, 5, 5], cols [18, 50]; scores [8, 8]; q, k, v, out [8, 4]. */
typedef struct layer_operands {
    tensor *x, *w, *y, *cols, *scores, *q, *k, *v, *out;
} layer_operands;

static status call_layer(int layer, const layer_operands *o)
{
    switch (layer) {
    case 0: return lab_conv_direct(o->x, o->w, 1, o->y);
    case 1: return lab_im2col(o->x, 3, 2, 1, o->cols);
    case 2: return lab_conv_im2col(o->x, o->w, 1, o->y);
    case 3: return lab_softmax_rows(o->scores, 0.35f, true);
    case 4: return lab_attention(o->q, o->k, o->v, true, o->out);
    default: return lab_flash_attention(o->q, o->k, o->v, true, o->out);
    }
}

/* Every layer, with each call it makes refused in turn (the first, then the
 * second, ... until a call goes through whole): it must return a failure,
 * leave the device's memory where it was once its queue is done, and leave
 * the device usable (the whole call afterwards works). */
static void check_failures(device d)
{
    layer_operands o;
    CHECK(tensor_uniform(&o.x, d, shape4(2, 3, 5, 4), -1.0f, 1.0f, 170));
    CHECK(tensor_uniform(&o.w, d, shape4(4, 3, 3, 2), -1.0f, 1.0f, 171));
    CHECK(tensor_empty(&o.y, d, DTYPE_F32, shape4(2, 4, 5, 5)));
    CHECK(tensor_empty(&o.cols, d, DTYPE_F32, shape2(18, 50)));
    CHECK(tensor_uniform(&o.scores, d, shape2(8, 8), -8.0f, 8.0f, 172));
    CHECK(tensor_uniform(&o.q, d, shape2(8, 4), -2.0f, 2.0f, 173));
    CHECK(tensor_uniform(&o.k, d, shape2(8, 4), -2.0f, 2.0f, 174));
    CHECK(tensor_uniform(&o.v, d, shape2(8, 4), -1.0f, 1.0f, 175));
    CHECK(tensor_empty(&o.out, d, DTYPE_F32, shape2(8, 4)));
    char figures[1024];
    int tried = 0;
    bool right = true;
    for (int layer = 0; layer < LAYERS && right; ++layer)
        for (int at = 1; at <= 16 && right; ++at) {
            check_refuse_call(at);
            const size_t before = usage_begin(d);
            const status s = CHECK_YOURS(call_layer(layer, &o));
            check_refuse_call(0);
            const char *refused = check_refused_call();
            const call_usage u = usage_end(d, before);
            const status usable = device_synchronize(d);
            if (!refused) { /* every call went through: the layer as it runs */
                right = s == STATUS_OK && u.left_bytes == 0 && usable == STATUS_OK;
                if (!right)
                    snprintf(figures, sizeof figures, "%s, with no call refused: %s, %lld bytes left on %s%s",
                             layer_names[layer], status_name(s), u.left_bytes, device_name(d),
                             check_failure_text(s != STATUS_OK ? s : usable));
                break;
            }
            ++tried;
            right = s != STATUS_OK && u.left_bytes == 0 && usable == STATUS_OK;
            if (!right)
                snprintf(figures, sizeof figures,
                         "%s, its call %d (%s) refused: it returned %s%s, and left %lld bytes on %s once its "
                         "queue was done (want a failure, and 0 bytes)%s",
                         layer_names[layer], at, refused, status_name(s),
                         s == STATUS_OK ? " (the failure was not passed on)" : "", u.left_bytes,
                         device_name(d), usable != STATUS_OK ? "; the device is not usable afterwards" : "");
        }
    if (right)
        snprintf(
            figures, sizeof figures,
            "%d refusals on %s: every allocation, view, product and launch of the 6 layers in turn; each "
            "returned its failure and left 0 bytes",
            tried, device_name(d));
    check_that(right,
               "when a step inside a layer fails (an allocation, a launch, a product), the layer returns the "
               "failure and frees what it made",
               "%s", figures);
    tensor *all[] = { o.x, o.w, o.y, o.cols, o.scores, o.q, o.k, o.v, o.out };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) tensor_free(all[i]);
}

/* ---- on a real GPU: where the time goes ---------------------------------------------- */

/* One call to time (given.h's time_call): a convolution, or one part of attention. */
typedef struct timed {
    conv_fn conv;      /* a convolution of x = a, w = b into out; NULL: a part of attention */
    int part;          /* attention: 0 = scores = q k^T, 1 = their softmax, 2 = out = p v */
    tensor *a, *b, *c; /* x and w; or q, k and v */
    tensor *scores, *out;
} timed;

static status run_timed(const void *context)
{
    const timed *t = context;
    if (t->conv) return t->conv(t->a, t->b, 1, t->out);
    if (t->part == 0) return op_matmul(t->a, false, t->b, true, NULL, t->scores);
    if (t->part == 1)
        return lab_softmax_rows(t->scores, (float)(1.0 / sqrt((double)tensor_dim(t->a, 1))), false);
    return op_matmul(t->scores, false, t->c, false, NULL, t->out);
}

static double best_ms(device d, const timed *t, int runs)
{
    double ms;
    CHECK(time_call(d, run_timed, t, runs, &ms));
    return ms;
}

static void check_gpu_speed(device d)
{
    tensor *x, *w, *y;
    CHECK(tensor_uniform(&x, d, shape4(32, 64, 56, 56), -1.0f, 1.0f, 140));
    CHECK(tensor_uniform(&w, d, shape4(64, 64, 3, 3), -1.0f, 1.0f, 141));
    CHECK(tensor_empty(&y, d, DTYPE_F32, shape4(32, 64, 56, 56)));
    const timed direct = { .conv = lab_conv_direct, .a = x, .b = w, .out = y },
                im2col = { .conv = lab_conv_im2col, .a = x, .b = w, .out = y };
    const double direct_ms = best_ms(d, &direct, 5), im2col_ms = best_ms(d, &im2col, 5);
    check_that(
        direct_ms > 2.0 * im2col_ms,
        "on a GPU, im2col and one product beat the direct kernel by a wide margin (> 2x)",
        "%s, x [32, 64, 56, 56], w [64, 64, 3, 3], pad 1 (7.4 GFLOP): direct %.3f ms, im2col path %.3f "
        "ms: %.1fx (fastest of 5 runs each)",
        device_name(d), direct_ms, im2col_ms, direct_ms / im2col_ms);
    tensor_free(x), tensor_free(w), tensor_free(y);

    enum { N = 4096, D = 64 };
    tensor *q, *k, *v, *scores, *out;
    CHECK(tensor_uniform(&q, d, shape2(N, D), -1.0f, 1.0f, 150));
    CHECK(tensor_uniform(&k, d, shape2(N, D), -1.0f, 1.0f, 151));
    CHECK(tensor_uniform(&v, d, shape2(N, D), -1.0f, 1.0f, 152));
    CHECK(tensor_empty(&scores, d, DTYPE_F32, shape2(N, N)));
    CHECK(tensor_empty(&out, d, DTYPE_F32, shape2(N, D)));
    double ms[3];
    for (int part = 0; part < 3; ++part) {
        const timed t = { .part = part, .a = q, .b = k, .c = v, .scores = scores, .out = out };
        ms[part] = best_ms(d, &t, 3);
    }
    printf("  (%s, attention at n = %d, d = %d: Q K^T %.3f ms, softmax %.3f ms, P V %.3f ms: the products "
           "take %.0f%% of the time)\n",
           device_name(d), N, D, ms[0], ms[1], ms[2], 100.0 * (ms[0] + ms[2]) / (ms[0] + ms[1] + ms[2]));
    tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(scores), tensor_free(out);
}

static int check_kernels(device d);

int main(int argc, char **argv)
{
    const device d = check_device(argc, argv);
    if (check_kernels_only()) return check_kernels(d); /* ./lab check 07 --kernels */
    check_output_shape();
    check_direct(d);
    check_im2col(d);
    check_conv_im2col(d);
    check_softmax(d);
    check_attention(d);
    check_attention_device(d);
    check_flash(d);
    check_failures(d);
    if (d.kind == DEVICE_CUDA)
        check_gpu_speed(d);
    else
        printf("  (the two convolutions' speeds are claimed on a real GPU only: on %s both kernels run one "
               "thread at a time, and the product runs in OpenBLAS)\n",
               device_name(d));
    return check_finish("07_layers");
}

/* ---- kernels: your kernels under the kernel sanitizer ------------------------------- */

/* With the mask, rows 0 to 31 (the first block of 37) see keys 0 to 31, the
 * first tile, alone: a kernel that stops at the tile holding its block's last
 * row never copies keys 32 to 36 there, so it loads fewer sectors of global
 * memory than without the mask, where every block reads both tiles. One that
 * walks every tile and lets the mask skip the keys loads as many: the right
 * values, at up to twice the reads at large n. Counts, not time: the profiler
 * sees each load a warp asks for (labkit/kernel_profile.h). */
static void check_causal_tiles(const kernel_profile *full, const kernel_profile *causal)
{
    check_that(causal->global_load_sectors < full->global_load_sectors,
               "causal attention in one pass reads no tile past its block's last row",
               "n 37, d 8 (blocks of %d rows, tiles of %d keys): global loads %llu sectors in %llu requests "
               "with the mask, %llu in %llu without (want fewer with it: rows 0 to 31 see the first tile "
               "alone, so the first block never copies keys 32 to 36)",
               FLASH_ROWS, FLASH_TILE, causal->global_load_sectors, causal->global_load_requests,
               full->global_load_sectors, full->global_load_requests);
}

/* im2col's stores: a warp of 32 neighbouring pixels of one channel writes 32
 * neighbouring floats of each row of the buffer, 128 bytes, 4 sectors (fewer
 * where the compiler makes the store of a padding zero an instruction of its
 * own: the warp's store then splits in two requests). A warp numbered
 * channel first writes one float into each of 32 rows: 32 sectors, 8 times
 * the traffic, for the same values. */
enum { IM2COL_C = 32 };
static void check_im2col_coalesced(const kernel_profile *p)
{
    check_that(p->global_store_requests > 0 && p->global_store_sectors <= 4 * p->global_store_requests,
               "your im2col writes coalesced: at most 4 sectors per store request",
               "x [1, %d, 8, 8], 3 x 3, pad 1, %llu warps: stores %llu sectors in %llu requests, %.4g per "
               "request (want 4 or fewer: a warp's 32 threads, neighbouring pixels (n, oh, ow) of one "
               "channel, write 32 "
               "neighbouring floats of a row); loads %.4g per request",
               IM2COL_C, p->warps, p->global_store_sectors, p->global_store_requests,
               p->global_store_requests ? (double)p->global_store_sectors / (double)p->global_store_requests
                                        : 0.0,
               kernel_profile_sectors_per_load(p));
}

/* The direct convolution's stores: thread i computes y's element i, so a
 * warp's 32 threads write 32 neighbouring floats of y, 4 sectors. Threads
 * numbered filter first (k the fastest) write 32 floats H_out W_out apart,
 * a sector each, for the same values. */
static void check_direct_coalesced(const kernel_profile *p)
{
    check_that(p->global_store_requests > 0 && p->global_store_sectors <= 4 * p->global_store_requests,
               "your direct convolution writes coalesced: at most 4 sectors per store request",
               "x [1, %d, 8, 8], w [%d, %d, 3, 3], pad 1, %llu warps: stores %llu sectors in %llu requests, "
               "%.4g per request (want 4 or fewer: thread i computes y's element i, [n, k, oh, ow] with ow "
               "the fastest, so a warp's 32 threads write 32 neighbouring floats of y)",
               IM2COL_C, IM2COL_C, IM2COL_C, p->warps, p->global_store_sectors, p->global_store_requests,
               p->global_store_requests ? (double)p->global_store_sectors / (double)p->global_store_requests
                                        : 0.0);
}

/* The one pass's tiles: a warp copies neighbouring columns of a key into
 * neighbouring floats (32 banks), and reads one float of eight keys at once,
 * FLASH_STRIDE = 65 floats apart: eight banks. Keys 64 floats apart share a
 * bank (8-way conflicts on every read); a copy that walks keys, not columns,
 * writes floats FLASH_STRIDE apart (4-way). */
static void check_flash_banks(const kernel_profile *p)
{
    check_that(p->shared_load_requests > 0 && p->shared_load_bank_conflicts == 0 &&
                   p->shared_store_bank_conflicts == 0,
               "your one pass reads and writes its tiles without bank conflicts",
               "n 37, d 8: %llu shared load requests, %llu wavefronts, %llu bank conflicts; %llu store "
               "requests, %llu wavefronts, %llu conflicts (want 0: key j at j * FLASH_STRIDE puts the eight "
               "keys a warp reads in eight banks, and a warp copies neighbouring columns of a key)",
               p->shared_load_requests, p->shared_load_wavefronts, p->shared_load_bank_conflicts,
               p->shared_store_requests, p->shared_store_wavefronts, p->shared_store_bank_conflicts);
}

/* The one pass walks K and V once: each tile is copied into shared memory
 * once, between two barriers (the copy waits until the block is done with the
 * tile before, the scores until the copy is whole): 2 a tile, 4 a block at
 * n 37 (tiles of 32 keys and 5). A kernel that walks the tiles twice, a first
 * walk for each row's max and a second for the sum and the output, gives the
 * same values, and copies every tile twice: 8 a block. */
static void check_flash_walks(const kernel_profile *p, int64_t n)
{
    const unsigned long long blocks = (unsigned long long)p->grid[0] * p->grid[1] * p->grid[2],
                             tiles = (unsigned long long)((n + FLASH_TILE - 1) / FLASH_TILE);
    check_that(blocks > 0 && p->barriers <= 2 * tiles * blocks,
               "attention in one pass walks K and V once: 2 barriers a tile",
               "n %lld, d 8, without the mask: %llu barriers in %llu blocks, %.4g a block (want at most "
               "%llu: %llu tiles of up to %d keys, each copied once and waited for twice; more means tiles "
               "copied again, a second walk over K: the running max rescales l and the output as it "
               "grows, so that one walk gives the max, the sum and the output together)",
               (long long)n, p->barriers, blocks, blocks ? (double)p->barriers / (double)blocks : 0.0,
               2 * tiles, tiles, FLASH_TILE);
}

/* A row's FLASH_SPLIT parts share its keys: each scores every FLASH_SPLIT-th
 * key of a tile, reading the key's and the value's FLASH_MAX_HEAD floats from
 * shared memory, a warp (32 / FLASH_SPLIT rows) at a time. Without the mask,
 * every warp that holds a row reads sum over the tiles of ceil(keys /
 * FLASH_SPLIT) keys, 2 FLASH_MAX_HEAD load requests each: n 37 in 10 such
 * warps and tiles of 32 and 5 keys, 6400. A row whose part 0 scores every key
 * while the other parts wait gives the same output from FLASH_SPLIT times the
 * requests, each with an eighth of the warp's lanes (47360); a quarter more
 * than the shared walk is allowed. */
static void check_flash_parts(const kernel_profile *p, int64_t n)
{
    unsigned long long warps = 0, keys = 0;
    for (int64_t first = 0; first < n; first += FLASH_ROWS) {
        const int64_t rows = n - first < FLASH_ROWS ? n - first : FLASH_ROWS;
        warps += (unsigned long long)((rows * FLASH_SPLIT + 31) / 32);
    }
    for (int64_t start = 0; start < n; start += FLASH_TILE) {
        const int64_t in_tile = n - start < FLASH_TILE ? n - start : FLASH_TILE;
        keys += (unsigned long long)((in_tile + FLASH_SPLIT - 1) / FLASH_SPLIT);
    }
    const unsigned long long shared = warps * keys * 2 * FLASH_MAX_HEAD, most = shared + shared / 4;
    check_that(p->shared_load_requests > 0 && p->shared_load_requests <= most,
               "attention in one pass shares each row's keys among its parts",
               "n %lld, d 8, without the mask: %llu shared load requests (want at most %llu: %llu warps that "
               "hold rows, each part scoring %llu keys of its row's %lld, every %d-th of a tile, and reading "
               "%d floats of each key and value, is %llu; part p takes keys p, p + %d, ...: a part that "
               "waits while another scores every key makes %d times the requests)",
               (long long)n, p->shared_load_requests, most, warps, keys, (long long)n, FLASH_SPLIT,
               FLASH_MAX_HEAD, shared, FLASH_SPLIT, FLASH_SPLIT);
}

/* What the one pass loads from global memory, without the mask: each thread
 * of a row its row of q once, d floats (a request each for the warp that
 * holds the row), into its own variables; each block every key and value
 * once, into its tiles (a warp copying 32 neighbouring columns of a key: a
 * request per key, matrix and 32 columns). n 37, d 8: 10 warps that hold rows
 * load 80 requests of q, 2 blocks 148 of K and V: 228; a quarter more is
 * allowed. A score that reads q from global memory again for every key gets
 * the same output from 548. */
static void check_flash_loads(const kernel_profile *p, int64_t n, int64_t d)
{
    unsigned long long warps = 0, blocks = 0;
    for (int64_t first = 0; first < n; first += FLASH_ROWS, ++blocks) {
        const int64_t rows = n - first < FLASH_ROWS ? n - first : FLASH_ROWS;
        warps += (unsigned long long)((rows * FLASH_SPLIT + 31) / 32);
    }
    const unsigned long long of_q = warps * (unsigned long long)d,
                             of_kv = blocks * (unsigned long long)(n * 2 * ((d + 31) / 32)),
                             most = of_q + of_kv + (of_q + of_kv) / 4;
    check_that(p->global_load_requests > 0 && p->global_load_requests <= most,
               "attention in one pass loads its row of q once, and each key and value once a block",
               "n %lld, d %lld, without the mask: %llu global load requests (want at most %llu: %llu for q, "
               "d in each of the %llu warps that hold rows, kept in each thread's own variables; %llu for K "
               "and V, each of the %llu blocks copying each key and value once into its tiles; and a "
               "quarter more; reading q again for every key scored makes many more)",
               (long long)n, (long long)d, p->global_load_requests, most, of_q, warps, of_kv, blocks);
}

/* ./lab check 07 --kernels: this check built for the kernel tools runs these
 * claims alone. Your four kernels through the layers that launch them, on the
 * convolutions' odd shapes, a causal and a full softmax of [37, 53] and of
 * [53, 37] and attention in one pass of 37 rows, causal and not (none fills
 * its last block or tile), watched access by access: an index before or past
 * x, w, y, the im2col buffer, the scores, q, k, v, out or a shared tile names
 * its line, thread and element, and a race on a shared tile its two accesses
 * (labkit/check_kernels.h). The profiler counts what im2col and the one pass
 * ask of memory (labkit/kernel_profile.h), as Nsight Compute would. */
static int check_kernels(device d)
{
    const int skip = check_kernels_skip(d);
    if (skip) return skip;
    if (d.kind == DEVICE_CPU) {
        printf(
            "skipped: the kernel sanitizer watches kernels on GPUs: ./lab check 07 --kernels watches yours "
            "on sim:0\n");
        return CHECK_SKIPPED;
    }
    kernel_sanitizer_clear();
    /* a launch the sanitizer stopped fails at the wait; only a failure it
     * did not explain is a claim of its own */
    const char *failed = NULL;
    status s;
    for (int i = 0; i < NCASES; ++i) {
        const conv_case *c = &cases[i];
        const conv_dims dims = dims_of(c);
        tensor *x, *w, *y, *cols;
        CHECK(tensor_uniform(&x, d, x_shape(c), -1.0f, 1.0f, 71 + (uint64_t)i));
        CHECK(tensor_uniform(&w, d, w_shape(c), -1.0f, 1.0f, 81 + (uint64_t)i));
        CHECK(tensor_zeros(&y, d, shape4(c->n, c->k, dims.h_out, dims.w_out)));
        CHECK(tensor_zeros(&cols, d, shape2(c->c * c->r * c->s, c->n * dims.h_out * dims.w_out)));
        s = CHECK_YOURS(lab_conv_direct(x, w, c->pad, y));
        if (s != STATUS_OK || device_synchronize(d) != STATUS_OK)
            failed = failed ? failed : "lab_conv_direct";
        s = CHECK_YOURS(lab_im2col(x, c->r, c->s, c->pad, cols));
        if (s != STATUS_OK || device_synchronize(d) != STATUS_OK) failed = failed ? failed : "lab_im2col";
        tensor_free(x), tensor_free(w), tensor_free(y), tensor_free(cols);
    }
    /* The counts (none on a real GPU): im2col's requests, and the one pass's
     * global loads without and with the mask and its shared-memory traffic. */
    kernel_profile im2col = { .kernel = "" }, direct = { .kernel = "" };
    kernel_profile flash[2] = { { .kernel = "" }, { .kernel = "" } };
    const bool counted = d.kind != DEVICE_CUDA;
    if (counted) CHECK(kernel_profile_start());
    {
        /* x [1, 32, 8, 8], a 3 x 3 filter, pad 1: 32 channels, so that a warp
         * spread over channels asks for 32 sectors; whole warps, each of 32
         * pixels of one channel, whose 32 columns start a multiple of 32. */
        tensor *x, *cols;
        CHECK(tensor_uniform(&x, d, shape4(1, IM2COL_C, 8, 8), -1.0f, 1.0f, 89));
        CHECK(tensor_zeros(&cols, d, shape2(IM2COL_C * 9, 64)));
        s = CHECK_YOURS(lab_im2col(x, 3, 3, 1, cols));
        if (s != STATUS_OK || device_synchronize(d) != STATUS_OK)
            failed = failed ? failed : "lab_im2col";
        else if (counted && kernel_profile_last("im2col_kernel", &im2col) != STATUS_OK)
            im2col.kernel[0] = '\0';
        /* The direct convolution of the same x by 32 filters: y [1, 32, 8, 8],
         * a warp's 32 threads 32 neighbouring floats of y, 4 rows of 8. */
        tensor *w, *y;
        CHECK(tensor_uniform(&w, d, shape4(IM2COL_C, IM2COL_C, 3, 3), -1.0f, 1.0f, 90));
        CHECK(tensor_zeros(&y, d, shape4(1, IM2COL_C, 8, 8)));
        s = CHECK_YOURS(lab_conv_direct(x, w, 1, y));
        if (s != STATUS_OK || device_synchronize(d) != STATUS_OK)
            failed = failed ? failed : "lab_conv_direct";
        else if (counted && kernel_profile_last("conv_direct_kernel", &direct) != STATUS_OK)
            direct.kernel[0] = '\0';
        tensor_free(x), tensor_free(cols), tensor_free(w), tensor_free(y);
    }
    for (int causal = 0; causal <= 1; ++causal) {
        /* [37, 53], then [53, 37]: causal rows past the last column keep all 37 */
        for (int tall = 0; tall <= 1; ++tall) {
            tensor *scores;
            CHECK(tensor_uniform(&scores, d, tall ? shape2(53, 37) : shape2(37, 53), -4.0f, 4.0f,
                                 91 + (uint64_t)causal));
            s = CHECK_YOURS(lab_softmax_rows(scores, 0.125f, causal));
            if (s != STATUS_OK || device_synchronize(d) != STATUS_OK)
                failed = failed ? failed : "lab_softmax_rows";
            tensor_free(scores);
        }
        tensor *q, *k, *v, *out; /* 37 rows: a last tile of 5 keys, 27 threads past n */
        CHECK(tensor_uniform(&q, d, shape2(37, 8), -2.0f, 2.0f, 93 + (uint64_t)causal));
        CHECK(tensor_uniform(&k, d, shape2(37, 8), -2.0f, 2.0f, 95 + (uint64_t)causal));
        CHECK(tensor_uniform(&v, d, shape2(37, 8), -1.0f, 1.0f, 97 + (uint64_t)causal));
        CHECK(tensor_zeros(&out, d, shape2(37, 8)));
        s = CHECK_YOURS(lab_flash_attention(q, k, v, causal, out));
        if (s != STATUS_OK || device_synchronize(d) != STATUS_OK)
            failed = failed ? failed : "lab_flash_attention";
        else if (counted && kernel_profile_last("flash_attention_kernel", &flash[causal]) != STATUS_OK)
            flash[causal].kernel[0] = '\0';
        tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(out);
    }
    kernel_profile_stop();
    if (failed && kernel_sanitizer_count() == 0)
        check_that(false, "your layers run on the device", "%s: %s", failed, last_error());
    if (im2col.kernel[0]) check_im2col_coalesced(&im2col);
    if (direct.kernel[0]) check_direct_coalesced(&direct);
    if (flash[0].kernel[0] && flash[1].kernel[0]) check_causal_tiles(&flash[0], &flash[1]);
    if (flash[0].kernel[0])
        check_flash_banks(&flash[0]), check_flash_walks(&flash[0], 37), check_flash_parts(&flash[0], 37),
            check_flash_loads(&flash[0], 37, 8);
    check_kernels_clean("your four kernels' threads", d);
    return check_finish("07_layers");
}
