/* main.c: lab 08's experiment: how much faster is the same work on more
 * workers? Three kinds of workers, one table, one figure (speed-up against
 * workers):
 *   cores    the i-k-j loop on 1, 2, 4, ... threads up to every core (your
 *            lab_matmul_omp), and OpenBLAS on one thread and on every core;
 *   devices  lesson 003's exercise: products on 2 (or more) GPUs at once
 *            (your lab_run_at_once) against the same products in sequence on
 *            one; GPUs of one kind: cuda:N where two exist, else sim:N;
 *   training lab 05's MLP on one device, then data-parallel on all of them
 *            (your lab_data_parallel_step): time per epoch and the losses.
 * --device D takes the GPUs of D's kind (none for cpu: training on the cpu).
 *
 *   ./lab run 08 -- --quick --plot parallel.png
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "given.h"
#include "lab.h"

#define MAX_EPOCHS 50

static const char *const part_names[] = { "cores: OpenMP i-k-j loop", "cores: OpenBLAS",
                                          "devices: products at once", "training: data-parallel epoch" };
enum { PART_OMP, PART_BLAS, PART_DEVICES, PART_TRAINING, PARTS };

typedef struct experiment {
    int size, epochs;
    dp_settings settings; /* lab 05's: batch 128, lr 0.05, momentum 0.9, seed 1 */
    bool quick;
    results *r;
    device gpus[DP_MAX_DEVICES]; /* GPUs of one kind, for the devices and the training */
    int ngpus;
    double best[PARTS];           /* each part's speed-up with the most workers (0: not run) */
    double losses[2][MAX_EPOCHS]; /* training: one device, then all */
    double copies_per_step;       /* training on all devices */
    char trained_on[128];         /* "sim:0+sim:1" */
    double busy;                  /* cores busy with other programs just before (given.h) */
    progress p;
} experiment;

/* One row: a part, its workers, what they were, the time and the scaling. */
static void add_row(experiment *x, int part, int workers, const char *on, double one, double seconds)
{
    double speedup, efficiency;
    CHECK(lab_scaling(one, seconds, workers, &speedup, &efficiency));
    CHECK(results_row(x->r));
    results_text(x->r, "part", part_names[part]);
    results_number(x->r, "workers", workers);
    results_text(x->r, "on", on);
    results_number(x->r, "seconds", seconds);
    results_number(x->r, "speedup", speedup);
    results_number(x->r, "efficiency_percent", 100.0 * efficiency);
    x->best[part] = speedup;
}

/* ---- cores ------------------------------------------------------------------ */

/* The best of at least 3 runs and at least 0.3 s of them (noise on a shared
 * machine only ever adds time): your loop on `threads` threads, or OpenBLAS
 * (threads 0) on the threads blas_threads allows. */
static double best_seconds(const float *a, const float *b, float *c, int64_t n, int threads)
{
    double best = INFINITY, total = 0.0;
    for (int run = 0; run < 3 || (total < 0.3 && run < 1000); ++run) {
        const double start = wall_seconds();
        if (threads > 0)
            CHECK(lab_matmul_omp(a, b, c, n, n, n, threads));
        else
            blas_matmul(a, b, c, n);
        const double took = wall_seconds() - start;
        best = fmin(best, took), total += took;
    }
    return best;
}

static void measure_cores(experiment *x)
{
    const int64_t n = x->size;
    const int cores = cores_here();
    float *a = malloc((size_t)(n * n) * sizeof *a), *b = malloc((size_t)(n * n) * sizeof *b),
          *c = malloc((size_t)(n * n) * sizeof *c);
    if (!a || !b || !c)
        CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for three %lldx%lld matrices", (long long)n,
                   (long long)n));
    for (int64_t i = 0; i < n * n; ++i)
        a[i] = (float)(i % 17) / 17.0f - 0.5f, b[i] = (float)(i % 13) / 13.0f - 0.5f;
    /* Your loop on 1, 2, 4, ... threads and every core, then OpenBLAS on one
     * thread and on every core: each pool alone, the other asleep (given.h). */
    for (int part = PART_OMP; part <= PART_BLAS; ++part) {
        blas_threads(1);
        pools_settle();
        double one = 0.0;
        for (int t = 1; t <= cores; t = t < cores && (part == PART_BLAS || 2 * t > cores) ? cores : 2 * t) {
            if (part == PART_BLAS) blas_threads(t);
            const double seconds = best_seconds(a, b, c, n, part == PART_OMP ? t : 0);
            char on[64];
            snprintf(on, sizeof on, "%d thread%s", t, t > 1 ? "s" : "");
            add_row(x, part, t, on, one = t == 1 ? seconds : one, seconds);
            progress_update(&x->p, 0.4 * t / cores);
        }
    }
    blas_threads(0);
    pools_settle(); /* OpenBLAS's threads asleep before the devices work */
    free(a), free(b), free(c);
}

/* ---- devices ------------------------------------------------------------------ */

static void measure_devices(experiment *x)
{
    if (x->ngpus < 2) return;
    const bool real = x->gpus[0].kind == DEVICE_CUDA;
    /* Work that dominates a launch's overhead: ~0.1 s per device on sim:N, ~0.1 s on a big GPU. */
    const int64_t n = real ? 4096 : x->quick ? 256 : 384;
    product_work work[DP_MAX_DEVICES];
    for (int i = 0; i < x->ngpus; ++i) CHECK(product_work_create(&work[i], x->gpus[i], n, real ? 8 : 2));
    CHECK(lab_run_at_once(work, x->ngpus)); /* warm-up: kernels load, workers start */
    char on[128];
    for (int k = 1; k <= x->ngpus; ++k) {
        double once = INFINITY, one = INFINITY; /* the best of 3 each, taken in turn */
        for (int run = 0; run < 3; ++run) {
            double start = wall_seconds();
            if (k > 1) CHECK(run_on_one(work, k)); /* with one device, the two ways are one */
            one = fmin(one, wall_seconds() - start);
            start = wall_seconds();
            CHECK(lab_run_at_once(work, k));
            once = fmin(once, wall_seconds() - start);
        }
        add_row(x, PART_DEVICES, k, device_names_joined(x->gpus, k, on, sizeof on), k > 1 ? one : once, once);
    }
    for (int i = 0; i < x->ngpus; ++i) product_work_free(&work[i]);
    progress_update(&x->p, 0.5);
}

/* ---- data-parallel training -------------------------------------------------- */

static void measure_training(experiment *x, const dataset *train)
{
    static const int64_t sizes[] = { 784, 256, 256, 10 };
    device devices[DP_MAX_DEVICES] = { device_cpu() };
    const int n = x->ngpus > 0 ? x->ngpus : 1;
    if (x->ngpus > 0) memcpy(devices, x->gpus, sizeof devices);
    /* A simulated GPU's products on its own worker thread (OpenBLAS on the
     * calling thread alone), as a GPU computes on its own chips. */
    blas_threads(devices[0].kind == DEVICE_SIM ? 1 : 0);
    double one = 0.0;
    for (int k = 1; k <= n; k = k == 1 && n > 1 ? n : n + 1) {
        dp_epoch_result result[MAX_EPOCHS];
        double *losses = x->losses[k > 1], seconds = 0.0;
        char text[MAX_EPOCHS * 10] = "";
        CHECK(dp_train(devices, k, sizes, 4, train, x->epochs, &x->settings, result));
        for (int e = 0; e < x->epochs; ++e) {
            seconds += result[e].seconds / x->epochs, losses[e] = result[e].loss;
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%.4f", e ? " " : "", losses[e]);
        }
        x->copies_per_step = (double)(result[0].h2d_copies + result[0].d2h_copies) / (double)result[0].steps;
        one = k == 1 ? seconds : one;
        add_row(x, PART_TRAINING, k, device_names_joined(devices, k, x->trained_on, sizeof x->trained_on),
                one, seconds);
        results_number(x->r, "copies_per_step", x->copies_per_step);
        results_text(x->r, "epoch_losses", text);
        progress_update(&x->p, k > 1 ? 1.0 : 0.75);
    }
}

/* ---- the takeaway ------------------------------------------------------------------ */

static void print_takeaway(const experiment *x)
{
    double differ = 0.0; /* the largest relative difference of an epoch's loss, all devices against one */
    for (int e = 0; e < x->epochs; ++e) differ = fmax(differ, fabs(x->losses[1][e] / x->losses[0][e] - 1.0));
    printf("\ntakeaway: on %d cores (%.1f of them busy with other programs) your loop ran %.2fx as fast with "
           "every thread (OpenBLAS %.2fx)",
           cores_here(), x->busy, x->best[PART_OMP], x->best[PART_BLAS]);
    if (x->best[PART_DEVICES] > 0)
        printf("; %d %s GPUs did their products at once %.2fx as fast as one did them in sequence", x->ngpus,
               x->gpus[0].kind == DEVICE_CUDA ? "real" : "simulated", x->best[PART_DEVICES]);
    const char *why =
        x->best[PART_TRAINING] < 1.1 ? " (too little work a step to share out: try --batch 1024)" : "";
    if (x->ngpus < 2)
        printf("; training ran on %s alone, lab 05's training.\n", x->trained_on);
    else
        printf(
            "; training on %s gave one device's losses (within %.1g), %.2fx as fast, %.0f copies a step%s.\n",
            x->trained_on, differ, x->best[PART_TRAINING], x->copies_per_step, why);
}

int main(int argc, char **argv)
{
    static experiment x = { .settings = { 128, 0.05f, 0.9f, 1 } };
    int batch = 128;
    const cli_option extra[] = {
        { "size", CLI_INT, &x.size, "N", "N x N products on the cores (0: 1024, --quick 512)", 0, 16384 },
        { "epochs", CLI_INT, &x.epochs, "N", "epochs of training per count of devices (0: 2, --quick 1)", 0,
          MAX_EPOCHS },
        { "batch", CLI_INT, &batch, "N", "rows per training step, shared out among the GPUs (lab 05's: 128)",
          1, 65536 },
    };
    const cli_program program = { "08_parallel",
                                  "the same work on more workers: cores, GPUs, data-parallel training", extra,
                                  (int)(sizeof extra / sizeof extra[0]) };
    static const results_column columns[] = {
        { "part", RESULTS_TEXT, "part", "%s", 29 },
        { "workers", RESULTS_NUMBER, "workers", "%.0f", 7 },
        { "on", RESULTS_TEXT, "on", "%s", 11 },
        { "seconds", RESULTS_NUMBER, "seconds", "%.4f", 8 },
        { "speedup", RESULTS_NUMBER, "speed-up", "%.2fx", 8 },
        { "efficiency_percent", RESULTS_NUMBER, "efficiency", "%.0f%%", 10 },
        { "copies_per_step", RESULTS_NUMBER, "copies/step", "%.0f", 11 },
        { "epoch_losses", RESULTS_TEXT, "loss per epoch", "%s", 14 },
    };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;
    x.quick = args.quick, x.settings.batch = batch;
    if (x.size == 0) x.size = args.quick ? 512 : 1024;
    if (x.epochs == 0) x.epochs = args.quick ? 1 : 2;
    CHECK(results_create(&x.r, &args, columns, (int)(sizeof columns / sizeof columns[0])));
    char note[256];
    x.ngpus =
        gpus_to_compare(args.device_given ? &args.dev : NULL, x.gpus, DP_MAX_DEVICES, note, sizeof note);
    if (note[0]) printf("(%s)\n", note);
    for (int i = 0; i < x.ngpus; ++i) CHECK(results_mention_device(x.r, x.gpus[i]));
    dataset train;
    CHECK(dataset_synthetic(&train, x.quick ? 3000 : 12000, x.settings.seed));
    x.busy = cores_busy_elsewhere();
    printf(
        "cores: %dx%d products; devices: products on each GPU at once, then on one; training: lab 05's MLP, "
        "batch %d, %lld digits, %d epoch(s). Other programs kept %.1f of %d cores busy\n\n",
        x.size, x.size, batch, (long long)train.count, x.epochs, x.busy, cores_here());
    /* The serial loop at a few GFLOP/s, then each count of threads; an epoch in seconds. */
    progress_begin(&x.p, "the experiment", 12.0 * pow(x.size, 3) / 3e9 + 3.0 * x.epochs * train.count / 3e3);
    CHECK(results_echo(x.r, true));
    measure_cores(&x);
    measure_devices(&x);
    measure_training(&x, &train);
    progress_end(&x.p);
    CHECK(results_print(x.r));
    print_takeaway(&x);
    /* busy_cores and cores, over the whole run, come from results.h. */
    CHECK(results_finish(x.r, NULL));
    results_free(x.r);
    dataset_free(&train);
    return 0;
}
