/* check.c: lab 04's claims, on the device given with --device (default: cpu).
 *
 *   - lesson 002's layer, sigmoid(W x), gives its numbers: 0.13, 0.96, 0.40;
 *   - every product matches a float64 reference, square and not, with and
 *     without transposes: on the CPU your two loops and your OpenBLAS call, on
 *     a GPU your naive kernel; everywhere the library's op_matmul;
 *   - GFLOP/s and the fraction of peak are computed right, on exact inputs;
 *   - on a GPU, your kernel thread by thread (run on the host by the simulated
 *     GPU's launcher, on grids chosen here): each thread writes its own cell
 *     and no other, threads outside c write nothing; then on the device:
 *     lab_matmul_naive_gpu is one launch that neither waits nor copies, and
 *     its products match float64 on sizes that do not fill whole blocks;
 *   - on the CPU, OpenBLAS beats the naive loop by a wide margin at N = 512
 *     (and, in an optimised build, the i-k-j order beats i-j-k);
 *   - on a GPU, small products are dominated by launch overhead: GFLOP/s at
 *     N = 16 is a small fraction of GFLOP/s at N = 1024.
 * Timing claims are ratios with wide margins, each the best of several runs:
 * this runs on shared machines, and noise only ever adds time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "labkit/check_kernels.h"
#include "naive_launch.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* A product of float32 values of size about 1 is good to about k * 1e-7; a
 * wrong index or a missing term is off by about 0.1 or more. */
#define ATOL 5e-4
#define RTOL 1e-4

/* ---- float64 references ------------------------------------------------------- */

/* A [rows, cols] matrix of uniform values in [-1, 1) on the host, drawn by the
 * library from `seed` (the same values on every device). The caller frees it. */
static float *random_matrix(int64_t rows, int64_t cols, uint64_t seed)
{
    tensor *t;
    float *host = malloc((size_t)(rows * cols) * sizeof *host);
    if (!host)
        CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for a %lldx%lld matrix", (long long)rows,
                   (long long)cols));
    CHECK(tensor_uniform(&t, device_cpu(), shape2(rows, cols), -1.0f, 1.0f, seed));
    CHECK(tensor_to_host(t, host, rows * cols));
    tensor_free(t);
    return host;
}

/* ref [m, n] = op(a) op(b) in float64; a is stored [k, m] when trans_a, b [n, k]
 * when trans_b. */
static void reference(const float *a, bool trans_a, const float *b, bool trans_b, double *ref, int64_t m,
                      int64_t n, int64_t k)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double sum = 0.0;
            for (int64_t p = 0; p < k; ++p)
                sum +=
                    (double)(trans_a ? a[p * m + i] : a[i * k + p]) * (trans_b ? b[j * k + p] : b[p * n + j]);
            ref[i * n + j] = sum;
        }
}

/* true when every got[i] is within ATOL + RTOL |ref[i]|; prints the first few
 * cells that are not (a NaN left in c means a cell was never written). */
static bool matches(const char *what, const float *got, const double *ref, int64_t m, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < m * n; ++i) {
        if (fabs((double)got[i] - ref[i]) <= ATOL + RTOL * fabs(ref[i])) continue;
        if (bad++ < 3)
            printf("        %s: c[%lld, %lld] = %.6g, the reference says %.6g\n", what, (long long)(i / n),
                   (long long)(i % n), (double)got[i], ref[i]);
    }
    if (bad > 3)
        printf("        %s: ... %lld cells of %lld are wrong\n", what, (long long)bad, (long long)(m * n));
    return bad == 0;
}

/* The sizes every product is checked at: a square one and one whose sizes are
 * all different and no multiple of anything (a block, a vector width). */
typedef struct dims {
    int64_t m, n, k;
} dims;
static const dims shapes[] = { { 64, 64, 64 }, { 37, 29, 53 } };
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

/* ---- step 1: a layer ------------------------------------------------------------------ */

static void check_layer(device d)
{
    const float w[9] = { 1.0f, -2.0f, 2.0f, 2.0f, 1.0f, -4.0f, 1.0f, -1.0f, 0.0f };
    const float x[3] = { 0.5f, 0.9f, -0.3f };
    const long lesson[3] = { 13, 96, 40 }; /* hundredths: 0.13, 0.96, 0.40 */
    tensor *tw, *tx, *ty;
    float y[3];
    CHECK(tensor_from_host(&tw, d, shape2(3, 3), w));
    CHECK(tensor_from_host(&tx, d, shape2(3, 1), x));
    CHECK(tensor_full(&ty, d, shape2(3, 1), NAN));
    CHECK(lab_layer_forward(tw, tx, ty));
    CHECK(tensor_to_host(ty, y, 3));
    bool same = true;
    for (int i = 0; i < 3; ++i) same = same && lround(100.0 * y[i]) == lesson[i];
    check_that(same, "a layer is a matrix product: sigmoid(W x) gives lesson 002's numbers to two decimals",
               "%.4f %.4f %.4f; the lesson: 0.13 0.96 0.40", y[0], y[1], y[2]);
    tensor_free(tw), tensor_free(tx), tensor_free(ty);
}

/* ---- steps 2 to 4: the CPU's products ------------------------------------------------ */

typedef status (*host_matmul)(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k);

static void check_loop(const char *concept, host_matmul matmul)
{
    bool all = true;
    for (int s = 0; s < NSHAPES; ++s) {
        const int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        float *a = random_matrix(m, k, 11), *b = random_matrix(k, n, 12),
              *c = malloc((size_t)(m * n) * sizeof *c);
        double *ref = malloc((size_t)(m * n) * sizeof *ref);
        if (!c || !ref) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
        for (int64_t i = 0; i < m * n; ++i) c[i] = NAN; /* a cell never written stays NaN */
        reference(a, false, b, false, ref, m, n, k);
        CHECK(matmul(a, b, c, m, n, k));
        all = matches(concept, c, ref, m, n) && all;
        free(a), free(b), free(c), free(ref);
    }
    check_that(all, concept, "[64x64]x[64x64] and [37x53]x[53x29] against float64, |error| <= %g + %g |ref|",
               ATOL, RTOL);
}

/* OpenBLAS with each of the four transpose settings, and the library's
 * op_matmul on device d the same way: one claim each. */
static void check_transposes(device d, bool openblas)
{
    bool all = true;
    for (int s = 0; s < NSHAPES; ++s)
        for (int t = 0; t < 4; ++t) {
            const bool ta = t & 1, tb = t & 2;
            const int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
            /* Stored as op() expects them: a is [k, m] when transposed, b [n, k]. */
            const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
            float *a = random_matrix(a_rows, a_cols, 21), *b = random_matrix(b_rows, b_cols, 22);
            float *c = malloc((size_t)(m * n) * sizeof *c);
            double *ref = malloc((size_t)(m * n) * sizeof *ref);
            if (!c || !ref) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
            reference(a, ta, b, tb, ref, m, n, k);
            if (openblas) {
                for (int64_t i = 0; i < m * n; ++i) c[i] = NAN;
                CHECK(lab_matmul_openblas(a, ta, b, tb, c, m, n, k));
            } else {
                tensor *tA, *tB, *tC;
                CHECK(tensor_from_host(&tA, d, shape2(a_rows, a_cols), a));
                CHECK(tensor_from_host(&tB, d, shape2(b_rows, b_cols), b));
                CHECK(tensor_full(&tC, d, shape2(m, n), NAN));
                CHECK(op_matmul(tA, ta, tB, tb, NULL, tC));
                CHECK(tensor_to_host(tC, c, m * n));
                tensor_free(tA), tensor_free(tB), tensor_free(tC);
            }
            char what[64];
            snprintf(what, sizeof what, "%s%s%s", openblas ? "OpenBLAS" : "op_matmul", ta ? " a^T" : "",
                     tb ? " b^T" : "");
            all = matches(what, c, ref, m, n) && all;
            free(a), free(b), free(c), free(ref);
        }
    if (openblas)
        check_that(all, "your cblas_sgemm call (row-major) matches float64, with and without transposes",
                   "a b, a^T b, a b^T, a^T b^T at [64x64]x[64x64] and [37x53]x[53x29]");
    else
        check_that(all, "the library's op_matmul matches float64 on this device, with and without transposes",
                   "%s: a b, a^T b, a b^T, a^T b^T at [64x64]x[64x64] and [37x53]x[53x29]", device_name(d));
}

/* ---- step 5: counting ---------------------------------------------------------------- */

static void check_counting(device d)
{
    double gflops = 0.0, fraction = -1.0;
    device_properties p;
    CHECK(lab_gflops(100, 200, 300, 0.5, &gflops));
    const double want = 2.0 * 100 * 200 * 300 / 0.5 / 1e9; /* a multiply and an add per term */
    const status refused = lab_gflops(100, 200, 300, 0.0, &(double){ 0 });
    check_that(fabs(gflops - want) < 1e-12 && refused == STATUS_BAD_ARGUMENT,
               "GFLOP/s counts 2 m n k operations per product, and refuses a time of 0",
               "[100x300]x[300x200] in 0.5 s: %g GFLOP/s (want %g); seconds = 0: %s", gflops, want,
               status_name(refused));
    CHECK(device_get_properties(d, &p));
    CHECK(lab_fraction_of_peak(p.peak_gflops / 4.0, d, &fraction));
    const double want_fraction = p.peak_gflops > 0 ? 0.25 : 0.0;
    check_that(fabs(fraction - want_fraction) < 1e-9,
               "the fraction of peak divides by the device's own FP32 peak",
               "a quarter of %s's %.1f GFLOP/s gives %g (want %g)", device_name(d), p.peak_gflops, fraction,
               want_fraction);
}

/* ---- step 6: the naive kernel ------------------------------------------------------- */

/* The kernel, thread by thread. The simulated GPU's launcher runs it here, on
 * the host, on grids the check chooses, so that which thread writes which cell
 * can be seen: a grid of one thread must write one cell. c sits between guard
 * cells, and a and b are followed by spare values, so that a thread that
 * strays writes into a guard (and is counted) instead of into memory the
 * program needs. Every cell starts as NaN: a cell holding a number was
 * written. The same kernel text is what nvcc compiles for a real GPU. */
enum { KM = 3, KN = 5, KK = 2, GUARD = 256 };

typedef struct kernel_trial {
    unsigned grid_x, grid_y, block_x, block_y;
    bool inside[KM][KN]; /* written cells of c */
    int written;         /* how many cells of c were written */
    int outside;         /* how many guard cells were written */
} kernel_trial;

static kernel_trial run_kernel(unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y)
{
    static float a[KM * KK + GUARD], b[KK * KN + GUARD], arena[GUARD + KM * KN + GUARD];
    for (int i = 0; i < KM * KK + GUARD; ++i) a[i] = i < KM * KK ? (float)(i + 1) : 0.5f;
    for (int i = 0; i < KK * KN + GUARD; ++i) b[i] = i < KK * KN ? (float)(i % 7 + 1) : 0.5f;
    for (int i = 0; i < GUARD + KM * KN + GUARD; ++i) arena[i] = NAN;
    const naive_matmul_args args = { .a = a,
                                     .b = b,
                                     .c = arena + GUARD,
                                     .m = KM,
                                     .n = KN,
                                     .k = KK,
                                     .grid_x = grid_x,
                                     .grid_y = grid_y,
                                     .block_x = block_x,
                                     .block_y = block_y };
    naive_matmul_launchers.on_sim(&args, NULL);
    kernel_trial t = { .grid_x = grid_x, .grid_y = grid_y, .block_x = block_x, .block_y = block_y };
    for (int i = 0; i < GUARD + KM * KN + GUARD; ++i) {
        const bool in_c = i >= GUARD && i < GUARD + KM * KN, written = !isnan(arena[i]);
        if (in_c)
            t.inside[(i - GUARD) / KN][(i - GUARD) % KN] = written, t.written += written;
        else
            t.outside += written;
    }
    return t;
}

/* Whether exactly the cells c[0, 0] .. c[rows - 1, cols - 1] were written, and no guard. */
static bool wrote_exactly(const kernel_trial *t, int rows, int cols)
{
    for (int i = 0; i < KM; ++i)
        for (int j = 0; j < KN; ++j)
            if (t->inside[i][j] != (i < rows && j < cols)) return false;
    return t->outside == 0;
}

/* "grid 1x1 of 2x1 threads wrote c[0,0] c[1,0]", the first few cells. */
static void describe_trial(const kernel_trial *t, char *out, size_t size)
{
    int used = snprintf(out, size, "%ux%u blocks of %ux%u threads wrote", t->grid_x, t->grid_y, t->block_x,
                        t->block_y);
    int shown = 0;
    for (int i = 0; i < KM; ++i)
        for (int j = 0; j < KN; ++j)
            if (t->inside[i][j] && shown++ < 4 && used < (int)size)
                used += snprintf(out + used, size - (size_t)used, " c[%d,%d]", i, j);
    if (used < (int)size && shown > 4)
        used += snprintf(out + used, size - (size_t)used, " ... (%d cells)", shown);
    if (used < (int)size && shown == 0) used += snprintf(out + used, size - (size_t)used, " no cell");
    if (used < (int)size && t->outside > 0)
        snprintf(out + used, size - (size_t)used, " and %d cells outside c", t->outside);
}

/* The two claims about threads; true when both hold, so that the kernel may
 * run on the device without writing outside its tensors. */
static bool check_kernel_threads(void)
{
    /* Grids of one or two threads, each of which lies inside c: each must write
     * its own cell, x being the column and y the row, and nothing else. */
    static const struct {
        unsigned gx, gy, bx, by;
        int rows, cols; /* the cells they must write: c[0.., 0..] */
    } small[] = { { 1, 1, 1, 1, 1, 1 },
                  { 1, 1, 2, 1, 1, 2 },
                  { 1, 1, 1, 2, 2, 1 },
                  { 2, 1, 1, 1, 1, 2 },
                  { 1, 2, 1, 1, 2, 1 } };
    char figures[160] = "grids of 1 and 2 threads along x and y, each writing its own cell";
    bool own = true, wrote_any = false;
    for (size_t g = 0; g < sizeof small / sizeof small[0]; ++g) {
        const kernel_trial t = run_kernel(small[g].gx, small[g].gy, small[g].bx, small[g].by);
        wrote_any = wrote_any || t.written > 0 || t.outside > 0;
        if (!own || wrote_exactly(&t, small[g].rows, small[g].cols)) continue;
        own = false;
        char cells[24];
        snprintf(cells, sizeof cells, small[g].rows * small[g].cols == 1 ? "c[0,0]" : "c[0,0] c[%d,%d]",
                 small[g].rows - 1, small[g].cols - 1);
        describe_trial(&t, figures, sizeof figures);
        snprintf(figures + strlen(figures), sizeof figures - strlen(figures), "; want %s only", cells);
    }
    if (!wrote_any)
        printf("        (no thread wrote anything: is naive_kernel.cuh still the untouched skeleton?)\n");
    check_that(own,
               "each thread of your kernel writes its own cell: thread (x, y) writes c[y, x], nothing else",
               "[3x2]x[2x5], the simulated GPU's launcher on the host: %s", figures);

    /* Blocks that are not square and not 16 wide, on a grid that sticks out of
     * c on both sides: 6 x 4 threads for 5 x 3 cells. */
    const kernel_trial t = run_kernel(2, 2, 3, 2);
    check_that(
        t.outside == 0 && t.written == KM * KN,
        "threads of the rounded-up grid outside c write nothing, and every cell of c is written",
        "[3x2]x[2x5] on 2x2 blocks of 3x2 threads (6x4 threads for 5x3 cells): %d of %d cells written, "
        "%d writes outside c",
        t.written, KM * KN, t.outside);
    return own && t.outside == 0 && t.written == KM * KN;
}

/* A kernel that writes nothing cannot harm anything: launch it, so that an
 * unwritten lab_matmul_naive_gpu stops the check with its TODO. */
static void probe_launch(device d)
{
    tensor *x;
    CHECK(tensor_zeros(&x, d, shape2(1, 1)));
    CHECK(lab_matmul_naive_gpu(x, x, x));
    CHECK(device_synchronize(d));
    tensor_free(x);
}

/* The kernel on the device through lab_matmul_naive_gpu: one launch that
 * returns without waiting, and products that match float64 on sizes that do
 * not fill whole blocks. */
static void check_naive_kernel(device d)
{
    bool all = true;
    device_counters counted, during = { 0 };
    for (int s = 0; s < NSHAPES; ++s) {
        const int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        float *a = random_matrix(m, k, 31), *b = random_matrix(k, n, 32),
              *c = malloc((size_t)(m * n) * sizeof *c);
        double *ref = malloc((size_t)(m * n) * sizeof *ref);
        if (!c || !ref) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
        reference(a, false, b, false, ref, m, n, k);
        tensor *tA, *tB, *tC;
        CHECK(tensor_from_host(&tA, d, shape2(m, k), a));
        CHECK(tensor_from_host(&tB, d, shape2(k, n), b));
        CHECK(tensor_full(&tC, d, shape2(m, n), NAN)); /* a cell no thread writes stays NaN */
        CHECK(counters_reset(d));
        CHECK(lab_matmul_naive_gpu(tA, tB, tC));
        CHECK(counters_read(d, &counted));
        during.launches += counted.launches, during.syncs += counted.syncs;
        during.h2d_copies += counted.h2d_copies + counted.d2h_copies + counted.d2d_copies;
        CHECK(tensor_to_host(tC, c, m * n));
        all = matches("naive kernel", c, ref, m, n) && all;
        tensor_free(tA), tensor_free(tB), tensor_free(tC);
        free(a), free(b), free(c), free(ref);
    }
    check_that(during.launches == NSHAPES && during.syncs == 0 && during.h2d_copies == 0,
               "lab_matmul_naive_gpu queues one launch and returns without waiting or copying",
               "%s, %d calls: %llu launches, %llu blocking waits, %llu copies (want %d, 0, 0)",
               device_name(d), NSHAPES, (unsigned long long)during.launches, (unsigned long long)during.syncs,
               (unsigned long long)during.h2d_copies, NSHAPES);
    check_that(all, "your naive kernel, one thread per cell of c, matches float64 on this GPU",
               "%s: [64x64]x[64x64] and [37x53]x[53x29], grids that do not divide evenly", device_name(d));
}

/* Step 6 on a GPU: the threads first, on the host; the device only with a
 * kernel that keeps inside c (one that does not would corrupt the memory
 * around it, and the program could crash far from the mistake). */
static void check_step6(device d)
{
    const kernel_trial one = run_kernel(1, 1, 1, 1), many = run_kernel(2, 2, 3, 2);
    if (one.written + one.outside + many.written + many.outside == 0) probe_launch(d);
    if (check_kernel_threads())
        check_naive_kernel(d);
    else
        printf("  (your kernel is not run on %s until each thread writes its own cell and no other)\n",
               device_name(d));
}

/* ---- timing claims ------------------------------------------------------------------ */

/* The fastest of `tries` runs of a CPU loop: noise on a shared machine only
 * ever adds time. */
static double best_seconds(host_matmul matmul, const float *a, const float *b, float *c, int64_t n, int tries)
{
    double best = INFINITY;
    for (int t = 0; t < tries; ++t) {
        const double start = wall_seconds();
        CHECK(matmul(a, b, c, n, n, n));
        best = fmin(best, wall_seconds() - start);
    }
    return best;
}

static status openblas_plain(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    return lab_matmul_openblas(a, false, b, false, c, m, n, k);
}

/* At N = 512, OpenBLAS against the naive loop (and, for the record, against
 * the better order); in an optimised build also the two loop orders against
 * each other (unoptimised, neither loop is vectorised and the matrices fit in
 * the cache, so the order makes little difference). */
static void check_cpu_speed(void)
{
    const int64_t n = 512;
    float *a = random_matrix(n, n, 41), *b = random_matrix(n, n, 42),
          *c = malloc((size_t)(n * n) * sizeof *c);
    if (!c) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
    double blas, ijk, ikj;
    CHECK(openblas_plain(a, b, c, n, n, n)); /* wakes OpenBLAS's threads up */
    CHECK(lab_gflops(n, n, n, best_seconds(lab_matmul_ijk, a, b, c, n, 3), &ijk));
    CHECK(lab_gflops(n, n, n, best_seconds(lab_matmul_ikj, a, b, c, n, 3), &ikj));
    CHECK(lab_gflops(n, n, n, best_seconds(openblas_plain, a, b, c, n, 5), &blas));
    check_that(blas > 5.0 * ijk, "OpenBLAS beats the naive loop by a wide margin (> 5x) at N = 512",
               "OpenBLAS %.1f GFLOP/s, naive i-j-k %.2f: %.0fx (i-k-j %.2f: %.1fx)", blas, ijk, blas / ijk,
               ikj, blas / ikj);
#if defined(__OPTIMIZE__) && !SANITIZED
    check_that(ikj > 2.0 * ijk, "loop order: i-k-j beats i-j-k (> 2x) at N = 512",
               "i-k-j %.2f GFLOP/s, i-j-k %.2f GFLOP/s: %.1fx", ikj, ijk, ikj / ijk);
#else
    printf("  (loop order not claimed: in an unoptimised or sanitized build neither loop is vectorised)\n");
#endif
    free(a), free(b), free(c);
}

/* Seconds that one N x N op_matmul on d costs a program that launches it and
 * waits for it (device_synchronize): the fastest of `trips` such round trips
 * (noise on a shared machine only ever adds time).
 * Launching, waking the device up and being told it is done take the same few
 * microseconds whatever the size, so a small product is mostly overhead. */
static double round_trip_seconds(device d, int64_t n, int trips)
{
    tensor *a, *b, *c;
    double seconds[64];
    if (trips > 64) trips = 64;
    CHECK(tensor_uniform(&a, d, shape2(n, n), -1.0f, 1.0f, 51));
    CHECK(tensor_uniform(&b, d, shape2(n, n), -1.0f, 1.0f, 52));
    CHECK(tensor_zeros(&c, d, shape2(n, n)));
    CHECK(op_matmul(a, false, b, false, NULL, c)); /* warm-up */
    CHECK(device_synchronize(d));
    for (int t = 0; t < trips; ++t) {
        const double start = wall_seconds();
        CHECK(op_matmul(a, false, b, false, NULL, c));
        CHECK(device_synchronize(d));
        seconds[t] = wall_seconds() - start;
    }
    tensor_free(a), tensor_free(b), tensor_free(c);
    return min_of(seconds, (size_t)trips);
}

static void check_launch_overhead(device d)
{
    double small, large;
    CHECK(lab_gflops(16, 16, 16, round_trip_seconds(d, 16, 64), &small));
    CHECK(lab_gflops(1024, 1024, 1024, round_trip_seconds(d, 1024, 8), &large));
    check_that(small < 0.25 * large,
               "on a GPU small products are dominated by launch overhead: GFLOP/s at N = 16 is a small "
               "fraction (< 25%) of that at N = 1024",
               "%s, each product launched and waited for: %.2f GFLOP/s at N = 16, %.1f at N = 1024: %.1f%%",
               device_name(d), small, large, 100.0 * small / large);
}

static int check_kernels(device d);

int main(int argc, char **argv)
{
    const device d = check_device(argc, argv);
    if (kernel_tools_built()) return check_kernels(d); /* ./lab check 04 --kernels */
    check_layer(d);
    if (d.kind == DEVICE_CPU) {
        check_loop("your naive loop (i-j-k) matches float64", lab_matmul_ijk);
        check_loop("your loop in the order i-k-j matches float64", lab_matmul_ikj);
        check_transposes(d, true);
    }
    check_transposes(d, false);
    check_counting(d);
    if (d.kind == DEVICE_CPU) {
        check_cpu_speed();
        printf("  (the naive kernel runs on GPUs: check it with --device sim:0 or cuda:0)\n");
    } else {
        check_step6(d);
        check_launch_overhead(d);
    }
    return check_finish("04_matmul");
}

/* ---- kernels: your kernel under the kernel sanitizer -------------------------------- */

/* ./lab check 04 --kernels: this check built for the kernel tools runs this
 * claim alone. Your kernel through lab_matmul_naive_gpu on grids that stick
 * out of c, watched access by access: an index past a, b or c stops the launch
 * and names its line, thread and element (labkit/check_kernels.h). */
static int check_kernels(device d)
{
    const int skip = check_kernels_skip(d);
    if (skip) return skip;
    if (d.kind == DEVICE_CPU) {
        printf("skipped: the naive kernel runs on GPUs: ./lab check 04 --kernels watches it on sim:0\n");
        return CHECK_SKIPPED;
    }
    kernel_sanitizer_clear();
    for (int s = 0; s < NSHAPES; ++s) {
        const int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        tensor *a, *b, *c;
        CHECK(tensor_uniform(&a, d, shape2(m, k), -1.0f, 1.0f, 61));
        CHECK(tensor_uniform(&b, d, shape2(k, n), -1.0f, 1.0f, 62));
        CHECK(tensor_zeros(&c, d, shape2(m, n)));
        const status launched = CHECK_YOURS(lab_matmul_naive_gpu(a, b, c));
        const status ran = device_synchronize(d); /* a launch the sanitizer stopped fails here */
        if (launched != STATUS_OK || (ran != STATUS_OK && kernel_sanitizer_count() == 0))
            check_that(false, "your naive kernel runs on the device", "%s", last_error());
        tensor_free(a), tensor_free(b), tensor_free(c);
    }
    check_kernels_clean("your naive kernel's threads", d);
    return check_finish("04_matmul");
}
