/* kernel_tools_launch.c: bench_kernel_tools' kernels for the simulated GPU,
 * compiled twice into the bench: as a lab's launcher is (bench_tools_plain)
 * and built for the kernel tools (bench_tools_watched, -fsanitize=thread's
 * instrumentation: cmake/kernel_tools.cmake). The two copies differ only in
 * that, which __SANITIZE_THREAD__ tells apart here. Not named bench_*.c: it is
 * no bench of its own. */

#include "labkit/cuda_emulation.h"

#include "labkit/timer.h"
#include "bench_kernel_tools.h"
/* bench_kernels.cuh's kernels, of which only the tiled product is used */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "bench_kernels.cuh"
#pragma GCC diagnostic pop
#ifdef BENCH_WITH_NAIVE
#include <naive_kernel.cuh>
#endif

#ifdef __SANITIZE_THREAD__
#define LAUNCHERS bench_tools_watched
#else
#define LAUNCHERS bench_tools_plain
#endif

static dim3 tiles_of(int64_t rows, int64_t cols)
{
    const dim3 d = { (unsigned)((cols + BENCH_TILE - 1) / BENCH_TILE),
                     (unsigned)((rows + BENCH_TILE - 1) / BENCH_TILE), 1 };
    return d;
}

static const dim3 tile_block = { BENCH_TILE, BENCH_TILE, 1 };

/* The worker's CPU time for the whole launch: the tools' work at its start
 * and end (shadow memory, the profile's last warps) included. */
static void tiled_on_sim(const void *args, void *stream)
{
    const tools_product_args *p = args;
    const double start = thread_cpu_seconds();
    LAUNCH(bench_tiled_kernel, tiles_of(p->square, p->square), tile_block, stream, p->a, p->b, p->c,
           p->square);
    *p->cpu_seconds = thread_cpu_seconds() - start;
}

static const kernel_launchers tiled = { "bench_tiled_kernel", tiled_on_sim, NULL };

#ifdef BENCH_WITH_NAIVE
static void naive_on_sim(const void *args, void *stream)
{
    const tools_product_args *p = args;
    const double start = thread_cpu_seconds();
    LAUNCH(naive_matmul_kernel, tiles_of(p->m, p->n), tile_block, stream, p->a, p->b, p->c, p->m, p->n, p->k);
    *p->cpu_seconds = thread_cpu_seconds() - start;
}

static const kernel_launchers naive = { "naive_matmul_kernel", naive_on_sim, NULL };
const tools_launchers LAUNCHERS = { &naive, &tiled };
#else
const tools_launchers LAUNCHERS = { NULL, &tiled };
#endif
