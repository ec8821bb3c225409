/* check.c: lab 04's claims, on the device given with --device (default: cpu).
 *
 *   - lesson 002's layer, sigmoid(W x), gives its numbers: 0.13, 0.96, 0.40,
 *     computed on the device (two operations launched, nothing sent through
 *     the host);
 *   - every product matches a float64 reference, square and not, with and
 *     without transposes: on the CPU your two loops (k = 0 too: zeros) and your OpenBLAS call, on
 *     a GPU your naive kernel; everywhere the library's op_matmul;
 *   - GFLOP/s and the fraction of peak are computed right, on exact inputs (a
 *     NaN time, a product of 2 x 4096^3 operations, a peak of 0, unknown, and
 *     a device that does not exist included);
 *   - on a GPU, your kernel thread by thread (run on the host by the simulated
 *     GPU's launcher, on grids chosen here): each thread writes its own cell
 *     and no other, threads outside c write nothing, and a cell past 2^32
 *     floats into c is reached (address space, not memory); then on the device:
 *     lab_matmul_naive_gpu is one launch, of just enough 16 x 16 blocks, that
 *     neither waits nor copies, and its products match float64 on sizes that do not fill whole blocks; on
 *     a second GPU too, where there is one (the launch goes to c's GPU);
 *   - on the CPU, OpenBLAS beats the naive loop by a wide margin at N = 512
 *     (and, in an optimised build, the i-k-j order beats i-j-k);
 *   - on a GPU, small products are dominated by launch overhead: GFLOP/s at
 *     N = 16 is a small fraction of GFLOP/s at N = 1024.
 *   - what lab.h promises to refuse is refused: a time that is not positive,
 *     sizes over cblas_sgemm's int (and INT_MAX, which fits, is not), the
 *     naive GPU product on the CPU, a device that does not exist, each with a
 *     message (fail(), not a bare status); a layer whose product fails says so
 *     and leaves no tensor behind;
 *   - the loops and the launch are the student's own work: the check is
 *     linked with the library's products wrapped (lab.cmake), and counts the
 *     calls to cblas_sgemm and op_matmul made inside them.
 * The arrays handed to the student's loops end at a guard page (host_alloc):
 * an index past the end stops at its own line, and the crash report names it.
 * Timing claims are ratios with wide margins, each the best of several runs:
 * this runs on shared machines, and noise only ever adds time. */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lab.h"
#include "labkit/check_kernels.h"
#include "labkit/crash.h"
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

/* ---- the library's own answer, counted ------------------------------------------
 *
 * lab.cmake links the check with -Wl,--wrap=op_matmul,--wrap=cblas_sgemm: every
 * call to either, the student's included, comes here first and is counted on
 * the calling thread (a simulated GPU's worker calls cblas_sgemm for its own
 * queued products at any moment). A step that must be the student's own loop
 * or kernel makes none. */
static _Thread_local long op_matmul_calls, sgemm_calls;

/* While sgemm_dry is set, a call to cblas_sgemm is counted and its sizes are
 * kept, and nothing is computed: sizes near INT_MAX can then be tried on
 * arrays of one float. */
static _Thread_local bool sgemm_dry;
static _Thread_local blasint sgemm_m, sgemm_n, sgemm_k;

status __real_op_matmul(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                        tensor *out);
status __wrap_op_matmul(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                        tensor *out);
status __wrap_op_matmul(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                        tensor *out)
{
    ++op_matmul_calls;
    return __real_op_matmul(a, trans_a, b, trans_b, bias, out);
}

void __real_cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,
                        blasint m, blasint n, blasint k, float alpha, const float *a, blasint lda,
                        const float *b, blasint ldb, float beta, float *c, blasint ldc);
void __wrap_cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,
                        blasint m, blasint n, blasint k, float alpha, const float *a, blasint lda,
                        const float *b, blasint ldb, float beta, float *c, blasint ldc);
void __wrap_cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,
                        blasint m, blasint n, blasint k, float alpha, const float *a, blasint lda,
                        const float *b, blasint ldb, float beta, float *c, blasint ldc)
{
    ++sgemm_calls;
    crash_note_library_call("cblas_sgemm", __builtin_return_address(0)); /* its kernels keep no frames */
    if (sgemm_dry) {
        sgemm_m = m, sgemm_n = n, sgemm_k = k;
        return;
    }
    __real_cblas_sgemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* The arguments of the last launch of naive_matmul_kernel on this thread:
 * lab.cmake wraps device_launch too, so that the check sees the grid and the
 * blocks the student's launch asked for. */
static _Thread_local naive_matmul_args last_launch;

status __real_device_launch(device d, const kernel_launchers *k, const void *args, size_t args_size);
status __wrap_device_launch(device d, const kernel_launchers *k, const void *args, size_t args_size);
status __wrap_device_launch(device d, const kernel_launchers *k, const void *args, size_t args_size)
{
    if (k == &naive_matmul_launchers && args && args_size == sizeof last_launch)
        memcpy(&last_launch, args, sizeof last_launch);
    return __real_device_launch(d, k, args, args_size);
}

/* The library's products called on this thread so far. */
static long library_products(void) { return op_matmul_calls + sgemm_calls; }

/* ---- host arrays and float64 references -------------------------------------------- */

/* `count` floats from host_alloc, each NaN (a cell never written stays NaN).
 * They end at a guard page: a loop that indexes one past the end stops at its
 * own line, and the crash report says where. Free with host_free(p, 0). */
static float *host_floats(int64_t count)
{
    float *p = host_alloc((size_t)count * sizeof *p, 0);
    if (!p)
        CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for %lld floats for the check", (long long)count));
    for (int64_t i = 0; i < count; ++i) p[i] = NAN;
    return p;
}

/* A [rows, cols] matrix of uniform values in [-1, 1) on the host, drawn by the
 * library from `seed` (the same values on every device), in a host_floats
 * array: host_free(p, 0) it. */
static float *random_matrix(int64_t rows, int64_t cols, uint64_t seed)
{
    tensor *t;
    float *host = host_floats(rows * cols);
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

/* The bytes of device memory in use on d now. */
static size_t bytes_in_use(device d)
{
    device_counters c;
    CHECK(counters_read(d, &c));
    return c.memory_current;
}

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
    const size_t before = bytes_in_use(d);
    device_counters counted;
    CHECK(device_synchronize(d));
    CHECK(counters_reset(d));
    CHECK(lab_layer_forward(tw, tx, ty));
    CHECK(counters_read(d, &counted));
    CHECK(tensor_to_host(ty, y, 3));
    const size_t after = bytes_in_use(d);
    /* lab.h: the product and the sigmoid are the library's, run on d: two
     * operations launched there at least, and on a GPU no tensor read to the
     * host or written from it on the way (a sigmoid looped on the host does
     * both, and launches one operation only). */
    const uint64_t transfers = device_is_gpu(d) ? counted.h2d_copies + counted.d2h_copies : 0;
    check_that(
        counted.launches >= 2 && transfers == 0,
        "the layer runs on the device: op_matmul and op_sigmoid launched there, nothing sent through "
        "the host",
        "%s: %llu operation%s launched (want 2: the product and the sigmoid), %llu cop%s between it and the "
        "host (want 0)",
        device_name(d), (unsigned long long)counted.launches, counted.launches == 1 ? "" : "s",
        (unsigned long long)transfers, transfers == 1 ? "y" : "ies");
    bool same = true;
    for (int i = 0; i < 3; ++i) same = same && lround(100.0 * y[i]) == lesson[i];
    check_that(same, "a layer is a matrix product: sigmoid(W x) gives lesson 002's numbers to two decimals",
               "%.4f %.4f %.4f; the lesson: 0.13 0.96 0.40", y[0], y[1], y[2]);
    check_that(
        after == before,
        "the layer leaves no tensor behind: the device's bytes in use are back where they were",
        "%s: %zu bytes in use before lab_layer_forward, %zu after (out exists already: nothing to make)",
        device_name(d), before, after);

    /* The error path: an x of 2 rows for a W of 3 columns. op_matmul refuses
     * it, and the layer must say so rather than return a sigmoid of whatever
     * out held; what it made on the way is freed on this path too. */
    tensor *short_x;
    CHECK(tensor_from_host(&short_x, d, shape2(2, 1), x));
    const size_t ready = bytes_in_use(d);
    const status s = CHECK_YOURS(lab_layer_forward(tw, short_x, ty));
    const size_t left = bytes_in_use(d);
    CHECK(device_synchronize(d)); /* the device is still usable */
    check_that(
        s != STATUS_OK && left == ready,
        "a layer whose product fails returns the failure, and leaves no tensor behind",
        "W [3, 3] times x [2, 1] on %s: %s (want a failure: op_matmul refuses these shapes); %zu bytes in "
        "use before, %zu after (want the same)",
        device_name(d), status_name(s), ready, left);
    tensor_free(tw), tensor_free(tx), tensor_free(ty), tensor_free(short_x);
}

/* ---- steps 2 to 4: the CPU's products ------------------------------------------------ */

typedef status (*host_matmul)(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k);

/* A float64 array for a reference: the check's own, never handed to lab.c. */
static double *reference_array(int64_t count)
{
    double *p = malloc((size_t)count * sizeof *p);
    if (!p) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check's reference"));
    return p;
}

/* One of the loops of steps 2 and 3 at every shape; returns how many times it
 * called the library's products (cblas_sgemm, op_matmul) itself. */
static long check_loop(const char *concept, host_matmul matmul)
{
    bool all = true;
    long calls = 0;
    for (int s = 0; s < NSHAPES; ++s) {
        const int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        float *a = random_matrix(m, k, 11), *b = random_matrix(k, n, 12), *c = host_floats(m * n);
        double *ref = reference_array(m * n);
        reference(a, false, b, false, ref, m, n, k);
        const long before = library_products();
        CHECK(matmul(a, b, c, m, n, k));
        calls += library_products() - before;
        all = matches(concept, c, ref, m, n) && all;
        host_free(a, 0), host_free(b, 0), host_free(c, 0), free(ref);
    }
    /* k = 0: every dot product is empty, and c is all zeros whatever it held
     * (NaN here). a and b hold nothing to read. */
    enum { EM = 3, EN = 5 };
    float *c = host_floats(EM * EN), nothing[1] = { NAN };
    const long before = library_products();
    CHECK(matmul(nothing, nothing, c, EM, EN, 0));
    calls += library_products() - before;
    int not_zero = 0;
    for (int i = 0; i < EM * EN; ++i) not_zero += c[i] != 0.0f;
    host_free(c, 0);
    char empty[160] = "";
    if (not_zero)
        snprintf(empty, sizeof empty,
                 "; [3x0]x[0x5]: %d of %d cells of c not 0 (with k = 0 each is an empty sum: set c, do not "
                 "leave it as it was)",
                 not_zero, EM * EN);
    check_that(
        all && not_zero == 0, concept,
        "[64x64]x[64x64], [37x53]x[53x29] against float64, |error| <= %g + %g |ref|, and [3x0]x[0x5]%s", ATOL,
        RTOL, empty);
    return calls;
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
            float *c = host_floats(m * n);
            double *ref = reference_array(m * n);
            reference(a, ta, b, tb, ref, m, n, k);
            if (openblas) {
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
            host_free(a, 0), host_free(b, 0), host_free(c, 0), free(ref);
        }
    if (openblas)
        check_that(all, "your cblas_sgemm call (row-major) matches float64, with and without transposes",
                   "a b, a^T b, a b^T, a^T b^T at [64x64]x[64x64] and [37x53]x[53x29]");
    else
        check_that(all, "the library's op_matmul matches float64 on this device, with and without transposes",
                   "%s: a b, a^T b, a b^T, a^T b^T at [64x64]x[64x64] and [37x53]x[53x29]", device_name(d));
}

/* ---- step 5: counting ---------------------------------------------------------------- */

/* A device of the other kind, whose peak differs: the CPU beside a GPU, the
 * first GPU beside the CPU (the CPU itself when there is none). */
static device other_kind(device d) { return device_is_gpu(d) ? device_cpu() : try_gpu(0); }

static void check_counting(device d)
{
    double gflops = 0.0;
    CHECK(lab_gflops(100, 200, 300, 0.5, &gflops));
    const double want = 2.0 * 100 * 200 * 300 / 0.5 / 1e9; /* a multiply and an add per term */
    /* A product as large as the lesson's (2 x 4096^3 operations, past 2^31
     * and 2^32): a count kept in an int wraps there, even if small ones are
     * right. */
    double large = 0.0;
    CHECK(lab_gflops(4096, 4096, 4096, 2.0, &large));
    const double want_large = 2.0 * 4096 * 4096 * 4096 / 2.0 / 1e9;
    check_that(fabs(gflops - want) < 1e-12 && fabs(large - want_large) < 1e-9 * want_large,
               "GFLOP/s counts 2 m n k operations per product",
               "[100x300]x[300x200] in 0.5 s: %g GFLOP/s (want %g); [4096x4096]x[4096x4096] in 2 s: %g (want "
               "%g)%s",
               gflops, want, large, want_large,
               fabs(large - want_large) < 1e-9 * want_large
                   ? ""
                   : ": 2 m n k is past 2^31 here; count it in a type that holds it");
    /* NaN is not positive either (a time never measured, a 0 / 0), and every
     * comparison with it is false: a test for <= 0 lets it through. */
    const double bad_times[] = { 0.0, -0.5, NAN };
    bool refused = true;
    char said[160] = "";
    for (size_t i = 0; i < sizeof bad_times / sizeof bad_times[0]; ++i) {
        clear_error();
        const status s = lab_gflops(100, 200, 300, bad_times[i], &(double){ 0 });
        check_note_refusal(s, "lab_gflops (a time not positive)");
        refused = refused && s == STATUS_BAD_ARGUMENT;
        check_append(said, sizeof said, "%sseconds = %g: %s", i ? ", " : "", bad_times[i], status_name(s));
    }
    check_that(refused, "a time that is not positive is refused: there is no speed without a time",
               "%s (want STATUS_BAD_ARGUMENT for each)", said);

    /* A quarter of each device's peak, on this device and one of the other
     * kind: the peak must be the device's own, whichever it is. */
    const device devices[2] = { d, other_kind(d) };
    const int count = device_equal(devices[0], devices[1]) ? 1 : 2;
    bool own = true;
    char figures[320] = "";
    for (int i = 0; i < count; ++i) {
        device_properties p;
        double fraction = -1.0;
        CHECK(device_get_properties(devices[i], &p));
        CHECK(lab_fraction_of_peak(p.peak_gflops / 4.0, devices[i], &fraction));
        const double want_fraction = p.peak_gflops > 0 ? 0.25 : 0.0;
        own = own && fabs(fraction - want_fraction) < 1e-9;
        check_append(figures, sizeof figures, "%sa quarter of %s's %.1f GFLOP/s gives %g (want %g)",
                     i ? "; " : "", device_name(devices[i]), p.peak_gflops, fraction, want_fraction);
    }
    check_that(own, "the fraction of peak divides by the device's own FP32 peak", "%s", figures);

    /* A device that does not exist has no peak: device_get_properties's
     * refusal is the answer, not a fraction of whatever its output held. */
    const device missing = { DEVICE_SIM, device_count(DEVICE_SIM) };
    device_properties none;
    const status library = device_get_properties(missing, &none); /* its own answer, to compare */
    double nowhere = -1.0;
    clear_error();
    const status no_peak = CHECK_YOURS(lab_fraction_of_peak(100.0, missing, &nowhere));
    check_note_refusal(no_peak, "lab_fraction_of_peak (a device that does not exist)");
    check_that(library != STATUS_OK && no_peak == library,
               "the fraction of peak of a device that does not exist is refused with "
               "device_get_properties's own failure",
               "100 GFLOP/s on %s, which does not exist here: %s (want %s: device_get_properties's failure, "
               "returned as it is, not a status of your own)",
               device_name(missing), status_name(no_peak), status_name(library));

    double fraction = -1.0;
    /* lab.h: the fraction is 0 for an unknown peak (0), as a GPU whose
     * architecture the kit does not know reports; no device here is one. */
    check_pretend_unknown_peak(true);
    const status s = CHECK_YOURS(lab_fraction_of_peak(100.0, d, &fraction));
    check_pretend_unknown_peak(false);
    check_that(s == STATUS_OK && fraction == 0.0,
               "an unknown peak (0) gives a fraction of 0, not a division by 0",
               "100 GFLOP/s on %s, its peak reported as 0 (unknown): %g (want 0)%s", device_name(d), fraction,
               check_failure_text(s));
}

/* lab.h: on the CPU the naive GPU product is refused (STATUS_WRONG_DEVICE),
 * before anything runs: c keeps what it held. Checked on every device, since
 * the CPU is always there. */
static void check_naive_refuses_cpu(void)
{
    const device cpu = device_cpu();
    tensor *a, *b, *c;
    float held[6];
    device_counters counted;
    CHECK(tensor_full(&a, cpu, shape2(2, 3), 1.0f));
    CHECK(tensor_full(&b, cpu, shape2(3, 3), 1.0f));
    CHECK(tensor_full(&c, cpu, shape2(2, 3), NAN));
    CHECK(counters_reset(cpu));
    const long before = library_products();
    clear_error();
    const status s = CHECK_YOURS(lab_matmul_naive_gpu(a, b, c));
    check_note_refusal(s, "lab_matmul_naive_gpu (tensors on the CPU)");
    const long products = library_products() - before;
    CHECK(counters_read(cpu, &counted));
    CHECK(tensor_to_host(c, held, 6));
    int written = 0;
    for (int i = 0; i < 6; ++i) written += !isnan(held[i]);
    check_that(
        s == STATUS_WRONG_DEVICE && written == 0 && counted.launches == 0 && products == 0,
        "the naive GPU product refuses tensors on the CPU (STATUS_WRONG_DEVICE) and computes nothing",
        "[2x3]x[3x3] on cpu: %s (want STATUS_WRONG_DEVICE), %d of 6 cells of c written, %llu launches, "
        "%ld library products (want 0, 0, 0)",
        status_name(s), written, (unsigned long long)counted.launches, products);
    tensor_free(a), tensor_free(b), tensor_free(c);
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
    int wrong;           /* written cells of c that do not hold their dot product */
    int wrong_row, wrong_col;
    float got, want; /* the first such cell's value, and its dot product */
} kernel_trial;

/* The trial with c and its guards filled with `fill` (NaN, but for one
 * diagnosis below): a cell that no longer holds it was written. */
static kernel_trial run_kernel_filled(float fill, unsigned grid_x, unsigned grid_y, unsigned block_x,
                                      unsigned block_y)
{
    static float a[KM * KK + GUARD], b[KK * KN + GUARD], arena[GUARD + KM * KN + GUARD];
    for (int i = 0; i < KM * KK + GUARD; ++i) a[i] = i < KM * KK ? (float)(i + 1) : 0.5f;
    for (int i = 0; i < KK * KN + GUARD; ++i) b[i] = i < KK * KN ? (float)(i % 7 + 1) : 0.5f;
    for (int i = 0; i < GUARD + KM * KN + GUARD; ++i) arena[i] = fill;
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
        const bool in_c = i >= GUARD && i < GUARD + KM * KN,
                   written = isnan(fill) ? !isnan(arena[i]) : arena[i] != fill;
        if (!in_c) {
            t.outside += written;
            continue;
        }
        const int row = (i - GUARD) / KN, col = (i - GUARD) % KN;
        t.inside[row][col] = written, t.written += written;
        /* Small integers: the dot product is exact in float, whatever the order. */
        float want = 0.0f;
        for (int p = 0; p < KK; ++p) want += a[row * KK + p] * b[p * KN + col];
        if (written && arena[i] != want && t.wrong++ == 0)
            t.wrong_row = row, t.wrong_col = col, t.got = arena[i], t.want = want;
    }
    return t;
}

static kernel_trial run_kernel(unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y)
{
    return run_kernel_filled(NAN, grid_x, grid_y, block_x, block_y);
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
    if (!wrote_any) {
        /* Every cell still NaN: no thread wrote one, or each read its cell
         * first and added onto it (NaN + x is NaN). A finite fill tells which. */
        const kernel_trial filled = run_kernel_filled(1000.0f, 2, 2, 3, 2);
        const int changed = filled.written + filled.outside;
        if (changed > 0)
            printf("        (c is still all NaN, as the check fills it; filled with 1000 instead, %d cells "
                   "change: your kernel reads its cell before writing it (+= onto c?), and c does not start "
                   "at 0)\n",
                   changed);
        else
            printf("        (no thread wrote anything: is naive_kernel.cuh still the untouched skeleton?)\n");
    }
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
    /* What each thread writes: a and b are followed by spare values, so a dot
     * product that runs one term too far, or strides by the wrong size, reads
     * numbers that change the sum. */
    char value[96] = "every written cell holds its dot product";
    if (t.wrong > 0)
        snprintf(value, sizeof value, "%d cells are off, the first c[%d,%d] = %g (want %g)", t.wrong,
                 t.wrong_row, t.wrong_col, (double)t.got, (double)t.want);
    check_that(t.wrong == 0,
               "each thread writes the dot product of row y of a and column x of b, over k terms exactly",
               "[3x2]x[2x5] of small integers, exact in float: %s", value);
    return own && t.outside == 0 && t.written == KM * KN && t.wrong == 0;
}

/* Each thread's cell in 64-bit arithmetic (README, step 6: "compute in
 * int64_t"), on a c too large to allocate: c [2, 2^32 + 5] = a [2, 1]
 * b [1, 2^32 + 5], on one block of 1 x 2 threads, which must write c[0, 0]
 * and c[1, 0], 2^32 + 5 floats further on. A row, column or index kept in 32
 * bits wraps there to 5: c[0, 5]. c's 32 GiB are address space reserved, not
 * memory: only the page of each of the two cells can be read and written, so
 * a thread that strays elsewhere stops at its line. */
static void check_kernel_wide_rows(void)
{
    const int64_t n = ((int64_t)1 << 32) + 5;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)(2 * n) * sizeof(float);
    const size_t second = (size_t)n * sizeof(float) / page * page; /* the page of c[1, 0] */
    char *reserved = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED || mprotect(reserved, page, PROT_READ | PROT_WRITE) != 0 ||
        mprotect(reserved + second, page, PROT_READ | PROT_WRITE) != 0) {
        printf("  (no address space here for a c of 2 x (2^32 + 5) floats: 64-bit indices are not tried)\n");
        if (reserved != MAP_FAILED) munmap(reserved, bytes);
        return;
    }
    float *const c = (float *)reserved, *const pages[2] = { c, (float *)(reserved + second) };
    const size_t per_page = page / sizeof(float);
    for (int i = 0; i < 2; ++i)
        for (size_t j = 0; j < per_page; ++j) pages[i][j] = NAN;
    static const float a[2] = { 2.0f, 3.0f }, b[1] = { 7.0f };
    const naive_matmul_args args = {
        .a = a, .b = b, .c = c, .m = 2, .n = n, .k = 1, .grid_x = 1, .grid_y = 1, .block_x = 1, .block_y = 2
    };
    naive_matmul_launchers.on_sim(&args, NULL);
    /* Every float of the two pages but the two cells must still be NaN. */
    const float first = c[0], last = c[n];
    c[0] = c[n] = NAN;
    char strays[160] = "";
    int stray_count = 0;
    for (int i = 0; i < 2; ++i)
        for (size_t j = 0; j < per_page; ++j) {
            if (isnan(pages[i][j])) continue;
            const int64_t at = (pages[i] - c) + (int64_t)j;
            if (stray_count++ < 3)
                check_append(strays, sizeof strays, ", c[%lld, %lld] written", (long long)(at / n),
                             (long long)(at % n));
        }
    munmap(reserved, bytes);
    check_that(
        first == a[0] * b[0] && last == a[1] * b[0] && stray_count == 0,
        "each thread finds its cell in 64-bit arithmetic: c[1, 0] of a c with 2^32 + 5 columns is reached",
        "[2x1]x[1x%lld] on 1 block of 1x2 threads: c[0, 0] = %g (want %g), c[1, 0] = %g (want %g)%s",
        (long long)n, (double)first, (double)(a[0] * b[0]), (double)last, (double)(a[1] * b[0]), strays);
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

/* A product's operands on a device, c full of NaN (a cell no thread writes
 * stays NaN), and its float64 reference on the host. */
typedef struct gpu_product {
    int64_t m, n, k;
    float *a, *b, *c; /* c: room for the result read back */
    double *ref;
    tensor *tA, *tB, *tC;
} gpu_product;

static gpu_product product_on(device d, int64_t m, int64_t n, int64_t k, uint64_t seed)
{
    gpu_product p = { .m = m, .n = n, .k = k };
    p.a = random_matrix(m, k, seed), p.b = random_matrix(k, n, seed + 1), p.c = host_floats(m * n);
    p.ref = reference_array(m * n);
    reference(p.a, false, p.b, false, p.ref, m, n, k);
    CHECK(tensor_from_host(&p.tA, d, shape2(m, k), p.a));
    CHECK(tensor_from_host(&p.tB, d, shape2(k, n), p.b));
    CHECK(tensor_full(&p.tC, d, shape2(m, n), NAN));
    return p;
}

/* Whether c, read back, matches the reference. */
static bool product_matches(gpu_product *p)
{
    CHECK(tensor_to_host(p->tC, p->c, p->m * p->n));
    return matches("naive kernel", p->c, p->ref, p->m, p->n);
}

static void product_free(gpu_product *p)
{
    tensor_free(p->tA), tensor_free(p->tB), tensor_free(p->tC);
    host_free(p->a, 0), host_free(p->b, 0), host_free(p->c, 0), free(p->ref);
}

/* The kernel on the device through lab_matmul_naive_gpu: one launch that
 * returns without waiting, and products that match float64 on sizes that do
 * not fill whole blocks. */
static void check_naive_kernel(device d)
{
    bool all = true, just_enough = true;
    device_counters counted, during = { 0 };
    long products = 0;
    char grids[200] = "";
    for (int s = 0; s < NSHAPES; ++s) {
        const int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        gpu_product p = product_on(d, m, n, k, 31);
        CHECK(counters_reset(d));
        const long before = library_products();
        last_launch = (naive_matmul_args){ 0 };
        CHECK(lab_matmul_naive_gpu(p.tA, p.tB, p.tC));
        products += library_products() - before;
        /* Blocks of 16 x 16, n / 16 by m / 16 of them rounded up (README, step 6):
         * one block more along a side is a row or column of idle threads. */
        const naive_matmul_args *l = &last_launch;
        const unsigned want_x = (unsigned)((n + 15) / 16), want_y = (unsigned)((m + 15) / 16);
        just_enough =
            just_enough && l->block_x == 16 && l->block_y == 16 && l->grid_x == want_x && l->grid_y == want_y;
        check_append(grids, sizeof grids,
                     "%s[%lldx%lld]x[%lldx%lld]: %ux%u blocks of %ux%u threads (want %ux%u of 16x16)",
                     s ? "; " : "", (long long)m, (long long)k, (long long)k, (long long)n, l->grid_x,
                     l->grid_y, l->block_x, l->block_y, want_x, want_y);
        CHECK(counters_read(d, &counted));
        during.launches += counted.launches, during.syncs += counted.syncs;
        during.h2d_copies += counted.h2d_copies + counted.d2h_copies + counted.d2d_copies;
        all = product_matches(&p) && all;
        product_free(&p);
    }
    check_that(during.launches == NSHAPES && during.syncs == 0 && during.h2d_copies == 0,
               "lab_matmul_naive_gpu queues one launch and returns without waiting or copying",
               "%s, %d calls: %llu launches, %llu blocking waits, %llu copies (want %d, 0, 0)",
               device_name(d), NSHAPES, (unsigned long long)during.launches, (unsigned long long)during.syncs,
               (unsigned long long)during.h2d_copies, NSHAPES);
    check_that(all, "your naive kernel, one thread per cell of c, matches float64 on this GPU",
               "%s: [64x64]x[64x64] and [37x53]x[53x29], grids that do not divide evenly", device_name(d));
    check_that(
        just_enough,
        "the launch covers c with just enough blocks of 16 x 16 threads: n / 16 by m / 16, each rounded up",
        "%s", grids);
    check_that(
        products == 0, "step 6 launches your kernel, not the library's product",
        "%s, %d calls of lab_matmul_naive_gpu: %ld calls to op_matmul or cblas_sgemm inside them (want 0)",
        device_name(d), NSHAPES, products);
}

/* Another GPU than d: the first one the device list has. False where there
 * is none. */
static bool another_gpu(device d, device *out)
{
    device all[16];
    const int count = device_list(all, 16);
    for (int i = 0; i < count; ++i)
        if (device_is_gpu(all[i]) && !device_equal(all[i], d)) {
            *out = all[i];
            return true;
        }
    return false;
}

/* Waits for every GPU's queue to drain. */
static void synchronize_gpus(void)
{
    device all[16];
    const int count = device_list(all, 16);
    for (int i = 0; i < count; ++i)
        if (device_is_gpu(all[i])) CHECK(device_synchronize(all[i]));
}

/* The launch goes to c's GPU, whichever it is. ./lab check runs on sim:0,
 * where a launch on the first GPU (try_gpu(0)) looks right: one product on
 * another GPU shows where it went. */
static void check_naive_on_another_gpu(device d)
{
    device other;
    if (!another_gpu(d, &other)) {
        printf("  (no second GPU here: a launch on c's own GPU rather than the first is not tried)\n");
        return;
    }
    gpu_product p = product_on(other, shapes[1].m, shapes[1].n, shapes[1].k, 33);
    device_counters there, here;
    CHECK(counters_reset(other));
    CHECK(counters_reset(d));
    CHECK(lab_matmul_naive_gpu(p.tA, p.tB, p.tC));
    CHECK(counters_read(other, &there));
    CHECK(counters_read(d, &here));
    /* A launch queued on another GPU than c's may still be running on c's
     * memory: every GPU finishes before c is read and freed. */
    synchronize_gpus();
    const bool right = product_matches(&p);
    check_that(there.launches == 1 && here.launches == 0 && right,
               "lab_matmul_naive_gpu launches on c's GPU, whichever it is: on a second GPU too",
               "[37x53]x[53x29] with a, b and c on %s: launches there %llu, on %s %llu (want 1 and 0)%s",
               device_name(other), (unsigned long long)there.launches, device_name(d),
               (unsigned long long)here.launches, right ? "" : "; c does not match float64");
    product_free(&p);
}

/* Step 6 on a GPU: the threads first, on the host; the device only with a
 * kernel that keeps inside c (one that does not would corrupt the memory
 * around it, and the program could crash far from the mistake). */
static void check_step6(device d)
{
    const kernel_trial one = run_kernel(1, 1, 1, 1), many = run_kernel(2, 2, 3, 2);
    if (one.written + one.outside + many.written + many.outside == 0) probe_launch(d);
    if (check_kernel_threads()) {
        check_kernel_wide_rows();
        check_naive_kernel(d);
        check_naive_on_another_gpu(d);
    } else
        printf("  (your kernel is not run on %s until each thread writes its own cell and no other)\n",
               device_name(d));
}

/* ---- refusals --------------------------------------------------------------------- */

/* lab.h: sizes that do not fit cblas_sgemm's int are refused; those that fit
 * are passed on. 2^31 (INT_MAX + 1) is the smallest that does not: cast to
 * int it is negative; 2^32 + 1 is 1 once cast. INT_MAX itself fits. Nothing
 * is computed (sgemm_dry: the check's cblas_sgemm only counts the call and
 * keeps its sizes), so a, b and c are one float each. */
static void check_openblas_sizes(void)
{
    const int64_t sizes[3] = { INT_MAX, (int64_t)INT_MAX + 1, ((int64_t)1 << 32) + 1 };
    const char *size_names[3] = { "INT_MAX", "2^31", "2^32 + 1" };
    const char *names[3] = { "m", "n", "k" };
    bool refused = true, accepted = true;
    char refusals[400] = "", acceptances[400] = "";
    float *a = host_floats(1), *b = host_floats(1), *c = host_floats(1);
    sgemm_dry = true;
    for (int which = 0; which < 3; ++which)
        for (int t = 0; t < 3; ++t) {
            const int64_t m = which == 0 ? sizes[t] : 1, n = which == 1 ? sizes[t] : 1,
                          k = which == 2 ? sizes[t] : 1;
            const long before = library_products();
            sgemm_m = sgemm_n = sgemm_k = 0;
            clear_error();
            const status s = CHECK_YOURS(lab_matmul_openblas(a, false, b, false, c, m, n, k));
            check_note_refusal(s, "lab_matmul_openblas (sizes over INT_MAX)");
            const long calls = library_products() - before;
            if (sizes[t] > INT_MAX) {
                if (s == STATUS_BAD_ARGUMENT && calls == 0) continue;
                refused = false;
                check_append(refusals, sizeof refusals, "%s%s = %s: %s, calls to cblas_sgemm: %ld",
                             *refusals ? "; " : "", names[which], size_names[t], status_name(s), calls);
            } else {
                const blasint got[3] = { sgemm_m, sgemm_n, sgemm_k };
                if (s == STATUS_OK && calls == 1 && got[which] == INT_MAX) continue;
                accepted = false;
                check_append(acceptances, sizeof acceptances, "%s%s = INT_MAX: %s, calls to cblas_sgemm: %ld",
                             *acceptances ? "; " : "", names[which], status_name(s), calls);
                if (calls == 1)
                    check_append(acceptances, sizeof acceptances, ", which got %s = %d", names[which],
                                 (int)got[which]);
            }
        }
    sgemm_dry = false;
    host_free(a, 0), host_free(b, 0), host_free(c, 0);
    if (refused)
        snprintf(refusals, sizeof refusals, "m, n and k each at 2^31 and at 2^32 + 1: refused, no call");
    else
        check_append(refusals, sizeof refusals, " (want STATUS_BAD_ARGUMENT and 0 calls each)");
    check_that(refused,
               "sizes that do not fit cblas_sgemm's int are refused (STATUS_BAD_ARGUMENT), each of m, n, k",
               "%s", refusals);
    if (accepted)
        snprintf(acceptances, sizeof acceptances, "m, n and k each at INT_MAX: one call, with that size");
    else
        check_append(acceptances, sizeof acceptances, " (want STATUS_OK and one call, with INT_MAX)");
    check_that(accepted, "INT_MAX fits cblas_sgemm's int: each of m, n, k at INT_MAX reaches it unchanged",
               "%s", acceptances);
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

#if defined(__OPTIMIZE__) && !SANITIZED /* the loop-order claim's, below */
/* The two loop orders' fastest CPU times (thread_cpu_seconds: a loop on one
 * core is charged only while it runs, where the wall clock also counts the
 * time other programs hold the core) over `tries` runs each, taken in
 * turns, so that a busy spell of the machine falls on both alike. */
static void best_cpu_seconds_in_turns(const float *a, const float *b, float *c, int64_t n, int tries,
                                      double *ijk, double *ikj)
{
    *ijk = *ikj = INFINITY;
    for (int t = 0; t < tries; ++t) {
        double start = thread_cpu_seconds();
        CHECK(lab_matmul_ijk(a, b, c, n, n, n));
        *ijk = fmin(*ijk, thread_cpu_seconds() - start);
        start = thread_cpu_seconds();
        CHECK(lab_matmul_ikj(a, b, c, n, n, n));
        *ikj = fmin(*ikj, thread_cpu_seconds() - start);
    }
}
#endif

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
    float *a = random_matrix(n, n, 41), *b = random_matrix(n, n, 42), *c = host_floats(n * n);
    double blas, ijk, ikj;
    CHECK(openblas_plain(a, b, c, n, n, n)); /* wakes OpenBLAS's threads up */
    CHECK(lab_gflops(n, n, n, best_seconds(lab_matmul_ijk, a, b, c, n, 3), &ijk));
    CHECK(lab_gflops(n, n, n, best_seconds(lab_matmul_ikj, a, b, c, n, 3), &ikj));
    CHECK(lab_gflops(n, n, n, best_seconds(openblas_plain, a, b, c, n, 5), &blas));
    check_that(blas > 5.0 * ijk, "OpenBLAS beats the naive loop by a wide margin (> 5x) at N = 512",
               "OpenBLAS %.1f GFLOP/s, naive i-j-k %.2f: %.0fx (i-k-j %.2f: %.1fx)", blas, ijk, blas / ijk,
               ikj, blas / ikj);
#if defined(__OPTIMIZE__) && !SANITIZED
    /* On CPU time, in turns: on a busy machine the wall clock of three runs
     * each once let the same loop under two names pass for 2x faster. */
    double ijk_cpu, ikj_cpu;
    best_cpu_seconds_in_turns(a, b, c, n, 5, &ijk_cpu, &ikj_cpu);
    check_that(ijk_cpu > 2.0 * ikj_cpu, "loop order: i-k-j beats i-j-k (> 2x) at N = 512",
               "CPU time of the fastest of 5 runs each, in turns: i-k-j %.1f ms, i-j-k %.1f ms: %.1fx",
               1e3 * ikj_cpu, 1e3 * ijk_cpu, ijk_cpu / ikj_cpu);
#else
    printf("  (loop order not claimed: in an unoptimised or sanitized build neither loop is vectorised)\n");
#endif
    host_free(a, 0), host_free(b, 0), host_free(c, 0);
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
    if (check_kernels_only()) return check_kernels(d); /* ./lab check 04 --kernels */
    check_layer(d);
    if (d.kind == DEVICE_CPU) {
        const long ijk = check_loop("your naive loop (i-j-k) matches float64", lab_matmul_ijk);
        const long ikj = check_loop("your loop in the order i-k-j matches float64", lab_matmul_ikj);
        check_that(ijk == 0 && ikj == 0,
                   "steps 2 and 3 are your own loops: no call to cblas_sgemm or op_matmul inside them",
                   "calls to the library's products: %ld from i-j-k, %ld from i-k-j (want 0)", ijk, ikj);
        check_transposes(d, true);
        check_openblas_sizes();
    }
    check_transposes(d, false);
    check_counting(d);
    if (d.kind == DEVICE_CPU) {
        check_cpu_speed();
        check_naive_refuses_cpu();
        printf("  (the naive kernel runs on GPUs: check it with --device sim:0 or cuda:0)\n");
    } else {
        check_naive_refuses_cpu();
        check_step6(d);
        check_launch_overhead(d);
    }
    check_refusals_said();
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
