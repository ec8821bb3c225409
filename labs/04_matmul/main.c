/* main.c: lab 04's experiment: how fast is a matrix product, on which device,
 * and from which size does a GPU pay?
 *
 * First lesson 002's point that a layer of a network is a matrix product: its
 * 3-neuron sigmoid layer, computed with your lab_layer_forward. Then, for N x N
 * products with N from 16 to 4096 (to 512 with --quick), on the CPU: your naive
 * loops in both orders and your OpenBLAS call; on each GPU: your naive kernel
 * and the library's op_matmul (cuBLAS; OpenBLAS on a simulated GPU). Each one is
 * timed with device events, shown in GFLOP/s and as a share of its device's
 * peak, and each GPU's speed-up over the CPU gives the size where it starts to
 * win. Without --device it runs on the CPU and every GPU; with --device D, on
 * the CPU and D.
 *
 *   ./lab run 04                                        the CPU and every GPU
 *   LABKIT_SIM_GPUS=1 ./lab run 04 -- --quick --plot matmul.png
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"

/* ---- what is measured ------------------------------------------------------ */

typedef enum variant { V_IJK, V_IKJ, V_OPENBLAS, V_NAIVE_KERNEL, V_LIBRARY, V_COUNT } variant;

static const char *const variant_names[V_COUNT] = { "naive i-j-k", "naive i-k-j", "OpenBLAS", "naive kernel",
                                                    "op_matmul" };

#define MAX_SIZES 12
#define MAX_DEVICES 5 /* the CPU and up to 4 GPUs: what one plot can show */
#define MAX_LINES (3 + 2 * (MAX_DEVICES - 1))

/* One device and variant across the sizes; seconds[s] == 0: not measured. */
typedef struct line {
    device dev;
    variant v;
    double seconds[MAX_SIZES], gflops[MAX_SIZES], fraction[MAX_SIZES];
} line;

typedef struct experiment {
    int64_t sizes[MAX_SIZES];
    int nsizes;
    device devices[MAX_DEVICES];
    int ndevices;
    line lines[MAX_LINES];
    int nlines;
    double trial_seconds; /* how long one timed trial should last */
} experiment;

/* The largest N worth running: the naive loops and the emulated kernel grow as
 * N^3 at a few GFLOP/s or less, so beyond these they would take minutes. */
static int64_t largest_n(device d, variant v)
{
    switch (v) {
    case V_IJK: return 1024;
    case V_IKJ: return 2048;
    case V_NAIVE_KERNEL: return d.kind == DEVICE_SIM ? 512 : 4096; /* sim: one thread at a time */
    default: return 4096;
    }
}

/* ---- one product, timed -------------------------------------------------------- */

/* The operands of one size on one device: tensors, and for the CPU's loops the
 * same values in host arrays. */
typedef struct operands {
    tensor *a, *b, *c;
    float *ha, *hb, *hc; /* CPU only */
    int64_t n;
} operands;

static void run_once(variant v, const operands *o)
{
    const int64_t n = o->n;
    switch (v) {
    case V_IJK: CHECK(lab_matmul_ijk(o->ha, o->hb, o->hc, n, n, n)); break;
    case V_IKJ: CHECK(lab_matmul_ikj(o->ha, o->hb, o->hc, n, n, n)); break;
    case V_OPENBLAS: CHECK(lab_matmul_openblas(o->ha, false, o->hb, false, o->hc, n, n, n)); break;
    case V_NAIVE_KERNEL: CHECK(lab_matmul_naive_gpu(o->a, o->b, o->c)); break;
    case V_LIBRARY: CHECK(op_matmul(o->a, false, o->b, false, NULL, o->c)); break;
    default: break;
    }
}

/* Milliseconds per product over `runs` products queued back to back, measured
 * by two events on the device: stamped when its queue reaches them, so the
 * time is the device's, not the host's (on the CPU, they are stamped at once). */
static double time_runs(device d, variant v, const operands *o, int64_t runs)
{
    event *start, *stop;
    double ms;
    CHECK(event_create(&start, d));
    CHECK(event_create(&stop, d));
    CHECK(event_record(start));
    for (int64_t r = 0; r < runs; ++r) run_once(v, o);
    CHECK(event_record(stop));
    CHECK(event_synchronize(stop));
    CHECK(event_elapsed_ms(start, stop, &ms));
    event_destroy(start);
    event_destroy(stop);
    return ms / (double)runs;
}

/* Seconds per product: one run first (it warms caches and the device up, and
 * says how long a product takes), then the best of up to 3 trials, each of as
 * many products as fill `trial_seconds`. Slow products get fewer trials. */
static double time_product(device d, variant v, const operands *o, double trial_seconds)
{
    double best_ms = time_runs(d, v, o, 1);
    const int trials = best_ms > 1000.0 ? 0 : best_ms > 200.0 ? 1 : 3;
    int64_t runs = (int64_t)(trial_seconds * 1000.0 / fmax(best_ms, 1e-3));
    runs = runs < 1 ? 1 : runs > 2000 ? 2000 : runs;
    for (int t = 0; t < trials; ++t) best_ms = fmin(best_ms, time_runs(d, v, o, runs));
    return best_ms / 1000.0;
}

/* ---- the experiment -------------------------------------------------------------- */

static void make_operands(operands *o, device d, int64_t n)
{
    memset(o, 0, sizeof *o);
    o->n = n;
    /* The same seeds give the same values on every device. */
    CHECK(tensor_uniform(&o->a, d, shape2(n, n), -1.0f, 1.0f, 1));
    CHECK(tensor_uniform(&o->b, d, shape2(n, n), -1.0f, 1.0f, 2));
    CHECK(tensor_zeros(&o->c, d, shape2(n, n)));
    if (d.kind != DEVICE_CPU) return;
    const size_t bytes = (size_t)(n * n) * sizeof(float);
    o->ha = host_alloc(bytes, 0), o->hb = host_alloc(bytes, 0), o->hc = host_alloc(bytes, 0);
    if (!o->ha || !o->hb || !o->hc)
        CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for three %lldx%lld matrices", (long long)n,
                   (long long)n));
    CHECK(tensor_to_host(o->a, o->ha, n * n));
    CHECK(tensor_to_host(o->b, o->hb, n * n));
}

static void free_operands(operands *o)
{
    tensor_free(o->a), tensor_free(o->b), tensor_free(o->c);
    host_free(o->ha, 0), host_free(o->hb, 0), host_free(o->hc, 0);
}

static line *add_line(experiment *e, device d, variant v)
{
    line *l = &e->lines[e->nlines++];
    memset(l, 0, sizeof *l);
    l->dev = d, l->v = v;
    return l;
}

/* One small product of each variant, untimed: a real GPU loads its kernels on
 * first use, and OpenBLAS starts its threads; neither belongs in a timing. */
static void warm_up(device d, const variant *variants, int nvariants)
{
    operands o;
    make_operands(&o, d, 16);
    for (int i = 0; i < nvariants; ++i) run_once(variants[i], &o);
    CHECK(device_synchronize(d));
    free_operands(&o);
}

/* The variants that run on a device: the loops and OpenBLAS on the CPU, the
 * naive kernel and the library on a GPU. Returns how many. */
static int variants_of(device d, variant out[3])
{
    if (device_is_gpu(d)) {
        out[0] = V_NAIVE_KERNEL, out[1] = V_LIBRARY;
        return 2;
    }
    out[0] = V_IJK, out[1] = V_IKJ, out[2] = V_OPENBLAS;
    return 3;
}

/* One size on one device: every variant that is not too slow there. */
static void measure_size(experiment *e, int s, device d)
{
    const int64_t n = e->sizes[s];
    operands o;
    make_operands(&o, d, n);
    for (int i = 0; i < e->nlines; ++i) {
        line *l = &e->lines[i];
        if (!device_equal(l->dev, d) || n > largest_n(d, l->v)) continue;
        l->seconds[s] = time_product(d, l->v, &o, e->trial_seconds);
        CHECK(lab_gflops(n, n, n, l->seconds[s], &l->gflops[s]));
        CHECK(lab_fraction_of_peak(l->gflops[s], d, &l->fraction[s]));
    }
    free_operands(&o);
}

/* Every variant of every device at every size, into e->lines. The devices
 * take turns at each size, so that a speed-up compares times taken moments
 * apart: on a shared machine the load comes and goes. */
static void measure(experiment *e)
{
    for (int d = 0; d < e->ndevices; ++d) {
        variant vs[3];
        const int nv = variants_of(e->devices[d], vs);
        for (int i = 0; i < nv; ++i) add_line(e, e->devices[d], vs[i]);
        warm_up(e->devices[d], vs, nv);
    }
    for (int s = 0; s < e->nsizes; ++s)
        for (int d = 0; d < e->ndevices; ++d) measure_size(e, s, e->devices[d]);
}

static const line *find_line(const experiment *e, device d, variant v)
{
    for (int i = 0; i < e->nlines; ++i)
        if (device_equal(e->lines[i].dev, d) && e->lines[i].v == v) return &e->lines[i];
    return NULL;
}

/* How many times faster GPU line g is than CPU line c at size s; 0 if either
 * was not measured. */
static double speedup(const line *c, const line *g, int s)
{
    return c && g && c->seconds[s] > 0 && g->seconds[s] > 0 ? c->seconds[s] / g->seconds[s] : 0.0;
}

/* A GPU "wins" when it is faster by more than the noise of a shared machine. */
#define WIN_MARGIN 1.10

/* The smallest N from which the GPU's op_matmul stays faster than the CPU's
 * OpenBLAS at every larger size measured; 0 if it never does. */
static int64_t crossover(const experiment *e, device gpu)
{
    const line *c = find_line(e, device_cpu(), V_OPENBLAS), *g = find_line(e, gpu, V_LIBRARY);
    int64_t from = 0;
    for (int s = e->nsizes - 1; s >= 0 && speedup(c, g, s) > WIN_MARGIN; --s) from = e->sizes[s];
    return from;
}

/* The size at which the GPU's op_matmul does best against the CPU's OpenBLAS. */
static int best_size(const experiment *e, device gpu)
{
    const line *c = find_line(e, device_cpu(), V_OPENBLAS), *g = find_line(e, gpu, V_LIBRARY);
    int best = 0;
    for (int s = 1; s < e->nsizes; ++s)
        if (speedup(c, g, s) > speedup(c, g, best)) best = s;
    return best;
}

/* ---- lesson 002's layer ------------------------------------------------------------ */

/* Three neurons, one row of weights each, and one input: the lesson's figures. */
static void show_layer(device d)
{
    const float w[9] = { 1.0f, -2.0f, 2.0f, 2.0f, 1.0f, -4.0f, 1.0f, -1.0f, 0.0f };
    const float x[3] = { 0.5f, 0.9f, -0.3f };
    tensor *tw, *tx, *tz, *ty;
    float z[3], y[3];
    CHECK(tensor_from_host(&tw, d, shape2(3, 3), w));
    CHECK(tensor_from_host(&tx, d, shape2(3, 1), x));
    CHECK(tensor_empty(&tz, d, DTYPE_F32, shape2(3, 1)));
    CHECK(tensor_empty(&ty, d, DTYPE_F32, shape2(3, 1)));
    CHECK(op_matmul(tw, false, tx, false, NULL, tz)); /* the weighted sums alone, to show them */
    CHECK(lab_layer_forward(tw, tx, ty));
    CHECK(tensor_to_host(tz, z, 3));
    CHECK(tensor_to_host(ty, y, 3));
    printf("a layer is a matrix product (lesson 002's example, on %s):\n", device_name(d));
    printf("  W x = (%.2f, %.2f, %.2f)   S(W x) = (%.2f, %.2f, %.2f)   the lesson: (0.13, 0.96, 0.40)\n",
           z[0], z[1], z[2], y[0], y[1], y[2]);
    tensor_free(tw), tensor_free(tx), tensor_free(tz), tensor_free(ty);
}

/* ---- the tables --------------------------------------------------------------------- */

static void print_device_table(const experiment *e, device d)
{
    device_properties p;
    CHECK(device_get_properties(d, &p));
    printf("\n%s: %s; FP32 peak %.0f GFLOP/s\n%7s", device_name(d), p.name, p.peak_gflops, "N");
    for (int i = 0; i < e->nlines; ++i)
        if (device_equal(e->lines[i].dev, d)) printf("  %20s", variant_names[e->lines[i].v]);
    printf("   GFLOP/s (%% of peak)\n");
    for (int s = 0; s < e->nsizes; ++s) {
        printf("%7lld", (long long)e->sizes[s]);
        for (int i = 0; i < e->nlines; ++i) {
            const line *l = &e->lines[i];
            if (!device_equal(l->dev, d)) continue;
            if (l->seconds[s] > 0)
                printf("  %11.1f (%5.1f%%)", l->gflops[s], 100.0 * l->fraction[s]);
            else
                printf("  %20s", "-");
        }
        printf("\n");
    }
}

static void print_speedups(const experiment *e)
{
    const line *blas = find_line(e, device_cpu(), V_OPENBLAS), *ikj = find_line(e, device_cpu(), V_IKJ);
    printf("\nspeed-up over the cpu: its time / the GPU's time (above 1, the GPU is faster)\n"
           "  library: op_matmul against the cpu's OpenBLAS; kernel: your naive kernel against your i-k-j "
           "loop\n%7s",
           "N");
    for (int g = 1; g < e->ndevices; ++g)
        printf("  %7s library   %7s kernel", device_name(e->devices[g]), device_name(e->devices[g]));
    printf("\n");
    for (int s = 0; s < e->nsizes; ++s) {
        printf("%7lld", (long long)e->sizes[s]);
        for (int g = 1; g < e->ndevices; ++g) {
            const double lib = speedup(blas, find_line(e, e->devices[g], V_LIBRARY), s);
            const double naive = speedup(ikj, find_line(e, e->devices[g], V_NAIVE_KERNEL), s);
            if (lib > 0)
                printf("  %16.2fx", lib);
            else
                printf("  %17s", "-");
            if (naive > 0)
                printf("  %13.2fx", naive);
            else
                printf("  %14s", "-");
        }
        printf("\n");
    }
}

/* Where each GPU starts to win, in words. A simulated GPU computes on the
 * CPU's own cores: whatever its speed-ups say beyond 1x is noise. */
static void print_crossovers(const experiment *e)
{
    const line *blas = find_line(e, device_cpu(), V_OPENBLAS);
    for (int g = 1; g < e->ndevices; ++g) {
        const device gpu = e->devices[g];
        const line *lib = find_line(e, gpu, V_LIBRARY);
        const int best = best_size(e, gpu);
        const int64_t from = crossover(e, gpu);
        if (gpu.kind == DEVICE_SIM)
            printf("%s is simulated: it computes on the CPU's own cores, so it has no crossover (near 1x is "
                   "a tie, "
                   "the rest is noise)\n",
                   device_name(gpu));
        else if (from > 0)
            printf("%s: op_matmul beats the cpu's OpenBLAS from N = %lld on (%.1fx at N = %lld)\n",
                   device_name(gpu), (long long)from, speedup(blas, lib, best), (long long)e->sizes[best]);
        else
            printf("%s: op_matmul does not stay ahead of the cpu's OpenBLAS (by more than %.0f%%) from any N "
                   "up to "
                   "%lld (best %.2fx, at N = %lld)\n",
                   device_name(gpu), 100.0 * (WIN_MARGIN - 1.0), (long long)e->sizes[e->nsizes - 1],
                   speedup(blas, lib, best), (long long)e->sizes[best]);
    }
}

/* One line for class: the tuned library against the naive loop on the same
 * CPU, and what the first GPU adds to it. */
static void print_takeaway(const experiment *e)
{
    const line *ijk = find_line(e, device_cpu(), V_IJK), *blas = find_line(e, device_cpu(), V_OPENBLAS);
    int s512 = e->nsizes - 1;
    for (int s = 0; s < e->nsizes; ++s)
        if (e->sizes[s] == 512) s512 = s;
    const double tuned = speedup(ijk, blas, s512);
    printf("takeaway: at N = %lld OpenBLAS is %.0fx faster than the naive loop on the same CPU",
           (long long)e->sizes[s512], tuned);
    if (e->ndevices < 2) {
        printf("; how the work is arranged matters as much as the hardware.\n");
        return;
    }
    const device gpu = e->devices[1];
    const line *lib = find_line(e, gpu, V_LIBRARY);
    const int best = best_size(e, gpu);
    const int64_t from = crossover(e, gpu);
    if (gpu.kind == DEVICE_SIM)
        printf(
            "; the simulated GPU %s cannot win: it computes on the same cores, so the crossover needs a real "
            "GPU.\n",
            device_name(gpu));
    else if (from > 0)
        printf("; %s beats it from N = %lld on (%.0fx at N = %lld); below that, launch overhead wins.\n",
               device_name(gpu), (long long)from, speedup(blas, lib, best), (long long)e->sizes[best]);
    else
        printf("; %s never wins up to N = %lld (at best %.2fx).\n", device_name(gpu),
               (long long)e->sizes[e->nsizes - 1], speedup(blas, lib, best));
}

/* ---- CSV and plots --------------------------------------------------------------------- */

static void write_csv(const experiment *e, const char *path)
{
    const char *const columns[] = { "device",           "variant",         "N", "seconds", "gflops",
                                    "fraction_of_peak", "speedup_over_cpu" };
    const line *cpu_for[V_COUNT] = { [V_NAIVE_KERNEL] = find_line(e, device_cpu(), V_IKJ),
                                     [V_LIBRARY] = find_line(e, device_cpu(), V_OPENBLAS) };
    csv_file *f;
    CHECK(csv_open(&f, path, columns, 7));
    for (int i = 0; i < e->nlines; ++i) {
        const line *l = &e->lines[i];
        for (int s = 0; s < e->nsizes; ++s) {
            if (l->seconds[s] <= 0) continue;
            char cells[5][32];
            const double up = speedup(cpu_for[l->v], l, s);
            snprintf(cells[0], sizeof cells[0], "%lld", (long long)e->sizes[s]);
            snprintf(cells[1], sizeof cells[1], "%.6g", l->seconds[s]);
            snprintf(cells[2], sizeof cells[2], "%.6g", l->gflops[s]);
            snprintf(cells[3], sizeof cells[3], "%.6g", l->fraction[s]);
            snprintf(cells[4], sizeof cells[4], up > 0 ? "%.4g" : "", up);
            const char *row[] = {
                device_name(l->dev), variant_names[l->v], cells[0], cells[1], cells[2], cells[3], cells[4]
            };
            CHECK(csv_row_text(f, row, 7));
        }
    }
    CHECK(csv_close(f));
}

/* A plot's series point into these arrays, which must outlive plot_draw. */
typedef struct series_data {
    char title[128];
    double x[MAX_SIZES], y[MAX_SIZES];
    size_t n;
} series_data;

/* A device's name short enough for a title: "Intel(R) Xeon(R) CPU E5-2680 v4 @
 * 2.40GHz" becomes "Intel Xeon E5-2680 v4"; a simulated GPU is said to be one. */
static void short_name(device d, char *out, size_t size)
{
    static const char *const noise[] = { "(R)", "(TM)", " CPU", " Processor" };
    device_properties p;
    CHECK(device_get_properties(d, &p));
    if (d.kind == DEVICE_SIM) snprintf(p.name, sizeof p.name, "simulated GPU");
    char *at = strstr(p.name, " @");
    if (at) *at = '\0';
    for (size_t i = 0; i < sizeof noise / sizeof noise[0]; ++i)
        for (char *hit; (hit = strstr(p.name, noise[i])) != NULL;)
            memmove(hit, hit + strlen(noise[i]), strlen(hit + strlen(noise[i])) + 1);
    snprintf(out, size, "%s", p.name);
}

/* "cpu = Intel Xeon, sim:0 = simulated GPU": which device is which. */
static void describe_devices(const experiment *e, char *out, size_t size)
{
    out[0] = '\0';
    for (int d = 0; d < e->ndevices; ++d) {
        char name[128];
        short_name(e->devices[d], name, sizeof name);
        const size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s = %s", d ? ", " : "", device_name(e->devices[d]), name);
    }
}

static void draw_gflops(const experiment *e, const char *path, const char *devices)
{
    static series_data data[MAX_LINES + MAX_DEVICES];
    char title[400];
    snprintf(title, sizeof title, "N x N matrix products, float32: %s", devices);
    plot p = { .title = title, .xlabel = "N", .ylabel = "GFLOP/s", .log_x = true, .log_y = true };
    int nseries = 0;
    for (int i = 0; i < e->nlines; ++i) {
        const line *l = &e->lines[i];
        series_data *sd = &data[nseries++];
        snprintf(sd->title, sizeof sd->title, "%s %s", device_name(l->dev), variant_names[l->v]);
        sd->n = 0;
        for (int s = 0; s < e->nsizes; ++s)
            if (l->seconds[s] > 0) sd->x[sd->n] = (double)e->sizes[s], sd->y[sd->n++] = l->gflops[s];
        CHECK(plot_add(&p, sd->title, sd->x, sd->y, sd->n, PLOT_LINES_POINTS));
    }
    /* Each device's peak, a dashed line across the sizes. A simulated GPU's is
     * the CPU's own: one line says so instead of two on top of each other. */
    char sims[64] = "";
    for (int d = 1; d < e->ndevices; ++d)
        if (e->devices[d].kind == DEVICE_SIM)
            snprintf(sims + strlen(sims), sizeof sims - strlen(sims), ", %s", device_name(e->devices[d]));
    for (int d = 0; d < e->ndevices; ++d) {
        device_properties props;
        CHECK(device_get_properties(e->devices[d], &props));
        if (props.peak_gflops <= 0 || e->devices[d].kind == DEVICE_SIM) continue;
        series_data *sd = &data[nseries++];
        snprintf(sd->title, sizeof sd->title, "peak of %s%s: %.0f GFLOP/s", device_name(e->devices[d]),
                 d == 0 ? sims : "", props.peak_gflops);
        sd->x[0] = (double)e->sizes[0], sd->x[1] = (double)e->sizes[e->nsizes - 1];
        sd->y[0] = sd->y[1] = props.peak_gflops;
        sd->n = 2;
        CHECK(plot_add(&p, sd->title, sd->x, sd->y, sd->n, PLOT_DASHED));
    }
    CHECK(plot_draw(&p, path));
}

static void draw_speedups(const experiment *e, const char *path, const char *devices)
{
    static series_data data[2 * MAX_DEVICES + 1];
    const line *cpu_for[V_COUNT] = { [V_NAIVE_KERNEL] = find_line(e, device_cpu(), V_IKJ),
                                     [V_LIBRARY] = find_line(e, device_cpu(), V_OPENBLAS) };
    char title[400];
    snprintf(title, sizeof title, "GPU speed-up over the CPU: %s", devices);
    plot p = {
        .title = title, .xlabel = "N", .ylabel = "speed-up over the CPU", .log_x = true, .log_y = true
    };
    int nseries = 0;
    for (int g = 1; g < e->ndevices; ++g)
        for (variant v = V_NAIVE_KERNEL; v <= V_LIBRARY; ++v) {
            const line *l = find_line(e, e->devices[g], v);
            series_data *sd = &data[nseries++];
            snprintf(sd->title, sizeof sd->title, "%s %s vs cpu %s", device_name(l->dev), variant_names[v],
                     variant_names[cpu_for[v]->v]);
            sd->n = 0;
            for (int s = 0; s < e->nsizes; ++s) {
                const double up = speedup(cpu_for[v], l, s);
                if (up > 0) sd->x[sd->n] = (double)e->sizes[s], sd->y[sd->n++] = up;
            }
            CHECK(plot_add(&p, sd->title, sd->x, sd->y, sd->n, PLOT_LINES_POINTS));
        }
    series_data *even = &data[nseries];
    snprintf(even->title, sizeof even->title, "break-even (1x)");
    even->x[0] = (double)e->sizes[0], even->x[1] = (double)e->sizes[e->nsizes - 1];
    even->y[0] = even->y[1] = 1.0;
    even->n = 2;
    CHECK(plot_add(&p, even->title, even->x, even->y, even->n, PLOT_DASHED));
    CHECK(plot_draw(&p, path));
}

/* "figs/matmul.png" -> "figs/matmul-speedup.png". */
static void speedup_path(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) dot = path + strlen(path);
    snprintf(out, size, "%.*s-speedup%s", (int)(dot - path), path, dot);
}

static void draw_plots(const experiment *e, const char *path)
{
    char devices[300], second[1024];
    describe_devices(e, devices, sizeof devices);
    draw_gflops(e, path, devices);
    if (e->ndevices < 2) return; /* no GPU: no speed-up to draw */
    speedup_path(path, second, sizeof second);
    draw_speedups(e, second, devices);
}

/* ---- main ---------------------------------------------------------------------------------- */

/* The CPU, then the device given, or every GPU (as many as one plot shows). */
static void choose_devices(experiment *e, const cli_args *args)
{
    e->devices[0] = device_cpu();
    e->ndevices = 1;
    if (args->device_given) {
        if (device_is_gpu(args->dev)) e->devices[e->ndevices++] = args->dev;
        return;
    }
    device all[LABKIT_MAX_DEVICES];
    const int n = device_list(all, LABKIT_MAX_DEVICES);
    for (int i = 1; i < n && e->ndevices < MAX_DEVICES; ++i) e->devices[e->ndevices++] = all[i];
    if (n > MAX_DEVICES)
        printf("(%d GPUs here; this run uses the first %d: pick another with --device)\n", n - 1,
               MAX_DEVICES - 1);
}

int main(int argc, char **argv)
{
    const cli_program program = {
        .name = "04_matmul",
        .summary =
            "matrix products on the CPU (naive loops, OpenBLAS) and on each GPU (a naive kernel, the "
            "library), in GFLOP/s, and where a GPU starts to win; without --device: the CPU and every GPU",
    };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;

    static experiment e;
    choose_devices(&e, &args);
    e.trial_seconds = args.quick ? 0.01 : 0.05;
    for (int64_t n = 16; n <= (args.quick ? 512 : 4096); n *= 2) e.sizes[e.nsizes++] = n;

    show_layer(e.devices[e.ndevices - 1]);
    measure(&e);
    for (int d = 0; d < e.ndevices; ++d) print_device_table(&e, e.devices[d]);
    if (e.nsizes > 0 && e.sizes[e.nsizes - 1] > largest_n(device_cpu(), V_IJK))
        printf("(-: not run; the naive loops and the simulated kernel would take minutes at that size)\n");
    if (e.ndevices > 1) {
        print_speedups(&e);
        print_crossovers(&e);
    }
    print_takeaway(&e);

    if (args.csv_path) write_csv(&e, args.csv_path);
    if (args.plot_path) draw_plots(&e, args.plot_path);
    return 0;
}
