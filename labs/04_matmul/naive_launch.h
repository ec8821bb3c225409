/* naive_launch.h: how lab.c hands the naive kernel to a device (given: not a step).
 *
 * device_enqueue (labkit/kernel.h) queues a launcher, fn(args, stream), on a
 * device; the launcher starts the kernel with the grid and blocks in `args`.
 * There are two launchers of the same kernel text (naive_kernel.cuh):
 *   naive_matmul_on_sim    in lab.c, compiled by the C compiler: LAUNCH() from
 *                          labkit/cuda_emulation.h runs every block and thread
 *                          in turn on the simulated GPU's worker thread;
 *   naive_matmul_on_cuda   in naive_cuda.cu, compiled by nvcc: a real
 *                          kernel<<<grid, block, 0, stream>>> launch.
 * This header is plain C so that both compilers read it. */
#ifndef LAB04_NAIVE_LAUNCH_H
#define LAB04_NAIVE_LAUNCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything one launch needs; device_enqueue copies it. */
typedef struct naive_matmul_args {
    const float *a; /* [m, k] on the device */
    const float *b; /* [k, n] on the device */
    float *c;       /* [m, n] on the device */
    int64_t m, n, k;
    unsigned grid_x, grid_y;   /* blocks along the columns (x) and the rows (y) of c */
    unsigned block_x, block_y; /* threads per block along x and y */
} naive_matmul_args;

void naive_matmul_on_sim(const void *args, void *stream);
/* Only in a build with CUDA; without it, a stand-in that cannot be reached,
 * since such a build sees no cuda:N device (naive_cuda_absent.c). */
void naive_matmul_on_cuda(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
