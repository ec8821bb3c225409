/* naive_launch.h: how your kernel of step 6 reaches a device (given: not a step).
 *
 * You write the kernel, naive_matmul_kernel, once, in naive_kernel.cuh. Two
 * given files launch it, each compiling your kernel for its side:
 *   naive_launch.c   the C compiler, through labkit/cuda_emulation.h: LAUNCH()
 *                    runs every block and thread in turn, on a simulated GPU's
 *                    worker thread;
 *   naive_launch.cu  nvcc, in a build with CUDA: a real
 *                    kernel<<<grid, block, 0, stream>>> launch.
 * naive_matmul_launchers names both, and device_launch (labkit/kernel.h) picks
 * the one for the device it is given:
 *
 *   naive_matmul_args args = { ... };
 *   return device_launch(tensor_device(c), &naive_matmul_launchers, &args, sizeof args);
 *
 * Plain C, so that both compilers read it. */
#ifndef LAB04_NAIVE_LAUNCH_H
#define LAB04_NAIVE_LAUNCH_H

#include <stdint.h>

#include "labkit/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything one launch needs; device_launch copies it, so it may live on the
 * caller's stack. */
typedef struct naive_matmul_args {
    const float *a; /* [m, k] on the device */
    const float *b; /* [k, n] on the device */
    float *c;       /* [m, n] on the device */
    int64_t m, n, k;
    unsigned grid_x, grid_y;   /* blocks along the columns (x) and the rows (y) of c */
    unsigned block_x, block_y; /* threads per block along x and y */
} naive_matmul_args;

/* The launchers of naive_matmul_kernel. Without CUDA, on_cuda is NULL and
 * device_launch refuses a cuda:N device with a message (such a build sees none). */
extern const kernel_launchers naive_matmul_launchers;

/* Refuses what lab_matmul_naive_gpu cannot run, with a message that says why:
 * a NULL tensor, c not on a GPU (STATUS_WRONG_DEVICE), a, b and c not on one
 * device, shapes that are not float32 [m, k] x [k, n] -> [m, n]. */
status naive_matmul_check_operands(const tensor *a, const tensor *b, const tensor *c);

/* The launch on a real GPU (naive_launch.cu; only in a build with CUDA). */
void naive_matmul_on_cuda(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
