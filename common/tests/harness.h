/* harness.h: the unit tests' whole harness, in one header.
 *
 * A test is a `static void test_...(void)` named after the behaviour it proves.
 * EXPECT-style macros record a failure (file:line and a message) and carry on;
 * REQUIRE-style macros record it and jump to the test's `cleanup:` label, where
 * the test frees what it made. main() runs the tests with RUN_TEST and ends with
 * `return harness_finish();`, which prints the last line, "N passed, N failed",
 * and gives the exit code (0 only if every test passed).
 *
 * EXPECT_CLOSE compares a float32 result with a float64 reference computed by the
 * test, element by element, with the tolerance atol + rtol*|ref| (llm.c's way),
 * and prints the first few mismatches. A NaN never compares close, so an output
 * poisoned with NaN before the call and left unwritten is caught.
 *
 * Include it from exactly one file per program: its state is file-static. */
#ifndef LABKIT_TESTS_HARNESS_H
#define LABKIT_TESTS_HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "labkit/device.h"
#include "labkit/status.h"

/* CTest reads this exit code as "skipped" (SKIP_RETURN_CODE 77). */
#define HARNESS_SKIPPED 77

/* How many mismatches EXPECT_CLOSE and EXPECT_BITWISE_EQUAL print. */
#define HARNESS_MISMATCHES_SHOWN 5

#if defined(__GNUC__)
#define HARNESS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HARNESS_PRINTF(f, a)
#endif

/* ---- state of the run --------------------------------------------------- */

static int harness_passed;
static int harness_failed;
static int harness_skipped;
static int harness_failures_in_test; /* failures recorded by the running test */
static bool harness_skip_requested;
static const char *harness_test_name = "(outside a test)";

/* ---- recording ------------------------------------------------------------ */

static inline void harness_fail(const char *file, int line, const char *format, ...) HARNESS_PRINTF(3, 4);

static inline void harness_fail(const char *file, int line, const char *format, ...)
{
    va_list args;
    harness_failures_in_test++;
    fprintf(stderr, "%s:%d: %s: ", file, line, harness_test_name);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
}

/* Marks the running test as skipped (say why); it then counts neither way. */
static inline void harness_skip(const char *reason)
{
    harness_skip_requested = true;
    printf("  note: %s\n", reason);
}

/* The condition, printed as written. */
#define EXPECT(cond)                                                         \
    do {                                                                     \
        if (!(cond)) harness_fail(__FILE__, __LINE__, "expected %s", #cond); \
    } while (0)

/* The condition and a printf-style message that says what went wrong. */
#define EXPECT_MSG(cond, ...)                                       \
    do {                                                            \
        if (!(cond)) harness_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

#define REQUIRE(cond)                                               \
    do {                                                            \
        if (!(cond)) {                                              \
            harness_fail(__FILE__, __LINE__, "required %s", #cond); \
            goto cleanup;                                           \
        }                                                           \
    } while (0)

#define EXPECT_STATUS(call, want)                                                                \
    do {                                                                                         \
        status got_status_ = (call);                                                             \
        status want_status_ = (want);                                                            \
        if (got_status_ != want_status_)                                                         \
            harness_fail(__FILE__, __LINE__, "%s returned %s, want %s (message: \"%s\")", #call, \
                         status_name(got_status_), status_name(want_status_), last_error());     \
    } while (0)

#define EXPECT_OK(call) EXPECT_STATUS(call, STATUS_OK)

/* A refusal: the call returns `want` (not OK) and leaves a message behind. */
#define EXPECT_REFUSED(call, want)                                                                        \
    do {                                                                                                  \
        clear_error();                                                                                    \
        EXPECT_STATUS(call, want);                                                                        \
        if (last_error()[0] == '\0') harness_fail(__FILE__, __LINE__, "%s left no error message", #call); \
    } while (0)

#define REQUIRE_OK(call)                                                                            \
    do {                                                                                            \
        status got_status_ = (call);                                                                \
        if (got_status_ != STATUS_OK) {                                                             \
            harness_fail(__FILE__, __LINE__, "%s returned %s: %s", #call, status_name(got_status_), \
                         last_error());                                                             \
            goto cleanup;                                                                           \
        }                                                                                           \
    } while (0)

#define EXPECT_EQ_I64(got, want)                                                                      \
    do {                                                                                              \
        long long got_ = (long long)(got), want_ = (long long)(want);                                 \
        if (got_ != want_)                                                                            \
            harness_fail(__FILE__, __LINE__, "%s is %lld, want %lld (%s)", #got, got_, want_, #want); \
    } while (0)

#define EXPECT_STREQ(got, want)                                                                         \
    do {                                                                                                \
        const char *got_ = (got), *want_ = (want);                                                      \
        if (got_ == NULL || want_ == NULL || strcmp(got_, want_) != 0)                                  \
            harness_fail(__FILE__, __LINE__, "%s is \"%s\", want \"%s\"", #got, got_ ? got_ : "(null)", \
                         want_ ? want_ : "(null)");                                                     \
    } while (0)

/* `text` contains `needle` (a message that names a device or a shape). */
#define EXPECT_CONTAINS(text, needle)                                                              \
    do {                                                                                           \
        const char *text_ = (text), *needle_ = (needle);                                           \
        if (text_ == NULL || strstr(text_, needle_) == NULL)                                       \
            harness_fail(__FILE__, __LINE__, "%s does not contain \"%s\": \"%s\"", #text, needle_, \
                         text_ ? text_ : "(null)");                                                \
    } while (0)

/* |got - want| <= atol + rtol*|want| (false for NaN). */
static inline bool harness_close(double got, double want, double atol, double rtol)
{
    return fabs(got - want) <= atol + rtol * fabs(want);
}

#define EXPECT_NEAR(got, want, atol, rtol)                                                             \
    do {                                                                                               \
        double got_ = (double)(got), want_ = (double)(want);                                           \
        if (!harness_close(got_, want_, (atol), (rtol)))                                               \
            harness_fail(__FILE__, __LINE__, "%s is %.9g, want %.9g (|diff| %.3g > %.3g)", #got, got_, \
                         want_, fabs(got_ - want_), (atol) + (rtol)*fabs(want_));                      \
    } while (0)

/* Compares n float32 results with float64 references; prints the first few
 * mismatches as (index, got, want) and returns whether all were close. */
static inline bool harness_expect_close(const char *file, int line, const char *what, const float *got,
                                        const double *want, int64_t n, double atol, double rtol)
{
    int64_t mismatches = 0;
    double worst = 0.0;
    if (got == NULL || want == NULL) {
        harness_fail(file, line, "%s: nothing to compare (a NULL buffer)", what);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        if (harness_close(got[i], want[i], atol, rtol)) continue;
        if (mismatches < HARNESS_MISMATCHES_SHOWN)
            fprintf(stderr, "    %s[%lld]: got %.9g, want %.9g\n", what, (long long)i, (double)got[i],
                    want[i]);
        double diff = fabs((double)got[i] - want[i]);
        if (!(diff <= worst)) worst = diff; /* NaN sticks */
        mismatches++;
    }
    if (mismatches > 0)
        harness_fail(file, line,
                     "%s: %lld of %lld elements differ beyond %g + %g*|ref| "
                     "(largest |diff| %.3g)",
                     what, (long long)mismatches, (long long)n, atol, rtol, worst);
    return mismatches == 0;
}

#define EXPECT_CLOSE(what, got, want, n, atol, rtol) \
    harness_expect_close(__FILE__, __LINE__, (what), (got), (want), (n), (atol), (rtol))

/* Bit-for-bit equality of n 32-bit words (floats or ints). */
static inline bool harness_expect_bitwise_equal(const char *file, int line, const char *what, const void *got,
                                                const void *want, int64_t n)
{
    int64_t mismatches = 0;
    const unsigned char *g = got, *w = want;
    if (got == NULL || want == NULL) {
        harness_fail(file, line, "%s: nothing to compare (a NULL buffer)", what);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t gi, wi;
        memcpy(&gi, g + 4 * i, 4);
        memcpy(&wi, w + 4 * i, 4);
        if (gi == wi) continue;
        if (mismatches < HARNESS_MISMATCHES_SHOWN)
            fprintf(stderr, "    %s[%lld]: got 0x%08x, want 0x%08x\n", what, (long long)i, (unsigned)gi,
                    (unsigned)wi);
        mismatches++;
    }
    if (mismatches > 0)
        harness_fail(file, line, "%s: %lld of %lld words differ", what, (long long)mismatches, (long long)n);
    return mismatches == 0;
}

#define EXPECT_BITWISE_EQUAL(what, got, want, n) \
    harness_expect_bitwise_equal(__FILE__, __LINE__, (what), (got), (want), (n))

/* ---- running ---------------------------------------------------------------- */

static inline void harness_run(const char *name, void (*test)(void))
{
    harness_test_name = name;
    harness_failures_in_test = 0;
    harness_skip_requested = false;
    clear_error();
    test();
    if (harness_failures_in_test > 0) {
        harness_failed++;
        printf("[FAIL] %s\n", name);
    } else if (harness_skip_requested) {
        harness_skipped++;
        printf("[SKIP] %s\n", name);
    } else {
        harness_passed++;
        printf("[PASS] %s\n", name);
    }
    fflush(stdout);
    harness_test_name = "(outside a test)";
}

#define RUN_TEST(fn) harness_run(#fn, fn)

/* Prints the last line and returns the exit code: 0 only if all passed (1 if
 * any failed, 77 if every test was skipped). */
static inline int harness_finish(void)
{
    if (harness_skipped > 0) printf("(%d skipped)\n", harness_skipped);
    printf("%d passed, %d failed\n", harness_passed, harness_failed);
    fflush(stdout);
    if (harness_failed > 0) return 1;
    return harness_passed > 0 ? 0 : HARNESS_SKIPPED; /* everything skipped */
}

/* Parses the device a test program was asked to run on. Returns 0 and writes
 * *out when it exists; 2 when LABKIT_SIM_GPUS or LABKIT_SIM_MEMORY cannot be
 * honoured; HARNESS_SKIPPED (77) when it is a real GPU absent here
 * (a gpu test on a machine without one); 1 when the name is malformed, or names
 * a simulated GPU that the environment did not ask for (those exist wherever
 * they are asked for, so their absence is an error of the test's setup). */
static inline int test_device_or_skip(const char *name, device *out)
{
    /* A LABKIT_SIM_* setting that cannot be honoured stops the test with 2,
     * as every program of the kit does: never a skip, never a run without it. */
    if (devices_init() != STATUS_OK) {
        fprintf(stderr, "%s\n", last_error());
        return 2;
    }
    status s = device_parse(name, out);
    if (s == STATUS_OK) return 0;
    if (s == STATUS_WRONG_DEVICE && strncmp(name, "cuda", 4) == 0) {
        printf("SKIP: device \"%s\" is not present here (%s)\n", name, last_error());
        return HARNESS_SKIPPED;
    }
    fprintf(stderr, "bad device \"%s\": %s: %s\n", name ? name : "(null)", status_name(s), last_error());
    return 1;
}

/* A float's bits, and the float with those bits (the tests of rounding). */
static inline uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float float_from(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The device named by a test program's one argument: 0 when it is found, else
 * the code for main to return (2 with the usage "PROGRAM <usage>", 77 when a
 * real GPU is absent, 1 for a name that is wrong). */
static inline int test_device_argument(int argc, char **argv, const char *usage, device *out)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s %s\n", argc > 0 ? argv[0] : "test", usage);
        return 2;
    }
    return test_device_or_skip(argv[1], out);
}

/* A second GPU beside the GPU `d`, for the tests that need two: another GPU of
 * the same kind if there is one (cuda:1 beside cuda:0, sim:1 beside sim:0),
 * else a simulated one beside a real GPU (sim:0 beside cuda:0). CTest runs every
 * device test with LABKIT_SIM_GPUS=2, so there is always one. Writes `d` itself
 * and returns false where there is none. */
static inline bool test_second_gpu(device d, device *out)
{
    *out = d;
    const int same_kind = device_count(d.kind);
    if (device_is_gpu(d) && same_kind > 1) {
        out->index = d.index == 0 ? 1 : 0;
        return true;
    }
    if (d.kind == DEVICE_CUDA && device_count(DEVICE_SIM) > 0) {
        out->kind = DEVICE_SIM;
        out->index = 0;
        return true;
    }
    return false;
}

/* ---- the tests' own clock (the core has no public one) ---------------------- */

/* Seconds on CLOCK_MONOTONIC; only differences mean anything. */
static inline double harness_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* ---- host random numbers (the tests' own; independent of the library's) ---- */

typedef struct test_rng {
    uint64_t state;
} test_rng;

static inline test_rng test_rng_seeded(uint64_t seed)
{
    test_rng r = { seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull };
    return r;
}

/* splitmix64 */
static inline uint64_t test_rng_next(test_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [low, high). */
static inline float test_rng_uniform(test_rng *r, float low, float high)
{
    double u = (double)(test_rng_next(r) >> 11) * 0x1.0p-53;
    return (float)(low + (high - low) * u);
}

/* n values with magnitudes uniform in [min_mag, max_mag] and random signs:
 * random and never zero (min_mag > 0). */
static inline void test_fill_nonzero(test_rng *r, float *x, int64_t n, float min_mag, float max_mag)
{
    for (int64_t i = 0; i < n; i++) {
        float m = test_rng_uniform(r, min_mag, max_mag);
        x[i] = (test_rng_next(r) & 1) ? m : -m;
    }
}

/* malloc that records a failure instead of returning NULL silently. */
static inline void *test_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) harness_fail(__FILE__, __LINE__, "out of host memory (%zu bytes)", bytes);
    return p;
}

#endif
