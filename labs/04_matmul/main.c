/* main.c: lab 04's experiment: how fast is a matrix product, on which device,
 * and from which size does a GPU pay? First lesson 002's layer, with your
 * lab_layer_forward; then N x N products, N = 16 to 4096 (512 with --quick): on
 * the CPU your two loops and your OpenBLAS call, on the GPU (--device D, else
 * try_gpu(0); --device cpu: none) your naive kernel and the library's op_matmul
 * (cuBLAS; OpenBLAS on a simulated GPU). One table: time, GFLOP/s, share of the
 * device's peak, and the GPU's speed-up over the CPU doing the same kind of work.
 *
 *   ./lab run 04 -- --quick --plot matmul.png   (also draws matmul-speedup.png)
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"

typedef enum variant { V_IJK, V_IKJ, V_OPENBLAS, V_KERNEL, V_LIBRARY, V_COUNT } variant;
static const char *const variant_names[V_COUNT] = { "naive i-j-k", "naive i-k-j", "OpenBLAS", "naive kernel",
                                                    "op_matmul" };
/* A GPU's variant against the CPU's that does the same kind of work. */
static const variant cpu_counterpart[V_COUNT] = { [V_KERNEL] = V_IKJ, [V_LIBRARY] = V_OPENBLAS };

typedef struct experiment {
    int64_t sizes[12]; /* N = 16, 32, ... up to 4096 */
    int nsizes;
    device devices[2]; /* the CPU, then the GPU if there is one */
    int ndevices;
    double seconds[2][V_COUNT][12]; /* per product; 0: not run */
} experiment;

/* The largest N variant v runs at on d (0: not there). The naive ones grow as
 * N^3 at a few GFLOP/s: beyond these sizes they would take minutes. */
static int64_t largest_n(device d, variant v)
{
    if (device_is_gpu(d) != (v == V_KERNEL || v == V_LIBRARY)) return 0;
    if (v == V_IJK) return 1024;
    if (v == V_IKJ) return 2048;
    return v == V_KERNEL && d.kind == DEVICE_SIM ? 512 : 4096;
}

/* ---- one product, timed -------------------------------------------------------- */

/* c = a b, all n x n, in variant v. On the CPU a tensor's memory is the host's:
 * the CPU's loops read it through tensor_data. */
static void run_once(variant v, tensor *const t[3], int64_t n)
{
    const float *a = tensor_data_const(t[0]), *b = tensor_data_const(t[1]);
    float *c = tensor_data(t[2]);
    switch (v) {
    case V_IJK: CHECK(lab_matmul_ijk(a, b, c, n, n, n)); break;
    case V_IKJ: CHECK(lab_matmul_ikj(a, b, c, n, n, n)); break;
    case V_OPENBLAS: CHECK(lab_matmul_openblas(a, false, b, false, c, n, n, n)); break;
    case V_KERNEL: CHECK(lab_matmul_naive_gpu(t[0], t[1], t[2])); break;
    default: CHECK(op_matmul(t[0], false, t[1], false, NULL, t[2])); break;
    }
}

/* Seconds per product, between two events stamped when the device's queue
 * reaches them: the device's time, not the time the host took to queue the
 * work. One product alone first (it says how long one takes), then up to 3
 * trials of products queued back to back for trial_seconds each (fewer for a
 * slow product); the best wins, since noise only ever adds time. */
static double time_product(device d, variant v, tensor *const t[3], int64_t n, double trial_seconds)
{
    double best_ms = INFINITY, ms;
    int64_t runs = 1;
    for (int trial = 0; trial == 0 || (trial < 4 && best_ms < (trial == 1 ? 1000.0 : 200.0)); ++trial) {
        event *start, *stop;
        CHECK(event_create(&start, d));
        CHECK(event_create(&stop, d));
        CHECK(event_record(start));
        for (int64_t r = 0; r < runs; ++r) run_once(v, t, n);
        CHECK(event_record(stop));
        CHECK(event_synchronize(stop));
        CHECK(event_elapsed_ms(start, stop, &ms));
        event_destroy(start), event_destroy(stop);
        best_ms = fmin(best_ms, ms / (double)runs);
        runs = (int64_t)fmin(fmax(trial_seconds * 1e3 / fmax(best_ms, 1e-3), 1.0), 2000.0);
    }
    return best_ms / 1e3;
}

/* ---- the experiment -------------------------------------------------------------- */

/* Every variant of every device at every size, one row each. The devices take
 * turns at each size, so that a speed-up compares times taken moments apart. */
static void measure(experiment *e, results *r, double trial_seconds)
{
    double guess = 0.0; /* seconds: each product ~4 times, at 1 GFLOP/s if naive, 100 if tuned */
    for (int d = 0; d < e->ndevices; ++d)
        for (variant v = 0; v < V_COUNT; ++v)
            for (int s = 0; s < e->nsizes && e->sizes[s] <= largest_n(e->devices[d], v); ++s)
                guess += 8e-9 * pow((double)e->sizes[s], 3) / (v == V_OPENBLAS || v == V_LIBRARY ? 100 : 1);
    progress p;
    progress_begin(&p, "matrix products on every device", guess);
    for (int s = 0; s < e->nsizes; ++s)
        for (int d = 0; d < e->ndevices; ++d) {
            const device dev = e->devices[d];
            const int64_t n = e->sizes[s];
            tensor *t[3];
            CHECK(tensor_uniform(&t[0], dev, shape2(n, n), -1.0f, 1.0f, 1)); /* the same on every device */
            CHECK(tensor_uniform(&t[1], dev, shape2(n, n), -1.0f, 1.0f, 2));
            CHECK(tensor_zeros(&t[2], dev, shape2(n, n)));
            for (variant v = 0; v < V_COUNT; ++v) {
                if (n > largest_n(dev, v)) continue;
                if (s == 0) run_once(v, t, n); /* warm-up: kernels load, OpenBLAS starts its threads */
                const double seconds = e->seconds[d][v][s] = time_product(dev, v, t, n, trial_seconds);
                const double cpu_seconds = e->seconds[0][cpu_counterpart[v]][s];
                double gflops, fraction;
                CHECK(lab_gflops(n, n, n, seconds, &gflops));
                CHECK(lab_fraction_of_peak(gflops, dev, &fraction));
                CHECK(results_row(r));
                results_text(r, "device", device_name(dev));
                results_text(r, "variant", variant_names[v]);
                results_number(r, "n", (double)n);
                results_number(r, "ms", seconds * 1e3);
                results_number(r, "gflops", gflops);
                results_number(r, "percent_of_peak", fraction > 0 ? 100.0 * fraction : NAN); /* 0: unknown */
                results_number(r, "speedup", device_is_gpu(dev) ? cpu_seconds / seconds : NAN);
            }
            tensor_free(t[0]), tensor_free(t[1]), tensor_free(t[2]);
            progress_update(&p, (s * e->ndevices + d + 1.0) / (e->nsizes * e->ndevices));
        }
    progress_end(&p);
}

/* ---- lesson 002's layer, and the takeaway -------------------------------------------------- */

/* Three neurons, one row of weights each, and one input: the lesson's figures. */
static void show_layer(device d)
{
    const float w[9] = { 1.0f, -2.0f, 2.0f, 2.0f, 1.0f, -4.0f, 1.0f, -1.0f, 0.0f },
                x[3] = { 0.5f, 0.9f, -0.3f };
    tensor *tw, *tx, *ty;
    float y[3];
    CHECK(tensor_from_host(&tw, d, shape2(3, 3), w));
    CHECK(tensor_from_host(&tx, d, shape2(3, 1), x));
    CHECK(tensor_zeros(&ty, d, shape2(3, 1)));
    CHECK(lab_layer_forward(tw, tx, ty));
    CHECK(tensor_to_host(ty, y, 3));
    printf("a layer is a matrix product, lesson 002's example on %s: W x = (-1.9, 3.1, -0.4) and\n"
           "  S(W x) = (%.2f, %.2f, %.2f); the lesson: (0.13, 0.96, 0.40)\n\n",
           device_name(d), y[0], y[1], y[2]);
    tensor_free(tw), tensor_free(tx), tensor_free(ty);
}

/* One line for class: the tuned library against the naive loop on one CPU,
 * and from which N the GPU's op_matmul stays ahead of OpenBLAS by more than a
 * shared machine's noise (10%). */
static void print_takeaway(const experiment *e)
{
    const int last = e->nsizes - 1;
    const double *blas = e->seconds[0][V_OPENBLAS], *library = e->seconds[1][V_LIBRARY];
    double low = INFINITY, high = 0.0; /* the GPU's speed-ups from N = 64 on */
    int s512 = last, from = e->nsizes;
    for (int s = 0; s < e->nsizes; ++s) {
        s512 = e->sizes[s] == 512 ? s : s512;
        if (e->ndevices > 1 && e->sizes[s] >= 64)
            low = fmin(low, blas[s] / library[s]), high = fmax(high, blas[s] / library[s]);
    }
    while (e->ndevices > 1 && from > 0 && blas[from - 1] > 1.10 * library[from - 1]) --from;
    printf("\ntakeaway: at N = %lld OpenBLAS is %.0fx faster than the naive i-j-k loop on the same CPU",
           (long long)e->sizes[s512], e->seconds[0][V_IJK][s512] / blas[s512]);
    const char *gpu = device_name(e->devices[e->ndevices - 1]);
    if (e->ndevices < 2)
        printf("; how the work is arranged matters as much as the hardware.\n");
    else if (e->devices[1].kind == DEVICE_SIM)
        printf("; %s ties with it (%.2fx to %.2fx from N = 64 on, a shared machine's noise): it computes on "
               "the same cores, so the crossover needs a real GPU.\n",
               gpu, low, high);
    else if (from <= last)
        printf("; %s's op_matmul wins from N = %lld on (%.0fx at N = %lld); below, launch overhead wins.\n",
               gpu, (long long)e->sizes[from], blas[last] / library[last], (long long)e->sizes[last]);
    else
        printf("; %s's op_matmul does not stay ahead of it (%.2fx at N = %lld).\n", gpu,
               blas[last] / library[last], (long long)e->sizes[last]);
}

/* ---- the figures ----------------------------------------------------------------------------- */

/* "figs/matmul.png" -> "figs/matmul-speedup.png": the second figure, beside the first. */
static void speedup_path(const char *figure, char *out, size_t size)
{
    const char *slash = strrchr(figure, '/'), *dot = strrchr(figure, '.');
    if (!dot || (slash && dot < slash)) dot = figure + strlen(figure);
    snprintf(out, size, "%.*s-speedup%s", (int)(dot - figure), figure, dot);
}

/* Every --plot FIG draws GFLOP/s in FIG and, with a GPU, the speed-ups in
 * FIG-speedup beside it: both by plot.gp, from the one CSV (--csv FILE, or
 * FIG.csv), which names them for a redraw (./lab plots --reference). */
static void draw_figures(results *r, bool gpu)
{
    static const char *const figures[] = { "gflops", "speedup" };
    CHECK(results_finish_figures(r, figures, gpu ? 2 : 1, NULL));
}

int main(int argc, char **argv)
{
    const cli_program program = { .name = "04_matmul",
                                  .summary = "N x N matrix products on the CPU and a GPU, in GFLOP/s" };
    static const results_column columns[] = {
        { "device", RESULTS_TEXT, "device", "%s", 6 },
        { "variant", RESULTS_TEXT, "variant", "%s", 12 },
        { "n", RESULTS_NUMBER, "N", "%.0f", 5 },
        { "ms", RESULTS_NUMBER, "ms/product", "%.4f", 10 },
        { "gflops", RESULTS_NUMBER, "GFLOP/s", "%.1f", 8 },
        { "percent_of_peak", RESULTS_NUMBER, "% of peak", "%.1f%%", 9 },
        { "speedup", RESULTS_NUMBER, "speed-up over CPU", "%.2fx", 17 },
    };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;
    for (int i = 0; i < args.nplots; ++i) { /* the second figures too, before any work */
        char second[4096];
        speedup_path(args.plot_paths[i], second, sizeof second);
        if (output_check(second, "--plot (its speed-up figure)") != STATUS_OK)
            return fprintf(stderr, "%s\n", last_error()), 2;
    }
    results *r;
    CHECK(results_create(&r, &args, columns, (int)(sizeof columns / sizeof columns[0])));

    static experiment e;
    e.devices[e.ndevices++] = device_cpu();
    if (device_is_gpu(args.dev)) e.devices[e.ndevices++] = args.dev; /* --device D, or try_gpu(0) */
    for (int64_t n = 16; n <= (args.quick ? 512 : 4096); n *= 2) e.sizes[e.nsizes++] = n;

    show_layer(e.devices[e.ndevices - 1]);
    CHECK(results_echo(r, true));             /* each row as soon as it is measured */
    measure(&e, r, args.quick ? 0.01 : 0.05); /* seconds per timed trial */
    CHECK(results_print(r));
    if (e.ndevices > 1)
        printf(
            "(speed-up: the CPU's time / the GPU's; naive kernel vs naive i-k-j, op_matmul vs OpenBLAS)\n");
    print_takeaway(&e);
    draw_figures(r, e.ndevices > 1);
    results_free(r);
    return 0;
}
