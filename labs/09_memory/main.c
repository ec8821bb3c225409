/* main.c: lab 09's experiment, the memory hierarchy, on the device of --device
 * (default: GPU 0, else the CPU). Every kernel timed between events, the
 * fastest of a few runs, and placed in one table:
 *   1. bandwidth: your copy and scale, and your strided copy at strides 1 to
 *      32: GB/s against the device's peak;
 *   2. tiles: your naive and tiled products beside the library's (cuBLAS on a
 *      real GPU): GFLOP/s, and the global loads one cell costs;
 *   3. a reduction: your three sums, their atomics counted, their error
 *      against float64;
 *   4. the roofline: each kernel's FLOP per byte and GFLOP/s under the
 *      device's two roofs, with the library's softmax beside them;
 *   5. a transpose: the given naive one and yours, through a padded tile:
 *      GB/s, and the passes a tile column's read takes by your formula.
 * Sizes follow the device: a real GPU gets arrays of 256 MiB and N = 2048; the
 * CPU and a simulated GPU, whose kernels run one thread at a time, smaller. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "given.h"
#include "lab.h"

static const results_column columns[] = { { "part", RESULTS_TEXT, "part", "%s", 9 },
                                          { "kernel", RESULTS_TEXT, "kernel", "%s", 14 },
                                          { "n", RESULTS_NUMBER, "n", "%.0f", 8 },
                                          { "stride", RESULTS_NUMBER, "stride", "%.0f", 6 },
                                          { "ms", RESULTS_NUMBER, "ms", "%.3f", 8 },
                                          { "gbs", RESULTS_NUMBER, "GB/s", "%.1f", 7 },
                                          { "peak_share", RESULTS_NUMBER, "% peak", "%.1f%%", 6 },
                                          { "gflops", RESULTS_NUMBER, "GFLOP/s", "%.1f", 8 },
                                          { "intensity", RESULTS_NUMBER, "FLOP/B", "%.3g", 6 },
                                          { "roof", RESULTS_NUMBER, "roof GFLOP/s", "%.0f", 12 },
                                          { "loads", RESULTS_NUMBER, "loads/cell", "%.0f", 10 },
                                          { "atomics", RESULTS_NUMBER, "atomics", "%.0f", 8 },
                                          { "error", RESULTS_NUMBER, "error vs f64", "%.1e", 12 } };

/* What a timed call runs. */
typedef struct work {
    enum { STREAM, PRODUCT, LIBRARY_PRODUCT, SUM, SOFTMAX, TRANSPOSE } what;
    device d;
    int kernel, stride;
    int64_t n;
    tensor *in, *out;                       /* step 1 */
    tensor *a, *b, *c;                      /* step 2 */
    tensor *x, *total;                      /* step 3 */
    tensor *logits, *labels, *probs, *loss; /* the library's softmax */
} work;

static status run(const void *context)
{
    const work *w = context;
    switch (w->what) {
    case STREAM:
        return run_stream(w->d, (stream_kernel)w->kernel, tensor_data_const(w->in), tensor_data(w->out), w->n,
                          w->stride, 2.0f);
    case PRODUCT:
        return run_product(w->d, (product_kernel)w->kernel, tensor_data_const(w->a), tensor_data_const(w->b),
                           tensor_data(w->c), w->n, w->n, w->n);
    case LIBRARY_PRODUCT: return op_matmul(w->a, false, w->b, false, NULL, w->c);
    case SUM:
        return run_sum(w->d, (sum_kernel)w->kernel, tensor_data_const(w->x), w->n, tensor_data(w->total),
                       NULL);
    case TRANSPOSE: /* in [n, n] into out */
        return run_transpose(w->d, (transpose_kind)w->kernel, tensor_data_const(w->in), tensor_data(w->out),
                             w->n, w->n);
    default: return op_softmax_cross_entropy(w->logits, w->labels, w->probs, w->loss);
    }
}

/* What the takeaway and the figure need. */
typedef struct summary {
    device_properties p;
    double copy_gbs, stride1_ms, stride32_ms, naive_ms, tiled_ms, library_ms, sums_ms[3], transpose_gbs[2];
    int passes_padded, passes_unpadded; /* a tile column's read, by your formula */
    float atomic_runs[2];
    int64_t n_product;
} summary;

static double timed_ms(work *w, int runs)
{
    double ms;
    CHECK(time_call(w->d, run, w, runs, &ms));
    return ms;
}

/* The row's roofline cells from your formulas: its intensity, the roof above
 * it and what it achieved. */
static void roofline_cells(results *r, const summary *s, double flop, double bytes, double ms)
{
    double intensity, roof;
    CHECK(lab_arithmetic_intensity(flop, bytes, &intensity));
    results_number(r, "intensity", intensity);
    if (flop > 0) results_number(r, "gflops", flop / ms / 1e6);
    if (flop > 0 && s->p.peak_gflops > 0 && s->p.memory_bandwidth_gbs > 0) {
        CHECK(lab_attainable_gflops(intensity, s->p.peak_gflops, s->p.memory_bandwidth_gbs, &roof));
        results_number(r, "roof", roof);
    }
}

static void bandwidth_cells(results *r, const summary *s, double read, double written, double ms)
{
    double gbs;
    CHECK(lab_bandwidth_gbs(read, written, ms / 1e3, &gbs));
    results_number(r, "gbs", gbs);
    if (s->p.memory_bandwidth_gbs > 0)
        results_number(r, "peak_share", 100.0 * gbs / s->p.memory_bandwidth_gbs);
}

static void start_row(results *r, const char *part, const char *kernel, int64_t n, double ms)
{
    CHECK(results_row(r));
    results_text(r, "part", part);
    results_text(r, "kernel", kernel);
    results_number(r, "n", (double)n);
    results_number(r, "ms", ms);
}

/* ---- 1. bandwidth ------------------------------------------------------------------------- */

static void bandwidth(results *r, device d, int64_t n, int runs, summary *s)
{
    work w = { .what = STREAM, .d = d, .n = n, .stride = 1 };
    CHECK(tensor_uniform(&w.in, d, shape1(n), -1.0f, 1.0f, 1));
    CHECK(tensor_zeros(&w.out, d, shape1(n)));
    const double bytes = 4.0 * (double)n; /* each way */
    for (int kernel = KERNEL_COPY; kernel <= KERNEL_SCALE; ++kernel) {
        w.kernel = kernel;
        const double ms = timed_ms(&w, runs);
        start_row(r, "bandwidth", stream_kernel_name((stream_kernel)kernel), n, ms);
        bandwidth_cells(r, s, bytes, bytes, ms);
        double flop, least;
        CHECK(lab_kernel_cost(kernel == KERNEL_COPY ? LAB_COPY : LAB_SCALE, n, &flop, &least));
        roofline_cells(r, s, flop, least, ms);
        if (kernel == KERNEL_COPY) s->copy_gbs = results_get(r, results_count(r) - 1, "gbs");
    }
    w.kernel = KERNEL_STRIDED;
    for (w.stride = 1; w.stride <= 32; w.stride *= 2) {
        const double ms = timed_ms(&w, runs);
        start_row(r, "bandwidth", "strided copy", n, ms);
        results_number(r, "stride", w.stride);
        bandwidth_cells(r, s, bytes, bytes, ms);
        if (w.stride == 1) s->stride1_ms = ms;
        if (w.stride == 32) s->stride32_ms = ms;
    }
    tensor_free(w.in), tensor_free(w.out);
}

/* ---- 2. tiles ------------------------------------------------------------------------------- */

/* The largest error of c against float64 on 64 cells spread over it, relative to their terms' size. */
static double sampled_error(const work *w)
{
    float *a, *b, *c;
    CHECK(host_copy(w->a, &a));
    CHECK(host_copy(w->b, &b));
    CHECK(host_copy(w->c, &c));
    double largest = 0.0;
    for (int i = 0; i < 64; ++i) {
        const int64_t row = i * 37 % w->n, col = (i * 53 + 11) % w->n;
        double scale;
        const double want = product_reference(a, b, w->n, w->n, row, col, &scale);
        const double got = c[row * w->n + col];
        largest = fmax(largest, isfinite(got) ? fabs(got - want) / scale : INFINITY);
    }
    free(a), free(b), free(c);
    return largest;
}

static void tiles(results *r, device d, int64_t n, int runs, summary *s)
{
    work w = { .what = PRODUCT, .d = d, .n = n };
    CHECK(tensor_uniform(&w.a, d, shape2(n, n), -1.0f, 1.0f, 2));
    CHECK(tensor_uniform(&w.b, d, shape2(n, n), -1.0f, 1.0f, 3));
    CHECK(tensor_zeros(&w.c, d, shape2(n, n)));
    double flop, bytes;
    CHECK(lab_kernel_cost(LAB_PRODUCT, n, &flop, &bytes));
    s->n_product = n;
    for (int kernel = PRODUCT_NAIVE; kernel <= PRODUCT_TILED + 1; ++kernel) {
        const bool library = kernel > PRODUCT_TILED;
        w.what = library ? LIBRARY_PRODUCT : PRODUCT;
        w.kernel = library ? PRODUCT_TILED : kernel;
        CHECK(op_fill(w.c, NAN)); /* a cell the kernel never writes shows in the error */
        CHECK(run(&w));
        const double error = sampled_error(&w), ms = timed_ms(&w, runs);
        start_row(r, "tiles",
                  library ? (d.kind == DEVICE_CUDA ? "cuBLAS" : "op_matmul")
                          : product_kernel_name((product_kernel)kernel),
                  n, ms);
        roofline_cells(r, s, flop, bytes, ms);
        results_number(r, "error", error);
        if (!library) {
            double loads;
            CHECK(lab_loads_per_output(n, kernel == PRODUCT_NAIVE ? 1 : TILE, &loads));
            results_number(r, "loads", loads);
        }
        *(library ? &s->library_ms : kernel == PRODUCT_NAIVE ? &s->naive_ms : &s->tiled_ms) = ms;
    }
    tensor_free(w.a), tensor_free(w.b), tensor_free(w.c);
}

/* ---- 3. a reduction --------------------------------------------------------------------- */

static void reduction(results *r, device d, int64_t n, int runs, summary *s)
{
    work w = { .what = SUM, .d = d, .n = n };
    float *x = malloc((size_t)n * sizeof *x);
    if (!x) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for %lld floats", (long long)n));
    uniform_values(x, n, -1.0f, 1.0f, 4);
    double want, sum_abs;
    sum_reference(x, n, &want, &sum_abs);
    tensor *atomics;
    CHECK(tensor_from_host(&w.x, d, shape1(n), x));
    CHECK(tensor_zeros(&w.total, d, shape1(1)));
    CHECK(tensor_empty(&atomics, d, DTYPE_I32, shape1(1)));
    double flop, bytes;
    CHECK(lab_kernel_cost(LAB_SUM, n, &flop, &bytes));
    for (int kernel = SUM_ATOMIC; kernel <= SUM_WARP; ++kernel) {
        w.kernel = kernel;
        /* Once with the atomics counted, untimed; then timed without the counter. */
        CHECK(run_sum(d, (sum_kernel)kernel, tensor_data_const(w.x), n, tensor_data(w.total),
                      (unsigned *)tensor_data(atomics)));
        float total;
        int32_t count;
        CHECK(tensor_item(w.total, &total));
        CHECK(tensor_to_host_i32(atomics, &count, 1));
        if (kernel == SUM_ATOMIC) s->atomic_runs[0] = total;
        const double ms = timed_ms(&w, runs);
        if (kernel == SUM_ATOMIC)
            CHECK(tensor_item(w.total, &s->atomic_runs[1])); /* the same sum, run again */
        s->sums_ms[kernel] = ms;
        start_row(r, "reduction", sum_kernel_name((sum_kernel)kernel), n, ms);
        bandwidth_cells(r, s, 4.0 * (double)n, 4.0, ms);
        roofline_cells(r, s, flop, bytes, ms);
        results_number(r, "atomics", (double)(uint32_t)count);
        results_number(r, "error", fabs((double)total - want) / sum_abs);
    }
    tensor_free(w.x), tensor_free(w.total), tensor_free(atomics), free(x);
}

/* ---- 4. the library's softmax, the last point of the roofline ------------------------------- */

static void softmax(results *r, device d, int64_t rows, int64_t cols, int runs, summary *s)
{
    work w = { .what = SOFTMAX, .d = d };
    int32_t *labels = malloc((size_t)rows * sizeof *labels);
    if (!labels) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for %lld labels", (long long)rows));
    for (int64_t i = 0; i < rows; ++i) labels[i] = (int32_t)(i * 7 % cols);
    CHECK(tensor_uniform(&w.logits, d, shape2(rows, cols), -4.0f, 4.0f, 5));
    CHECK(tensor_from_host_i32(&w.labels, d, shape1(rows), labels));
    CHECK(tensor_empty(&w.probs, d, DTYPE_F32, shape2(rows, cols)));
    CHECK(tensor_empty(&w.loss, d, DTYPE_F32, shape1(1)));
    double flop, bytes;
    softmax_cost(rows, cols, &flop, &bytes);
    const double ms = timed_ms(&w, runs);
    start_row(r, "roofline", "softmax (op)", rows * cols, ms);
    bandwidth_cells(r, s, bytes - 4.0 * (double)rows * (double)cols, 4.0 * (double)rows * (double)cols, ms);
    roofline_cells(r, s, flop, bytes, ms);
    tensor_free(w.logits), tensor_free(w.labels), tensor_free(w.probs), tensor_free(w.loss), free(labels);
}

/* ---- 5. a transpose --------------------------------------------------------------------------- */

static void transpose(results *r, device d, int64_t side, int runs, summary *s)
{
    work w = { .what = TRANSPOSE, .d = d, .n = side };
    CHECK(tensor_uniform(&w.in, d, shape2(side, side), -1.0f, 1.0f, 6));
    CHECK(tensor_zeros(&w.out, d, shape2(side, side)));
    const double bytes = 4.0 * (double)side * (double)side; /* each way */
    for (int kernel = TRANSPOSE_NAIVE; kernel <= TRANSPOSE_TILED; ++kernel) {
        w.kernel = kernel;
        const double ms = timed_ms(&w, runs);
        start_row(r, "transpose", transpose_kernel_name((transpose_kind)kernel), side * side, ms);
        bandwidth_cells(r, s, bytes, bytes, ms);
        s->transpose_gbs[kernel] = results_get(r, results_count(r) - 1, "gbs");
    }
    CHECK(lab_column_read_wavefronts(TRANSPOSE_TILE + 1, &s->passes_padded));
    CHECK(lab_column_read_wavefronts(TRANSPOSE_TILE, &s->passes_unpadded));
    tensor_free(w.in), tensor_free(w.out);
}

/* ---- the experiment ----------------------------------------------------------------------------- */

static void print_takeaway(device d, const summary *s)
{
    const bool gpu = d.kind == DEVICE_CUDA;
    double naive_loads = 0.0, tiled_loads = 0.0;
    CHECK(lab_loads_per_output(s->n_product, 1, &naive_loads));
    CHECK(lab_loads_per_output(s->n_product, TILE, &tiled_loads));
    printf(
        "(GB/s: bytes read + written over the time; %% peak: of %s's %.0f GB/s%s; roof: the most a kernel of "
        "that FLOP/B can reach under %.0f GFLOP/s and that bandwidth; loads/cell: global loads per cell of "
        "c, "
        "by your formula)\n",
        device_name(d), s->p.memory_bandwidth_gbs, d.kind == DEVICE_SIM ? ", a modelled card's" : "",
        s->p.peak_gflops);
    if (d.kind == DEVICE_CPU && s->copy_gbs > s->p.memory_bandwidth_gbs)
        printf("(the copy beat cpu's peak: that peak is a copy the library measured once, when this program "
               "started, and other programs competing for the memory then can make it low)\n");
    printf("(the atomic sum, run twice on the same floats: %.9g and %.9g, %s)\n", (double)s->atomic_runs[0],
           (double)s->atomic_runs[1],
           s->atomic_runs[0] == s->atomic_runs[1]
               ? (gpu ? "the same this time; run again: the order of a GPU's atomics changes from run to run"
                      : "the same bits: the threads run in one fixed order here, atomics included")
               : "different last bits: the atomics landed in another order, and float addition is not "
                 "associative");
    if (gpu) {
        printf(
            "\ntakeaway: on %s the coalesced copy moved %.4g GB/s, %.0f%% of the %.0f GB/s peak, and stride "
            "32 "
            "took %.1fx the time of stride 1; at N = %lld the tiled product took %.3g ms against %.3g ms "
            "naive "
            "(%.2fx; %.0f loads per cell against %.0f) and cuBLAS %.3g ms; one atomic per element took %.1fx "
            "the "
            "time of a tree with warp shuffles and one per block. Memory, not arithmetic, sets the speed of "
            "every kernel left of the ridge (%.1f FLOP/B).\n",
            device_name(d), s->copy_gbs, 100.0 * s->copy_gbs / s->p.memory_bandwidth_gbs,
            s->p.memory_bandwidth_gbs, s->stride32_ms / s->stride1_ms, (long long)s->n_product, s->tiled_ms,
            s->naive_ms, s->naive_ms / s->tiled_ms, tiled_loads, naive_loads, s->library_ms,
            s->sums_ms[SUM_ATOMIC] / s->sums_ms[SUM_WARP], s->p.peak_gflops / s->p.memory_bandwidth_gbs);
        printf(
            "The tiled transpose moved %.4g GB/s against the naive one's %.4g (%.2fx): a column of its tile "
            "takes %d pass%s to read, %d without the padding (by your formula).\n",
            s->transpose_gbs[TRANSPOSE_TILED], s->transpose_gbs[TRANSPOSE_NAIVE],
            s->transpose_gbs[TRANSPOSE_TILED] / s->transpose_gbs[TRANSPOSE_NAIVE], s->passes_padded,
            s->passes_padded == 1 ? "" : "es", s->passes_unpadded);
        return;
    }
    printf("\ntakeaway: on %s what the kernels count holds as on a GPU: at N = %lld the tiled product loads "
           "%.0f "
           "floats per cell against %.0f naive (%.0fx fewer), the trees make one atomic per %d elements, and "
           "every "
           "kernel but the products sits left of the ridge (%.1f FLOP/B): memory-bound. The times are not a "
           "GPU's: "
           "%s runs each block's threads one after another on one core, a barrier is a switch between two "
           "threads' "
           "stacks, so the tiled product and the trees pay for their barriers here, and %s.\n",
           device_name(d), (long long)s->n_product, tiled_loads, naive_loads, naive_loads / tiled_loads,
           REDUCE_BLOCK, s->p.peak_gflops / s->p.memory_bandwidth_gbs, device_name(d),
           d.kind == DEVICE_SIM
               ? "a simulated GPU models no caches and no memory latency: a real GPU shows the speeds"
               : "the strided copy meets the CPU's own caches: a real GPU shows a GPU's speeds");
    printf(
        "The transposes: tiled %.4g GB/s, naive %.4g here, which says nothing of a GPU, where the tiled one "
        "should be the faster: both its reads and its writes are coalesced (./lab check 09 --kernels counts "
        "4 "
        "sectors a request against the naive writes' 32), and a column of its padded tile takes %d pass%s to "
        "read against %d unpadded (by your formula).\n",
        s->transpose_gbs[TRANSPOSE_TILED], s->transpose_gbs[TRANSPOSE_NAIVE], s->passes_padded,
        s->passes_padded == 1 ? "" : "es", s->passes_unpadded);
}

int main(int argc, char **argv)
{
    const cli_program program = { "09_memory",
                                  "the memory hierarchy: bandwidth and coalescing, tiles in shared memory, a "
                                  "reduction, the roofline, a transpose",
                                  NULL, 0 };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;
    results *r;
    CHECK(results_create(&r, &args, columns, (int)(sizeof columns / sizeof columns[0])));
    /* Two lessons, two figures: FIG (coalescing) and FIG-roofline. */
    static const char *const figures[] = { "stride", "roofline" };
    CHECK(results_check_figures(r, figures, 2));
    const device d = args.dev;
    const bool gpu = d.kind == DEVICE_CUDA;
    summary s = { 0 };
    CHECK(device_get_properties(d, &s.p));
    CHECK(device_memory_bandwidth(d, &s.p.memory_bandwidth_gbs)); /* the CPU's is measured, not a property */
    CHECK(results_mention_device(r, d)); /* no column names it: the CSV's header and the figure's title do */
    /* A real GPU: arrays of 256 MiB, far past its caches, and N = 2048. Elsewhere, kernels that run one thread at a time. */
    const int64_t n = gpu ? (int64_t)1 << 26 : args.quick ? (int64_t)1 << 20 : (int64_t)1 << 22;
    const int64_t n_sum = gpu ? (int64_t)1 << 26 : args.quick ? (int64_t)1 << 18 : (int64_t)1 << 20;
    const int64_t n_product = gpu          ? 2048
                              : args.quick ? 128
                                           : 256,
                  softmax_n = gpu          ? 8192
                              : args.quick ? 512
                                           : 1024;
    /* The transpose's side: 256 MiB each way on a real GPU, as the copy's; n floats elsewhere. */
    const int64_t side = gpu ? 8192 : args.quick ? 1024 : 2048;
    const int runs = gpu ? 5 : 3;
    printf("lab 09 on %s (%s): peak %.0f GB/s and %.0f GFLOP/s, meeting at %.1f FLOP/B\n", device_name(d),
           s.p.name, s.p.memory_bandwidth_gbs, s.p.peak_gflops, s.p.peak_gflops / s.p.memory_bandwidth_gbs);
    printf("1. bandwidth: copy, scale and strided copy of %lld floats (%.0f MiB each way)\n", (long long)n,
           4.0 * (double)n / 1048576.0);
    printf("2. tiles: naive, tiled (%d x %d) and the library's product at N = %lld\n", TILE, TILE,
           (long long)n_product);
    printf("3. a reduction: %lld floats summed three ways\n", (long long)n_sum);
    printf("4. the roofline: every kernel's FLOP/B and GFLOP/s, and the library's softmax on [%lld, %lld]\n",
           (long long)softmax_n, (long long)softmax_n);
    printf("5. a transpose of [%lld, %lld]: the naive one and yours, through a %d x %d tile\n\n",
           (long long)side, (long long)side, TRANSPOSE_TILE, TRANSPOSE_TILE + 1);
    CHECK(results_echo(r, true));
    bandwidth(r, d, n, runs, &s);
    tiles(r, d, n_product, runs, &s);
    reduction(r, d, n_sum, runs, &s);
    softmax(r, d, softmax_n, softmax_n, runs, &s);
    transpose(r, d, side, runs, &s);
    CHECK(results_print(r));
    print_takeaway(d, &s);
    char peak_gbs[64], peak_gflops[64];
    snprintf(peak_gbs, sizeof peak_gbs, "peak_gbs=%.9g", s.p.memory_bandwidth_gbs);
    snprintf(peak_gflops, sizeof peak_gflops, "peak_gflops=%.9g", s.p.peak_gflops);
    const char *const vars[] = { peak_gbs, peak_gflops, gpu ? "library=cuBLAS" : "library=op_matmul", NULL };
    CHECK(results_finish_figures(r, figures, 2, vars));
    results_free(r);
    return 0;
}
