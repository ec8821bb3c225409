/* check.c: does lab 01 hold on a device?
 *
 *   check01 --device D
 *
 * 1. try_gpu(i) and try_all_gpus() give the lessons' answers for the GPUs this
 *    process sees: the real ones where there is one, else the simulated ones;
 *    try_all_gpus() writes nothing after its answer, whatever the room given.
 *    The answers expected are worked out here from how many GPUs of each kind
 *    exist, never from the library's own try_gpu. The library counts the GPUs
 *    once per process, so other GPU counts are other runs of this check:
 *    lab.cmake lists them (no GPU at all, one GPU), and CTest and ./lab check
 *    run each;
 * 2. cores per multiprocessor and the FP32 peak reproduce the published figures
 *    of real cards within 1%, say "unknown" rather than guess, refuse every
 *    negative figure (beside a zero too) and a NaN clock, and give each
 *    device's own peak (a simulated GPU is a card of compute capability 8.6,
 *    so your table answers for it too);
 * 3. a tensor made on D lives there and never was a CPU tensor; a new layer is
 *    nn.Linear's, weight and bias; moving it to D copies each parameter once
 *    (or, already there, not at all), and to a second GPU of D's kind too; a
 *    layer split across two devices, sim:0 and sim:1 included, is refused,
 *    the message saying which device holds the weight and which the bias;
 *    net(X) is X W^T + b, computed on D, and an X it cannot take is refused;
 *    and nothing is left behind;
 * 4. what fails on the way is said, not hidden: a simulated GPU filled to the
 *    last bytes makes lab_rand_on and lab_linear_to fail as on a full GPU, and
 *    a layer of -3 inputs cannot be made; each must return the failure, lose
 *    nothing and leave the device usable; and every refusal of yours comes
 *    with a message (fail()), not a bare status.
 *
 * Steps 1 to 3 are to be written, not borrowed: lab.cmake links this check
 * with the library's try_gpu, try_all_gpus, fp32_cores_per_multiprocessor and
 * peak_fp32_gflops wrapped (-Wl,--wrap), and the check counts the calls your
 * functions make of them.
 *
 * A call of yours that fails breaks the claim it was called for: the check says
 * so and goes on. Only an unwritten step (todo) stops it, at its TODO. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cards.h"
#include "lab.h"
#include "labkit/check_full_device.h"

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* ==== the library's answers, counted ====================================== */

/* lab.cmake links this check with -Wl,--wrap=try_gpu and the like: every call
 * of these four, from lab.c or from the library, comes here first, is counted
 * and goes on to the library's own function (__real_...). The check reads the
 * counts before and after a call of yours, so only your calls are counted. */
static struct {
    int try_gpu, try_all_gpus, cores, peak;
} library_calls;

device __real_try_gpu(int i);
int __real_try_all_gpus(device *out, int capacity);
int __real_fp32_cores_per_multiprocessor(int cc_major, int cc_minor);
double __real_peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz);
device __wrap_try_gpu(int i);
int __wrap_try_all_gpus(device *out, int capacity);
int __wrap_fp32_cores_per_multiprocessor(int cc_major, int cc_minor);
double __wrap_peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz);

device __wrap_try_gpu(int i)
{
    library_calls.try_gpu++;
    return __real_try_gpu(i);
}

int __wrap_try_all_gpus(device *out, int capacity)
{
    library_calls.try_all_gpus++;
    return __real_try_all_gpus(out, capacity);
}

int __wrap_fp32_cores_per_multiprocessor(int cc_major, int cc_minor)
{
    library_calls.cores++;
    return __real_fp32_cores_per_multiprocessor(cc_major, cc_minor);
}

double __wrap_peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz)
{
    library_calls.peak++;
    return __real_peak_fp32_gflops(multiprocessors, cores_per_mp, clock_ghz);
}

/* The claim that `yours`, called `calls` times, never called the library's
 * `theirs` (`borrowed` times it did). */
static void check_own_answer(const char *claim, const char *yours, const char *theirs, int borrowed,
                             int calls)
{
    check_that(borrowed == 0, claim, "%d call%s of the library's %s in %d call%s of %s%s", borrowed,
               plural((uint64_t)borrowed), theirs, calls, plural((uint64_t)calls), yours,
               borrowed ? ": that function is the answer this step asks you to write (lab.h)" : "");
}

/* ==== memory, on every device ============================================= */

/* Bytes in use on every device here, once its queue has drained (a simulated
 * GPU returns memory in queue order). */
typedef struct memory_in_use {
    int n;
    device devices[LABKIT_MAX_DEVICES];
    size_t bytes[LABKIT_MAX_DEVICES];
} memory_in_use;

static memory_in_use memory_now(void)
{
    memory_in_use m;
    m.n = device_list(m.devices, LABKIT_MAX_DEVICES);
    for (int k = 0; k < m.n; ++k) {
        device_counters c;
        CHECK(device_synchronize(m.devices[k]));
        CHECK(counters_read(m.devices[k], &c));
        m.bytes[k] = c.memory_current;
    }
    return m;
}

/* Whether every device holds what it held in `before` (with `or_less`, at
 * most that); `text` says what each held before and after ("cpu 0 -> 0
 * bytes, sim:0 0 -> 24 bytes"). */
static bool memory_compared(const memory_in_use *before, bool or_less, char *text, size_t size)
{
    const memory_in_use after = memory_now();
    bool back = true;
    text[0] = '\0';
    for (int k = 0; k < before->n; ++k) {
        back = back && (or_less ? after.bytes[k] <= before->bytes[k] : after.bytes[k] == before->bytes[k]);
        check_append(text, size, "%s%s %zu -> %zu bytes", k ? ", " : "", device_name(before->devices[k]),
                     before->bytes[k], after.bytes[k]);
    }
    return back;
}

static bool memory_back(const memory_in_use *before, char *text, size_t size)
{
    return memory_compared(before, false, text, size);
}

/* ==== 1. try_gpu and try_all_gpus ======================================== */

/* The GPUs the lessons' helpers speak of in this process: the real ones if
 * there is any, else the simulated ones (maybe none). */
typedef struct gpus_seen {
    int real, simulated; /* how many of each kind exist here */
    int count;           /* how many the helpers speak of */
    device_kind kind;    /* and of which kind */
} gpus_seen;

static gpus_seen gpus_here(void)
{
    gpus_seen g = { .real = device_count(DEVICE_CUDA), .simulated = device_count(DEVICE_SIM) };
    g.kind = g.real > 0 ? DEVICE_CUDA : DEVICE_SIM;
    g.count = g.real > 0 ? g.real : g.simulated;
    return g;
}

/* "here: no GPU", "here: 2 simulated GPUs", "here: 1 real GPU (and 2 simulated ones)". */
static void describe_gpus(gpus_seen g, char *text, size_t size)
{
    if (g.real > 0)
        snprintf(text, size, "here: %d real GPU%s (and %d simulated, which the lessons' helpers pass over)",
                 g.real, g.real == 1 ? "" : "s", g.simulated);
    else if (g.simulated > 0)
        snprintf(text, size, "here: %d simulated GPU%s, no real one", g.simulated,
                 g.simulated == 1 ? "" : "s");
    else
        snprintf(text, size, "here: no GPU at all");
}

/* What try_gpu(i) must give: GPU i if it exists, else the CPU. */
static device expected_gpu(gpus_seen g, int i)
{
    if (i < 0 || i >= g.count) return device_cpu();
    return (device){ g.kind, i };
}

static void check_try_gpu(gpus_seen g, const char *here)
{
    const char *claim = "try_gpu(i) is GPU i if it exists, else the CPU";
    char answers[256] = "";
    const int borrowed_before = library_calls.try_gpu;
    int calls = 0;
    bool right = true;
    for (int i = -1; i <= g.count + 1 && right; ++i) {
        device got = device_cpu();
        const device want = expected_gpu(g, i);
        char call[32];
        snprintf(call, sizeof call, "lab_try_gpu(%d, &got)", i);
        status s = lab_try_gpu(i, &got);
        calls++;
        if (!check_call(s, call, claim, __FILE__, __LINE__)) return;
        if (!device_equal(got, want)) {
            check_that(false, claim, "try_gpu(%d) = %s, want %s (%s)", i, device_name(got), device_name(want),
                       here);
            right = false;
        }
        check_append(answers, sizeof answers, "%s%s", i > -1 ? " " : "", device_name(got));
    }
    if (right) check_that(true, claim, "try_gpu(-1 .. %d) = %s; %s", g.count + 1, answers, here);
    check_own_answer("lab_try_gpu works out its answer itself, never calling the library's try_gpu",
                     "lab_try_gpu", "try_gpu", library_calls.try_gpu - borrowed_before, calls);
}

/* A device no answer can be: what the arrays hold before the call, to see
 * which entries it wrote. */
static const device untouched = { DEVICE_SIM, -1 };

/* How many places of `all`, from `from` to the end, a call wrote. */
static int written_from(const device *all, int from)
{
    int written = 0;
    for (int k = from; k < LABKIT_MAX_DEVICES; ++k) written += !device_equal(all[k], untouched);
    return written;
}

/* "sim:0, sim:1" for the first n places of `all`; "(unwritten)" where a place
 * was left as it was. */
static void describe_devices(const device *all, int n, char *text, size_t size)
{
    text[0] = '\0';
    for (int k = 0; k < n && k < LABKIT_MAX_DEVICES; ++k)
        check_append(text, size, "%s%s", k ? ", " : "",
                     device_equal(all[k], untouched) ? "(unwritten)" : device_name(all[k]));
}

static void check_try_all_gpus(gpus_seen g, const char *here)
{
    const char *claim = "try_all_gpus() is every GPU, or [cpu] when there is none";
    const int needed = g.count > 0 ? g.count : 1;
    device all[LABKIT_MAX_DEVICES];
    for (int k = 0; k < LABKIT_MAX_DEVICES; ++k) all[k] = untouched;
    int n = -1;
    const int borrowed_before = library_calls.try_all_gpus + library_calls.try_gpu;
    if (!CHECK_CALL(lab_try_all_gpus(all, needed, &n), claim)) return;
    int borrowed = library_calls.try_all_gpus + library_calls.try_gpu - borrowed_before;

    char got[256] = "", want[256] = "";
    device answer[LABKIT_MAX_DEVICES];
    bool same = n == needed;
    for (int k = 0; k < needed; ++k) {
        answer[k] = g.count > 0 ? (device){ g.kind, k } : device_cpu();
        check_append(want, sizeof want, "%s%s", k ? ", " : "", device_name(answer[k]));
        same = same && device_equal(all[k], answer[k]);
    }
    describe_devices(all, n, got, sizeof got);
    if (same)
        check_that(true, claim, "[%s]; %s", got, here);
    else
        check_that(false, claim, "%d device%s [%s], want [%s] (%s)", n, plural((uint64_t)(n > 0 ? n : 0)),
                   got, want, here);

    /* The answer and nothing after it: with exactly its room, a write past
     * the answer is past the array; with LABKIT_MAX_DEVICES, as main.c gives,
     * the list is as long as the answer, not the array. */
    const int past_exact = written_from(all, needed);
    const char *spare_claim = "try_all_gpus writes its answer and nothing after it, given exactly its room "
                              "or LABKIT_MAX_DEVICES";
    for (int k = 0; k < LABKIT_MAX_DEVICES; ++k) all[k] = untouched;
    int spare_n = -1;
    const int borrowed_before_spare = library_calls.try_all_gpus + library_calls.try_gpu;
    if (CHECK_CALL(lab_try_all_gpus(all, LABKIT_MAX_DEVICES, &spare_n), spare_claim)) {
        bool spare_same = spare_n == needed;
        for (int k = 0; k < needed; ++k) spare_same = spare_same && device_equal(all[k], answer[k]);
        const int past_spare = written_from(all, needed);
        char spare_got[256];
        describe_devices(all, spare_n, spare_got, sizeof spare_got);
        if (past_exact == 0 && spare_same && past_spare == 0)
            check_that(true, spare_claim, "room for %d and for %d: [%s], nothing after it", needed,
                       LABKIT_MAX_DEVICES, spare_got);
        else
            check_that(false, spare_claim,
                       "room for %d: %d place%s written after the answer; room for %d: %d device%s [%s], "
                       "%d place%s written after the first %d (want %d, [%s], and nothing after them)",
                       needed, past_exact, plural((uint64_t)past_exact), LABKIT_MAX_DEVICES, spare_n,
                       plural((uint64_t)(spare_n > 0 ? spare_n : 0)), spare_got, past_spare,
                       plural((uint64_t)past_spare), needed, needed, want);
    }
    borrowed += library_calls.try_all_gpus + library_calls.try_gpu - borrowed_before_spare;

    /* One place too few: refused, and nothing written, neither in the room
     * given (a list cut short) nor past it (an overrun). */
    for (int k = 0; k < LABKIT_MAX_DEVICES; ++k) all[k] = untouched;
    const int room = needed - 1;
    const int borrowed_before_refusal = library_calls.try_all_gpus + library_calls.try_gpu;
    clear_error();
    const status s = CHECK_YOURS(lab_try_all_gpus(all, room, &n));
    check_note_refusal(s, "lab_try_all_gpus (an array too small)");
    borrowed += library_calls.try_all_gpus + library_calls.try_gpu - borrowed_before_refusal;
    int inside = 0, overrun = 0;
    for (int k = 0; k < LABKIT_MAX_DEVICES; ++k) {
        if (device_equal(all[k], untouched)) continue;
        if (k < room)
            inside++;
        else
            overrun++;
    }
    check_that(s == STATUS_BAD_ARGUMENT && inside + overrun == 0,
               "try_all_gpus refuses an array too small for its answer, writing nothing in it or past it",
               "room for %d of %d: %s, %d device%s written in the room, %d past it", room, needed,
               status_name(s), inside, plural((uint64_t)inside), overrun);
    check_own_answer(
        "lab_try_all_gpus works out its answer itself, never calling the library's try_all_gpus or try_gpu",
        "lab_try_all_gpus", "try_all_gpus and try_gpu", borrowed, 3);
}

/* ==== 2. what a GPU is made of, and its peak ============================= */

static void check_cores_per_sm(void)
{
    const char *claim = "FP32 cores per SM from the compute capability; unknown ones give 0";
    /* From the throughput table of NVIDIA's CUDA C++ Programming Guide. */
    static const struct {
        int major, minor, cores;
        const char *what;
    } expected[] = {
        { 7, 5, 64, "Turing" },       { 8, 0, 64, "A100" },    { 8, 6, 128, "RTX 30xx" },
        { 8, 9, 128, "Ada" },         { 9, 0, 128, "Hopper" }, { 10, 0, 128, "B200" },
        { 12, 0, 128, "RTX 50xx" },   { 6, 1, 0, "Pascal" },   { 7, 0, 0, "Volta" },
        { 13, 0, 0, "not yet made" }, { 0, 0, 0, "no GPU" },   { -1, 5, 0, "nonsense" },
    };
    char wrong[512] = "";
    const int borrowed_before = library_calls.cores;
    int calls = 0, borrowed = 0;
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; ++k) {
        int cores = -1;
        calls++;
        if (!CHECK_CALL(lab_fp32_cores_per_sm(expected[k].major, expected[k].minor, &cores), claim)) return;
        if (cores != expected[k].cores)
            check_append(wrong, sizeof wrong, " %d.%d (%s): %d, want %d%s;", expected[k].major,
                         expected[k].minor, expected[k].what, cores, expected[k].cores,
                         expected[k].cores ? "" : " (unknown)");
    }
    borrowed += library_calls.cores - borrowed_before;
    check_that(!wrong[0], claim, "%s",
               wrong[0] ? wrong : "7.5 and 8.0: 64, 8.6 to 12.0: 128; 6.1, 7.0, 13.0: unknown");

    /* Every compute capability from 0.0 to 15.9 against the library's table, so
     * that no architecture is guessed that the library calls unknown. */
    claim = "the table agrees with the library's for compute capabilities 0.0 to 15.9";
    int disagree = 0, first_major = 0, first_minor = 0, theirs = 0, yours = 0;
    for (int major = 0; major <= 15; ++major)
        for (int minor = 0; minor <= 9; ++minor) {
            int cores = -1;
            const int before = library_calls.cores;
            calls++;
            if (!CHECK_CALL(lab_fp32_cores_per_sm(major, minor, &cores), claim)) return;
            borrowed += library_calls.cores - before;
            const int library = fp32_cores_per_multiprocessor(major, minor);
            if (cores != library && disagree++ == 0)
                first_major = major, first_minor = minor, yours = cores, theirs = library;
        }
    char figures[160] = "all 160 agree";
    if (disagree)
        snprintf(figures, sizeof figures, "%d differ, the first %d.%d: yours %d, the library's %d", disagree,
                 first_major, first_minor, yours, theirs);
    check_that(disagree == 0, claim, "%s", figures);
    check_own_answer(
        "lab_fp32_cores_per_sm is your own table, never the library's fp32_cores_per_multiprocessor",
        "lab_fp32_cores_per_sm", "fp32_cores_per_multiprocessor", borrowed, calls);
}

static void check_peak_of_card(const known_card *c)
{
    char claim[96];
    if (c->beyond_table)
        snprintf(claim, sizeof claim, "the %s's peak is unknown, not guessed", c->name);
    else
        snprintf(claim, sizeof claim, "FP32 peak of the %s within 1%% of the published %g TFLOPS", c->name,
                 c->published_tflops);
    int cores = 0;
    double gflops = -1;
    if (!CHECK_CALL(lab_fp32_cores_per_sm(c->cc_major, c->cc_minor, &cores), claim) ||
        !CHECK_CALL(lab_peak_fp32_gflops(c->multiprocessors, cores, c->boost_ghz, &gflops), claim))
        return;
    if (c->beyond_table) {
        check_that(cores == 0 && gflops == 0, claim,
                   "compute capability %d.%d: %d cores per SM, %.1f GFLOP/s", c->cc_major, c->cc_minor, cores,
                   gflops);
        return;
    }
    const double tflops = gflops / 1000, off = tflops / c->published_tflops - 1;
    check_that(fabs(off) <= 0.01, claim, "%d SMs x %d cores x %.4g GHz x 2 = %.2f TFLOPS, %+.2f%%",
               c->multiprocessors, cores, c->boost_ghz, tflops, 100 * off);
}

static void check_peaks(void)
{
    /* Nothing else between here and the end calls peak_fp32_gflops: every
     * call counted is one of your lab_peak_fp32_gflops. */
    const int borrowed_before = library_calls.peak;
    int calls = known_card_count;
    for (int k = 0; k < known_card_count; ++k) check_peak_of_card(&known_cards[k]);

    /* Lesson 001 counted one operation per core and cycle for the RTX 3080 12 GB. */
    const char *claim = "lesson 001's 15.32 TFLOPS is the peak without the x2 of the FMA";
    double gflops = 0;
    calls++;
    if (CHECK_CALL(lab_peak_fp32_gflops(70, 128, 1.71, &gflops), claim)) {
        const double one_op = gflops / 2 / 1000;
        check_that(fabs(one_op / LESSON_001_RTX3080_TFLOPS - 1) < 0.001, claim,
                   "70 x 128 x 1.71 GHz x 2 = %.2f TFLOPS; half of it %.2f", gflops / 1000, one_op);
    }

    /* Every factor may be unknown, and none may be negative: each of the three
     * negative in turn, the others valid; then a negative beside a zero, which
     * a test for zeros made before the test for negatives calls unknown. */
    claim = "an unknown factor gives an unknown peak (0); a negative one is refused, even beside a zero";
    double unknown = -1;
    calls++;
    if (CHECK_CALL(lab_peak_fp32_gflops(80, 0, 1.53, &unknown), claim)) {
        static const struct {
            int multiprocessors, cores;
            double clock_ghz;
        } negative[] = { { -4, 64, 1.5 }, { 80, -64, 1.5 }, { 80, 64, -1.5 }, { -4, 0, 1.5 } };
        char refused[256] = "";
        bool all_refused = true;
        for (size_t k = 0; k < sizeof negative / sizeof negative[0]; ++k) {
            double peak = -1;
            calls++;
            clear_error();
            const status s = CHECK_YOURS(lab_peak_fp32_gflops(negative[k].multiprocessors, negative[k].cores,
                                                              negative[k].clock_ghz, &peak));
            all_refused = all_refused && s == STATUS_BAD_ARGUMENT;
            check_note_refusal(s, "lab_peak_fp32_gflops (a negative figure)");
            check_append(refused, sizeof refused, "; %d x %d x %g GHz: %s", negative[k].multiprocessors,
                         negative[k].cores, negative[k].clock_ghz,
                         s == STATUS_OK ? "accepted" : status_name(s));
        }
        check_that(unknown == 0 && all_refused, claim, "80 SMs x 0 cores: %g%s", unknown, refused);
    }

    /* A clock that is not a number is no figure at all (lab.h): a test of
     * clock < 0 lets it through, since every comparison with NaN is false. */
    claim = "a clock that is not a number (NaN) is refused like a negative one, even beside a zero";
    double peak = -1, beside_zero = -1;
    calls += 2;
    clear_error();
    const status s = CHECK_YOURS(lab_peak_fp32_gflops(80, 64, NAN, &peak));
    check_note_refusal(s, "lab_peak_fp32_gflops (a NaN clock)");
    clear_error();
    const status z = CHECK_YOURS(lab_peak_fp32_gflops(0, 64, NAN, &beside_zero));
    check_note_refusal(z, "lab_peak_fp32_gflops (a NaN clock beside 0 SMs)");
    check_that(s == STATUS_BAD_ARGUMENT && z == STATUS_BAD_ARGUMENT, claim,
               "80 x 64 x NaN GHz: %s%s; 0 x 64 x NaN GHz: %s%s", status_name(s),
               s == STATUS_OK ? ", a peak of NaN" : "", status_name(z),
               z == STATUS_OK ? " (a NaN clock is no figure, not an unknown one: refuse it before the zeros)"
                              : "");
    check_own_answer("lab_peak_fp32_gflops is your own formula, never the library's peak_fp32_gflops",
                     "lab_peak_fp32_gflops", "peak_fp32_gflops", library_calls.peak - borrowed_before, calls);
}

/* Your formula on the figures the library reports for each device here must
 * give the library's own peak. A GPU's cores per SM come from your table: a
 * real GPU's compute capability, or the modelled card of a simulated one (8.6,
 * 20 SMs at 1.5 GHz, never the host's figures); the CPU's are its SIMD lanes. */
static void check_devices_here(void)
{
    device all[LABKIT_MAX_DEVICES];
    const int n = device_list(all, LABKIT_MAX_DEVICES);
    for (int k = 0; k < n; ++k) {
        device_properties p;
        CHECK(device_get_properties(all[k], &p));
        char claim[96];
        snprintf(claim, sizeof claim, "your peak of %s equals the library's", device_name(all[k]));
        int cores = p.cores_per_mp; /* the CPU's: SIMD lanes, not a table's */
        if (device_is_gpu(all[k]) &&
            !CHECK_CALL(lab_fp32_cores_per_sm(p.cc_major, p.cc_minor, &cores), claim))
            continue;
        double gflops = -1;
        if (!CHECK_CALL(lab_peak_fp32_gflops(p.multiprocessors, cores, p.clock_ghz, &gflops), claim))
            continue;
        char cc[32] = "";
        if (device_is_gpu(all[k]))
            snprintf(cc, sizeof cc, " (compute capability %d.%d)", p.cc_major, p.cc_minor);
        /* The relative difference too: a peak computed in float, or from a
         * clock cut to whole MHz, is off by less than the figures show. */
        const bool same = fabs(gflops - p.peak_gflops) <= 1e-9 * p.peak_gflops;
        char off[96] = "";
        if (!same)
            snprintf(off, sizeof off, "; yours is off by %.2g of it (at most 1e-9 allowed)",
                     fabs(gflops - p.peak_gflops) / p.peak_gflops);
        check_that(cores == p.cores_per_mp && same, claim,
                   "%d x %d%s x %.6g GHz x 2 = %.1f GFLOP/s; library: %d cores, %.1f GFLOP/s%s",
                   p.multiprocessors, cores, cc, p.clock_ghz, gflops, p.cores_per_mp, p.peak_gflops, off);
    }
}

/* ==== 3. a tensor and a layer on the device =============================== */

/* A second GPU of d's own kind (sim:1 beside sim:0), where there is one. */
static bool sibling_of(device d, device *out)
{
    if (!device_is_gpu(d)) return false;
    const device s = { d.kind, d.index == 0 ? 1 : 0 };
    if (!device_exists(s)) return false;
    *out = s;
    return true;
}

/* Two GPUs of one kind: d and its sibling on a GPU that has one; else GPUs 0
 * and 1 of a kind that has two (sim:0 and sim:1 beside the CPU or one real
 * GPU). */
static bool two_gpus_of_one_kind(device d, device *first, device *second)
{
    if (sibling_of(d, second)) {
        *first = d;
        return true;
    }
    const device_kind kinds[] = { DEVICE_CUDA, DEVICE_SIM };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        if (device_count(kinds[k]) >= 2) {
            *first = (device){ kinds[k], 0 };
            *second = (device){ kinds[k], 1 };
            return true;
        }
    return false;
}

/* The tensor holds the seed's values, and lives on d. On a GPU it was made
 * there: the library uploads the seeded values once, but no tensor of the CPU
 * ever held them (one made there and copied over leaves its mark in the CPU's
 * peak memory and its copies). Freed, it gives back every byte, everywhere. */
static void check_tensor_on(device d)
{
    const char *claim = "a tensor made on the device lives there and holds its seed's values";
    const device cpu = device_cpu();
    const memory_in_use before_all = memory_now();
    device_counters before, after;
    CHECK(counters_reset(cpu));
    CHECK(counters_read(cpu, &before));
    tensor *x = NULL, *reference = NULL;
    if (!CHECK_CALL(lab_rand_on(d, 2, 3, 7, &x), claim)) return;
    CHECK(counters_read(cpu, &after));
    if (device_is_gpu(d))
        check_that(after.memory_peak == before.memory_current && after.d2d_copies == 0,
                   "lab_rand_on makes the tensor on the device itself, never on the cpu first",
                   "cpu memory peak %zu bytes (%zu before), %llu cop%s into cpu tensors", after.memory_peak,
                   before.memory_current, (unsigned long long)after.d2d_copies,
                   after.d2d_copies == 1 ? "y" : "ies");

    CHECK(tensor_uniform(&reference, cpu, shape2(2, 3), 0.0f, 1.0f, 7));
    float got[6] = { 0 }, want[6];
    const bool shaped = x && tensor_shape(x).ndim == 2 && tensor_dim(x, 0) == 2 && tensor_dim(x, 1) == 3;
    if (shaped) CHECK(tensor_to_host(x, got, 6));
    CHECK(tensor_to_host(reference, want, 6));
    char described[64] = "nothing", first[64] = "(not read: the shape is wrong)";
    if (x) tensor_describe(x, described, sizeof described);
    if (shaped) snprintf(first, sizeof first, "%.4f", got[0]);
    check_that(shaped && device_equal(tensor_device(x), d) && memcmp(got, want, sizeof got) == 0, claim,
               "%s, first value %s (the seed's %.4f)", described, first, want[0]);
    tensor_free(x);
    tensor_free(reference);

    /* A tensor made on the CPU on the way and never freed, or a reference to
     * it kept, holds its memory after the caller's one tensor_free. */
    char memory[256];
    check_that(memory_back(&before_all, memory, sizeof memory),
               "lab_rand_on's tensor, freed once, gives back every byte: the device's bytes in use are back "
               "where they were",
               "in use before and after, on every device: %s", memory);
}

/* A new layer: nn.Linear(3, 2) on the CPU, weight [out, in] drawn from the
 * seed, bias zeros. Returns whether it has the right shapes to go on with. */
static bool check_new_layer(lab_linear *layer)
{
    enum { IN = 3, OUT = 2, SEED = 11 };
    const char *claim = "a new layer's weight [out, in] and bias [out] live on the CPU";
    if (!CHECK_CALL(lab_linear_create(layer, IN, OUT, SEED), claim)) return false;
    const device cpu = device_cpu();
    /* The whole shape: a bias [out, 1] has bias [out]'s first dimension and
     * element count, but is no nn.Linear bias. */
    const bool shaped = layer->weight && layer->bias && tensor_shape(layer->weight).ndim == 2 &&
                        tensor_dim(layer->weight, 0) == OUT && tensor_dim(layer->weight, 1) == IN &&
                        tensor_shape(layer->bias).ndim == 1 && tensor_dim(layer->bias, 0) == OUT;
    char w[64] = "none", b[64] = "none";
    if (layer->weight) tensor_describe(layer->weight, w, sizeof w);
    if (layer->bias) tensor_describe(layer->bias, b, sizeof b);
    if (!check_that(shaped && device_equal(tensor_device(layer->weight), cpu) &&
                        device_equal(tensor_device(layer->bias), cpu),
                    claim, "nn.Linear(%d, %d): weight %s, bias %s", IN, OUT, w, b))
        return false;

    tensor *seeded = NULL;
    float weight[IN * OUT], want[IN * OUT], bias[OUT];
    CHECK(tensor_normal(&seeded, cpu, shape2(OUT, IN), 0.0f, 0.1f, SEED));
    CHECK(tensor_to_host(seeded, want, IN * OUT));
    CHECK(tensor_to_host(layer->weight, weight, IN * OUT));
    CHECK(tensor_to_host(layer->bias, bias, OUT));
    tensor_free(seeded);
    int nonzero = 0;
    for (int k = 0; k < OUT; ++k) nonzero += bias[k] != 0.0f;
    const bool seeds_weight = memcmp(weight, want, sizeof weight) == 0;
    check_that(seeds_weight && nonzero == 0,
               "a new layer is nn.Linear's: weight normal(0, 0.1) from its seed, bias zeros",
               "weight[0][0] %.4f (the seed's %.4f), %s; %d of %d biases non-zero", weight[0], want[0],
               seeds_weight ? "all the seed's values" : "not the seed's values", nonzero, OUT);
    return true;
}

/* lab_linear_to(layer, to) from where the layer lives: every parameter and the
 * layer report `to` afterwards, and the parameters crossed once each, or, when
 * the layer was there already, not at all (the same tensors). */
static bool check_layer_moves(device to, lab_linear *layer)
{
    const char *claim = "every parameter reports the device the layer was moved to";
    const device from = tensor_device(layer->weight);
    const tensor *weight_before = layer->weight;
    const uint64_t bytes =
        (uint64_t)(tensor_numel(layer->weight) + tensor_numel(layer->bias)) * sizeof(float);
    device_counters counted;
    CHECK(counters_reset(to));
    if (!CHECK_CALL(lab_linear_to(layer, to), claim)) return false;
    CHECK(counters_read(to, &counted));
    device where = device_cpu();
    if (!CHECK_CALL(lab_linear_device(layer, &where), claim)) return false;
    if (!check_that(layer->weight && layer->bias && device_equal(tensor_device(layer->weight), to) &&
                        device_equal(tensor_device(layer->bias), to) && device_equal(where, to),
                    claim, "lab_linear_to(layer, %s) from %s: weight on %s, bias on %s, the layer on %s",
                    device_name(to), device_name(from),
                    layer->weight ? device_name(tensor_device(layer->weight)) : "(none)",
                    layer->bias ? device_name(tensor_device(layer->bias)) : "(none)", device_name(where)))
        return false;

    /* A copy into a GPU counts there as host-to-device (from the CPU) or
     * device-to-device (from another GPU); into the CPU as device-to-device. */
    const uint64_t copies = counted.h2d_copies + counted.d2d_copies,
                   copied = counted.h2d_bytes + counted.d2d_bytes;
    if (!device_equal(from, to))
        check_that(copies == 2 && copied == bytes,
                   "moving the layer copies each parameter to the device once",
                   "%s -> %s: %llu copies of %llu bytes into %s (want 2 of %llu)", device_name(from),
                   device_name(to), (unsigned long long)copies, (unsigned long long)copied, device_name(to),
                   (unsigned long long)bytes);
    else
        check_that(layer->weight == weight_before && copies == 0,
                   "a layer already on the device is not copied (to() hands back the same tensors)",
                   "to(%s): %llu copies, weight %s", device_name(to), (unsigned long long)copies,
                   layer->weight == weight_before ? "the same tensor" : "a new tensor");
    return true;
}

/* Which of the words "weight" and "bias" comes last before the first mention
 * of the device `name` in `message` (case aside): "the weight lives on cpu but
 * the bias on sim:0" gives cpu to the weight and sim:0 to the bias. NULL when
 * neither word comes before it, or the device is not named. */
static const char *owner_named(const char *message, const char *name)
{
    char lower[512];
    size_t n = 0;
    for (; message[n] && n + 1 < sizeof lower; ++n) lower[n] = (char)tolower((unsigned char)message[n]);
    lower[n] = '\0';
    const char *at = strstr(lower, name);
    if (!at) return NULL;
    static const char *const words[] = { "weight", "bias" };
    const char *owner = NULL, *last = NULL;
    for (size_t k = 0; k < sizeof words / sizeof words[0]; ++k)
        for (const char *p = strstr(lower, words[k]); p && p < at; p = strstr(p + 1, words[k]))
            if (!last || p > last) last = p, owner = words[k];
    return owner;
}

/* "\"weight\"", "\"bias\"", or "neither word" for owner_named's NULL. */
static const char *quoted_word(const char *owner)
{
    if (!owner) return "neither word";
    return strcmp(owner, "weight") == 0 ? "\"weight\"" : "\"bias\"";
}

/* Moves the weight to `weight_on` and the bias to `bias_on`: the layer must
 * refuse to say where it lives, naming both, each as its parameter's. */
static void check_split(lab_linear *layer, device weight_on, device bias_on)
{
    const char *claim = "a layer split across two devices is refused, naming both";
    tensor **parameters[] = { &layer->weight, &layer->bias };
    const device places[] = { weight_on, bias_on };
    for (int k = 0; k < 2; ++k) {
        tensor *moved = NULL;
        CHECK(tensor_to(*parameters[k], places[k], &moved));
        tensor_free(*parameters[k]);
        *parameters[k] = moved;
    }
    device where = device_cpu();
    const status s = CHECK_YOURS(lab_linear_device(layer, &where));
    const char *message = last_error();
    char wn[16], bn[16];
    snprintf(wn, sizeof wn, "%s", device_name(weight_on));
    snprintf(bn, sizeof bn, "%s", device_name(bias_on));
    if (!check_that(s == STATUS_WRONG_DEVICE && strstr(message, wn) && strstr(message, bn), claim,
                    "weight on %s, bias on %s: %s%s%s", wn, bn, status_name(s),
                    s == STATUS_OK ? ", the layer said to live on " : "",
                    s == STATUS_OK ? device_name(where) : ""))
        return;

    /* Named the wrong way round, the message sends the student to move the
     * wrong parameter. */
    const char *weight_owner = owner_named(message, wn), *bias_owner = owner_named(message, bn);
    const bool right_way =
        weight_owner && strcmp(weight_owner, "weight") == 0 && bias_owner && strcmp(bias_owner, "bias") == 0;
    const int line = (int)strcspn(message, "\n");
    if (right_way)
        check_that(true, "the refusal says which device holds the weight and which the bias", "\"%.*s\"",
                   line, message);
    else
        check_that(false, "the refusal says which device holds the weight and which the bias",
                   "weight on %s, bias on %s, but your message names %s after %s and %s after %s (put each "
                   "device after its parameter's name): \"%.*s\"",
                   wn, bn, wn, quoted_word(weight_owner), bn, quoted_word(bias_owner), line, message);
}

/* Half-moved layers: across two kinds (the CPU and a GPU), and across two
 * GPUs of one kind (sim:0 and sim:1), where a comparison of kinds alone sees
 * no difference. Then whole again, on d. */
static bool check_half_moved_layer(device d, gpus_seen g, lab_linear *layer)
{
    const device other = device_is_gpu(d) ? device_cpu() : expected_gpu(g, 0);
    device first, second;
    const bool two_gpus = two_gpus_of_one_kind(d, &first, &second);
    if (device_equal(other, d) && !two_gpus) {
        printf("  (no second device here: the half-moved layer is not tried)\n");
        return true;
    }
    if (!device_equal(other, d)) check_split(layer, other, d);
    if (two_gpus)
        check_split(layer, second, first);
    else
        printf("  (no two GPUs of one kind here: a layer split across sim:0 and sim:1 is not tried)\n");
    return CHECK_CALL(lab_linear_to(layer, d), "lab_linear_to makes a half-moved layer whole again");
}

/* net(X) on d: y lives on d and equals X W^T + b computed here in double, with
 * a bias that is not zero, so that a forgotten bias shows. */
static void check_forward(device d, lab_linear *layer)
{
    enum { BATCH = 4, IN = 3, OUT = 2 };
    char claim[96];
    snprintf(claim, sizeof claim, "net(X) is X W^T + b, computed on %s, and y lives there", device_name(d));
    const float bias[OUT] = { 0.5f, -0.25f };
    CHECK(tensor_copy_from_host(layer->bias, bias, OUT));
    tensor *x = NULL, *y = NULL;
    CHECK(tensor_uniform(&x, d, shape2(BATCH, IN), 0.0f, 1.0f, 5));
    CHECK(tensor_empty(&y, d, DTYPE_F32, shape2(BATCH, OUT)));
    device_counters counted;
    CHECK(device_synchronize(d));
    CHECK(counters_reset(d));
    if (CHECK_CALL(lab_linear_forward(layer, x, y), claim)) {
        /* On d itself: the product (and its bias) launched there, and, on a
         * GPU, no tensor read to the host or written from it on the way. A
         * copy within d (y through a temporary) is no transfer. On the CPU a
         * loop of the host's own launches nothing. */
        CHECK(counters_read(d, &counted));
        const uint64_t transfers = device_is_gpu(d) ? counted.h2d_copies + counted.d2h_copies : 0;
        check_that(counted.launches >= 1 && transfers == 0,
                   "net(X) runs on the layer's device: launched there, nothing read back to the host",
                   "%llu operation%s launched on %s, %llu cop%s between it and the host%s",
                   (unsigned long long)counted.launches, counted.launches == 1 ? "" : "s", device_name(d),
                   (unsigned long long)transfers, transfers == 1 ? "y" : "ies",
                   transfers || !counted.launches
                       ? ": let the library's product compute y where the layer lives"
                       : "");
        float xs[BATCH * IN], ws[OUT * IN], ys[BATCH * OUT];
        CHECK(tensor_to_host(x, xs, BATCH * IN));
        CHECK(tensor_to_host(layer->weight, ws, OUT * IN));
        CHECK(tensor_to_host(y, ys, BATCH * OUT));
        double worst = 0;
        for (int r = 0; r < BATCH; ++r)
            for (int c = 0; c < OUT; ++c) {
                double sum = bias[c];
                for (int k = 0; k < IN; ++k) sum += (double)xs[r * IN + k] * ws[c * IN + k];
                worst = fmax(worst, fabs(sum - ys[r * OUT + c]));
            }
        check_that(device_equal(tensor_device(y), d) && worst <= 1e-5, claim,
                   "y on %s, largest error %.2g (bias %g, %g)", device_name(tensor_device(y)), worst, bias[0],
                   bias[1]);
    }
    tensor_free(x);
    tensor_free(y);
}

/* net(X) with an X it cannot take: the library's refusal is the answer, never
 * STATUS_OK. One too wide for the layer's 3 inputs; one on another device,
 * which must not be copied over behind the caller's back (lesson 003's rule). */
static void check_forward_refuses(device d, gpus_seen g, lab_linear *layer)
{
    enum { BATCH = 4, OUT = 2 };
    tensor *wide = NULL, *y = NULL;
    CHECK(tensor_uniform(&wide, d, shape2(BATCH, 5), 0.0f, 1.0f, 5));
    CHECK(tensor_full(&y, d, shape2(BATCH, OUT), -99.0f));
    status s = CHECK_YOURS(lab_linear_forward(layer, wide, y));
    check_that(s != STATUS_OK,
               "net(X) returns the library's refusal of an X of the wrong width, not STATUS_OK",
               "X [%d, 5] for a layer of 3 inputs: %s", BATCH, status_name(s));
    tensor_free(wide);

    const device other = device_is_gpu(d) ? device_cpu() : expected_gpu(g, 0);
    if (device_equal(other, d)) {
        printf("  (no second device here: net(X) with X elsewhere is not tried)\n");
        tensor_free(y);
        return;
    }
    tensor *x = NULL;
    CHECK(tensor_uniform(&x, other, shape2(BATCH, 3), 0.0f, 1.0f, 5));
    device_counters on_d, on_other;
    CHECK(counters_reset(d));
    CHECK(counters_reset(other));
    s = CHECK_YOURS(lab_linear_forward(layer, x, y));
    CHECK(counters_read(d, &on_d));
    CHECK(counters_read(other, &on_other));
    const uint64_t copies = on_d.h2d_copies + on_d.d2h_copies + on_d.d2d_copies + on_other.h2d_copies +
                            on_other.d2h_copies + on_other.d2d_copies;
    check_that(s != STATUS_OK && copies == 0,
               "net(X) refuses an X on another device, copying nothing behind your back",
               "the layer on %s, X on %s: %s, %llu cop%s", device_name(d), device_name(other), status_name(s),
               (unsigned long long)copies, copies == 1 ? "y" : "ies");
    tensor_free(x);
    tensor_free(y);
}

/* A reference kept by mistake (say, the old parameter after tensor_to) keeps
 * its memory: after lab_linear_free everything must be back, on every device. */
static void check_memory_returned(const memory_in_use *before)
{
    char memory[256];
    check_that(memory_back(before, memory, sizeof memory),
               "moving the layer leaves no tensor behind: freeing it returns all its memory",
               "in use before and after, on every device: %s", memory);
}

static void check_layer(device d, gpus_seen g)
{
    const memory_in_use before = memory_now();
    lab_linear layer = { 0 };
    device sibling;
    if (check_new_layer(&layer) && check_layer_moves(d, &layer) && check_half_moved_layer(d, g, &layer)) {
        check_forward(d, &layer);
        check_forward_refuses(d, g, &layer);
        /* Moved on from d to a second GPU of its kind: a move that goes to
         * try_gpu(0) instead of the device asked for shows there. */
        if (sibling_of(d, &sibling)) check_layer_moves(sibling, &layer);
    }
    lab_linear_free(&layer);
    check_memory_returned(&before);
}

/* ==== 4. what fails on the way ============================================= */

/* lab_rand_on on a GPU without room for the tensor: the library's
 * STATUS_OUT_OF_MEMORY is the answer (not a tensor made elsewhere), and the
 * device makes one as soon as there is room. */
static void check_rand_on_full(device d)
{
    device target;
    if (!full_device_target(d, &target)) {
        printf("  (no simulated GPU here: lab_rand_on on a full device is not tried)\n");
        return;
    }
    const memory_in_use before = memory_now();
    tensor *filler;
    if (!fill_device(target, 16, &filler)) return; /* a [2, 3] tensor needs 24 bytes */
    tensor *x = NULL;
    const status s = CHECK_YOURS(lab_rand_on(target, 2, 3, 7, &x));
    char made[64] = "nothing";
    if (x) tensor_describe(x, made, sizeof made);
    tensor_free(x);
    tensor_free(filler);
    x = NULL;
    const status later = CHECK_YOURS(lab_rand_on(target, 2, 3, 7, &x));
    const bool usable = later == STATUS_OK && x && device_equal(tensor_device(x), target);
    tensor_free(x);
    char memory[256];
    const bool back = memory_back(&before, memory, sizeof memory);
    check_that(s == STATUS_OUT_OF_MEMORY && strcmp(made, "nothing") == 0 && usable && back,
               "on a full device lab_rand_on returns the library's failure and makes nothing elsewhere",
               "16 bytes free on %s for a [2, 3] tensor: %s, made %s; with room again: %s; in use before and "
               "after: %s",
               device_name(target), status_name(s), made, status_name(later), memory);
}

/* Stand-ins for what an uninitialised layer holds: lab_linear_create must
 * overwrite them whether it works or not. Kept here, so that a stale pointer
 * the check still holds a reference to is never a leak. */
static tensor *stale[2];

/* A layer that cannot be made (-3 inputs: tensor_normal refuses the shape) is
 * a failure returned and an empty layer, never half of one: the caller's
 * lab_linear_free must be safe on it. */
static void check_create_refused(void)
{
    const char *claim = "a layer that cannot be made is a failure and an empty layer (both pointers NULL)";
    for (int k = 0; k < 2; ++k)
        if (!stale[k]) CHECK(tensor_zeros(&stale[k], device_cpu(), shape1(1)));
    const memory_in_use before = memory_now();
    lab_linear layer = { stale[0], stale[1] };
    const status s = CHECK_YOURS(lab_linear_create(&layer, -3, 2, 11));
    const bool empty = layer.weight == NULL && layer.bias == NULL;
    char left[96] = "";
    if (layer.weight)
        check_append(left, sizeof left, " weight %s", layer.weight == stale[0] ? "as it was" : "made");
    if (layer.bias)
        check_append(left, sizeof left, " bias %s", layer.bias == stale[1] ? "as it was" : "made");
    /* Only what lab_linear_create made is the layer's to free. */
    if (layer.weight == stale[0]) layer.weight = NULL;
    if (layer.bias == stale[1]) layer.bias = NULL;
    lab_linear_free(&layer);
    /* At most what there was: a lab_linear_create that frees what the layer
     * held first (the stand-ins) leaves less, and that is no leak. */
    char memory[256];
    const bool back = memory_compared(&before, true, memory, sizeof memory);
    check_that(s != STATUS_OK && empty && back, claim, "lab_linear_create(layer, -3, 2): %s;%s%s; in use: %s",
               status_name(s), empty ? " the layer empty" : " left in the layer:", left, memory);
}

/* lab_linear_to onto a GPU with room for some of the layer but not all of it:
 * for nothing, for the bias alone, for the weight alone, and for all but 4
 * bytes, so that whichever parameter it copies first, each copy in turn is the
 * one that fails. The library's STATUS_OUT_OF_MEMORY is returned, the layer
 * keeps both its parameters, each on the old device or the new, and moves once
 * there is room; freed, it gives back every byte. */
static void check_failed_move(device d)
{
    device target;
    if (!full_device_target(d, &target)) {
        printf("  (no simulated GPU here: a move onto a full device is not tried)\n");
        return;
    }
    enum { ROOMS = 4 };
    const char *claim = "a move onto a full device returns the library's failure and keeps the layer whole";
    const char *freed = "after a failed move, freeing the layer returns all its memory";
    bool kept = true, back = true;
    char said[400] = "", memory_said[400] = "";
    for (int r = 0; r < ROOMS; ++r) {
        const memory_in_use before = memory_now();
        lab_linear layer = { 0 };
        if (!CHECK_CALL(lab_linear_create(&layer, 3, 2, 11), claim)) return;
        const size_t weight = tensor_bytes(layer.weight), bias = tensor_bytes(layer.bias);
        const size_t rooms[ROOMS] = { 0, bias, weight, weight + bias - sizeof(float) };
        const size_t room = rooms[r];
        tensor *filler;
        if (!fill_device(target, room, &filler)) {
            lab_linear_free(&layer);
            return;
        }
        const status s = CHECK_YOURS(lab_linear_to(&layer, target));
        char held[96];
        const bool whole = layer_whole(layer.weight, layer.bias, device_cpu(), target, held, sizeof held);
        tensor_free(filler);
        status later = STATUS_BAD_ARGUMENT;
        if (whole) later = CHECK_YOURS(lab_linear_to(&layer, target));
        const bool moved = later == STATUS_OK && device_equal(tensor_device(layer.weight), target) &&
                           device_equal(tensor_device(layer.bias), target);
        if (!(s == STATUS_OUT_OF_MEMORY && whole && moved) && kept) {
            snprintf(said, sizeof said,
                     "%zu bytes free on %s for a layer of %zu (a weight of %zu, a bias of %zu): "
                     "%s, then %s; with room again: %s",
                     room, device_name(target), weight + bias, weight, bias, status_name(s), held,
                     whole ? status_name(later) : "not tried");
            kept = false;
        }
        lab_linear_free(&layer);
        char memory[256];
        if (!memory_back(&before, memory, sizeof memory) && back) {
            snprintf(memory_said, sizeof memory_said,
                     "%zu bytes free on %s for the layer's move: in use "
                     "before and after, on every device: %s",
                     room, device_name(target), memory);
            back = false;
        }
    }
    check_that(
        kept, claim, "%s",
        kept ? "room on the full device for nothing, the bias alone, the weight alone, all but 4 bytes: "
               "each STATUS_OUT_OF_MEMORY, the layer whole, then moved once there was room"
             : said);
    check_that(back, freed, "%s",
               back
                   ? "each of the four failed moves: every byte back on every device once the layer was freed"
                   : memory_said);
}

int main(int argc, char **argv)
{
    /* The full-device claims fill a simulated GPU to the byte. A capacity of
     * 256 MiB, where LABKIT_SIM_MEMORY does not say otherwise, keeps the filler
     * cheap: under AddressSanitizer its shadow memory grows with it (4 GiB cost
     * 8 s and 512 MiB each time), and a small machine lends its addresses. */
    setenv("LABKIT_SIM_MEMORY", "256M", 0);
    const device d = check_device(argc, argv);
    const gpus_seen g = gpus_here();
    char here[128];
    describe_gpus(g, here, sizeof here);

    check_try_gpu(g, here);
    check_try_all_gpus(g, here);

    check_cores_per_sm();
    check_peaks();
    check_devices_here();

    check_tensor_on(d);
    check_layer(d, g);

    check_rand_on_full(d);
    check_create_refused();
    check_failed_move(d);
    check_refusals_said();
    return check_finish("01_devices");
}
