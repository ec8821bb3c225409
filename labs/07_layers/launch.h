/* launch.h: how your three kernels reach a device (given: not a step).
 *
 * You write the kernels once, in layer_kernels.cuh. Two given files launch
 * them, each compiling your file for its side:
 *   launch.c    the C compiler, through labkit/cuda_emulation.h: LAUNCH() runs
 *               every block and thread in turn, on a simulated GPU's worker
 *               thread (or at once, on the CPU);
 *   launch.cu   nvcc, in a build with CUDA: kernel<<<grid, block, 0, stream>>>.
 * Each kernel has a kernel_launchers that names both, and device_launch
 * (labkit/kernel.h) picks the one for the device it is given:
 *
 *   const softmax_args args = { ... };
 *   return device_launch(tensor_device(scores), &softmax_rows_launchers, &args, sizeof args);
 *
 * The launchers choose the grid: one thread per element of the kernel's work
 * (the args say how many), in blocks of LAUNCH_BLOCK threads, the last block
 * rounded up. So every kernel gets a few threads too many, which must do
 * nothing.
 *
 * The given reorder kernel (given_kernels.cuh, used by conv_reorder in
 * given.h) is launched the same way. Plain C, so that both compilers read it. */
#ifndef LAB07_LAUNCH_H
#define LAB07_LAUNCH_H

#include <stdint.h>

#include "labkit/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block, along x: the grid is 1-D. */
#define LAUNCH_BLOCK 256

/* The sizes of one convolution: x [n, c, h, w] * w [k, c, r, s] -> y [n, k,
 * h_out, w_out], stride 1, `pad` rows and columns of zeros around each image. */
typedef struct conv_dims {
    int64_t n, c, h, w;
    int64_t k, r, s;
    int64_t pad;
    int64_t h_out, w_out;
} conv_dims;

/* conv_direct_kernel: one thread per element of y, n k h_out w_out of them. */
typedef struct conv_args {
    const float *x; /* [n, c, h, w] on the device */
    const float *w; /* [k, c, r, s] */
    float *y;       /* [n, k, h_out, w_out] */
    conv_dims d;
} conv_args;

/* im2col_kernel: one thread per channel of each output pixel, n c h_out w_out
 * of them. */
typedef struct im2col_args {
    const float *x; /* [n, c, h, w] on the device */
    float *cols;    /* [c r s, n h_out w_out] */
    conv_dims d;    /* d.k is not used */
} im2col_args;

/* softmax_rows_kernel: one thread per row, `rows` of them. */
typedef struct softmax_args {
    float *scores; /* [rows, cols] on the device, softmaxed in place */
    int64_t rows, cols;
    float scale;
    int causal; /* 1: row i keeps its columns j <= i only */
} softmax_args;

/* flash_attention_kernel (step 7): a block of FLASH_THREADS threads per
 * FLASH_ROWS rows of q, FLASH_SPLIT neighbouring threads per row (one warp
 * holds 32 / FLASH_SPLIT whole rows), the last block rounded up; the block
 * reads K and V FLASH_TILE keys at a time into its shared memory, a key every
 * FLASH_STRIDE floats. The head size is at most FLASH_MAX_HEAD: each thread
 * keeps its row of q and of the output in arrays of that size, which the
 * compiler keeps in registers when every index is a constant. */
#define FLASH_ROWS 32
#define FLASH_SPLIT 8
#define FLASH_THREADS (FLASH_ROWS * FLASH_SPLIT)
#define FLASH_TILE 32
#define FLASH_MAX_HEAD 64
#define FLASH_STRIDE (FLASH_MAX_HEAD + 1) /* one float more: a warp's keys in different banks */
typedef struct flash_args {
    const float *q, *k, *v; /* [n, d] on the device */
    float *out;             /* [n, d] */
    int64_t n, d;
    float scale; /* 1 / sqrt(d) */
    int causal;  /* 1: row i attends to the keys j <= i only */
} flash_args;

/* reorder_kernel (given): one thread per element of y. */
typedef struct reorder_args {
    const float *product; /* [k, n h_out w_out] on the device */
    float *y;             /* [n, k, h_out, w_out] */
    int64_t n, k, pixels; /* pixels = h_out w_out */
} reorder_args;

/* The launchers. Without CUDA, on_cuda is NULL and device_launch refuses a
 * cuda:N device with a message (such a build sees none). */
extern const kernel_launchers conv_direct_launchers, im2col_launchers, softmax_rows_launchers,
    reorder_launchers, flash_attention_launchers;

/* The launches on a real GPU (launch.cu; only in a build with CUDA). */
void conv_direct_on_cuda(const void *args, void *stream);
void im2col_on_cuda(const void *args, void *stream);
void softmax_rows_on_cuda(const void *args, void *stream);
void reorder_on_cuda(const void *args, void *stream);
void flash_attention_on_cuda(const void *args, void *stream);

/* Blocks of LAUNCH_BLOCK threads that cover `threads` threads (the last one
 * rounded up); 0 for none. */
static inline unsigned launch_blocks(int64_t threads)
{
    return threads <= 0 ? 0u : (unsigned)((threads + LAUNCH_BLOCK - 1) / LAUNCH_BLOCK);
}

/* Blocks of FLASH_ROWS rows that cover n rows (the last one rounded up). */
static inline unsigned flash_blocks(int64_t n)
{
    return n <= 0 ? 0u : (unsigned)((n + FLASH_ROWS - 1) / FLASH_ROWS);
}

#ifdef __cplusplus
}
#endif
#endif
