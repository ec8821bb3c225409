/* check.c: does lab 01 hold on a device?
 *
 *   check01 --device D
 *
 * 1. try_gpu(i) and try_all_gpus() give the lessons' answers for the GPUs this
 *    process sees: the real ones where there is one, else the simulated ones.
 *    The answers expected are worked out here from how many GPUs of each kind
 *    exist, never from the library's own try_gpu. The library counts the GPUs
 *    once per process, so other GPU counts are other runs of this check:
 *    lab.cmake lists them (no GPU at all, one GPU), and CTest and ./lab check
 *    run each;
 * 2. cores per multiprocessor and the FP32 peak reproduce the published figures
 *    of real cards within 1%, and say "unknown" rather than guess;
 * 3. a tensor made on D lives there and never was a CPU tensor; a new layer is
 *    nn.Linear's, weight and bias; moving it to D copies each parameter once
 *    (or, already there, not at all); net(X) is X W^T + b, computed on D; and
 *    nothing is left behind.
 *
 * A call of yours that fails breaks the claim it was called for: the check says
 * so and goes on. Only an unwritten step (todo) stops it, at its TODO. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cards.h"
#include "lab.h"

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

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
    for (int i = -1; i <= g.count + 1; ++i) {
        device got = device_cpu();
        const device want = expected_gpu(g, i);
        char call[32];
        snprintf(call, sizeof call, "lab_try_gpu(%d, &got)", i);
        status s = lab_try_gpu(i, &got);
        if (!check_call(s, call, claim, __FILE__, __LINE__)) return;
        if (!device_equal(got, want)) {
            check_that(false, claim, "try_gpu(%d) = %s, want %s (%s)", i, device_name(got), device_name(want),
                       here);
            return;
        }
        check_append(answers, sizeof answers, "%s%s", i > -1 ? " " : "", device_name(got));
    }
    check_that(true, claim, "try_gpu(-1 .. %d) = %s; %s", g.count + 1, answers, here);
}

/* A device no answer can be: what the arrays hold before the call, to see
 * which entries it wrote. */
static const device untouched = { DEVICE_SIM, -1 };

static void check_try_all_gpus(gpus_seen g, const char *here)
{
    const char *claim = "try_all_gpus() is every GPU, or [cpu] when there is none";
    const int needed = g.count > 0 ? g.count : 1;
    device all[LABKIT_MAX_DEVICES];
    for (int k = 0; k < LABKIT_MAX_DEVICES; ++k) all[k] = untouched;
    int n = -1;
    if (!CHECK_CALL(lab_try_all_gpus(all, needed, &n), claim)) return;

    char got[256] = "", want[256] = "";
    bool same = n == needed;
    for (int k = 0; k < needed; ++k) {
        const device w = g.count > 0 ? (device){ g.kind, k } : device_cpu();
        check_append(want, sizeof want, "%s%s", k ? ", " : "", device_name(w));
        same = same && device_equal(all[k], w);
    }
    for (int k = 0; k < n && k < LABKIT_MAX_DEVICES; ++k)
        check_append(got, sizeof got, "%s%s", k ? ", " : "",
                     device_equal(all[k], untouched) ? "(unwritten)" : device_name(all[k]));
    if (same)
        check_that(true, claim, "[%s]; %s", got, here);
    else
        check_that(false, claim, "%d device%s [%s], want [%s] (%s)", n, plural((uint64_t)(n > 0 ? n : 0)),
                   got, want, here);

    /* One place too few: refused, and nothing written past the room given. */
    for (int k = 0; k < LABKIT_MAX_DEVICES; ++k) all[k] = untouched;
    const int room = needed - 1;
    status s = lab_try_all_gpus(all, room, &n);
    if (s == STATUS_TODO) CHECK(s);
    int overrun = 0;
    for (int k = room; k < LABKIT_MAX_DEVICES; ++k) overrun += !device_equal(all[k], untouched);
    check_that(s == STATUS_BAD_ARGUMENT && overrun == 0,
               "try_all_gpus refuses an array too small for its answer, writing nothing past it",
               "room for %d of %d: %s, %d device%s written past the room", room, needed, status_name(s),
               overrun, plural((uint64_t)overrun));
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
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; ++k) {
        int cores = -1;
        if (!CHECK_CALL(lab_fp32_cores_per_sm(expected[k].major, expected[k].minor, &cores), claim)) return;
        if (cores != expected[k].cores)
            check_append(wrong, sizeof wrong, " %d.%d (%s): %d, want %d%s;", expected[k].major,
                         expected[k].minor, expected[k].what, cores, expected[k].cores,
                         expected[k].cores ? "" : " (unknown)");
    }
    check_that(!wrong[0], claim, "%s",
               wrong[0] ? wrong : "7.5 and 8.0: 64, 8.6 to 12.0: 128; 6.1, 7.0, 13.0: unknown");

    /* Every compute capability from 0.0 to 15.9 against the library's table, so
     * that no architecture is guessed that the library calls unknown. */
    claim = "the table agrees with the library's for compute capabilities 0.0 to 15.9";
    int disagree = 0, first_major = 0, first_minor = 0, theirs = 0, yours = 0;
    for (int major = 0; major <= 15; ++major)
        for (int minor = 0; minor <= 9; ++minor) {
            int cores = -1;
            if (!CHECK_CALL(lab_fp32_cores_per_sm(major, minor, &cores), claim)) return;
            const int library = fp32_cores_per_multiprocessor(major, minor);
            if (cores != library && disagree++ == 0)
                first_major = major, first_minor = minor, yours = cores, theirs = library;
        }
    char figures[160] = "all 160 agree";
    if (disagree)
        snprintf(figures, sizeof figures, "%d differ, the first %d.%d: yours %d, the library's %d", disagree,
                 first_major, first_minor, yours, theirs);
    check_that(disagree == 0, claim, "%s", figures);
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
    for (int k = 0; k < known_card_count; ++k) check_peak_of_card(&known_cards[k]);

    /* Lesson 001 counted one operation per core and cycle for the RTX 3080 12 GB. */
    const char *claim = "lesson 001's 15.32 TFLOPS is the peak without the x2 of the FMA";
    double gflops = 0;
    if (CHECK_CALL(lab_peak_fp32_gflops(70, 128, 1.71, &gflops), claim)) {
        const double one_op = gflops / 2 / 1000;
        check_that(fabs(one_op / LESSON_001_RTX3080_TFLOPS - 1) < 0.001, claim,
                   "70 x 128 x 1.71 GHz x 2 = %.2f TFLOPS; half of it %.2f", gflops / 1000, one_op);
    }

    claim = "an unknown factor gives an unknown peak (0); a negative one is refused";
    double unknown = -1;
    if (!CHECK_CALL(lab_peak_fp32_gflops(80, 0, 1.53, &unknown), claim)) return;
    status s = lab_peak_fp32_gflops(-4, 64, 1.5, &gflops);
    check_that(unknown == 0 && s == STATUS_BAD_ARGUMENT, claim, "80 SMs x 0 cores: %g; -4 SMs: %s", unknown,
               status_name(s));
}

/* Your formula on the figures the library reports for each device here must
 * give the library's own peak; on a real GPU your table gives its cores too. */
static void check_devices_here(void)
{
    device all[LABKIT_MAX_DEVICES];
    const int n = device_list(all, LABKIT_MAX_DEVICES);
    for (int k = 0; k < n; ++k) {
        device_properties p;
        CHECK(device_get_properties(all[k], &p));
        char claim[96];
        snprintf(claim, sizeof claim, "your peak of %s equals the library's", device_name(all[k]));
        int cores = p.cores_per_mp; /* the CPU's and a simulated GPU's: SIMD lanes, not a table's */
        if (all[k].kind == DEVICE_CUDA &&
            !CHECK_CALL(lab_fp32_cores_per_sm(p.cc_major, p.cc_minor, &cores), claim))
            continue;
        double gflops = -1;
        if (!CHECK_CALL(lab_peak_fp32_gflops(p.multiprocessors, cores, p.clock_ghz, &gflops), claim))
            continue;
        check_that(cores == p.cores_per_mp && fabs(gflops - p.peak_gflops) <= 1e-9 * p.peak_gflops, claim,
                   "%d x %d x %.2f GHz x 2 = %.1f GFLOP/s; library: %d cores, %.1f GFLOP/s",
                   p.multiprocessors, cores, p.clock_ghz, gflops, p.cores_per_mp, p.peak_gflops);
    }
}

/* ==== 3. a tensor and a layer on the device =============================== */

/* The tensor holds the seed's values, and lives on d. On a GPU it was made
 * there: the library uploads the seeded values once, but no tensor of the CPU
 * ever held them (one made there and copied over leaves its mark in the CPU's
 * peak memory and its copies). */
static void check_tensor_on(device d)
{
    const char *claim = "a tensor made on the device lives there and holds its seed's values";
    const device cpu = device_cpu();
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
    const bool shaped = x && tensor_dim(x, 0) == 2 && tensor_dim(x, 1) == 3 && tensor_numel(x) == 6;
    if (shaped) CHECK(tensor_to_host(x, got, 6));
    CHECK(tensor_to_host(reference, want, 6));
    char described[64] = "nothing";
    if (x) tensor_describe(x, described, sizeof described);
    check_that(shaped && device_equal(tensor_device(x), d) && memcmp(got, want, sizeof got) == 0, claim,
               "%s, first value %.4f (the seed's %.4f)", described, got[0], want[0]);
    tensor_free(x);
    tensor_free(reference);
}

/* A new layer: nn.Linear(3, 2) on the CPU, weight [out, in] drawn from the
 * seed, bias zeros. Returns whether it has the right shapes to go on with. */
static bool check_new_layer(lab_linear *layer)
{
    enum { IN = 3, OUT = 2, SEED = 11 };
    const char *claim = "a new layer's weight [out, in] and bias [out] live on the CPU";
    if (!CHECK_CALL(lab_linear_create(layer, IN, OUT, SEED), claim)) return false;
    const device cpu = device_cpu();
    const bool shaped = layer->weight && layer->bias && tensor_dim(layer->weight, 0) == OUT &&
                        tensor_dim(layer->weight, 1) == IN && tensor_numel(layer->weight) == IN * OUT &&
                        tensor_dim(layer->bias, 0) == OUT && tensor_numel(layer->bias) == OUT;
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

/* lab_linear_to: the layer reports d afterwards, and the parameters crossed
 * once each (a GPU), or not at all (already on the CPU). */
static bool check_layer_moves(device d, lab_linear *layer)
{
    char claim[96];
    snprintf(claim, sizeof claim, "after to(%s) every parameter reports %s", device_name(d), device_name(d));
    const tensor *weight_before = layer->weight;
    const uint64_t bytes =
        (uint64_t)(tensor_numel(layer->weight) + tensor_numel(layer->bias)) * sizeof(float);
    device_counters counted;
    CHECK(counters_reset(d));
    if (!CHECK_CALL(lab_linear_to(layer, d), claim)) return false;
    CHECK(counters_read(d, &counted));
    device where = device_cpu();
    if (!CHECK_CALL(lab_linear_device(layer, &where), claim)) return false;
    if (!check_that(layer->weight && layer->bias && device_equal(tensor_device(layer->weight), d) &&
                        device_equal(tensor_device(layer->bias), d) && device_equal(where, d),
                    claim, "weight on %s, bias on %s, the layer on %s",
                    layer->weight ? device_name(tensor_device(layer->weight)) : "(none)",
                    layer->bias ? device_name(tensor_device(layer->bias)) : "(none)", device_name(where)))
        return false;

    if (device_is_gpu(d))
        check_that(counted.h2d_copies == 2 && counted.h2d_bytes == bytes,
                   "moving the layer copies each parameter to the device once",
                   "%llu host-to-device copies of %llu bytes (want 2 of %llu)",
                   (unsigned long long)counted.h2d_copies, (unsigned long long)counted.h2d_bytes,
                   (unsigned long long)bytes);
    else
        check_that(layer->weight == weight_before && counted.d2d_copies == 0,
                   "a layer already on the CPU is not copied (to() hands back the same tensors)",
                   "%llu copies, weight %s", (unsigned long long)counted.d2d_copies,
                   layer->weight == weight_before ? "the same tensor" : "a new tensor");
    return true;
}

/* Moves only the weight to another device: the layer must refuse to say where
 * it lives. Needs a second device: the CPU for a GPU, the first GPU for the CPU. */
static bool check_half_moved_layer(device d, gpus_seen g, lab_linear *layer)
{
    const device other = device_is_gpu(d) ? device_cpu() : expected_gpu(g, 0);
    if (device_equal(other, d)) {
        printf("  (no second device here: the half-moved layer is not tried)\n");
        return true;
    }
    const char *claim = "a layer split across two devices is refused, naming both";
    tensor *moved = NULL;
    CHECK(tensor_to(layer->weight, other, &moved));
    tensor_free(layer->weight);
    layer->weight = moved;
    device where = d;
    status s = lab_linear_device(layer, &where);
    const char *message = last_error();
    check_that(s == STATUS_WRONG_DEVICE && strstr(message, device_name(d)) &&
                   strstr(message, device_name(other)),
               claim, "weight on %s, bias on %s: %s", device_name(other), device_name(d), status_name(s));
    /* Whole again, on d. */
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
    if (CHECK_CALL(lab_linear_forward(layer, x, y), claim)) {
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

/* Bytes in use on the CPU and on d, once d's queue has drained (a simulated
 * GPU returns memory in queue order). */
static void memory_in_use(device d, size_t *cpu_bytes, size_t *device_bytes)
{
    device_counters c;
    CHECK(device_synchronize(d));
    CHECK(counters_read(device_cpu(), &c));
    *cpu_bytes = c.memory_current;
    CHECK(counters_read(d, &c));
    *device_bytes = c.memory_current;
}

/* A reference kept by mistake (say, the old parameter after tensor_to) keeps
 * its memory: after lab_linear_free everything must be back. */
static void check_memory_returned(device d, size_t cpu_before, size_t device_before)
{
    size_t cpu_after = 0, device_after = 0;
    memory_in_use(d, &cpu_after, &device_after);
    const char *claim = "moving the layer leaves no tensor behind: freeing it returns all its memory";
    const bool holds = cpu_after == cpu_before && device_after == device_before;
    if (device_is_gpu(d))
        check_that(holds, claim, "in use before and after: cpu %zu -> %zu bytes, %s %zu -> %zu bytes",
                   cpu_before, cpu_after, device_name(d), device_before, device_after);
    else
        check_that(holds, claim, "in use on the cpu before and after: %zu -> %zu bytes", cpu_before,
                   cpu_after);
}

static void check_layer(device d, gpus_seen g)
{
    size_t cpu_before = 0, device_before = 0;
    memory_in_use(d, &cpu_before, &device_before);
    lab_linear layer = { 0 };
    if (check_new_layer(&layer) && check_layer_moves(d, &layer) && check_half_moved_layer(d, g, &layer))
        check_forward(d, &layer);
    lab_linear_free(&layer);
    check_memory_returned(d, cpu_before, device_before);
}

int main(int argc, char **argv)
{
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
    return check_finish("01_devices");
}
