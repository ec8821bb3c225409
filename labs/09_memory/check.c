/* check.c: lab 09's claims, on the device given with --device (default: cpu).
 *
 *   - step 1: GB/s from the bytes read and written, on exact inputs; your
 *     copy, scale and strided copy exact at sizes that fill no whole block,
 *     nothing written past the end; which element each thread copies (a few
 *     threads run alone, on the host); on a real GPU, the coalesced copy at
 *     half the rate of the library's device-to-device copy (cudaMemcpy) or
 *     more, and stride 32 at least 4x slower than stride 1;
 *   - step 2: the loads per output on exact inputs; the naive and the tiled
 *     products against float64 on shapes that are multiples of nothing, their
 *     operands followed by NaN, nothing written outside c; on a real GPU, the
 *     tiled product at least 2x faster than the naive one at N = 4096;
 *   - step 3: the error bound on exact inputs; each sum exact on inputs whose
 *     float32 sums are exact in any order, within the bound on random ones,
 *     its atomics counted (one per element, or one per block);
 *   - step 4: the cost, intensity and roofline formulas on exact inputs;
 *   - step 5: the passes of a tile's column read on exact inputs; your
 *     transpose bit for bit on shapes that are multiples of nothing, nothing
 *     written after out;
 *   - ./lab check 09 --kernels (the check built for the kernel tools): steps
 *     1-3's and 5's kernels at odd sizes under the kernel sanitizer, and the
 *     profiler's counts: 4 sectors per load request for the copy (and per
 *     load and store request for the scale), 32 for the
 *     strided copy at stride 32, 16x fewer global loads tiled than naive in
 *     2 barriers a tile, a tree sum in 8 rounds whose warps split only below
 *     stride 32, a warp sum that waits at no barrier once 32 values are left; the
 *     transpose's loads and stores 4 sectors per request (the naive one's
 *     stores 32), its tile read and written without bank conflicts.
 * Every claim but a real GPU's speed is an exact value, an exact count or a
 * comparison with float64 whose tolerance is far above float32's rounding and
 * far below what a wrong index or a missing term gives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "given.h"
#include "lab.h"
#include "labkit/check_kernels.h"

/* Floats after every array a kernel is given, as many as the threads of a
 * rounded-up block can reach past the end: NaN after its inputs, OUT_SLACK
 * after its outputs (given.h, device_array). */
enum { SLACK = LAUNCH_BLOCK };
/* The kernels check (check_kernels, at the end) gives the arrays no slack, so
 * that the kernel sanitizer, which knows each array's size, sees an access
 * past its end: slack() is 0 there. */
static bool exact_arrays = false;
static int64_t slack(int64_t floats) { return exact_arrays ? 0 : floats; }
#define OUT_SLACK 12345.0f
/* A product against float64, relative to the size of its terms: a float32
 * sum of the check's at most 70 terms is off by under 5e-6 of it; a wrong
 * index or a missing term, by 1e-2 or more. */
#define PRODUCT_TOLERANCE 1e-5
/* The real GPU's speed claims (README, "What you should see"). The copy is
 * held against cudaMemcpy's device-to-device copy timed in turns with it, not
 * against the datasheet's peak: a one-float-per-thread copy reached 54% of an
 * H200's 4814 GB/s and 64% of cudaMemcpy's 4095, and another program on the
 * GPU slows both alike. The products at N = 4096, not 2048: an H200's 50 MB
 * L2 cache holds both 16 MiB operands at 2048, where the naive kernel's
 * repeated loads hit it (1.57x measured); at 4096 they do not (2.76x). */
#define COPY_SHARE_OF_MEMCPY 0.5
#define STRIDE_32_SLOWDOWN 4.0
#define TILED_SPEEDUP 2.0
#define TILED_N 4096
/* The kernels check's tree sum, in whole blocks, and the divergent branches
 * a block of it may take: the solution's takes 6 (warp 0 splits at the
 * strides 16 to 1 and at thread 0's atomic), neighbours first about 48. */
#define TREE_N 65536
#define TREE_DIVERGENT_MOST 16

/* x equals want to 12 digits (exactly, when want is 0). */
static bool near(double x, double want) { return fabs(x - want) <= 1e-12 * fabs(want); }

/* A host array of n floats, or the check stops (it cannot go on without memory). */
static float *floats(int64_t n)
{
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (!x) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for %lld floats", (long long)n));
    return x;
}

/* ---- step 1: bandwidth ---------------------------------------------------------------- */

/* lab.h: every formula refuses a NULL output (STATUS_BAD_ARGUMENT). A call
 * that writes through it instead stops the check at its line. */
static void null_refused(bool *right, status s, const char *output, char *figures, size_t size)
{
    if (!*right || s == STATUS_BAD_ARGUMENT) return;
    *right = false;
    snprintf(figures, size,
             "a NULL %s returned %s, want STATUS_BAD_ARGUMENT (lab.h: NULL outputs are refused)", output,
             status_name(s));
}

static void check_bandwidth_formula(void)
{
    static const struct {
        double read, written, seconds, want;
        const char *what;
    } cases[] = {
        { 1e9, 1e9, 1.0, 2.0, "1e9 bytes read and 1e9 written in 1 s" },
        { 268435456.0, 268435456.0, 2e-4, 2684.35456,
          "a copy of 2^26 floats (2^28 bytes each way) in 0.2 ms" },
        { 4e9, 0.0, 2.0, 2.0, "4e9 bytes read, none written, in 2 s" },
        { 0.0, 3.35e12, 1.0, 3350.0, "3.35e12 bytes written in 1 s" },
    };
    char figures[512] = "4 cases from 2 to 3350 GB/s; times of 0, -1 s and NaN, -1 bytes read, -1 written, a "
                        "NULL gbs refused";
    bool right = true;
    for (size_t i = 0; right && i < sizeof cases / sizeof cases[0]; ++i) {
        double gbs = NAN;
        const status s =
            CHECK_YOURS(lab_bandwidth_gbs(cases[i].read, cases[i].written, cases[i].seconds, &gbs));
        right = s == STATUS_OK && near(gbs, cases[i].want);
        if (!right)
            snprintf(figures, sizeof figures, "%s: got %.9g GB/s, want %.9g%s", cases[i].what, gbs,
                     cases[i].want, check_failure_text(s));
    }
    static const struct {
        double read, written, seconds;
    } bad[] = {
        { 1e9, 1e9, 0.0 }, { 1e9, 1e9, -1.0 }, { 1e9, 1e9, NAN }, { -1.0, 1e9, 1.0 }, { 1e9, -1.0, 1.0 }
    };
    /* NaN: what a timing that failed gives, neither <= 0 nor > 0: a test
     * written as seconds <= 0 lets it through, and NaN GB/s with it. */
    for (size_t i = 0; right && i < sizeof bad / sizeof bad[0]; ++i) {
        double gbs = 0.0;
        const status s = CHECK_YOURS(lab_bandwidth_gbs(bad[i].read, bad[i].written, bad[i].seconds, &gbs));
        right = s == STATUS_BAD_ARGUMENT;
        if (!right)
            snprintf(figures, sizeof figures,
                     "%g bytes read, %g written in %g s: returned %s, want "
                     "STATUS_BAD_ARGUMENT",
                     bad[i].read, bad[i].written, bad[i].seconds, status_name(s));
    }
    if (right)
        null_refused(&right, CHECK_YOURS(lab_bandwidth_gbs(1e9, 1e9, 1.0, NULL)), "gbs", figures,
                     sizeof figures);
    check_that(right, "bandwidth is (bytes read + bytes written) / seconds, in GB/s (10^9 bytes a second)",
               "%s", figures);
}

/* One run of a step 1 kernel on d: in n uniform floats, out NaN until
 * written, both followed by their slack; whether out is in (alpha in) bit for
 * bit, and how many floats after out changed. */
typedef struct stream_trial {
    status s;
    int64_t wrong; /* elements of out that are not what they must be */
    int64_t at;    /* the first of them */
    float got, want;
    int64_t past; /* floats of out's slack that changed */
} stream_trial;

static stream_trial run_stream_case(device d, stream_kernel kernel, int64_t n, int64_t stride, float alpha,
                                    uint64_t seed)
{
    stream_trial r = { STATUS_OK, 0, -1, 0.0f, 0.0f, 0 };
    float *in = floats(n), *out = NULL;
    uniform_values(in, n, -1.0f, 1.0f, seed);
    tensor *tin, *tout;
    CHECK(device_array(d, in, n, slack(SLACK), NAN, &tin));
    CHECK(device_array(d, NULL, n, slack(SLACK), OUT_SLACK, &tout));
    r.s = CHECK_YOURS(run_stream(d, kernel, tensor_data_const(tin), tensor_data(tout), n, stride, alpha));
    const status read = host_copy(tout, &out); /* waits: a kernel's failure shows here */
    if (r.s == STATUS_OK) r.s = read;
    for (int64_t i = 0; read == STATUS_OK && i < n + slack(SLACK); ++i) {
        if (i >= n) {
            r.past += out[i] != OUT_SLACK;
            continue;
        }
        const float want = kernel == KERNEL_SCALE ? alpha * in[i] : in[i];
        if (out[i] == want) continue;
        if (r.wrong++ == 0) r.at = i, r.got = out[i], r.want = want;
    }
    tensor_free(tin), tensor_free(tout), free(in), free(out);
    return r;
}

/* "n = 100003: out[7] = nan, want 0.25 (5 elements wrong); 3 floats past the end written" */
static bool describe_trial(const stream_trial *r, const char *what, char *figures, size_t size)
{
    if (r->s == STATUS_OK && r->wrong == 0 && r->past == 0) return true;
    snprintf(figures, size, "%s: ", what);
    if (r->wrong > 0)
        check_append(figures, size, "out[%lld] = %.7g, want %.7g (%lld elements wrong%s)", (long long)r->at,
                     (double)r->got, (double)r->want, (long long)r->wrong,
                     isnan(r->got) ? ": NaN is a value never written" : "");
    if (r->past > 0)
        check_append(figures, size, "%s%lld floats past the end written (a thread past n must write nothing)",
                     r->wrong > 0 ? "; " : "", (long long)r->past);
    check_append(figures, size, "%s", check_failure_text(r->s));
    return false;
}

static void check_copy_and_scale(device d)
{
    static const int64_t sizes[] = { 100003, 1, 257 };
    char figures[512] =
        "n = 100003 (390 blocks of 256 and 163 threads more), 1 and 257: bit for bit, the 256 "
        "floats after out untouched";
    bool right = true;
    for (size_t i = 0; right && i < sizeof sizes / sizeof sizes[0]; ++i)
        for (int kernel = KERNEL_COPY; right && kernel <= KERNEL_SCALE; ++kernel) {
            const stream_trial r = run_stream_case(d, (stream_kernel)kernel, sizes[i], 1, -1.5f, 10 + i);
            char what[64];
            snprintf(what, sizeof what, "%s, n = %lld%s", stream_kernel_name((stream_kernel)kernel),
                     (long long)sizes[i], kernel == KERNEL_SCALE ? ", alpha -1.5" : "");
            right = describe_trial(&r, what, figures, sizeof figures);
        }
    check_that(right,
               "your copy and scale kernels give out = in and out = alpha in, and write nothing past n", "%s",
               figures);
}

static void check_strided(device d)
{
    static const struct {
        int64_t n, stride;
    } cases[] = { { 10007, 1 }, { 10007, 2 },  { 10007, 3 }, { 10007, 4 }, { 10007, 7 },
                  { 10007, 8 }, { 10007, 32 }, { 64, 32 },   { 5, 32 } };
    char figures[512] =
        "n = 10007 at strides 1, 2, 3, 4, 7, 8 and 32; n = 64 and 5 at stride 32: bit for bit, "
        "the 256 floats after out untouched";
    bool right = true;
    for (size_t i = 0; right && i < sizeof cases / sizeof cases[0]; ++i) {
        const stream_trial r = run_stream_case(d, KERNEL_STRIDED, cases[i].n, cases[i].stride, 1.0f, 20 + i);
        char what[64];
        snprintf(what, sizeof what, "n = %lld, stride %lld", (long long)cases[i].n,
                 (long long)cases[i].stride);
        right = describe_trial(&r, what, figures, sizeof figures);
    }
    check_that(right, "your strided copy copies every element, and nothing past n", "%s", figures);
}

/* Which elements the first `threads` threads of a step 1 kernel copy, run
 * alone as one block on the host (the CPU device runs the simulated GPU's
 * launcher at once): in[i] = i + 1 and out NaN, so that out's non-NaN
 * elements are those written. Writes their indices to `written` (at most
 * `room`) and returns how many there were. */
enum { PROBE_N = 1000 };
static int probe(stream_kernel kernel, int64_t stride, unsigned threads, int64_t *written, int room,
                 status *s)
{
    static float in[PROBE_N + SLACK], out[PROBE_N + SLACK];
    for (int i = 0; i < PROBE_N + SLACK; ++i) in[i] = i < PROBE_N ? (float)(i + 1) : NAN, out[i] = NAN;
    *s = CHECK_YOURS(run_stream_grid(device_cpu(), kernel, in, out, PROBE_N, stride, 1.0f, 1, threads));
    int count = 0;
    for (int i = 0; i < PROBE_N + SLACK; ++i)
        if (!isnan(out[i])) {
            if (count < room) written[count] = i;
            ++count;
        }
    return count;
}

static void check_threads(void)
{
    static const struct {
        stream_kernel kernel;
        int64_t stride;
    } probes[] = { { KERNEL_COPY, 1 }, { KERNEL_STRIDED, 1 }, { KERNEL_STRIDED, 4 }, { KERNEL_STRIDED, 32 } };
    char figures[512] =
        "1 block of 3 threads alone, n = 1000: the copy's write out[0..2], the strided copy's "
        "out[0], out[s], out[2 s]";
    bool right = true;
    for (size_t p = 0; right && p < sizeof probes / sizeof probes[0]; ++p) {
        int64_t got[4] = { 0 };
        status s = STATUS_OK;
        const int count = probe(probes[p].kernel, probes[p].stride, 3, got, 4, &s);
        right = s == STATUS_OK && count == 3;
        for (int t = 0; right && t < 3; ++t) right = got[t] == t * probes[p].stride;
        if (right) continue;
        snprintf(
            figures, sizeof figures, "%s, stride %lld, 1 block of 3 threads alone: they wrote %d element%s",
            stream_kernel_name(probes[p].kernel), (long long)probes[p].stride, count, count == 1 ? "" : "s");
        for (int t = 0; t < count && t < 4; ++t)
            check_append(figures, sizeof figures, " out[%lld]", (long long)got[t]);
        check_append(figures, sizeof figures, "; want out[0] out[%lld] out[%lld]%s",
                     (long long)probes[p].stride, (long long)(2 * probes[p].stride), check_failure_text(s));
    }
    check_that(
        right,
        "thread by thread: consecutive threads copy consecutive elements, or elements `stride` apart in the "
        "strided copy",
        "%s", figures);
}

/* ---- timing on a real GPU ------------------------------------------------------------------ */

typedef struct timed {
    enum { TIMED_STREAM, TIMED_PRODUCT, TIMED_LIBRARY, TIMED_DEVICE_COPY } what;
    device d;
    int kernel;
    const float *in;
    float *out;
    int64_t n, stride;
    const tensor *a, *b;
    tensor *c;
} timed;

static status run_timed(const void *context)
{
    const timed *t = context;
    if (t->what == TIMED_STREAM)
        return run_stream(t->d, (stream_kernel)t->kernel, t->in, t->out, t->n, t->stride, 1.0f);
    if (t->what == TIMED_PRODUCT)
        return run_product(t->d, (product_kernel)t->kernel, tensor_data_const(t->a), tensor_data_const(t->b),
                           tensor_data(t->c), t->n, t->n, t->n);
    if (t->what == TIMED_DEVICE_COPY) return tensor_copy(t->c, t->a);
    return op_matmul(t->a, false, t->b, false, NULL, t->c);
}

/* The fastest of 5 runs of t, in ms; a failure fails `claim`. */
static double best_ms(const timed *t, const char *claim)
{
    double ms = NAN;
    if (!CHECK_CALL(time_call(t->d, run_timed, t, 5, &ms), claim)) return NAN;
    return ms;
}

/* The fastest of 5 runs of each of t and u, taken in turns, in ms: whatever
 * else the GPU is doing slows both alike. */
static bool best_ms_in_turns(const timed *t, const timed *u, const char *claim, double *t_ms, double *u_ms)
{
    *t_ms = *u_ms = INFINITY;
    for (int run = 0; run < 5; run++) {
        double ms = NAN;
        if (!CHECK_CALL(time_call(t->d, run_timed, t, 1, &ms), claim)) return false;
        *t_ms = fmin(*t_ms, ms);
        if (!CHECK_CALL(time_call(u->d, run_timed, u, 1, &ms), claim)) return false;
        *u_ms = fmin(*u_ms, ms);
    }
    return true;
}

static void check_gpu_bandwidth(device d)
{
    const char *copy_claim =
        "on a GPU, the coalesced copy moves at least half as many bytes a second as the library's "
        "device-to-device copy";
    const char *stride_claim =
        "on a GPU, the strided copy at stride 32 is at least 4x slower than at stride 1";
    enum { N = 1 << 26 };
    device_properties p;
    CHECK(device_get_properties(d, &p));
    CHECK(device_memory_bandwidth(d, &p.memory_bandwidth_gbs)); /* the CPU's is measured, not a property */
    tensor *in, *out;
    CHECK(tensor_uniform(&in, d, shape1(N), -1.0f, 1.0f, 30));
    CHECK(tensor_zeros(&out, d, shape1(N)));
    timed t = {
        TIMED_STREAM, d, KERNEL_COPY, tensor_data_const(in), tensor_data(out), N, 1, NULL, NULL, NULL
    };
    const timed library = { TIMED_DEVICE_COPY, d, 0, NULL, NULL, N, 1, in, NULL, out };
    double copy_ms = NAN, library_ms = NAN;
    if (best_ms_in_turns(&t, &library, copy_claim, &copy_ms, &library_ms)) {
        const double gbs = 8.0 * N / copy_ms / 1e6, library_gbs = 8.0 * N / library_ms / 1e6;
        check_that(gbs >= COPY_SHARE_OF_MEMCPY * library_gbs, copy_claim,
                   "%s: your copy %.0f GB/s, tensor_copy (cudaMemcpy) %.0f GB/s: %.0f%% of it; %.0f%% and "
                   "%.0f%% of the peak of %.0f GB/s; 2^26 floats (256 MiB read, 256 MiB written), the "
                   "fastest of 5 runs each, in turns",
                   device_name(d), gbs, library_gbs, 100.0 * gbs / library_gbs,
                   100.0 * gbs / p.memory_bandwidth_gbs, 100.0 * library_gbs / p.memory_bandwidth_gbs,
                   p.memory_bandwidth_gbs);
    }
    t.kernel = KERNEL_STRIDED;
    const double one_ms = best_ms(&t, stride_claim);
    t.stride = 32;
    const double wide_ms = best_ms(&t, stride_claim);
    if (!isnan(one_ms) && !isnan(wide_ms))
        check_that(wide_ms >= STRIDE_32_SLOWDOWN * one_ms, stride_claim,
                   "%s, 2^26 floats: stride 1 %.3f ms (%.0f GB/s), stride 32 %.3f ms (%.0f GB/s): %.1fx",
                   device_name(d), one_ms, 8.0 * N / one_ms / 1e6, wide_ms, 8.0 * N / wide_ms / 1e6,
                   wide_ms / one_ms);
    tensor_free(in), tensor_free(out);
}

/* ---- step 2: tiles in shared memory ------------------------------------------------------- */

static void check_loads_formula(void)
{
    static const struct {
        int64_t k;
        int tile;
        double want;
    } cases[] = { { 2048, 1, 4096 }, { 2048, 16, 256 }, { 53, 16, 8 }, { 37, 16, 6 },
                  { 16, 16, 2 },     { 1, 16, 2 },      { 5, 1, 10 } };
    char figures[512] =
        "k = 2048: 4096 naive, 256 in tiles of 16; k = 53, 37, 16 and 1 in tiles of 16: 8, 6, 2 "
        "and 2; k = 0, tile 0 and a NULL loads refused";
    bool right = true;
    for (size_t i = 0; right && i < sizeof cases / sizeof cases[0]; ++i) {
        double loads = NAN;
        const status s = CHECK_YOURS(lab_loads_per_output(cases[i].k, cases[i].tile, &loads));
        right = s == STATUS_OK && loads == cases[i].want;
        if (!right)
            snprintf(figures, sizeof figures, "k = %lld, tile %d: got %.6g loads, want %.0f%s%s",
                     (long long)cases[i].k, cases[i].tile, loads, cases[i].want,
                     cases[i].k % cases[i].tile
                         ? " (the partial last tile is a whole step: every thread loads one "
                           "float of a and one of b for it)"
                         : "",
                     check_failure_text(s));
    }
    for (int bad = 0; right && bad < 2; ++bad) {
        double loads = 0.0;
        const status s = CHECK_YOURS(lab_loads_per_output(bad ? 16 : 0, bad ? 0 : 16, &loads));
        right = s == STATUS_BAD_ARGUMENT;
        if (!right)
            snprintf(figures, sizeof figures, "k = %d, tile %d: returned %s, want STATUS_BAD_ARGUMENT",
                     bad ? 16 : 0, bad ? 0 : 16, status_name(s));
    }
    if (right)
        null_refused(&right, CHECK_YOURS(lab_loads_per_output(16, 16, NULL)), "loads", figures,
                     sizeof figures);
    check_that(right, "global loads per output: 2 k naive, 2 ceil(k / T) in tiles of T", "%s", figures);
}

/* The shapes of the products: multiples of nothing, one of exactly one tile,
 * a single cell, and c thinner than a tile both ways. */
static const struct {
    int64_t m, n, k;
} product_shapes[] = { { 37, 29, 53 }, { 16, 16, 16 }, { 1, 1, 1 },
                       { 33, 47, 17 }, { 5, 70, 40 },  { 40, 3, 70 } };

/* Every shape through `kernel` on d, its operands followed by NaN and c by
 * OUT_SLACK: the largest error against float64 (infinite when the call fails
 * or a float after c changed). */
static double run_products(device d, product_kernel kernel, char *figures, size_t size)
{
    double worst = 0.0;
    for (size_t i = 0; i < sizeof product_shapes / sizeof product_shapes[0]; ++i) {
        const int64_t m = product_shapes[i].m, n = product_shapes[i].n, k = product_shapes[i].k;
        /* Enough for a kernel that loads whole tiles past the edges of a and b. */
        const int64_t after = slack(TILE * ((k > n ? k : n) + 1) + SLACK);
        float *a = floats(m * k), *b = floats(k * n), *c = NULL;
        uniform_values(a, m * k, -1.0f, 1.0f, 40 + i);
        uniform_values(b, k * n, -1.0f, 1.0f, 50 + i);
        tensor *ta, *tb, *tc;
        CHECK(device_array(d, a, m * k, after, NAN, &ta));
        CHECK(device_array(d, b, k * n, after, NAN, &tb));
        CHECK(device_array(d, NULL, m * n, after, OUT_SLACK, &tc));
        status s = CHECK_YOURS(
            run_product(d, kernel, tensor_data_const(ta), tensor_data_const(tb), tensor_data(tc), m, n, k));
        const status read = host_copy(tc, &c);
        if (s == STATUS_OK) s = read;
        int64_t at = 0, past = 0;
        double e = INFINITY;
        if (s == STATUS_OK) {
            e = product_error(a, b, c, m, n, k, &at);
            for (int64_t j = m * n; j < m * n + after; ++j) past += c[j] != OUT_SLACK;
        }
        if ((!(e <= PRODUCT_TOLERANCE) || past > 0) && worst <= PRODUCT_TOLERANCE) {
            snprintf(figures, size, "[%lld, %lld] x [%lld, %lld]: ", (long long)m, (long long)k, (long long)k,
                     (long long)n);
            if (s == STATUS_OK && !(e <= PRODUCT_TOLERANCE))
                check_append(
                    figures, size, "c[%lld, %lld] = %.7g, float64 says %.7g%s", (long long)(at / n),
                    (long long)(at % n), (double)c[at], product_reference(a, b, n, k, at / n, at % n, NULL),
                    isnan(c[at]) ? " (NaN: never written, or a NaN read past the end of a or b)" : "");
            if (past > 0)
                check_append(figures, size, "%s%lld floats after c written",
                             s == STATUS_OK && e > PRODUCT_TOLERANCE ? "; " : "", (long long)past);
            check_append(figures, size, "%s", check_failure_text(s));
            e = INFINITY;
        }
        worst = fmax(worst, e);
        tensor_free(ta), tensor_free(tb), tensor_free(tc), free(a), free(b), free(c);
    }
    return worst;
}

static void check_products(device d)
{
    for (int kernel = PRODUCT_NAIVE; kernel <= PRODUCT_TILED; ++kernel) {
        char figures[768], claim[160];
        snprintf(
            figures, sizeof figures,
            "6 shapes from [1, 1] x [1, 1] to [40, 70] x [70, 3], multiples of nothing: |error| <= %g of sum "
            "|a b|, nothing written after c",
            PRODUCT_TOLERANCE);
        const double worst = run_products(d, (product_kernel)kernel, figures, sizeof figures);
        snprintf(claim, sizeof claim, "your %s product matches float64 and writes nothing outside c",
                 product_kernel_name((product_kernel)kernel));
        check_that(worst <= PRODUCT_TOLERANCE, claim, "%s (largest %.2g)", figures, worst);
    }
    double naive = 0.0, tiled = 0.0;
    if (lab_loads_per_output(2048, 1, &naive) == STATUS_OK &&
        lab_loads_per_output(2048, TILE, &tiled) == STATUS_OK)
        printf("  (at N = 2048 a cell costs %.0f global loads naive and %.0f tiled: %.0fx fewer, by your "
               "formula; "
               "./lab check 09 --kernels counts them)\n",
               naive, tiled, naive / tiled);
}

static void check_gpu_products(device d)
{
    const char *claim = "on a GPU, the tiled product is at least 2x faster than the naive one at N = 4096";
    enum { N = TILED_N };
    tensor *a, *b, *c;
    CHECK(tensor_uniform(&a, d, shape2(N, N), -1.0f, 1.0f, 60));
    CHECK(tensor_uniform(&b, d, shape2(N, N), -1.0f, 1.0f, 61));
    CHECK(tensor_zeros(&c, d, shape2(N, N)));
    timed t = { TIMED_PRODUCT, d, PRODUCT_NAIVE, NULL, NULL, N, 1, a, b, c };
    const double naive_ms = best_ms(&t, claim);
    t.kernel = PRODUCT_TILED;
    const double tiled_ms = best_ms(&t, claim);
    t.what = TIMED_LIBRARY;
    const double library_ms = best_ms(&t, claim);
    const double gflop = 2.0 * N * (double)N * N / 1e9;
    if (!isnan(naive_ms) && !isnan(tiled_ms) && !isnan(library_ms))
        check_that(
            naive_ms >= TILED_SPEEDUP * tiled_ms, claim,
            "%s: naive %.3f ms (%.0f GFLOP/s), tiled %.3f ms (%.0f GFLOP/s): %.2fx; op_matmul (cuBLAS) %.3f "
            "ms (%.0f GFLOP/s), the tiled kernel %.0f%% of it",
            device_name(d), naive_ms, gflop / naive_ms * 1e3, tiled_ms, gflop / tiled_ms * 1e3,
            naive_ms / tiled_ms, library_ms, gflop / library_ms * 1e3, 100.0 * library_ms / tiled_ms);
    tensor_free(a), tensor_free(b), tensor_free(c);
}

/* ---- step 3: a reduction -------------------------------------------------------------------- */

static void check_bound_formula(void)
{
    const double u = ldexp(1.0, -24);
    static const struct {
        int64_t n;
        double sum_abs;
    } cases[] = { { 1, 5.0 }, { 2, 1.0 }, { 1001, 500.0 }, { 100003, 0.0 }, { 1 << 20, 3.0 } };
    char figures[512] =
        "n = 1, 2, 1001, 100003 and 2^20: (n - 1) 2^-24 sum|x|; n = 0, sum|x| = -1 and NaN, a NULL bound "
        "refused";
    bool right = true;
    for (size_t i = 0; right && i < sizeof cases / sizeof cases[0]; ++i) {
        double bound = NAN;
        const double want = (double)(cases[i].n - 1) * u * cases[i].sum_abs;
        const status s = CHECK_YOURS(lab_sum_error_bound(cases[i].n, cases[i].sum_abs, &bound));
        right = s == STATUS_OK && near(bound, want);
        if (!right)
            snprintf(figures, sizeof figures, "n = %lld, sum|x| = %g: got %.9g, want %.9g%s",
                     (long long)cases[i].n, cases[i].sum_abs, bound, want, check_failure_text(s));
    }
    /* NaN (a NaN among the terms) is not 0 or more: a test written as
     * sum_abs < 0 lets it through, and a NaN bound with it. */
    static const struct {
        int64_t n;
        double sum_abs;
    } bad[] = { { 0, 1.0 }, { 10, -1.0 }, { 10, NAN } };
    for (size_t i = 0; right && i < sizeof bad / sizeof bad[0]; ++i) {
        double bound = 0.0;
        const status s = CHECK_YOURS(lab_sum_error_bound(bad[i].n, bad[i].sum_abs, &bound));
        right = s == STATUS_BAD_ARGUMENT;
        if (!right)
            snprintf(figures, sizeof figures, "n = %lld, sum|x| = %g: returned %s, want STATUS_BAD_ARGUMENT",
                     (long long)bad[i].n, bad[i].sum_abs, status_name(s));
    }
    if (right)
        null_refused(&right, CHECK_YOURS(lab_sum_error_bound(10, 1.0, NULL)), "bound", figures,
                     sizeof figures);
    check_that(right, "a float32 sum of n terms is within (n - 1) u sum|x| of the exact sum, u = 2^-24", "%s",
               figures);
}

/* One sum of x's n values by `kernel` on d: the total, the atomics counted,
 * and the status of the call or of reading them back. */
typedef struct sum_trial {
    status s;
    float total;
    unsigned atomics;
} sum_trial;

static sum_trial run_sum_case(device d, sum_kernel kernel, const float *x, int64_t n)
{
    sum_trial r = { STATUS_OK, NAN, 0 };
    tensor *tx, *total, *atomics;
    CHECK(device_array(d, x, n, slack(SLACK), NAN, &tx));
    CHECK(tensor_full(&total, d, shape1(1), NAN));
    CHECK(tensor_empty(&atomics, d, DTYPE_I32, shape1(1)));
    /* The counter is an int32 tensor's memory, counted as unsigned: the same 4 bytes. */
    r.s = CHECK_YOURS(
        run_sum(d, kernel, tensor_data_const(tx), n, tensor_data(total), (unsigned *)tensor_data(atomics)));
    int32_t count = 0;
    status read = tensor_item(total, &r.total);
    if (read == STATUS_OK) read = tensor_to_host_i32(atomics, &count, 1);
    if (r.s == STATUS_OK) r.s = read;
    r.atomics = (unsigned)count;
    tensor_free(tx), tensor_free(total), tensor_free(atomics);
    return r;
}

/* A wrong sum of x's n exact values: its value and the exact one, then what
 * it looks like. The gap is in 256ths, not in elements (each value is a
 * multiple of 1/256 from -127/256 to 127/256, so no count of elements follows
 * from it); a total equal to the sum of the first m < n values alone says the
 * rest were left out, and NaN that something was read past x's end, where the
 * check puts NaN. */
static void describe_wrong_sum(char *figures, size_t size, const float *x, int64_t n, float total,
                               double want)
{
    check_append(figures, size, ": the sum is %.9g, want exactly %.9g", (double)total, want);
    if (isnan(total)) {
        check_append(
            figures, size,
            " (NaN: x's n elements are numbers, and the check puts NaN past its end: was an element past n "
            "added?)");
        return;
    }
    check_append(figures, size, " (off by %g, %+g/256", (double)total - want, ((double)total - want) * 256.0);
    double prefix = 0.0; /* exact: at most 100003 multiples of 1/256 below 1 */
    int64_t m = 0;
    while (m < n && prefix != (double)total) prefix += x[m++];
    if (prefix == (double)total && m == 0)
        check_append(figures, size, ": was nothing added to the total?");
    else if (prefix == (double)total && m < n)
        check_append(figures, size,
                     ": the sum of the first %lld of the %lld elements alone: were the others "
                     "left out?",
                     (long long)m, (long long)n);
    check_append(figures, size, ")");
}

static void check_sum(device d, sum_kernel kernel, const char *claim)
{
    static const int64_t sizes[] = { 1, 33, 257, 100003 };
    enum { RANDOM_N = 100003 };
    char figures[768];
    snprintf(figures, sizeof figures,
             "n = 1, 33, 257 and 100003 multiples of 1/256: exact; %d floats in [-1, 1): within the bound; "
             "atomics "
             "counted",
             RANDOM_N);
    bool right = true;
    float *x = floats(RANDOM_N);
    for (size_t i = 0; right && i < sizeof sizes / sizeof sizes[0]; ++i) {
        const int64_t n = sizes[i];
        exact_values(x, n, 70 + i);
        double want, sum_abs;
        sum_reference(x, n, &want, &sum_abs);
        const sum_trial r = run_sum_case(d, kernel, x, n);
        const unsigned atomics =
            kernel == SUM_ATOMIC ? (unsigned)n : (unsigned)((n + REDUCE_BLOCK - 1) / REDUCE_BLOCK);
        right = r.s == STATUS_OK && (double)r.total == want && r.atomics == atomics;
        if (right) continue;
        snprintf(figures, sizeof figures,
                 "n = %lld multiple%s of 1/256, whose float32 sum is exact in any order", (long long)n,
                 n == 1 ? "" : "s");
        if (r.s == STATUS_OK && (double)r.total != want)
            describe_wrong_sum(figures, sizeof figures, x, n, r.total, want);
        else if (r.s == STATUS_OK)
            check_append(
                figures, sizeof figures, ": the sum is right; %u atomics counted, want %u (%s)%s", r.atomics,
                atomics, kernel == SUM_ATOMIC ? "one per element" : "one per block of 256",
                r.atomics == 0 ? ": add to the total with total_add (given_kernels.cuh), which counts them"
                               : "");
        check_append(figures, sizeof figures, "%s", check_failure_text(r.s));
    }
    if (right) {
        uniform_values(x, RANDOM_N, -1.0f, 1.0f, 80);
        double want, sum_abs;
        sum_reference(x, RANDOM_N, &want, &sum_abs);
        const double bound = (double)(RANDOM_N - 1) * ldexp(1.0, -24) * sum_abs;
        const sum_trial r = run_sum_case(d, kernel, x, RANDOM_N);
        right = r.s == STATUS_OK && fabs((double)r.total - want) <= bound;
        if (!right)
            snprintf(figures, sizeof figures,
                     "%d floats in [-1, 1): the sum is %.9g, float64 says %.9g, %g apart; the "
                     "bound is %.3g%s",
                     RANDOM_N, (double)r.total, want, fabs((double)r.total - want), bound,
                     check_failure_text(r.s));
        else
            check_append(figures, sizeof figures, " (random: %g from float64, bound %.3g)",
                         fabs((double)r.total - want), bound);
    }
    free(x);
    check_that(right, claim, "%s", figures);
}

/* What the order of the atomics does: the same random floats summed 5 times
 * by each kernel. On the CPU and a simulated GPU the threads run in one fixed
 * order, so each gives one value; on a real GPU the blocks' atomics land in
 * the order the blocks finish, which changes from run to run, and float
 * addition is not associative. Printed, not claimed: nothing can make a
 * simulated GPU's order change, and a real GPU may happen to agree. */
static void show_orders(device d)
{
    enum { N = 100003, RUNS = 5 };
    float *x = floats(N);
    uniform_values(x, N, -1.0f, 1.0f, 90);
    printf("  (%s, %d runs of each sum of the same %d random floats:", device_name(d), RUNS, N);
    for (int kernel = SUM_ATOMIC; kernel <= SUM_WARP; ++kernel) {
        float seen[RUNS];
        int distinct = 0;
        for (int run = 0; run < RUNS; ++run) {
            const sum_trial r = run_sum_case(d, (sum_kernel)kernel, x, N);
            bool again = false;
            for (int j = 0; j < distinct; ++j)
                again = again || memcmp(&seen[j], &r.total, sizeof r.total) == 0;
            if (!again) seen[distinct++] = r.total;
        }
        printf("%s %s: %d distinct value%s", kernel == SUM_ATOMIC ? "" : ";",
               sum_kernel_name((sum_kernel)kernel), distinct, distinct == 1 ? "" : "s");
    }
    printf("%s)\n", d.kind == DEVICE_CUDA ? ": the blocks' atomics land in a different order each run"
                                          : ": its threads run in one fixed order, atomics included");
    free(x);
}

/* ---- step 4: the roofline ------------------------------------------------------------------ */

static void check_cost_formula(void)
{
    static const struct {
        lab_kernel kernel;
        int64_t n;
        double flop, bytes;
        const char *what;
    } cases[] = { { LAB_COPY, 1000, 0.0, 8000.0, "copy, n = 1000" },
                  { LAB_SCALE, 1000, 1000.0, 8000.0, "scale, n = 1000" },
                  { LAB_SUM, 1000, 1000.0, 4004.0, "sum, n = 1000" },
                  { LAB_PRODUCT, 2048, 17179869184.0, 50331648.0, "product, n = 2048" },
                  { LAB_PRODUCT, 3, 54.0, 108.0, "product, n = 3" } };
    char figures[512] = "copy 0 and 8n, scale n and 8n, sum n and 4n + 4, product 2n^3 and 12n^2; n = 0, "
                        "kernels 4 and -1 (none of the four) and NULL outputs refused";
    bool right = true;
    for (size_t i = 0; right && i < sizeof cases / sizeof cases[0]; ++i) {
        double flop = NAN, bytes = NAN;
        const status s = CHECK_YOURS(lab_kernel_cost(cases[i].kernel, cases[i].n, &flop, &bytes));
        right = s == STATUS_OK && flop == cases[i].flop && bytes == cases[i].bytes;
        if (!right)
            snprintf(figures, sizeof figures, "%s: got %.12g FLOP and %.12g bytes, want %.12g and %.12g%s",
                     cases[i].what, flop, bytes, cases[i].flop, cases[i].bytes, check_failure_text(s));
    }
    /* What lab.h refuses: a size of 0, and a kernel that is none of the four
     * (an enum holds any int: a value past LAB_PRODUCT, or below LAB_COPY). */
    static const struct {
        int kernel;
        int64_t n;
        const char *what;
    } refused[] = { { LAB_PRODUCT, 0, "product, n = 0" },
                    { LAB_PRODUCT + 1, 1000, "kernel 4 (none of the four), n = 1000" },
                    { -1, 1000, "kernel -1, n = 1000" } };
    for (size_t i = 0; right && i < sizeof refused / sizeof refused[0]; ++i) {
        double flop = 0.0, bytes = 0.0;
        const status s =
            CHECK_YOURS(lab_kernel_cost((lab_kernel)refused[i].kernel, refused[i].n, &flop, &bytes));
        right = s == STATUS_BAD_ARGUMENT;
        if (!right && s == STATUS_OK)
            snprintf(figures, sizeof figures,
                     "%s: answered %.12g FLOP and %.12g bytes; lab.h says refuse it (STATUS_BAD_ARGUMENT)",
                     refused[i].what, flop, bytes);
        else if (!right)
            snprintf(figures, sizeof figures, "%s: returned %s, want STATUS_BAD_ARGUMENT", refused[i].what,
                     status_name(s));
    }
    double one = 0.0;
    if (right)
        null_refused(&right, CHECK_YOURS(lab_kernel_cost(LAB_COPY, 1000, NULL, &one)), "flop", figures,
                     sizeof figures);
    if (right)
        null_refused(&right, CHECK_YOURS(lab_kernel_cost(LAB_COPY, 1000, &one, NULL)), "bytes", figures,
                     sizeof figures);
    check_that(right, "a kernel's FLOP and least bytes follow from its size", "%s", figures);
}

static void check_intensity_formula(void)
{
    static const struct {
        double flop, bytes, want;
    } cases[] = { { 17179869184.0, 50331648.0, 341.333333333333333 },
                  { 1000.0, 8000.0, 0.125 },
                  { 0.0, 8000.0, 0.0 } };
    char figures[256] =
        "2 n^3 / 12 n^2 at n = 2048: 341.3; 0.125; 0; 0 bytes, -2 FLOP, NaN FLOP, NaN bytes and a NULL "
        "intensity refused";
    bool right = true;
    for (size_t i = 0; right && i < sizeof cases / sizeof cases[0]; ++i) {
        double intensity = NAN;
        const status s = CHECK_YOURS(lab_arithmetic_intensity(cases[i].flop, cases[i].bytes, &intensity));
        right = s == STATUS_OK && near(intensity, cases[i].want);
        if (!right)
            snprintf(figures, sizeof figures, "%.12g FLOP over %.12g bytes: got %.9g, want %.9g%s",
                     cases[i].flop, cases[i].bytes, intensity, cases[i].want, check_failure_text(s));
    }
    static const struct {
        double flop, bytes;
    } refused[] = { { 1.0, 0.0 }, { -2.0, 8.0 }, { NAN, 8.0 }, { 1.0, NAN } }; /* NaN: neither < 0 nor >= 0 */
    for (size_t i = 0; right && i < sizeof refused / sizeof refused[0]; ++i) {
        double intensity = 0.0;
        const status s = CHECK_YOURS(lab_arithmetic_intensity(refused[i].flop, refused[i].bytes, &intensity));
        right = s == STATUS_BAD_ARGUMENT;
        if (!right && s == STATUS_OK)
            snprintf(
                figures, sizeof figures,
                "%g FLOP over %g bytes: answered %.9g FLOP/B; lab.h says refuse it (STATUS_BAD_ARGUMENT)",
                refused[i].flop, refused[i].bytes, intensity);
        else if (!right)
            snprintf(figures, sizeof figures, "%g FLOP over %g bytes: returned %s, want STATUS_BAD_ARGUMENT",
                     refused[i].flop, refused[i].bytes, status_name(s));
    }
    if (right)
        null_refused(&right, CHECK_YOURS(lab_arithmetic_intensity(1.0, 8.0, NULL)), "intensity", figures,
                     sizeof figures);
    check_that(right, "arithmetic intensity is FLOP per byte", "%s", figures);
}

static void check_roofline_formula(void)
{
    static const struct {
        double intensity, peak, bandwidth, want;
        const char *what;
    } cases[] = { { 0.125, 7680.0, 320.0, 40.0, "0.125 FLOP/B on sim's card (7680 GFLOP/s, 320 GB/s)" },
                  { 341.0, 7680.0, 320.0, 7680.0, "341 FLOP/B on sim's card" },
                  { 24.0, 7680.0, 320.0, 7680.0, "the ridge, 24 FLOP/B, on sim's card" },
                  { 0.25, 66900.0, 3352.0, 838.0, "0.25 FLOP/B on an H100 (66900 GFLOP/s, 3352 GB/s)" },
                  { 0.0, 66900.0, 3352.0, 0.0, "0 FLOP/B" } };
    /* What lab.h refuses: each argument out of range alone, the others fine. */
    static const struct {
        double intensity, peak, bandwidth;
        const char *what;
    } refused[] = { { 1.0, 0.0, 320.0, "a peak of 0 GFLOP/s" },
                    { -1.0, 7680.0, 320.0, "an intensity of -1 FLOP/B" },
                    { 1.0, 7680.0, 0.0, "a bandwidth of 0 GB/s" },
                    /* NaN is neither below 0 nor above it, and fmin drops a NaN argument */
                    { 1.0, NAN, 320.0, "a peak of NaN GFLOP/s" },
                    { NAN, 7680.0, 320.0, "an intensity of NaN" },
                    { 1.0, 7680.0, NAN, "a bandwidth of NaN" } };
    char figures[256] = "below the ridge, at it and above it, on sim's card and an H100's; a peak of 0, a "
                        "negative intensity, a bandwidth of 0, NaN for each and a NULL gflops refused";
    bool right = true;
    for (size_t i = 0; right && i < sizeof cases / sizeof cases[0]; ++i) {
        double gflops = NAN;
        const status s = CHECK_YOURS(
            lab_attainable_gflops(cases[i].intensity, cases[i].peak, cases[i].bandwidth, &gflops));
        right = s == STATUS_OK && near(gflops, cases[i].want);
        if (!right)
            snprintf(figures, sizeof figures, "%s: got %.9g GFLOP/s, want %.9g%s", cases[i].what, gflops,
                     cases[i].want, check_failure_text(s));
    }
    for (size_t i = 0; right && i < sizeof refused / sizeof refused[0]; ++i) {
        double gflops = NAN;
        const status s = CHECK_YOURS(
            lab_attainable_gflops(refused[i].intensity, refused[i].peak, refused[i].bandwidth, &gflops));
        right = s == STATUS_BAD_ARGUMENT;
        if (!right && s == STATUS_OK)
            snprintf(figures, sizeof figures,
                     "%s: answered %.9g GFLOP/s; lab.h says refuse it (STATUS_BAD_ARGUMENT)", refused[i].what,
                     gflops);
        else if (!right)
            snprintf(figures, sizeof figures, "%s: returned %s, want STATUS_BAD_ARGUMENT", refused[i].what,
                     status_name(s));
    }
    if (right)
        null_refused(&right, CHECK_YOURS(lab_attainable_gflops(1.0, 7680.0, 320.0, NULL)), "gflops", figures,
                     sizeof figures);
    check_that(right, "the roofline: the lower of the peak and intensity x bandwidth", "%s", figures);
}

/* Where the lesson's kernels sit on d's own roofs, from your formulas. */
static void show_roofs(device d)
{
    device_properties p;
    CHECK(device_get_properties(d, &p));
    CHECK(device_memory_bandwidth(d, &p.memory_bandwidth_gbs)); /* the CPU's is measured, not a property */
    if (!(p.peak_gflops > 0.0) || !(p.memory_bandwidth_gbs > 0.0)) {
        printf("  (%s does not know its peaks: no roofs to place the kernels under)\n", device_name(d));
        return;
    }
    static const lab_kernel kernels[] = { LAB_SCALE, LAB_SUM, LAB_PRODUCT };
    static const char *const names[] = { "scale", "sum", "product at N = 2048" };
    printf("  (%s's roofs, %.0f GFLOP/s and %.0f GB/s, meet at %.1f FLOP/B:", device_name(d), p.peak_gflops,
           p.memory_bandwidth_gbs, p.peak_gflops / p.memory_bandwidth_gbs);
    for (int i = 0; i < 3; ++i) {
        double flop, bytes, intensity, gflops;
        if (lab_kernel_cost(kernels[i], kernels[i] == LAB_PRODUCT ? 2048 : 1 << 26, &flop, &bytes) !=
                STATUS_OK ||
            lab_arithmetic_intensity(flop, bytes, &intensity) != STATUS_OK ||
            lab_attainable_gflops(intensity, p.peak_gflops, p.memory_bandwidth_gbs, &gflops) != STATUS_OK)
            continue;
        printf("%s %s %.3g FLOP/B, %s-bound", i ? ";" : "", names[i], intensity,
               gflops < p.peak_gflops ? "memory" : "compute");
    }
    printf(")\n");
}

/* ---- step 5: a transpose through shared memory ------------------------------------------------- */

static void check_wavefronts_formula(void)
{
    static const struct {
        int row_floats, want;
    } cases[] = { { 32, 32 }, { 33, 1 }, { 16, 16 }, { 48, 16 }, { 34, 2 },  { 1, 1 }, { 64, 32 },
                  { 17, 1 },  { 8, 8 },  { 24, 8 },  { 40, 8 },  { 96, 32 }, { 12, 4 } };
    /* 8, 24, 40 and 12 are lengths the README's examples leave out: a formula
     * fitted to 32, 16 and 34 (multiples of 16: 16, other even lengths: 2)
     * gets them wrong, where counting the busiest bank does not. */
    char figures[512] = "rows of 32 floats: 32 passes; 33: 1; 16 and 48: 16; 34: 2; 1, 17: 1; 64, 96: 32; 8, "
                        "24, 40: 8; 12: 4; rows of 0, -32 and -1 floats, a NULL wavefronts refused";
    bool right = true;
    for (size_t i = 0; right && i < sizeof cases / sizeof cases[0]; ++i) {
        int wavefronts = -1;
        const status s = CHECK_YOURS(lab_column_read_wavefronts(cases[i].row_floats, &wavefronts));
        right = s == STATUS_OK && wavefronts == cases[i].want;
        if (!right)
            snprintf(
                figures, sizeof figures,
                "rows of %d floats: got %d passes, want %d (thread t's float lies in bank (t x %d) mod 32: "
                "the busiest bank holds %d of the 32)%s",
                cases[i].row_floats, wavefronts, cases[i].want, cases[i].row_floats, cases[i].want,
                check_failure_text(s));
    }
    /* Every length below 1 is refused. -32 first: t x -32 mod 32 is 0 for
     * every thread, so a count that lets it through stays inside its 32 banks
     * and fails this claim by its answer; -1's banks are negative. */
    static const int refused[] = { 0, -32, -1 };
    for (size_t i = 0; right && i < sizeof refused / sizeof refused[0]; ++i) {
        int wavefronts = 0;
        const status s = CHECK_YOURS(lab_column_read_wavefronts(refused[i], &wavefronts));
        right = s == STATUS_BAD_ARGUMENT;
        if (!right)
            snprintf(
                figures, sizeof figures,
                "rows of %d floats: returned %s, want STATUS_BAD_ARGUMENT (lab.h: a row holds at least 1 "
                "float)",
                refused[i], status_name(s));
    }
    if (right)
        null_refused(&right, CHECK_YOURS(lab_column_read_wavefronts(33, NULL)), "wavefronts", figures,
                     sizeof figures);
    check_that(right, "a warp's read of a tile's column takes as many passes as its busiest bank has floats",
               "%s", figures);
}

/* The check's transposes: whole tiles, one float, multiples of nothing both
 * ways, a row of tiles and a bit. In this order, a tile loaded without its
 * edge test first reads past the end of in ([1, 1], in the first block),
 * before a tile written without it writes past out's, so that the kernel
 * sanitizer names the load's line. */
static const struct {
    int64_t rows, cols;
} transpose_shapes[] = { { 64, 32 }, { 1, 1 }, { 37, 53 }, { 33, 100 } };

/* One transpose of a [rows, cols] in by `kernel` on d, in followed by NaN and
 * out, NaN until written, by OUT_SLACK: the elements of out that are not in's
 * transposed (the first at `at`) and the floats after out that changed. */
typedef struct transpose_trial {
    status s;
    int64_t wrong, at, past;
    float got, want;
} transpose_trial;

static transpose_trial run_transpose_case(device d, transpose_kind kernel, int64_t rows, int64_t cols,
                                          uint64_t seed)
{
    transpose_trial r = { STATUS_OK, 0, -1, 0, 0.0f, 0.0f };
    const int64_t n = rows * cols, after = slack(TRANSPOSE_TILE * (rows > cols ? rows : cols) + SLACK);
    float *in = floats(n), *out = NULL;
    uniform_values(in, n, -1.0f, 1.0f, seed);
    tensor *tin, *tout;
    CHECK(device_array(d, in, n, after, NAN, &tin));
    CHECK(device_array(d, NULL, n, after, OUT_SLACK, &tout));
    r.s = CHECK_YOURS(run_transpose(d, kernel, tensor_data_const(tin), tensor_data(tout), rows, cols));
    const status read = host_copy(tout, &out); /* waits: a kernel's failure shows here */
    if (r.s == STATUS_OK) r.s = read;
    for (int64_t i = 0; read == STATUS_OK && i < n + after; ++i) {
        if (i >= n) {
            r.past += out[i] != OUT_SLACK;
            continue;
        }
        /* out[c, r] = in[r, c]: element i of out is row i / rows, column i % rows */
        const float want = in[(i % rows) * cols + i / rows];
        if (memcmp(&out[i], &want, sizeof want) == 0) continue;
        if (r.wrong++ == 0) r.at = i, r.got = out[i], r.want = want;
    }
    tensor_free(tin), tensor_free(tout), free(in), free(out);
    return r;
}

/* Every shape through `kernel`: whether all were exact, and what was not in figures. */
static bool run_transposes(device d, transpose_kind kernel, char *figures, size_t size)
{
    for (size_t i = 0; i < sizeof transpose_shapes / sizeof transpose_shapes[0]; ++i) {
        const int64_t rows = transpose_shapes[i].rows, cols = transpose_shapes[i].cols;
        const transpose_trial r = run_transpose_case(d, kernel, rows, cols, 100 + i);
        if (r.s == STATUS_OK && r.wrong == 0 && r.past == 0) continue;
        snprintf(figures, size, "in [%lld, %lld]: ", (long long)rows, (long long)cols);
        if (r.wrong > 0)
            check_append(
                figures, size, "out[%lld, %lld] = %.7g, want in[%lld, %lld] = %.7g (%lld elements wrong%s)",
                (long long)(r.at / rows), (long long)(r.at % rows), (double)r.got, (long long)(r.at % rows),
                (long long)(r.at / rows), (double)r.want, (long long)r.wrong,
                isnan(r.got) ? ": NaN is a value never written, or one read past the end of in" : "");
        if (r.past > 0)
            check_append(figures, size, "%s%lld floats after out written", r.wrong > 0 ? "; " : "",
                         (long long)r.past);
        check_append(figures, size, "%s", check_failure_text(r.s));
        return false;
    }
    return true;
}

static void check_transpose(device d)
{
    char figures[512] =
        "in [64, 32], [1, 1], [37, 53] and [33, 100]: out = in transposed bit for bit, the floats "
        "after out untouched";
    const bool right = run_transposes(d, TRANSPOSE_TILED, figures, sizeof figures);
    check_that(right, "your transpose gives out = in transposed, bit for bit, and writes nothing outside out",
               "%s", figures);
}

static int check_kernels(device d);

int main(int argc, char **argv)
{
    const device d = check_device(argc, argv);
    if (check_kernels_only()) return check_kernels(d); /* ./lab check 09 --kernels */
    check_bandwidth_formula();
    check_copy_and_scale(d);
    check_strided(d);
    check_threads();
    check_loads_formula();
    check_products(d);
    check_bound_formula();
    check_sum(d, SUM_ATOMIC,
              "the sum with one atomic per element is exact where float32 is, within the bound elsewhere, "
              "and makes "
              "n atomics");
    check_sum(d, SUM_BLOCK,
              "the sum by a shared-memory tree is exact where float32 is, within the bound elsewhere, and "
              "makes one "
              "atomic per block");
    check_sum(d, SUM_WARP,
              "the sum by a tree and warp shuffles is exact where float32 is, within the bound elsewhere, "
              "and makes "
              "one atomic per block");
    show_orders(d);
    check_cost_formula();
    check_intensity_formula();
    check_roofline_formula();
    show_roofs(d);
    check_wavefronts_formula();
    check_transpose(d);
    printf("  (the profiler's counts, sectors per request, global loads and bank conflicts, are claimed by "
           "./lab "
           "check 09 --kernels)\n");
    if (d.kind == DEVICE_CUDA) {
        check_gpu_bandwidth(d);
        check_gpu_products(d);
    } else
        printf(
            "  (the speed claims, coalesced against strided, tiled against naive, are a real GPU's: %s runs "
            "each block's threads one after another on one core%s)\n",
            device_name(d), d.kind == DEVICE_SIM ? ", and models no caches and no memory latency" : "");
    return check_finish("09_memory");
}

/* ---- kernels: your kernels under the kernel sanitizer and the profiler ----------------- */

/* One untimed run of a step 1 kernel on d at n; false (and a FAIL) when it
 * does not run. */
static bool ran_stream(device d, stream_kernel kernel, int64_t n, int64_t stride)
{
    const stream_trial r = run_stream_case(d, kernel, n, stride, 2.0f, 70);
    if (r.s == STATUS_OK || kernel_sanitizer_count() > 0) return true;
    check_that(false, "your step 1 kernels run on the device", "%s, n = %lld: %s", stream_kernel_name(kernel),
               (long long)n, check_failure_text(r.s));
    return false;
}

/* The last launch of `kernel`, or a FAIL naming the claim that needed it. */
static bool profiled(const char *kernel, const char *claim, kernel_profile *p)
{
    if (kernel_profile_last(kernel, p) == STATUS_OK) return true;
    check_that(false, claim, "%s", last_error());
    return false;
}

/* ./lab check 09 --kernels: this check built for the kernel tools runs these
 * claims alone, on a simulated GPU. Steps 1-3's and 5's kernels at the check's sizes,
 * which fill no whole block or tile, watched access by access by the kernel
 * sanitizer (labkit/check_kernels.h): an index past an array, or two threads of
 * a block touching one shared float with no barrier between, is reported with
 * its line. The profiler (labkit/kernel_profile.h) counts what each warp asked
 * of memory, as Nsight Compute does: the last launch of each kernel is one at
 * a size whose warps are all full (a warp that holds fewer threads asks for
 * fewer sectors), so that the counts are exact. */
static int check_kernels(device d)
{
    const int skip = check_kernels_skip(d);
    if (skip) return skip;
    if (d.kind == DEVICE_CPU) {
        printf("skipped: your kernels run on GPUs: ./lab check 09 --kernels watches them on sim:0\n");
        return CHECK_SKIPPED;
    }
    exact_arrays = true;
    kernel_sanitizer_clear();
    if (d.kind != DEVICE_CUDA) CHECK(kernel_profile_start()); /* no counts on a real GPU */
    /* Step 1: n = 100003 and 10007 leave a partial block and a partial warp;
     * the last runs, n = 100000 (390 blocks of 256 and 160 threads) and
     * 10016 (39 blocks and 32 threads), leave a partial block of whole warps. */
    bool ran = true;
    for (int kernel = KERNEL_COPY; ran && kernel <= KERNEL_SCALE; ++kernel)
        ran = ran_stream(d, (stream_kernel)kernel, 100003, 1) &&
              ran_stream(d, (stream_kernel)kernel, 100000, 1);
    ran = ran && ran_stream(d, KERNEL_STRIDED, 10007, 32) && ran_stream(d, KERNEL_STRIDED, 10007, 3) &&
          ran_stream(d, KERNEL_STRIDED, 100000, 1);
    kernel_profile stride1 = { .global_load_requests = 0 };
    if (ran) (void)kernel_profile_last("strided_copy_kernel", &stride1);
    ran = ran && ran_stream(d, KERNEL_STRIDED, 10016, 32);
    /* Step 2: the check's shapes, multiples of nothing, then [47, 64] x [64, 29]:
     * k = 4 tiles, and every warp of the grid (two rows of a block) holds a
     * cell of c, so that naive and tiled load for the same warps. */
    for (int kernel = PRODUCT_NAIVE; kernel <= PRODUCT_TILED; ++kernel) {
        char figures[512] = "";
        if (run_products(d, (product_kernel)kernel, figures, sizeof figures) > PRODUCT_TOLERANCE &&
            kernel_sanitizer_count() == 0)
            check_that(false, "your products run on the device and match float64", "%s", figures);
    }
    enum { M = 47, K = 64, N = 29 };
    float *a = floats(M * K), *b = floats(K * N);
    uniform_values(a, M * K, -1.0f, 1.0f, 71);
    uniform_values(b, K * N, -1.0f, 1.0f, 72);
    for (int kernel = PRODUCT_NAIVE; kernel <= PRODUCT_TILED; ++kernel) {
        tensor *ta, *tb, *tc;
        CHECK(device_array(d, a, M * K, 0, NAN, &ta));
        CHECK(device_array(d, b, K * N, 0, NAN, &tb));
        CHECK(device_array(d, NULL, M * N, 0, OUT_SLACK, &tc));
        (void)CHECK_YOURS(run_product(d, (product_kernel)kernel, tensor_data_const(ta), tensor_data_const(tb),
                                      tensor_data(tc), M, N, K));
        (void)device_synchronize(d); /* a launch the sanitizer stopped fails here */
        tensor_free(ta), tensor_free(tb), tensor_free(tc);
    }
    free(a), free(b);
    /* Step 3: each sum at a size that fills no whole block, then the
     * shared-memory tree and the warp sum at TREE_N, whole blocks, for the
     * counts. */
    static const int64_t sum_sizes[] = { 1, 1000, 100003, TREE_N };
    for (size_t i = 0; i < sizeof sum_sizes / sizeof sum_sizes[0]; ++i) {
        float *x = floats(sum_sizes[i]);
        uniform_values(x, sum_sizes[i], -1.0f, 1.0f, 73 + i);
        for (int kernel = SUM_ATOMIC; kernel <= SUM_WARP; ++kernel)
            if (sum_sizes[i] != TREE_N || kernel != SUM_ATOMIC)
                (void)run_sum_case(d, (sum_kernel)kernel, x, sum_sizes[i]);
        free(x);
    }
    /* Step 5: the check's shapes, then in [64, 96] through both transposes:
     * whole tiles and whole warps, for the counts. */
    char figures[512] = "";
    if (!run_transposes(d, TRANSPOSE_TILED, figures, sizeof figures) && kernel_sanitizer_count() == 0)
        check_that(false, "your transpose runs on the device and is exact", "%s", figures);
    enum { T_ROWS = 64, T_COLS = 96 };
    for (int kernel = TRANSPOSE_NAIVE; kernel <= TRANSPOSE_TILED; ++kernel)
        (void)run_transpose_case(d, (transpose_kind)kernel, T_ROWS, T_COLS, 120);
    (void)device_synchronize(d);
    kernel_profile_stop();
    check_kernels_clean("your kernels' threads (steps 1-3 and 5)", d);
    if (kernel_sanitizer_count() > 0 || !ran) return check_finish("09_memory");

    /* The counts. Sectors per request are a ratio of two exact integers, and
     * the claims compare the integers: want 4 sectors in each of the
     * 100000 / 32 = 3125 requests, and 32 in each of 10016 / 32 = 313. */
    kernel_profile p;
    const char *coalesced = "your copy is coalesced: 4 sectors of 32 bytes per warp-wide load request "
                            "(the profiler, as ncu's l1tex__t_sectors/requests_pipe_lsu_mem_global_op_ld)";
    if (profiled("copy_kernel", coalesced, &p))
        check_that(p.global_load_requests == 100000 / 32 &&
                       p.global_load_sectors == 4 * p.global_load_requests,
                   coalesced,
                   "n = 100000: %llu sectors in %llu load requests, %.4g per request (want 4: "
                   "32 threads read 32 consecutive floats, 128 bytes)",
                   p.global_load_sectors, p.global_load_requests, kernel_profile_sectors_per_load(&p));
    /* The scale reads and writes as the copy does: thread i on element i. */
    const char *coalesced_scale = "your scale is coalesced: 4 sectors per warp-wide load and store request";
    if (profiled("scale_kernel", coalesced_scale, &p))
        check_that(
            p.global_load_requests == 100000 / 32 && p.global_load_sectors == 4 * p.global_load_requests &&
                p.global_store_requests == 100000 / 32 &&
                p.global_store_sectors == 4 * p.global_store_requests,
            coalesced_scale,
            "n = 100000: loads %llu sectors in %llu requests, %.4g per request; stores %llu in %llu, "
            "%.4g (want 4 each, in 3125 requests: thread i scales element i, so 32 threads read and "
            "write 32 consecutive floats, 128 bytes)",
            p.global_load_sectors, p.global_load_requests, kernel_profile_sectors_per_load(&p),
            p.global_store_sectors, p.global_store_requests,
            p.global_store_requests ? (double)p.global_store_sectors / (double)p.global_store_requests : 0.0);
    const char *strided =
        "your strided copy asks for 4 sectors per load request at stride 1 and 32 at stride "
        "32, 8x the traffic";
    if (profiled("strided_copy_kernel", strided, &p))
        check_that(
            stride1.global_load_requests == 100000 / 32 &&
                stride1.global_load_sectors == 4 * stride1.global_load_requests &&
                p.global_load_requests == 10016 / 32 && p.global_load_sectors == 32 * p.global_load_requests,
            strided,
            "n = 100000, stride 1: %llu sectors in %llu load requests, %.4g per request (want "
            "4); n = 10016, stride 32: %llu in %llu, %.4g per request (want 32: each thread's float 128 "
            "bytes from the next one's)",
            stride1.global_load_sectors, stride1.global_load_requests,
            kernel_profile_sectors_per_load(&stride1), p.global_load_sectors, p.global_load_requests,
            kernel_profile_sectors_per_load(&p));
    const char *loads = "your tiled product makes 16x fewer global load requests than the naive one (k a "
                        "multiple of 16)";
    kernel_profile naive, tiled = { .kernel = "" };
    if (profiled("naive_matmul_kernel", loads, &naive) && profiled("tiled_matmul_kernel", loads, &tiled))
        check_that(
            tiled.global_load_requests > 0 && naive.global_load_requests == 16 * tiled.global_load_requests,
            loads,
            "[47, 64] x [64, 29], %llu warps: %llu requests naive (2 k = 128 a warp), %llu "
            "tiled (2 k / 16 = 8 a warp): %.4gx",
            tiled.warps, naive.global_load_requests, tiled.global_load_requests,
            tiled.global_load_requests ? (double)naive.global_load_requests / tiled.global_load_requests
                                       : 0.0);
    /* k = 64 is 4 tiles of 16: a block that walks one more (t <= k) loads
     * nothing new, since its tests give zeros past k, but waits twice more. */
    const char *barriers = "your tiled product walks k / 16 tiles, 2 barriers each (k a multiple of 16)";
    if (tiled.kernel[0]) {
        const unsigned long long blocks = (unsigned long long)tiled.grid[0] * tiled.grid[1] * tiled.grid[2];
        check_that(blocks > 0 && tiled.barriers == 2 * (K / 16) * blocks, barriers,
                   "[47, 64] x [64, 29]: %llu barriers in %llu blocks, %.4g per block (want %d: %d tiles of "
                   "k, 2 a tile; more means a loop past the last tile)",
                   tiled.barriers, blocks, blocks ? (double)tiled.barriers / (double)blocks : 0.0,
                   2 * (K / 16), K / 16);
    }
    /* The tree: with the threads below stride adding, the strides 128 to 32
     * keep whole warps busy or idle; only warp 0 splits, at the strides 16
     * to 1 and at thread 0's atomic. Threads t % (2 stride) == 0 split every
     * warp at every stride below 32 (about 48 a block). */
    const char *tree = "your tree sum keeps whole warps busy or idle: the threads below stride add";
    if (profiled("sum_block_kernel", tree, &p)) {
        const unsigned long long blocks = (unsigned long long)p.grid[0] * p.grid[1] * p.grid[2];
        check_that(blocks == TREE_N / 256 && p.divergent_branches <= TREE_DIVERGENT_MOST * blocks, tree,
                   "n = %d, %llu blocks of 256: %llu divergent branches, %.4g a block (want at most %d: "
                   "threads t < stride leave a warp whole until stride is under 32; neighbours first, "
                   "t %% (2 stride) == 0, split every warp at every stride below 32)",
                   TREE_N, blocks, p.divergent_branches, blocks ? (double)p.divergent_branches / blocks : 0.0,
                   TREE_DIVERGENT_MOST);
        /* A tree halves the block's 256 values in 8 rounds, the block meeting
         * at a barrier after each (the load's barrier may be the first
         * round's). One thread adding the 256 values in a row gives the same
         * sum and one atomic, and waits once. */
        int rounds = 0;
        for (int stride = REDUCE_BLOCK / 2; stride > 0; stride /= 2) ++rounds;
        const char *halves = "your tree sum halves the block's values in rounds, a barrier after each";
        check_that(blocks > 0 && p.barriers >= (unsigned long long)rounds * blocks, halves,
                   "n = %d, %llu blocks of %d: %llu barriers, %.4g a block (want at least %d: %d values "
                   "halved %d times, the threads below stride adding, every thread meeting __syncthreads() "
                   "after each round; fewer means fewer rounds, or one thread adding the block's values in a "
                   "row while the others wait)",
                   TREE_N, blocks, REDUCE_BLOCK, p.barriers,
                   blocks ? (double)p.barriers / (double)blocks : 0.0, rounds, REDUCE_BLOCK, rounds);
    }
    /* The warp sum: one barrier after the load and one after each round of
     * the tree down to 32 values (strides 128, 64 and 32 in blocks of 256),
     * whose threads below stride read 2 floats each: 2 stride / 32 load
     * requests a round; then warp 0 alone reads its 32 values, 1 request, and
     * adds them by shuffles, which need no barrier and no shared memory: 4
     * barriers and 15 requests a block, of which a quarter more is allowed.
     * The tree all the way down to one value waits at 9 and reads 25; one
     * thread adding the 256 values in a row reads 256. */
    const char *warp =
        "your warp sum waits at no barrier once 32 values are left: warp 0 adds them by shuffles";
    if (profiled("sum_warp_kernel", warp, &p)) {
        int most = 1;
        unsigned long long loads = 1;
        for (int stride = REDUCE_BLOCK / 2; stride >= 32; stride /= 2)
            ++most, loads += 2 * (unsigned)stride / 32;
        const unsigned long long blocks = (unsigned long long)p.grid[0] * p.grid[1] * p.grid[2];
        check_that(
            blocks == TREE_N / REDUCE_BLOCK && p.barriers <= (unsigned long long)most * blocks &&
                p.shared_load_requests <= (loads + loads / 4) * blocks,
            warp,
            "n = %d, %llu blocks of %d: %llu barriers, %.4g a block (want at most %d: one after the "
            "load and one after each round down to 32 values); %llu shared load requests, %.4g a "
            "block (want at most %llu: 2 stride / 32 a round, then 1 for warp 0's 32 values, %llu, and a "
            "quarter more; one thread adding the values in a row makes %d); below 32 values the lanes of "
            "warp 0 add with __shfl_down_sync, offsets 16 to 1, without shared memory or __syncthreads()",
            TREE_N, blocks, REDUCE_BLOCK, p.barriers, blocks ? (double)p.barriers / (double)blocks : 0.0,
            most, p.shared_load_requests, blocks ? (double)p.shared_load_requests / (double)blocks : 0.0,
            loads + loads / 4, loads, REDUCE_BLOCK);
    }
    const char *banks = "your tiled product reads and writes its tiles without bank conflicts";
    if (tiled.kernel[0])
        check_that(
            tiled.shared_load_bank_conflicts == 0 && tiled.shared_store_bank_conflicts == 0, banks,
            "[47, 64] x [64, 29]: %llu shared load requests, %llu wavefronts, %llu bank conflicts; %llu "
            "store requests, %llu conflicts (want 0: a warp reads a row of b's tile, 16 floats in 16 "
            "banks, and one float of each of two rows of a's, a broadcast)",
            tiled.shared_load_requests, tiled.shared_load_wavefronts, tiled.shared_load_bank_conflicts,
            tiled.shared_store_requests, tiled.shared_store_bank_conflicts);

    /* In [64, 96]: 6 tiles of 8 warps, each warp moving 4 rows of its tile:
     * 192 requests of each kind. The naive transpose: 24 blocks of 8 warps,
     * one float each way a thread. */
    const char *coalesced_t =
        "your transpose reads and writes global memory coalesced: 4 sectors per load and "
        "per store request, where the naive transpose's stores take 32";
    kernel_profile naive_t, tiled_t = { .kernel = "" };
    if (profiled("naive_transpose_kernel", coalesced_t, &naive_t) &&
        profiled("transpose_kernel", coalesced_t, &tiled_t))
        check_that(
            tiled_t.global_load_requests > 0 &&
                tiled_t.global_load_sectors == 4 * tiled_t.global_load_requests &&
                tiled_t.global_store_requests > 0 &&
                tiled_t.global_store_sectors == 4 * tiled_t.global_store_requests &&
                naive_t.global_store_sectors == 32 * naive_t.global_store_requests,
            coalesced_t,
            "in [%d, %d], %llu warps: loads %llu sectors in %llu requests (%.4g per request), stores "
            "%llu in %llu (%.4g; want 4 each: 32 consecutive floats of a row of in, then of out); the "
            "naive transpose, %llu warps: loads %.4g per request, stores %llu sectors in %llu requests "
            "(%.4g: its threads write floats %d apart, a sector each)",
            T_ROWS, T_COLS, tiled_t.warps, tiled_t.global_load_sectors, tiled_t.global_load_requests,
            kernel_profile_sectors_per_load(&tiled_t), tiled_t.global_store_sectors,
            tiled_t.global_store_requests,
            tiled_t.global_store_requests
                ? (double)tiled_t.global_store_sectors / (double)tiled_t.global_store_requests
                : 0.0,
            naive_t.warps, kernel_profile_sectors_per_load(&naive_t), naive_t.global_store_sectors,
            naive_t.global_store_requests,
            naive_t.global_store_requests
                ? (double)naive_t.global_store_sectors / (double)naive_t.global_store_requests
                : 0.0,
            T_ROWS);
    const char *banks_t = "your transpose reads and writes its tile without bank conflicts";
    if (tiled_t.kernel[0])
        check_that(tiled_t.shared_load_requests > 0 && tiled_t.shared_load_bank_conflicts == 0 &&
                       tiled_t.shared_store_bank_conflicts == 0,
                   banks_t,
                   "in [%d, %d]: %llu shared load requests, %llu wavefronts, %llu bank conflicts; %llu store "
                   "requests, %llu wavefronts, %llu conflicts (want 0: a warp reads a column of the tile, 32 "
                   "floats 33 apart, one in each bank; through an unpadded [32][32] tile all 32 lie in one "
                   "bank: 32 wavefronts a load request, 31 conflicts)",
                   T_ROWS, T_COLS, tiled_t.shared_load_requests, tiled_t.shared_load_wavefronts,
                   tiled_t.shared_load_bank_conflicts, tiled_t.shared_store_requests,
                   tiled_t.shared_store_wavefronts, tiled_t.shared_store_bank_conflicts);
    return check_finish("09_memory");
}
