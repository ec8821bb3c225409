/* launch.c: your kernels on a simulated GPU, and on the CPU (given: not a step;
 * launch.h says how it fits together).
 *
 * The C compiler builds your layer_kernels.cuh here, after labkit/cuda_emulation.h
 * has turned CUDA's qualifiers and indices into plain C. It is included with
 * <...> on purpose: each program compiles the kernels beside its own lab.c (the
 * build puts that directory first on the include path; lab.cmake). */
#include "launch.h"

#include "labkit/cuda_emulation.h"
#include <layer_kernels.cuh>

#include "given_kernels.cuh"

/* Each runs when the device's queue reaches it: on a simulated GPU's worker
 * thread, or at once on the CPU. */
static void conv_direct_on_sim(const void *args, void *stream)
{
    const conv_args *p = args;
    const conv_dims d = p->d;
    const dim3 grid = { launch_blocks(d.n * d.k * d.h_out * d.w_out), 1, 1 }, block = { LAUNCH_BLOCK, 1, 1 };
    LAUNCH(conv_direct_kernel, grid, block, stream, p->x, p->w, p->y, d);
}

static void im2col_on_sim(const void *args, void *stream)
{
    const im2col_args *p = args;
    const conv_dims d = p->d;
    const dim3 grid = { launch_blocks(d.n * d.c * d.h_out * d.w_out), 1, 1 }, block = { LAUNCH_BLOCK, 1, 1 };
    LAUNCH(im2col_kernel, grid, block, stream, p->x, p->cols, d);
}

static void softmax_rows_on_sim(const void *args, void *stream)
{
    const softmax_args *p = args;
    const dim3 grid = { launch_blocks(p->rows), 1, 1 }, block = { LAUNCH_BLOCK, 1, 1 };
    LAUNCH(softmax_rows_kernel, grid, block, stream, p->scores, p->rows, p->cols, p->scale, p->causal);
}

static void reorder_on_sim(const void *args, void *stream)
{
    const reorder_args *p = args;
    const dim3 grid = { launch_blocks(p->n * p->k * p->pixels), 1, 1 }, block = { LAUNCH_BLOCK, 1, 1 };
    LAUNCH(reorder_kernel, grid, block, stream, p->product, p->y, p->n, p->k, p->pixels);
}

/* Barriers make a block's threads fibers here (cuda_emulation.h): LAUNCH
 * then calls the kernel with arguments of exactly its parameters' types. */
static void flash_attention_on_sim(const void *args, void *stream)
{
    const flash_args *p = args;
    const dim3 grid = { flash_blocks(p->n), 1, 1 }, block = { FLASH_THREADS, 1, 1 };
    LAUNCH(flash_attention_kernel, grid, block, stream, p->q, p->k, p->v, p->out, p->n, p->d, p->scale,
           p->causal);
}

/* nvcc compiled launch.cu only in a build with CUDA (lab.cmake). */
#ifdef LAB_WITH_CUDA
#define ON_CUDA(launcher) launcher
#else
#define ON_CUDA(launcher) NULL
#endif

const kernel_launchers conv_direct_launchers = { "conv_direct_kernel", conv_direct_on_sim,
                                                 ON_CUDA(conv_direct_on_cuda) };
const kernel_launchers im2col_launchers = { "im2col_kernel", im2col_on_sim, ON_CUDA(im2col_on_cuda) };
const kernel_launchers softmax_rows_launchers = { "softmax_rows_kernel", softmax_rows_on_sim,
                                                  ON_CUDA(softmax_rows_on_cuda) };
const kernel_launchers reorder_launchers = { "reorder_kernel", reorder_on_sim, ON_CUDA(reorder_on_cuda) };
const kernel_launchers flash_attention_launchers = { "flash_attention_kernel", flash_attention_on_sim,
                                                     ON_CUDA(flash_attention_on_cuda) };
