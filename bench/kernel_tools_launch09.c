/* kernel_tools_launch09.c: lab 09's step 1 copy and step 3 block sum (from
 * its solution; left out of the student copy) for bench_kernel_tools,
 * compiled twice as kernel_tools_launch.c is: plain (bench_tools09_plain) and
 * built for the kernel tools (bench_tools09_watched). A file of its own: lab
 * 09's kernels have lab 04's kernel's name (naive_matmul_kernel). */

#include "labkit/cuda_emulation.h"

#include "labkit/timer.h"
#include "bench_kernel_tools.h"
#include "launch.h"

/* their products, other sums and sum_reset_kernel are not used here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "given_kernels.cuh"
#include <memory_kernels.cuh>
#pragma GCC diagnostic pop

#ifdef __SANITIZE_THREAD__
#define LAUNCHERS bench_tools09_watched
#else
#define LAUNCHERS bench_tools09_plain
#endif

static dim3 line_of(int64_t n, unsigned block)
{
    const dim3 d = { (unsigned)((n + block - 1) / block), 1, 1 };
    return d;
}

/* The worker's CPU time for the whole launch, as kernel_tools_launch.c's. */
static void copy_on_sim(const void *args, void *stream)
{
    const tools_stream_args *p = args;
    const double start = thread_cpu_seconds();
    const dim3 block = { LAUNCH_BLOCK, 1, 1 };
    LAUNCH(copy_kernel, line_of(p->n, LAUNCH_BLOCK), block, stream, p->in, p->out, p->n);
    *p->cpu_seconds = thread_cpu_seconds() - start;
}

static void sum_block_on_sim(const void *args, void *stream)
{
    const tools_stream_args *p = args;
    const double start = thread_cpu_seconds();
    const dim3 block = { REDUCE_BLOCK, 1, 1 };
    LAUNCH(sum_block_kernel, line_of(p->n, REDUCE_BLOCK), block, stream, p->in, p->n, p->out, p->atomics);
    *p->cpu_seconds = thread_cpu_seconds() - start;
}

static const kernel_launchers copy = { "copy_kernel", copy_on_sim, NULL };
static const kernel_launchers sum_block = { "sum_block_kernel", sum_block_on_sim, NULL };
const tools_launchers09 LAUNCHERS = { &copy, &sum_block };
