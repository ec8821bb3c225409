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
 *
 *   ./lab run 08 -- --quick --plot parallel.png
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "given.h"
#include "lab.h"

typedef struct options {
    int size, epochs;
} options;

typedef struct experiment {
    options o;
    bool quick;
    results *r;
    device gpus[DP_MAX_DEVICES]; /* GPUs of one kind, for the devices and the training */
    int ngpus;
} experiment;

/* One row: a part, its workers, what they were, the time and the scaling. */
static void add_row(experiment *x, const char *part, int workers, const char *on, double one, double seconds)
{
    double speedup, efficiency;
    CHECK(lab_scaling(one, seconds, workers, &speedup, &efficiency));
    CHECK(results_row(x->r));
    results_text(x->r, "part", part);
    results_number(x->r, "workers", workers);
    results_text(x->r, "on", on);
    results_number(x->r, "seconds", seconds);
    results_number(x->r, "speedup", speedup);
    results_number(x->r, "efficiency", efficiency);
}

/* ---- cores ------------------------------------------------------------------ */

enum { LOOP_OMP, LOOP_BLAS };

/* The best of at least 3 runs and at least `least` seconds of them: noise on
 * a shared machine only ever adds time. */
static double best_seconds(int loop, const float *a, const float *b, float *c, int64_t n, int threads,
                           double least)
{
    double best = INFINITY, total = 0.0;
    for (int run = 0; run < 3 || (total < least && run < 1000); ++run) {
        const double start = wall_seconds();
        if (loop == LOOP_OMP)
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
    const int64_t n = x->o.size;
    const int cores = cores_here();
    float *a = malloc((size_t)(n * n) * sizeof *a), *b = malloc((size_t)(n * n) * sizeof *b),
          *c = malloc((size_t)(n * n) * sizeof *c);
    if (!a || !b || !c)
        CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for three %lldx%lld matrices", (long long)n,
                   (long long)n));
    for (int64_t i = 0; i < n * n; ++i)
        a[i] = (float)(i % 17) / 17.0f - 0.5f, b[i] = (float)(i % 13) / 13.0f - 0.5f;
    progress p; /* the serial loop at a few GFLOP/s, then each thread count */
    progress_begin(&p, "the i-k-j loop on every thread count", 3 * 2.0 * pow((double)n, 3) / 3e9 * 2.0);
    blas_threads(1); /* OpenBLAS's pool stays asleep while OpenMP's works */
    double one = 0.0;
    char on[64];
    for (int t = 1; t <= cores; t = t * 2 > cores && t < cores ? cores : t * 2) {
        const double seconds = best_seconds(LOOP_OMP, a, b, c, n, t, 0.3);
        one = t == 1 ? seconds : one;
        snprintf(on, sizeof on, "%d thread%s", t, t > 1 ? "s" : "");
        add_row(x, "cores: your OpenMP i-k-j loop", t, on, one, seconds);
        progress_update(&p, (double)t / cores);
    }
    progress_end(&p);
    pools_settle(); /* OpenMP's threads asleep before OpenBLAS's wake up */
    for (int t = 1; t <= cores; t = t == cores ? cores + 1 : cores) {
        blas_threads(t);
        const double seconds = best_seconds(LOOP_BLAS, a, b, c, n, t, 0.3);
        one = t == 1 ? seconds : one;
        snprintf(on, sizeof on, "%d thread%s", t, t > 1 ? "s" : "");
        add_row(x, "cores: OpenBLAS", t, on, one, seconds);
    }
    blas_threads(0);
    pools_settle(); /* and asleep again before the devices work */
    free(a), free(b), free(c);
}

/* ---- devices ------------------------------------------------------------------ */

/* "sim:0+sim:1" */
static const char *names_of(const device *d, int n, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < n; ++i)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? "+" : "", device_name(d[i]));
    return out;
}

/* The GPUs of one kind for the two parts: every real GPU where there are two
 * or more, else every simulated one (saying why when there is one real GPU). */
static void choose_gpus(experiment *x)
{
    const int cuda = device_count(DEVICE_CUDA), sim = device_count(DEVICE_SIM);
    const device_kind kind = cuda >= 2 ? DEVICE_CUDA : DEVICE_SIM;
    const int count = kind == DEVICE_CUDA ? cuda : sim;
    for (int i = 0; i < count && i < DP_MAX_DEVICES; ++i) x->gpus[x->ngpus++] = (device){ kind, i };
    if (cuda == 1 && sim >= 2)
        printf("(one real GPU here: two devices of one kind are needed to compare, so the devices run on "
               "sim:0 and sim:1)\n");
    if (x->ngpus < 2)
        printf("(fewer than two GPUs of one kind: the devices part is left out; LABKIT_SIM_GPUS=2 gives two "
               "simulated ones)\n");
}

static void measure_devices(experiment *x)
{
    if (x->ngpus < 2) return;
    const bool real = x->gpus[0].kind == DEVICE_CUDA;
    /* Work that dominates a launch's overhead: ~0.1 s per device on sim:N, ~50 ms on a big GPU. */
    const int64_t n = real ? 4096 : x->quick ? 192 : 320;
    const int products = real ? 8 : 2;
    product_work work[DP_MAX_DEVICES];
    for (int i = 0; i < x->ngpus; ++i) CHECK(product_work_create(&work[i], x->gpus[i], n, products));
    CHECK(lab_run_at_once(work, x->ngpus)); /* warm-up: kernels load, workers start */
    char on[128];
    for (int k = 1; k <= x->ngpus; ++k) {
        double once = INFINITY, one = INFINITY; /* best of 3 each */
        for (int run = 0; run < 3; ++run) {
            double start = wall_seconds();
            CHECK(run_on_one(work, k));
            one = fmin(one, wall_seconds() - start);
            start = wall_seconds();
            CHECK(lab_run_at_once(work, k));
            once = fmin(once, wall_seconds() - start);
        }
        add_row(x, "devices: products at once", k, names_of(x->gpus, k, on, sizeof on), one, once);
    }
    for (int i = 0; i < x->ngpus; ++i) product_work_free(&work[i]);
}

/* ---- data-parallel training -------------------------------------------------- */

static void measure_training(experiment *x)
{
    device devices[DP_MAX_DEVICES] = { device_cpu() };
    const int ndevices = x->ngpus > 0 ? x->ngpus : 1;
    if (x->ngpus > 0) memcpy(devices, x->gpus, sizeof devices);
    const int64_t sizes[] = { 784, 256, 256, 10 };
    const dp_settings settings = { 128, 0.05f, 0.9f, 1 }; /* lab 05's */
    dataset train;
    CHECK(dataset_synthetic(&train, x->quick ? 3000 : 12000, settings.seed));
    printf("training: lab 05's MLP 784-256-256-10 on %lld synthetic digits, batch %lld, lr %g, momentum %g, "
           "%d epoch%s\n",
           (long long)train.count, (long long)settings.batch, settings.lr, settings.momentum, x->o.epochs,
           x->o.epochs > 1 ? "s" : "");
    double one = 0.0;
    for (int k = 1; k <= ndevices; k = k == 1 && ndevices > 1 ? ndevices : ndevices + 1) {
        replica replicas[DP_MAX_DEVICES];
        replica *all[DP_MAX_DEVICES];
        for (int d = 0; d < k; ++d)
            CHECK(replica_create(all[d] = &replicas[d], devices[d], sizes, 4, settings.seed));
        double seconds = 0.0, loss = 0.0, copies = 0.0;
        char losses[256] = "", on[128];
        for (int e = 0; e < x->o.epochs; ++e) {
            dp_epoch_result result;
            CHECK(dp_epoch(all, k, &train, e, &settings, &result));
            seconds += result.seconds / x->o.epochs, loss = result.loss;
            copies = (double)(result.h2d_copies + result.d2h_copies) / (double)result.steps;
            snprintf(losses + strlen(losses), sizeof losses - strlen(losses), "%s%.6f", e ? " " : "", loss);
        }
        one = k == 1 ? seconds : one;
        add_row(x, "training: data-parallel epoch", k, names_of(devices, k, on, sizeof on), one, seconds);
        results_number(x->r, "loss", loss);
        results_text(x->r, "epoch_losses", losses);
        results_number(x->r, "copies_per_step", copies);
        for (int d = 0; d < k; ++d) replica_free(&replicas[d]);
    }
    dataset_free(&train);
}

int main(int argc, char **argv)
{
    static experiment x = { .o = { 0, 0 } };
    const cli_option extra[] = {
        { "size", CLI_INT, &x.o.size, "N", "N x N products on the cores (0: 1024, --quick 512)", 0, 16384 },
        { "epochs", CLI_INT, &x.o.epochs, "N", "epochs of training per device count (0: 2, --quick 1)", 0,
          50 },
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
        { "efficiency", RESULTS_NUMBER, "efficiency", "%.0f%%", 10 },
        { "loss", RESULTS_NUMBER, "last loss", "%.6f", 9 },
        { "copies_per_step", RESULTS_NUMBER, "copies/step", "%.0f", 11 },
        { "epoch_losses", RESULTS_TEXT, "loss per epoch", "%s", 14 },
    };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;
    x.quick = args.quick;
    if (x.o.size == 0) x.o.size = args.quick ? 512 : 1024;
    if (x.o.epochs == 0) x.o.epochs = args.quick ? 1 : 2;
    CHECK(results_create(&x.r, &args, columns, (int)(sizeof columns / sizeof columns[0])));
    choose_gpus(&x);
    for (int i = 0; i < x.ngpus; ++i) CHECK(results_mention_device(x.r, x.gpus[i]));
    CHECK(results_echo(x.r, true));
    measure_cores(&x);
    measure_devices(&x);
    measure_training(&x);
    CHECK(results_print(x.r));
    CHECK(results_finish(x.r, NULL));
    results_free(x.r);
    return 0;
}
