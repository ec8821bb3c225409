/* bench_training_epoch.c: lab 05's training step in its three styles, next to
 * PyTorch's, in one run: microseconds per step and seconds per epoch.
 *
 * An epoch is 60000 synthetic 28x28 digits in batches of 128 (469 steps)
 * through 784-256-256-10 with ReLU, softmax cross-entropy and SGD with
 * momentum. The images are written as IDX files that lab 05's program and
 * bench/pytorch_mlp.py both read, so both see the same bytes.
 *   - cpu: the kit's three styles (item every step, on-device log, captured
 *     step) beside the step's products alone through cblas_sgemm (the floor
 *     under any epoch here), and against PyTorch on the CPU, in the
 *     configurations where it does best here (bench/README.md), each in its
 *     own process; the best one is compared.
 *   - cuda:0, where there is a real GPU: the kit's three styles against PyTorch
 *     eager and PyTorch with the whole step captured as a CUDA graph.
 * PyTorch runs with the first of LABKIT_PYTHON, python3 on PATH and
 * /usr/bin/python3 (Debian's python3-torch) that has torch (for the GPU, a
 * torch that sees it: bench_python); the bench says so where none has.
 *
 * The kit's side runs twice, before fusion (LABKIT_MLP_UNFUSED=1: the SGD
 * step as 18 operations, labs/common/mlp.h) and fused (one), side by side;
 * on cuda:0 three times: before fusion and fused with each batch's upload on
 * the compute queue, in line with the steps (LABKIT_TRAIN_ONE_QUEUE=1,
 * lab 05's train.h), and fused with the upload on the copy queue, beside the
 * step before it (the lab as it is).
 * The kit's side is lab 05's own program, run on these files: lab05-solution
 * where the build has it (the instructors' tree), else the student's lab05, so
 * that this file holds none of the lab's answers. While the student's lab 05
 * still stops at a TODO, the kit's side is skipped, saying so. Its CSV gives
 * the time per step of each style; the first epoch, which warms up and captures
 * the graphs, is left out. `bench_training_epoch cpu` or `cuda:0` runs one
 * half alone. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"

#include "data.h" /* lab 05's synthetic digits and IDX files (bench/CMakeLists.txt) */

#define TRAIN_SAMPLES 60000
#define HELDOUT_SAMPLES 10000
#define BATCH 128
#define STEPS ((TRAIN_SAMPLES + BATCH - 1) / BATCH)
#define EPOCHS 4 /* the first is a warm-up */
#define STYLES 3
#define LAYERS 3
#define AIM_SECONDS 0.40      /* the kit's epoch on the cpu, on-device log (issue 25; it was 0.55) */
#define AIM_CAPTURED_US 100.0 /* on an H100, per step */
#define AIM_EAGER_US 200.0

enum { ITEM_EVERY_STEP, ON_DEVICE_LOG, CAPTURED_STEP }; /* the lab's styles, in its order */
static const char *style_names[STYLES] = { "item every step", "on-device log", "captured step" };

/* The lab program next to this bench in the build tree: the solution's, or the student's. */
static bool find_lab_program(char *out, size_t size)
{
    char self[2048];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    const char *names[] = { "lab05-solution", "lab05" };
    for (int i = 0; i < 2; ++i) {
        const int length = snprintf(out, size, "%s/../labs/05_training_loop/%s", self, names[i]);
        if (length > 0 && (size_t)length < size && access(out, X_OK) == 0) return true;
    }
    return false;
}

/* The first line of `path` that contains `what`, into line (empty when none). */
static void find_line(const char *path, const char *what, char *line, size_t size)
{
    FILE *f = fopen(path, "r");
    line[0] = '\0';
    while (f && fgets(line, (int)size, f))
        if (strstr(line, what)) break;
    if (f && !strstr(line, what)) line[0] = '\0';
    if (f) fclose(f);
    line[strcspn(line, "\n")] = '\0';
}

/* Column `name`'s index in a CSV header line; -1 when absent. */
static int column_of(const char *header, const char *name)
{
    int index = 0;
    const size_t length = strlen(name);
    for (const char *p = header; p; p = strchr(p, ','), p = p ? p + 1 : NULL, ++index)
        if (strncmp(p, name, length) == 0 && (p[length] == ',' || p[length] == '\n' || p[length] == '\0'))
            return index;
    return -1;
}

/* Field `index` of a CSV line (no quoted fields in lab 05's rows). */
static const char *field(const char *line, int index, char *out, size_t size)
{
    const char *p = line;
    for (int i = 0; i < index && p; ++i) p = strchr(p, ','), p = p ? p + 1 : NULL;
    snprintf(out, size, "%.*s", p ? (int)strcspn(p, ",\n") : 0, p ? p : "");
    return out;
}

typedef enum lab_outcome { LAB_RAN, LAB_TODO, LAB_FAILED } lab_outcome;

/* Runs lab 05 on `device`: the median microseconds per step of each style
 * after the first epoch, into us[]. On LAB_TODO, `why` holds the TODO line. */
static lab_outcome kit_steps(const char *env, const char *program, const char *dir, const char *device,
                             double us[STYLES], char *why, size_t size)
{
    char command[16384], csv[4200], txt[4200], line[1024];
    snprintf(csv, sizeof csv, "%s/kit.csv", dir);
    snprintf(txt, sizeof txt, "%s/kit.txt", dir);
    snprintf(command, sizeof command, "%s %s --device %s --data %s --batch %d --epochs %d --csv %s > %s 2>&1",
             env, program, device, dir, BATCH, EPOCHS, csv, txt);
    if (system(command) != 0) {
        find_line(txt, "TODO:", why, size);
        if (why[0]) return LAB_TODO;
        printf("  the lab program failed on %s: see its output with\n    %s\n", device, command);
        return LAB_FAILED;
    }
    FILE *f = fopen(csv, "r");
    double samples[STYLES][EPOCHS];
    int n[STYLES] = { 0 }, style_column = -1, epoch_column = -1, us_column = -1;
    while (f && fgets(line, sizeof line, f)) {
        char cell[64];
        if (line[0] == '#') continue;
        if (style_column < 0) { /* the header line */
            style_column = column_of(line, "style"), epoch_column = column_of(line, "epoch");
            us_column = column_of(line, "us_per_step");
            continue;
        }
        const int epoch = atoi(field(line, epoch_column, cell, sizeof cell));
        for (int s = 0; s < STYLES; ++s)
            if (strcmp(field(line, style_column, cell, sizeof cell), style_names[s]) == 0 && epoch > 1 &&
                n[s] < EPOCHS)
                samples[s][n[s]++] = atof(field(line, us_column, cell, sizeof cell));
    }
    if (f) fclose(f);
    remove(csv), remove(txt);
    for (int s = 0; s < STYLES; ++s) us[s] = n[s] ? median_of(samples[s], (size_t)n[s]) : 0.0;
    return us[0] > 0 && us[1] > 0 && us[2] > 0 ? LAB_RAN : LAB_FAILED;
}

/* Runs pytorch_mlp.py once; its microseconds per step, or 0 when it did not
 * run (torch, or a GPU for torch, absent: *absent is set). */
static double pytorch_step(const char *env, const char *dir, const char *args, const char *what, bool *absent)
{
    char here[4096], command[8192], line[512] = "";
    const char *python = bench_python(strstr(args, "cuda") != NULL);
    if (!python) {
        printf("  %-52s absent (no python here has torch%s)\n", what,
               strstr(args, "cuda") ? " with CUDA" : "");
        *absent = true;
        return 0.0;
    }
    bench_dir(here, sizeof here);
    snprintf(command, sizeof command, "%s '%s' %s/pytorch_mlp.py --data %s --batch %d --epochs %d %s 2>&1",
             env, python, here, dir, BATCH, EPOCHS - 1, args);
    FILE *p = popen(command, "r");
    double us = 0.0;
    if (p) {
        while (fgets(line, sizeof line, p))
            if (strncmp(line, "pytorch: ", 9) == 0) break;
        const int rc = pclose(p);
        if (strstr(line, "absent"))
            *absent = true;
        else if (rc == 0 && strstr(line, "step_us="))
            us = atof(strstr(line, "step_us=") + 8);
    }
    line[strcspn(line, "\n")] = '\0';
    printf("  %-52s %s\n", what, line[0] ? line + 9 : "(no answer from python)");
    return us;
}

static void write_pair(const char *dir, const char *stem, int64_t count, uint64_t seed)
{
    char images[256], labels[256];
    snprintf(images, sizeof images, "%s/%s-images-idx3-ubyte", dir, stem);
    snprintf(labels, sizeof labels, "%s/%s-labels-idx1-ubyte", dir, stem);
    dataset d;
    CHECK(dataset_synthetic(&d, count, seed));
    CHECK(dataset_write_idx(&d, images, labels));
    dataset_free(&d);
}

static void remove_pair(const char *dir, const char *stem)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte", dir, stem);
    remove(path);
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte", dir, stem);
    remove(path);
}

#define UNFUSED "LABKIT_MLP_UNFUSED=1"
#define ONE_QUEUE "LABKIT_TRAIN_ONE_QUEUE=1"

static void print_kit(const char *when, const double us[STYLES])
{
    for (int s = 0; s < STYLES; ++s) {
        char what[80];
        snprintf(what, sizeof what, "kit (lab 05)%s, %s", when, style_names[s]);
        printf("  %-52s step_us=%.1f epoch_seconds=%.3f\n", what, us[s], us[s] * STEPS / 1e6);
    }
}

/* ---- the floor under any epoch on this CPU: the step's products alone ---- */

static const int layer_sizes[LAYERS + 1] = { 784, 256, 256, 10 };

/* Row-major c[m, n] = op(a) op(b), as op_matmul calls OpenBLAS on the cpu. */
static void product(bool trans_a, bool trans_b, int m, int n, int k, const float *a, const float *b, float *c)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n,
                k, 1.0f, a, trans_a ? m : k, b, trans_b ? k : n, 0.0f, c, n);
}

/* The buffers of one step's products: x and each layer's output (act), the
 * weights, the gradients of each output (grad) and of each weight. */
typedef struct step_buffers {
    float *act[LAYERS + 1], *weight[LAYERS], *grad[LAYERS], *weight_grad[LAYERS];
} step_buffers;

static float *filled(size_t count)
{
    float *p = malloc(count * sizeof(float));
    if (!p) {
        fprintf(stderr, "bench_training_epoch: no host memory for the products' floor\n");
        exit(1);
    }
    for (size_t i = 0; i < count; ++i) p[i] = 0.01f * (float)(i % 7);
    return p;
}

/* The products of lab 05's step, in its order: every layer forward, then
 * backward from the last layer every weight's gradient and, but for the
 * first layer, the input's: 3 x LAYERS - 1 in all. No bias, no element-wise work. */
static void step_products(const step_buffers *b)
{
    const int *s = layer_sizes;
    for (int i = 0; i < LAYERS; ++i)
        product(false, false, BATCH, s[i + 1], s[i], b->act[i], b->weight[i], b->act[i + 1]);
    for (int i = LAYERS - 1; i >= 0; --i) {
        product(true, false, s[i], s[i + 1], BATCH, b->act[i], b->grad[i], b->weight_grad[i]);
        if (i > 0) product(false, true, BATCH, s[i], s[i + 1], b->grad[i], b->weight[i], b->grad[i - 1]);
    }
}

/* The median microseconds a step of products alone takes, over EPOCHS - 1
 * epochs of STEPS steps after a warm-up epoch, as the kit's are measured:
 * what any program that multiplies through this OpenBLAS pays, whatever it
 * does around the products. */
static double products_floor_us(void)
{
    step_buffers b;
    const int *s = layer_sizes;
    b.act[0] = filled((size_t)BATCH * s[0]);
    for (int i = 0; i < LAYERS; ++i) {
        b.act[i + 1] = filled((size_t)BATCH * s[i + 1]);
        b.weight[i] = filled((size_t)s[i] * s[i + 1]);
        b.weight_grad[i] = filled((size_t)s[i] * s[i + 1]);
        b.grad[i] = filled((size_t)BATCH * s[i + 1]);
    }
    double epochs[EPOCHS];
    for (int e = 0; e < EPOCHS; ++e) {
        const double start = wall_seconds();
        for (int step = 0; step < STEPS; ++step) step_products(&b);
        epochs[e] = (wall_seconds() - start) / STEPS * 1e6;
    }
    for (int i = 0; i <= LAYERS; ++i) free(b.act[i]);
    for (int i = 0; i < LAYERS; ++i) free(b.weight[i]), free(b.weight_grad[i]), free(b.grad[i]);
    return median_of(epochs + 1, EPOCHS - 1);
}

/* The cpu: the kit's three styles, PyTorch at its best here. */
static bool measure_cpu(const char *program, const char *dir, bool *skipped)
{
    double kit[STYLES] = { 0 }, unfused[STYLES] = { 0 };
    char why[1024];
    printf("\ncpu:\n");
    const double floor_us = products_floor_us();
    char products[80];
    snprintf(products, sizeof products, "the step's %d products alone (cblas_sgemm)", 3 * LAYERS - 1);
    printf("  %-52s step_us=%.1f epoch_seconds=%.3f\n", products, floor_us, floor_us * STEPS / 1e6);
    const lab_outcome outcome = kit_steps("", program, dir, "cpu", kit, why, sizeof why);
    if (outcome == LAB_TODO) {
        printf("  skipped the kit: lab 05 stops at a TODO (%s); finish it, then run this bench again\n", why);
        *skipped = true;
    } else if (outcome == LAB_RAN &&
               kit_steps(UNFUSED, program, dir, "cpu", unfused, why, sizeof why) == LAB_RAN) {
        print_kit(" before fusion", unfused);
        print_kit(", fused", kit);
    } else if (outcome == LAB_RAN) {
        print_kit(", fused", kit);
    }
    bool absent = false;
    double best = pytorch_step("", dir, "", "PyTorch as installed (its default threads)", &absent);
    if (!absent) {
        const int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
        char what[96], threads[32];
        snprintf(what, sizeof what, "PyTorch, OpenMP OpenBLAS, %d threads", cores);
        snprintf(threads, sizeof threads, "--threads %d", cores);
        const char *omp = "LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp";
        if (access("/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3", R_OK) == 0) {
            /* OpenMP's threads sleep when idle, where the pthread build's spin;
             * which thread count wins depends on what else the cores are doing. */
            const double a = pytorch_step(omp, dir, "", "PyTorch, OpenMP OpenBLAS, default threads", &absent);
            const double b = pytorch_step(omp, dir, threads, what, &absent);
            if (a > 0 && (best == 0 || a < best)) best = a;
            if (b > 0 && (best == 0 || b < best)) best = b;
        } else {
            printf("  %-52s not installed (apt-get install libopenblas0-openmp)\n", what);
        }
    }
    const double epoch = kit[ON_DEVICE_LOG] * STEPS / 1e6;
    const double floor_seconds = floor_us * STEPS / 1e6;
    if (outcome == LAB_RAN)
        printf("kit on cpu, on-device log: %.3f s per epoch (aim: at most %.2f s: %s); its products alone "
               "take %.3f s here, the rest of its step %.0f us%s\n",
               epoch, AIM_SECONDS, epoch <= AIM_SECONDS ? "met" : "NOT met", floor_seconds,
               kit[ON_DEVICE_LOG] - floor_us,
               floor_seconds > AIM_SECONDS ? " (this CPU's products alone are over the aim)" : "");
    if (absent)
        printf("PyTorch: no python here has torch (LABKIT_PYTHON picks one; on Debian, apt-get install "
               "python3-torch); no comparison\n");
    else if (best > 0 && outcome == LAB_RAN)
        printf("PyTorch's best here: %.3f s per epoch; kit / PyTorch = %.2f\n", best * STEPS / 1e6,
               kit[ON_DEVICE_LOG] / best);
    return outcome != LAB_FAILED;
}

/* cuda:0: the kit's three styles against PyTorch eager and with a CUDA graph;
 * the kit's before fusion (and the uploads in line, on the compute queue),
 * fused with the uploads in line, and fused with the uploads on the copy
 * queue, beside the steps (the lab's way). */
static bool measure_cuda0(const char *program, const char *dir, const bool *skipped)
{
    double kit[STYLES] = { 0 }, unfused[STYLES] = { 0 }, one_queue[STYLES] = { 0 };
    char why[1024];
    printf("\ncuda:0:\n");
    const lab_outcome outcome =
        *skipped ? LAB_TODO : kit_steps("", program, dir, "cuda:0", kit, why, sizeof why);
    if (outcome == LAB_RAN &&
        kit_steps(UNFUSED " " ONE_QUEUE, program, dir, "cuda:0", unfused, why, sizeof why) == LAB_RAN)
        print_kit(" before fusion, one queue", unfused);
    if (outcome == LAB_RAN &&
        kit_steps(ONE_QUEUE, program, dir, "cuda:0", one_queue, why, sizeof why) == LAB_RAN)
        print_kit(", fused, one queue", one_queue);
    if (outcome == LAB_RAN) print_kit(", fused, copy queue", kit);
    if (outcome == LAB_TODO) printf("  skipped the kit: lab 05 stops at a TODO\n");
    bool absent = false;
    const double eager = pytorch_step("", dir, "--device cuda", "PyTorch on cuda:0, eager", &absent);
    const double graphed = absent ? 0.0
                                  : pytorch_step("", dir, "--device cuda --graph",
                                                 "PyTorch on cuda:0, the step as a CUDA graph", &absent);
    if (outcome == LAB_RAN)
        printf(
            "kit on cuda:0: captured step %.1f us (aim under %.0f: %s), on-device log eagerly %.1f us (aim "
            "under %.0f: %s)\n",
            kit[CAPTURED_STEP], AIM_CAPTURED_US, kit[CAPTURED_STEP] < AIM_CAPTURED_US ? "met" : "NOT met",
            kit[ON_DEVICE_LOG], AIM_EAGER_US, kit[ON_DEVICE_LOG] < AIM_EAGER_US ? "met" : "NOT met");
    if (outcome == LAB_RAN && eager > 0 && graphed > 0)
        printf("kit / PyTorch on cuda:0: eager %.2f, captured %.2f\n", kit[ON_DEVICE_LOG] / eager,
               kit[CAPTURED_STEP] / graphed);
    else if (absent)
        printf("PyTorch: no python here has a torch that sees the GPU (LABKIT_PYTHON picks one); no "
               "comparison on "
               "cuda:0\n");
    return outcome != LAB_FAILED;
}

/* "cpu", "cuda:0" or nothing (both): on a lent GPU the cpu half is minutes of
 * device time that measure nothing of the GPU. */
static bool parse_where(int argc, char **argv, bool *cpu, bool *cuda)
{
    *cpu = *cuda = true;
    if (argc == 1) return true;
    if (argc == 2 && strcmp(argv[1], "cpu") == 0)
        *cuda = false;
    else if (argc == 2 && strcmp(argv[1], "cuda:0") == 0)
        *cpu = false;
    else {
        fprintf(stderr, "usage: bench_training_epoch [cpu | cuda:0]   (both when none is named)\n");
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    bool on_cpu, on_cuda;
    if (!parse_where(argc, argv, &on_cpu, &on_cuda)) return 2;
    bench_settings();
    printf(
        "lab 05's MLP 784-256-256-10: %d synthetic digits, batch %d (%d steps per epoch), SGD momentum 0.9; "
        "medians of %d epochs after a warm-up\n",
        TRAIN_SAMPLES, BATCH, STEPS, EPOCHS - 1);
    printf("OPENBLAS_CORETYPE=%s, OpenBLAS kernels: %s\n",
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)", cpu_blas_kernels());
    char program[4096];
    if (!find_lab_program(program, sizeof program)) {
        printf("skipped: lab05 is not built next to this bench (cmake --build ... --target lab05)\n");
        return 0;
    }
    char dir[] = "/tmp/bench-training-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    write_pair(dir, "train", TRAIN_SAMPLES, 1);
    write_pair(dir, "t10k", HELDOUT_SAMPLES, 2);
    bool skipped = false, ran = on_cpu ? measure_cpu(program, dir, &skipped) : true;
    if (!on_cuda)
        printf("\ncuda:0 not asked for (bench_training_epoch cpu)\n");
    else if (device_count(DEVICE_CUDA) > 0)
        ran = measure_cuda0(program, dir, &skipped) && ran;
    else
        printf(
            "\nno real GPU here: skipped cuda:0, where this bench compares lab 05's step before and after "
            "fusion, and with each batch's upload on the compute queue or beside the step on the copy queue "
            "(item every step, on-device log, captured), with PyTorch eager and PyTorch's CUDA graph (aims: "
            "captured under %.0f us, eager under %.0f us)\n",
            AIM_CAPTURED_US, AIM_EAGER_US);
    remove_pair(dir, "train");
    remove_pair(dir, "t10k");
    rmdir(dir);
    return ran ? 0 : 1;
}
