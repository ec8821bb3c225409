/* bench_training_epoch.c: how long does one epoch of lab 05's MLP take on the
 * cpu, next to PyTorch's CPU time for the same network, batch and images?
 *
 * An epoch is 60000 synthetic 28x28 digits in batches of 128 (469 steps) through
 * 784-256-256-10 with ReLU, softmax cross-entropy and SGD with momentum, the
 * loss logged on the device. The images are written as IDX files that this
 * program reads back and bench/pytorch_mlp.py reads too, so both see the same
 * bytes. PyTorch is timed in the configurations where it does best here
 * (README of bench/), each in its own process, and the best one is compared.
 *
 * The kit's side is lab 05's own program, run on these files: labNN-solution
 * where the build has it (the instructors' tree), else the student's lab05, so
 * that this file holds none of the lab's answers. Its CSV gives the epoch times
 * of the on-device log; the first epoch, a warm-up, is left out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"

#include "data.h" /* lab 05's synthetic digits and IDX files (bench/CMakeLists.txt) */

#define TRAIN_SAMPLES 60000
#define HELDOUT_SAMPLES 10000
#define BATCH 128
#define EPOCHS 4 /* the first is a warm-up */
#define AIM_SECONDS 0.55

/* The directory of this source file, to find pytorch_mlp.py beside it. */
static void bench_dir(char *out, size_t size)
{
    snprintf(out, size, "%s", __FILE__);
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(out, size, ".");
}

/* The lab program next to this bench in the build tree: the solution's, or the
 * student's. */
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

/* Median seconds per epoch of the on-device log on the cpu (epochs 2..EPOCHS),
 * read from the lab program's CSV; 0 when it did not run. */
static double kit_epoch(const char *program, const char *data_dir)
{
    char command[16384], csv[4200], line[512];
    snprintf(csv, sizeof csv, "%s/kit.csv", data_dir);
    snprintf(command, sizeof command,
             "%s --device cpu --data %s --batch %d --epochs %d --csv %s > %s/kit.txt 2>&1", program, data_dir,
             BATCH, EPOCHS, csv, data_dir);
    if (system(command) != 0) {
        printf("  the lab program failed: see its output with\n    %s\n", command);
        return 0.0;
    }
    FILE *f = fopen(csv, "r");
    double seconds[EPOCHS];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        int epoch = 0;
        double loss, accuracy, s;
        if (sscanf(line, "cpu,on-device,%d,%lf,%lf,%lf", &epoch, &loss, &accuracy, &s) == 4 && epoch > 1 &&
            n < EPOCHS)
            seconds[n++] = s;
    }
    if (f) fclose(f);
    remove(csv);
    printf("  kit (%s), on-device log: epochs", strrchr(program, '/') + 1);
    for (int i = 0; i < n; ++i) printf(" %.3f", seconds[i]);
    printf(" s after a warm-up epoch\n");
    return n ? median_of(seconds, (size_t)n) : 0.0;
}

/* Runs pytorch_mlp.py in one configuration; its epoch time, or 0 when it did
 * not run (torch absent: *absent is set). */
static double pytorch_epoch(const char *env, const char *data_dir, int threads, const char *what,
                            bool *absent)
{
    char dir[4096], command[8192], line[512] = "";
    bench_dir(dir, sizeof dir);
    snprintf(command, sizeof command,
             "%s /usr/bin/python3 %s/pytorch_mlp.py --data %s --batch %d --epochs %d%s%.0d 2>&1", env, dir,
             data_dir, BATCH, EPOCHS - 1, threads ? " --threads " : "", threads);
    FILE *p = popen(command, "r");
    double seconds = 0.0;
    if (p) {
        while (fgets(line, sizeof line, p))
            if (strncmp(line, "pytorch: ", 9) == 0) break;
        const int rc = pclose(p);
        if (strstr(line, "absent"))
            *absent = true;
        else if (rc == 0)
            sscanf(line, "pytorch: epoch_seconds=%lf", &seconds);
    }
    line[strcspn(line, "\n")] = '\0';
    printf("  %-44s %s\n", what, line[0] ? line + 9 : "(no answer from /usr/bin/python3)");
    return seconds;
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

int main(void)
{
    CHECK(devices_init());
    printf("one epoch of MLP 784-256-256-10 on the cpu: %d synthetic digits, batch %d (%d steps), SGD "
           "momentum 0.9\n",
           TRAIN_SAMPLES, BATCH, (TRAIN_SAMPLES + BATCH - 1) / BATCH);
    printf("OPENBLAS_CORETYPE=%s, OpenBLAS kernels: %s\n",
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)", cpu_blas_kernels());
    char program[4096];
    if (!find_lab_program(program, sizeof program)) {
        printf("skipped: lab05 is not built next to this bench (cmake --build ... --target lab05)\n");
        return 0;
    }
    /* The images, as IDX files that both programs read. */
    char dir[] = "/tmp/bench-training-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    write_pair(dir, "train", TRAIN_SAMPLES, 1);
    write_pair(dir, "t10k", HELDOUT_SAMPLES, 2);

    const double kit = kit_epoch(program, dir);
    bool absent = false;
    const double as_installed =
        pytorch_epoch("", dir, 0, "PyTorch as installed (its default threads)", &absent);
    double best = as_installed;
    if (!absent) {
        const int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
        char what[96];
        snprintf(what, sizeof what, "PyTorch, OpenMP OpenBLAS, %d threads", cores);
        const char *omp = "LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp";
        if (access("/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3", R_OK) == 0) {
            /* OpenMP's threads sleep when idle, where the pthread build's spin;
             * which thread count wins depends on what else the cores are doing. */
            const double omp_default =
                pytorch_epoch(omp, dir, 0, "PyTorch, OpenMP OpenBLAS, default threads", &absent);
            const double omp_cores = pytorch_epoch(omp, dir, cores, what, &absent);
            if (omp_default > 0 && (best == 0 || omp_default < best)) best = omp_default;
            if (omp_cores > 0 && (best == 0 || omp_cores < best)) best = omp_cores;
        } else {
            printf("  %-44s not installed (apt-get install libopenblas0-openmp)\n", what);
        }
    }
    if (kit > 0)
        printf("\nkit on cpu: %.3f s per epoch (aim: at most %.2f s: %s)\n", kit, AIM_SECONDS,
               kit <= AIM_SECONDS ? "met" : "NOT met");
    if (absent)
        printf(
            "PyTorch: torch is absent for /usr/bin/python3 (apt-get install python3-torch); no comparison\n");
    else if (best > 0 && kit > 0)
        printf("PyTorch's best here: %.3f s per epoch; kit / PyTorch = %.2f\n", best, kit / best);
    else
        printf("PyTorch: no configuration ran; no comparison\n");
    remove_pair(dir, "train");
    remove_pair(dir, "t10k");
    char txt[256];
    snprintf(txt, sizeof txt, "%s/kit.txt", dir);
    remove(txt);
    rmdir(dir);
    return kit > 0 ? 0 : 1;
}
