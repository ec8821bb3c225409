/* check.c: does lab 01 hold on a device?
 *
 *   checkNN --device D
 *
 * 1. try_gpu(i) and try_all_gpus() give the lessons' answers here, and in two
 *    fresh copies of this program started with LABKIT_SIM_GPUS=0 and =2 (the
 *    library reads that variable once per process, so a new setting needs a new
 *    process; with a real GPU the copies see it instead, and the answers
 *    expected follow what they see);
 * 2. cores per multiprocessor and the FP32 peak reproduce the published figures
 *    of real cards within 1%, and say "unknown" rather than guess;
 * 3. a tensor and a layer put on D report D, and moving the layer copies each
 *    parameter once (or, already there, not at all). */
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cards.h"
#include "lab.h"

extern char **environ;

/* The hidden first argument that makes this program print its answers, for
 * the parent to compare; students never type it. */
#define ANSWERS_FLAG "--print-lesson-answers"

/* ==== 1. try_gpu and try_all_gpus ======================================== */

/* "cuda" or "sim": the name of this process's GPUs (real ones win). */
static const char *gpu_kind(void)
{
    const device first_cuda = { DEVICE_CUDA, 0 };
    return device_exists(first_cuda) ? "cuda" : "sim";
}

/* One line, "gpus=2 kind=sim try_gpu=sim:0,sim:1,cpu,cpu all=sim:0,sim:1":
 * the answers of the student's functions for i = 0 .. gpus+1. */
static void format_answers(char *line, size_t size)
{
    const int gpus = gpu_count();
    size_t used = (size_t)snprintf(line, size, "gpus=%d kind=%s try_gpu=", gpus, gpu_kind());
    for (int i = 0; i <= gpus + 1 && used < size; ++i) {
        device d;
        CHECK(lab_try_gpu(i, &d));
        used += (size_t)snprintf(line + used, size - used, "%s%s", i ? "," : "", device_name(d));
    }
    device all[LABKIT_MAX_DEVICES];
    int n = 0;
    CHECK(lab_try_all_gpus(all, LABKIT_MAX_DEVICES, &n));
    for (int k = 0; k < n && used < size; ++k)
        used += (size_t)snprintf(line + used, size - used, "%s%s", k ? "," : " all=", device_name(all[k]));
}

/* What the lessons say for `gpus` GPUs of `kind`: GPU i for i < gpus, the CPU
 * beyond; every GPU, or [cpu] when there is none. Same format as above. */
static void expected_answers(int gpus, const char *kind, char *line, size_t size)
{
    size_t used = (size_t)snprintf(line, size, "gpus=%d kind=%s try_gpu=", gpus, kind);
    for (int i = 0; i <= gpus + 1 && used < size; ++i) {
        if (i < gpus)
            used += (size_t)snprintf(line + used, size - used, "%s%s:%d", i ? "," : "", kind, i);
        else
            used += (size_t)snprintf(line + used, size - used, "%scpu", i ? "," : "");
    }
    if (gpus == 0 && used < size) used += (size_t)snprintf(line + used, size - used, " all=cpu");
    for (int i = 0; i < gpus && used < size; ++i)
        used += (size_t)snprintf(line + used, size - used, "%s%s:%d", i ? "," : " all=", kind, i);
}

/* A claim about answers: shows them, and what was expected when they differ. */
static void check_answers(bool same, const char *concept, const char *got, const char *want)
{
    if (same)
        check_that(true, concept, "%s", got);
    else
        check_that(false, concept, "got %s; want %s", got, want);
}

/* This program, run again with LABKIT_SIM_GPUS=sims and ANSWERS_FLAG: its one
 * line of answers goes to `line`. Returns false (with `line` saying why) if it
 * could not be started or did not exit with 0. */
static bool answers_of_fresh_process(int sims, char *line, size_t size)
{
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) {
        snprintf(line, size, "cannot find this program (/proc/self/exe)");
        return false;
    }
    self[length] = '\0';

    /* The same environment, with LABKIT_SIM_GPUS replaced. */
    size_t count = 0;
    while (environ[count]) ++count;
    char **env = calloc(count + 2, sizeof *env);
    char setting[32];
    snprintf(setting, sizeof setting, "LABKIT_SIM_GPUS=%d", sims);
    size_t kept = 0;
    for (size_t k = 0; env && k < count; ++k)
        if (strncmp(environ[k], "LABKIT_SIM_GPUS=", 16) != 0) env[kept++] = environ[k];
    if (env) env[kept] = setting;

    /* The child's standard output goes into a pipe that we read. */
    int fds[2] = { -1, -1 };
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    bool started = false;
    pid_t pid = 0;
    if (env && pipe(fds) == 0) {
        posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, fds[0]);
        posix_spawn_file_actions_addclose(&actions, fds[1]);
        char *argv[] = { self, ANSWERS_FLAG, NULL };
        started = posix_spawn(&pid, self, &actions, NULL, argv, env) == 0;
        close(fds[1]);
    }
    posix_spawn_file_actions_destroy(&actions);
    free(env);
    if (!started) {
        if (fds[0] >= 0) close(fds[0]);
        snprintf(line, size, "could not start %.200s again", self);
        return false;
    }
    size_t used = 0; /* keep what fits; read the rest too, so the child never blocks */
    for (;;) {
        char chunk[256];
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got <= 0) break;
        size_t take = (size_t)got < size - 1 - used ? (size_t)got : size - 1 - used;
        memcpy(line + used, chunk, take);
        used += take;
    }
    close(fds[0]);
    line[used] = '\0';
    line[strcspn(line, "\n")] = '\0';
    int wstatus = 0;
    if (waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        snprintf(line, size, "the copy with LABKIT_SIM_GPUS=%d failed (its messages are above)", sims);
        return false;
    }
    return true;
}

/* The lessons' answers in a fresh process with LABKIT_SIM_GPUS=sims. */
static void check_fresh_process(int sims)
{
    char got[1024], want[1024];
    if (!answers_of_fresh_process(sims, got, sizeof got)) {
        check_that(false, "try_gpu/try_all_gpus in a fresh process", "%s", got);
        return;
    }
    /* What the child saw decides the expectation: real GPUs if it has any
     * (then LABKIT_SIM_GPUS is ignored), else exactly `sims` simulated ones. */
    int gpus = -1;
    char kind[8] = "";
    sscanf(got, "gpus=%d kind=%7s", &gpus, kind);
    const bool real = strcmp(kind, "cuda") == 0;
    expected_answers(real ? gpus : sims, real ? "cuda" : "sim", want, sizeof want);
    char concept[128];
    snprintf(concept, sizeof concept, "a fresh process with LABKIT_SIM_GPUS=%d gives the lessons' answers%s",
             sims, real ? " (it sees real GPUs, which win)" : "");
    check_answers(strcmp(got, want) == 0, concept, got, want);
}

static void check_try_gpu_here(void)
{
    const int gpus = gpu_count();
    int wrong = 0;
    for (int i = -1; i <= gpus + 1; ++i) {
        device got, want = device_cpu();
        CHECK(lab_try_gpu(i, &got));
        if (i >= 0 && i < gpus)
            want = (device){ strcmp(gpu_kind(), "cuda") == 0 ? DEVICE_CUDA : DEVICE_SIM, i };
        if (!device_equal(got, want)) {
            check_that(false, "try_gpu(i) is GPU i if it exists, else the CPU", "try_gpu(%d) = %s, want %s",
                       i, device_name(got), device_name(want));
            ++wrong;
        }
    }
    if (!wrong)
        check_that(true, "try_gpu(i) is GPU i if it exists, else the CPU",
                   "%d GPU%s here; i = -1 .. %d all right", gpus, gpus == 1 ? "" : "s", gpus + 1);

    char got[1024], want[1024];
    format_answers(got, sizeof got);
    expected_answers(gpus, gpu_kind(), want, sizeof want);
    check_answers(strcmp(got, want) == 0, "try_all_gpus() is every GPU, or [cpu] when there is none", got,
                  want);

    device none[1];
    int n = -1;
    status s = lab_try_all_gpus(none, 0, &n);
    check_that(s == STATUS_BAD_ARGUMENT, "try_all_gpus refuses an array too small for its answer",
               "capacity 0 gave %s", status_name(s));
}

/* ==== 2. what a GPU is made of, and its peak ============================= */

static void check_cores_per_sm(void)
{
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
    size_t used = 0;
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; ++k) {
        int cores = -1;
        CHECK(lab_fp32_cores_per_sm(expected[k].major, expected[k].minor, &cores));
        if (cores != expected[k].cores && used < sizeof wrong)
            used += (size_t)snprintf(wrong + used, sizeof wrong - used, " %d.%d (%s): %d, want %d%s;",
                                     expected[k].major, expected[k].minor, expected[k].what, cores,
                                     expected[k].cores, expected[k].cores ? "" : " (unknown)");
    }
    check_that(used == 0, "FP32 cores per SM from the compute capability; unknown ones give 0", "%s",
               used ? wrong : "7.5 and 8.0: 64, 8.6 to 12.0: 128; 6.1, 7.0, 13.0: unknown");

    /* Every compute capability from 0.0 to 15.9 against the library's table, so
     * that no architecture is guessed that the library calls unknown. */
    int disagree = 0, first_major = 0, first_minor = 0, theirs = 0, yours = 0;
    for (int major = 0; major <= 15; ++major)
        for (int minor = 0; minor <= 9; ++minor) {
            int cores = -1;
            CHECK(lab_fp32_cores_per_sm(major, minor, &cores));
            const int library = fp32_cores_per_multiprocessor(major, minor);
            if (cores != library && disagree++ == 0)
                first_major = major, first_minor = minor, yours = cores, theirs = library;
        }
    char figures[160] = "all 160 agree";
    if (disagree)
        snprintf(figures, sizeof figures, "%d differ, the first %d.%d: yours %d, the library's %d", disagree,
                 first_major, first_minor, yours, theirs);
    check_that(disagree == 0, "the table agrees with the library's for compute capabilities 0.0 to 15.9",
               "%s", figures);
}

static void check_peaks_of_real_cards(void)
{
    for (int k = 0; k < KNOWN_CARDS; ++k) {
        const known_card *c = &known_cards[k];
        int cores = 0;
        double gflops = -1;
        CHECK(lab_fp32_cores_per_sm(c->cc_major, c->cc_minor, &cores));
        CHECK(lab_peak_fp32_gflops(c->multiprocessors, cores, c->boost_ghz, &gflops));
        char concept[96];
        if (c->beyond_table) {
            snprintf(concept, sizeof concept, "the %s's peak is unknown, not guessed", c->name);
            check_that(cores == 0 && gflops == 0, concept,
                       "compute capability %d.%d: %d cores per SM, %.1f GFLOP/s", c->cc_major, c->cc_minor,
                       cores, gflops);
            continue;
        }
        const double tflops = gflops / 1000, off = tflops / c->published_tflops - 1;
        snprintf(concept, sizeof concept, "FP32 peak of the %s within 1%% of the published %g TFLOPS",
                 c->name, c->published_tflops);
        check_that(fabs(off) <= 0.01, concept, "%d SMs x %d cores x %.4g GHz x 2 = %.2f TFLOPS, %+.2f%%",
                   c->multiprocessors, cores, c->boost_ghz, tflops, 100 * off);
    }

    /* Lesson 001 counted one operation per core and cycle for the RTX 3080 12 GB. */
    double gflops = 0;
    CHECK(lab_peak_fp32_gflops(70, 128, 1.71, &gflops));
    const double one_op = gflops / 2 / 1000;
    check_that(fabs(one_op / LESSON_001_RTX3080_TFLOPS - 1) < 0.001,
               "lesson 001's 15.32 TFLOPS is the peak without the x2 of the FMA",
               "70 x 128 x 1.71 GHz x 2 = %.2f TFLOPS; half of it %.2f", gflops / 1000, one_op);

    double unknown = -1;
    CHECK(lab_peak_fp32_gflops(80, 0, 1.53, &unknown));
    status s = lab_peak_fp32_gflops(-4, 64, 1.5, &gflops);
    check_that(unknown == 0 && s == STATUS_BAD_ARGUMENT,
               "an unknown factor gives an unknown peak (0); a negative one is refused",
               "80 SMs x 0 cores: %g; -4 SMs: %s", unknown, status_name(s));
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
        int cores = p.cores_per_mp; /* the CPU's and a simulated GPU's: SIMD lanes, not a table's */
        if (all[k].kind == DEVICE_CUDA) CHECK(lab_fp32_cores_per_sm(p.cc_major, p.cc_minor, &cores));
        double gflops = -1;
        CHECK(lab_peak_fp32_gflops(p.multiprocessors, cores, p.clock_ghz, &gflops));
        char concept[96];
        snprintf(concept, sizeof concept, "your peak of %s equals the library's", device_name(all[k]));
        check_that(cores == p.cores_per_mp && fabs(gflops - p.peak_gflops) <= 1e-9 * p.peak_gflops, concept,
                   "%d x %d x %.2f GHz x 2 = %.1f GFLOP/s; library: %d cores, %.1f GFLOP/s",
                   p.multiprocessors, cores, p.clock_ghz, gflops, p.cores_per_mp, p.peak_gflops);
    }
}

/* ==== 3. a tensor and a layer on the device =============================== */

static void check_tensor_on(device d)
{
    tensor *x = NULL, *reference = NULL;
    CHECK(lab_rand_on(d, 2, 3, 7, &x));
    CHECK(tensor_uniform(&reference, device_cpu(), shape2(2, 3), 0.0f, 1.0f, 7));
    float got[6], want[6];
    CHECK(tensor_to_host(x, got, 6));
    CHECK(tensor_to_host(reference, want, 6));
    char described[64];
    check_that(device_equal(tensor_device(x), d) && tensor_dim(x, 0) == 2 && tensor_dim(x, 1) == 3 &&
                   memcmp(got, want, sizeof got) == 0,
               "a tensor made on the device lives there and holds its seed's values",
               "%s, first value %.4f (the CPU's %.4f)", tensor_describe(x, described, sizeof described),
               got[0], want[0]);
    tensor_free(x);
    tensor_free(reference);
}

/* Parameters count (weight [out, in] and bias [out]). */
static int64_t parameter_count(const lab_linear *layer)
{
    return tensor_numel(layer->weight) + tensor_numel(layer->bias);
}

static void check_layer_moves(device d, lab_linear *layer)
{
    enum { IN = 3, OUT = 2 };
    CHECK(lab_linear_create(layer, IN, OUT, 11));
    const device cpu = device_cpu();
    check_that(layer->weight && layer->bias && device_equal(tensor_device(layer->weight), cpu) &&
                   device_equal(tensor_device(layer->bias), cpu) && tensor_dim(layer->weight, 0) == OUT &&
                   tensor_dim(layer->weight, 1) == IN && tensor_dim(layer->bias, 0) == OUT,
               "a new layer's weight [out, in] and bias [out] live on the CPU", "nn.Linear(%d, %d)", IN, OUT);

    const tensor *weight_before = layer->weight;
    device_counters counted;
    CHECK(counters_reset(d));
    CHECK(lab_linear_to(layer, d));
    CHECK(counters_read(d, &counted));
    device where = cpu;
    CHECK(lab_linear_device(layer, &where));
    char concept[96];
    snprintf(concept, sizeof concept, "after to(%s) every parameter reports %s", device_name(d),
             device_name(d));
    check_that(device_equal(tensor_device(layer->weight), d) && device_equal(tensor_device(layer->bias), d) &&
                   device_equal(where, d),
               concept, "weight on %s, bias on %s, the layer on %s",
               device_name(tensor_device(layer->weight)), device_name(tensor_device(layer->bias)),
               device_name(where));

    const uint64_t bytes = (uint64_t)parameter_count(layer) * sizeof(float);
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
}

/* Moves only the weight to another device: the layer must refuse to say where
 * it lives. Needs a second device, which exists unless d is the CPU and there
 * is no GPU at all. */
static void check_half_moved_layer(device d, lab_linear *layer)
{
    const device other = device_is_gpu(d) ? device_cpu() : try_gpu(0);
    if (device_equal(other, d)) {
        printf("  (no second device here: the half-moved layer is not tried; LABKIT_SIM_GPUS=2 gives one)\n");
        return;
    }
    tensor *moved = NULL;
    CHECK(tensor_to(layer->weight, other, &moved));
    tensor_free(layer->weight);
    layer->weight = moved;
    device where = d;
    status s = lab_linear_device(layer, &where);
    const char *message = last_error();
    check_that(s == STATUS_WRONG_DEVICE && strstr(message, device_name(d)) &&
                   strstr(message, device_name(other)),
               "a layer split across two devices is refused, naming both", "weight on %s, bias on %s: %s",
               device_name(other), device_name(d), status_name(s));
    CHECK(lab_linear_to(layer, d)); /* whole again */
}

/* net(X) on d: the output lives on d and equals X W^T + b computed here. */
static void check_forward(device d, const lab_linear *layer)
{
    const int64_t batch = 4, in = tensor_dim(layer->weight, 1), out = tensor_dim(layer->weight, 0);
    tensor *x = NULL, *y = NULL;
    CHECK(lab_rand_on(d, batch, in, 5, &x));
    CHECK(tensor_empty(&y, d, DTYPE_F32, shape2(batch, out)));
    CHECK(lab_linear_forward(layer, x, y));
    float xs[16], ws[16], bs[4], ys[16];
    CHECK(tensor_to_host(x, xs, 16));
    CHECK(tensor_to_host(layer->weight, ws, 16));
    CHECK(tensor_to_host(layer->bias, bs, 4));
    CHECK(tensor_to_host(y, ys, 16));
    double worst = 0;
    for (int64_t r = 0; r < batch; ++r)
        for (int64_t c = 0; c < out; ++c) {
            double sum = bs[c];
            for (int64_t k = 0; k < in; ++k) sum += (double)xs[r * in + k] * ws[c * in + k];
            worst = fmax(worst, fabs(sum - ys[r * out + c]));
        }
    char concept[96];
    snprintf(concept, sizeof concept, "net(X) runs on %s and its output lives there", device_name(d));
    check_that(device_equal(tensor_device(y), d) && worst <= 1e-5, concept, "y on %s, largest error %.2g",
               device_name(tensor_device(y)), worst);
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
    const char *concept = "moving the layer leaves no tensor behind: freeing it returns all its memory";
    const bool holds = cpu_after == cpu_before && device_after == device_before;
    if (device_is_gpu(d))
        check_that(holds, concept, "in use before and after: cpu %zu -> %zu bytes, %s %zu -> %zu bytes",
                   cpu_before, cpu_after, device_name(d), device_before, device_after);
    else
        check_that(holds, concept, "in use on the cpu before and after: %zu -> %zu bytes", cpu_before,
                   cpu_after);
}

int main(int argc, char **argv)
{
    /* A fresh copy started by check_fresh_process: answer, then stop. */
    if (argc == 2 && strcmp(argv[1], ANSWERS_FLAG) == 0) {
        char line[1024];
        format_answers(line, sizeof line);
        printf("%s\n", line);
        return 0;
    }
    device d = check_device(argc, argv);

    check_try_gpu_here();
    check_fresh_process(0);
    check_fresh_process(2);

    check_cores_per_sm();
    check_peaks_of_real_cards();
    check_devices_here();

    check_tensor_on(d);
    size_t cpu_before = 0, device_before = 0;
    memory_in_use(d, &cpu_before, &device_before);
    lab_linear layer = { 0 };
    check_layer_moves(d, &layer);
    check_half_moved_layer(d, &layer);
    check_forward(d, &layer);
    lab_linear_free(&layer);
    check_memory_returned(d, cpu_before, device_before);
    return check_finish("01_devices");
}
