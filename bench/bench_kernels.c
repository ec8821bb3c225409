/* bench_kernels.c: what threads that cooperate cost on the simulated GPU, and
 * that kernels without barriers pay nothing for it.
 *
 * 1. On sim:0, a 16 x 16 tiled product in shared memory (two __syncthreads()
 *    per tile) beside lab 04's naive product, N = 128, 256 and 512: the time,
 *    and the barrier arrivals per second. A kernel of barriers alone gives what
 *    one arrival costs (the switch to the next thread and the bookkeeping).
 * 2. Before and after: lab 04's naive kernel and the library's add_kernel,
 *    launched by the plain loop LAUNCH was before blocks could cooperate
 *    (LAUNCH_SEQUENTIAL, kept here) and by today's LAUNCH, alternately.
 * 3. On cuda:0, where there is one, the same two products, timed with events.
 *
 * On sim:0 each launcher measures the CPU time its worker thread spends in the
 * launch (CLOCK_THREAD_CPUTIME_ID), which other programs on the machine do not
 * lengthen as they lengthen the wall clock; the fastest of a few runs. On a
 * real GPU, events around the launch. Lab 04's naive kernel comes from its solution (solutions/04_matmul):
 * in the student copy, which has none, the naive rows are left out. */

#include "bench_common.h"
/* As the library builds its kernels: without the indices a crash report reads
 * (cuda_emulation.h), which cost lab 04's naive kernel under 1% besides. */
#define LABKIT_TRUSTED_KERNELS 1
#include "labkit/cuda_emulation.h"

#include "labkit/timer.h"
#include "bench_kernels.h"

#include "bench_kernels.cuh"
#ifdef BENCH_WITH_NAIVE
#include <naive_kernel.cuh>
#endif
/* The library's own element-wise kernels, of which only add_kernel is used. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "kernels/elementwise.cuh"
#pragma GCC diagnostic pop

#ifdef BENCH_WITH_CUDA
#define ON_CUDA(launcher) launcher
#else
#define ON_CUDA(launcher) NULL
#endif

/* LAUNCH as it was before blocks could cooperate: every thread of every block,
 * one after the other, each calling the kernel with its arguments. */
#define LAUNCH_SEQUENTIAL(kernel, grid, block, ...)                                        \
    do {                                                                                   \
        gridDim = (grid);                                                                  \
        blockDim = (block);                                                                \
        for (blockIdx.z = 0; blockIdx.z < gridDim.z; ++blockIdx.z)                         \
            for (blockIdx.y = 0; blockIdx.y < gridDim.y; ++blockIdx.y)                     \
                for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)                 \
                    for (threadIdx.z = 0; threadIdx.z < blockDim.z; ++threadIdx.z)         \
                        for (threadIdx.y = 0; threadIdx.y < blockDim.y; ++threadIdx.y)     \
                            for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x) \
                                kernel(__VA_ARGS__);                                       \
    } while (0)

#define ADD_BLOCK 256

static dim3 tiles_of(int n)
{
    const unsigned t = (unsigned)(n + BENCH_TILE - 1) / BENCH_TILE;
    const dim3 d = { t, t, 1 };
    return d;
}

static const dim3 tile_block = { BENCH_TILE, BENCH_TILE, 1 };

/* Runs `launch` (a statement) and writes the CPU time it took to *out. */
#define TIMED(out, launch)                                \
    do {                                                  \
        const double timed_start_ = thread_cpu_seconds(); \
        launch;                                           \
        *(out) = thread_cpu_seconds() - timed_start_;     \
    } while (0)

/* ---- the launchers ------------------------------------------------------- */

static void tiled_on_sim(const void *args, void *stream)
{
    const bench_product_args *p = args;
    TIMED(p->cpu_seconds,
          LAUNCH(bench_tiled_kernel, tiles_of(p->n), tile_block, stream, p->a, p->b, p->c, p->n));
}

static void barriers_on_sim(const void *args, void *stream)
{
    const bench_barriers_args *p = args;
    const dim3 grid = { p->blocks, 1, 1 };
    TIMED(p->cpu_seconds, LAUNCH(bench_barriers_kernel, grid, tile_block, stream, p->rounds));
}

static dim3 add_grid(int64_t n)
{
    const dim3 d = { (unsigned)((n + ADD_BLOCK - 1) / ADD_BLOCK), 1, 1 };
    return d;
}

static const dim3 add_block = { ADD_BLOCK, 1, 1 };

static void add_on_sim(const void *args, void *stream)
{
    const bench_add_args *p = args;
    TIMED(p->cpu_seconds, LAUNCH(add_kernel, add_grid(p->n), add_block, stream, p->a, p->b, p->out, p->n));
}

static void add_sequential_on_sim(const void *args, void *stream)
{
    const bench_add_args *p = args;
    (void)stream;
    TIMED(p->cpu_seconds, LAUNCH_SEQUENTIAL(add_kernel, add_grid(p->n), add_block, p->a, p->b, p->out, p->n));
}

static const kernel_launchers tiled = { "bench_tiled_kernel", tiled_on_sim, ON_CUDA(bench_tiled_on_cuda) };
static const kernel_launchers barriers = { "bench_barriers_kernel", barriers_on_sim, NULL };
static const kernel_launchers add_now = { "add_kernel", add_on_sim, NULL };
static const kernel_launchers add_before = { "add_kernel", add_sequential_on_sim, NULL };

#ifdef BENCH_WITH_NAIVE
static void naive_on_sim(const void *args, void *stream)
{
    const bench_product_args *p = args;
    TIMED(p->cpu_seconds, LAUNCH(naive_matmul_kernel, tiles_of(p->n), tile_block, stream, p->a, p->b, p->c,
                                 p->n64, p->n64, p->n64));
}

static void naive_sequential_on_sim(const void *args, void *stream)
{
    const bench_product_args *p = args;
    (void)stream;
    TIMED(p->cpu_seconds, LAUNCH_SEQUENTIAL(naive_matmul_kernel, tiles_of(p->n), tile_block, p->a, p->b, p->c,
                                            p->n64, p->n64, p->n64));
}

static const kernel_launchers naive = { "naive_matmul_kernel", naive_on_sim, ON_CUDA(bench_naive_on_cuda) };
static const kernel_launchers naive_before = { "naive_matmul_kernel", naive_sequential_on_sim, NULL };
#endif

/* ---- timing ---------------------------------------------------------------- */

/* Where the launchers on sim:0 write their worker's CPU time. */
static double worker_cpu_seconds;

/* The time of one launch, in seconds: on a simulated GPU its worker's CPU
 * time; on a real one, from events around it. */
static double launch_seconds(device d, const kernel_launchers *k, const void *args, size_t size)
{
    event *start, *end;
    double ms = 0.0;
    CHECK(event_create(&start, d));
    CHECK(event_create(&end, d));
    CHECK(event_record(start));
    CHECK(device_launch(d, k, args, size));
    CHECK(event_record(end));
    CHECK(event_synchronize(end));
    CHECK(event_elapsed_ms(start, end, &ms));
    event_destroy(start), event_destroy(end);
    return d.kind == DEVICE_SIM ? worker_cpu_seconds : ms * 1e-3;
}

static double fastest_seconds(device d, const kernel_launchers *k, const void *args, size_t size, int runs)
{
    double best = 0.0;
    for (int r = 0; r < runs; ++r) {
        const double s = launch_seconds(d, k, args, size);
        if (r == 0 || s < best) best = s;
    }
    return best;
}

typedef struct operands {
    tensor *a, *b, *c;
    bench_product_args args;
} operands;

static operands operands_of(device d, int n)
{
    operands o;
    CHECK(tensor_uniform(&o.a, d, shape2(n, n), -1.0f, 1.0f, 1));
    CHECK(tensor_uniform(&o.b, d, shape2(n, n), -1.0f, 1.0f, 2));
    CHECK(tensor_zeros(&o.c, d, shape2(n, n)));
    const bench_product_args args = { tensor_data_const(o.a), tensor_data_const(o.b), tensor_data(o.c), n, n,
                                      &worker_cpu_seconds };
    o.args = args;
    return o;
}

static void operands_free(operands *o) { tensor_free(o->a), tensor_free(o->b), tensor_free(o->c); }

/* ---- 1. tiled beside naive on sim:0 -------------------------------------- */

static void tiled_beside_naive(device sim)
{
    static const int sizes[] = { 128, 256, 512 };
    printf("\n%s, one core: a 16 x 16 tiled product in shared memory beside lab 04's naive one\n",
           device_name(sim));
    printf("     N   naive s   tiled s   barrier arrivals   arrivals/s   tiled - naive, per arrival\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const int n = sizes[i], runs = n <= 256 ? 3 : 1;
        operands o = operands_of(sim, n);
        const double tiles = (double)((n + BENCH_TILE - 1) / BENCH_TILE);
        /* every thread of every block, at two barriers per tile of k */
        const double arrivals = tiles * tiles * BENCH_TILE * BENCH_TILE * 2.0 * tiles;
        const double t = fastest_seconds(sim, &tiled, &o.args, sizeof o.args, runs);
#ifdef BENCH_WITH_NAIVE
        const double v = fastest_seconds(sim, &naive, &o.args, sizeof o.args, runs);
        printf("  %4d  %8.3f  %8.3f  %17.0f  %11.3g  %10.1f ns\n", n, v, t, arrivals, arrivals / t,
               (t - v) / arrivals * 1e9);
#else
        printf("  %4d  %8s  %8.3f  %17.0f  %11.3g  %13s\n", n, "-", t, arrivals, arrivals / t, "-");
#endif
        operands_free(&o);
    }
    const bench_barriers_args b = { 200, 64, &worker_cpu_seconds };
    const double arrivals = (double)b.rounds * b.blocks * BENCH_TILE * BENCH_TILE;
    const double s = fastest_seconds(sim, &barriers, &b, sizeof b, 3);
    printf("  barriers alone: %.0f arrivals in %.3f s, %.1f ns per arrival (a switch to the next thread "
           "and the bookkeeping)\n",
           arrivals, s, s / arrivals * 1e9);
#ifndef BENCH_WITH_NAIVE
    printf("  (no naive rows: lab 04's solution is not in this copy of the kit)\n");
#endif
}

/* ---- 2. before and after, for kernels without barriers -------------------- */

/* The fastest of `runs` alternate runs of each launcher: (before, after). */
static void alternate(device d, const kernel_launchers *before, const kernel_launchers *after,
                      const void *args, size_t size, int runs, double *b, double *a)
{
    for (int r = 0; r < runs; ++r) {
        const double sb = launch_seconds(d, before, args, size), sa = launch_seconds(d, after, args, size);
        if (r == 0 || sb < *b) *b = sb;
        if (r == 0 || sa < *a) *a = sa;
    }
}

static void before_and_after(device sim)
{
    printf("\n%s: kernels without barriers, by the plain loop LAUNCH was before and by today's LAUNCH\n"
           "(the worker's CPU time, the fastest of runs taken in turns)\n",
           device_name(sim));
    printf("  kernel                        before s    after s   after/before\n");
    double b = 0.0, a = 0.0;
#ifdef BENCH_WITH_NAIVE
    operands o = operands_of(sim, 256);
    alternate(sim, &naive_before, &naive, &o.args, sizeof o.args, 9, &b, &a);
    printf("  naive_matmul_kernel N = 256   %8.4f   %8.4f   %10.3f\n", b, a, a / b);
    operands_free(&o);
#endif
    /* small enough to stay in cache: memory traffic of other programs on the
     * machine would otherwise blur a difference of a few percent */
    enum { N = 1 << 16 };
    tensor *x, *y, *z;
    CHECK(tensor_uniform(&x, sim, shape1(N), -1.0f, 1.0f, 3));
    CHECK(tensor_uniform(&y, sim, shape1(N), -1.0f, 1.0f, 4));
    CHECK(tensor_zeros(&z, sim, shape1(N)));
    const bench_add_args args = { tensor_data_const(x), tensor_data_const(y), tensor_data(z), N,
                                  &worker_cpu_seconds };
    alternate(sim, &add_before, &add_now, &args, sizeof args, 50, &b, &a);
    printf("  add_kernel n = 2^16           %8.6f %8.6f   %10.3f\n", b, a, a / b);
    tensor_free(x), tensor_free(y), tensor_free(z);
}

/* ---- 3. a real GPU ---------------------------------------------------------- */

static void on_cuda(device gpu)
{
    static const int sizes[] = { 128, 256, 512, 1024, 2048 };
    printf("\n%s: the same kernels, timed with events (the fastest of 5)\n", device_name(gpu));
    printf("     N     naive ms     tiled ms   tiled GFLOP/s\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const int n = sizes[i];
        operands o = operands_of(gpu, n);
        const double t = fastest_seconds(gpu, &tiled, &o.args, sizeof o.args, 5);
#ifdef BENCH_WITH_NAIVE
        const double v = fastest_seconds(gpu, &naive, &o.args, sizeof o.args, 5) * 1e3;
#else
        const double v = NAN;
#endif
        printf("  %4d  %11.4f  %11.4f  %14.1f\n", n, v, t * 1e3, 2.0 * n * n * (double)n / t * 1e-9);
        operands_free(&o);
    }
}

int main(void)
{
    const device gpu = bench_gpu(), sim = bench_sim();
    if (sim.kind != DEVICE_SIM) {
        printf("bench_kernels: no simulated GPU (LABKIT_SIM_GPUS=0): nothing to measure\n");
        return 0;
    }
    tiled_beside_naive(sim);
    before_and_after(sim);
    if (gpu.kind == DEVICE_CUDA && tiled.on_cuda)
        on_cuda(gpu);
    else
        printf("\n(no real GPU here: the cuda rows are skipped)\n");
    printf("\ntakeaway: a barrier costs the simulated GPU a switch between two threads' stacks; a kernel "
           "without one runs as it did.\n");
    return 0;
}
