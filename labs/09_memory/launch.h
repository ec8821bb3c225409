/* launch.h: how your kernels reach a device (given: not a step).
 *
 * You write the kernels once, in memory_kernels.cuh. Two given files launch
 * them, each compiling your file for its side:
 *   launch.c    the C compiler, through labkit/cuda_emulation.h: LAUNCH() runs
 *               every block and thread, the threads of a block cooperating at
 *               their barriers, on a simulated GPU's worker thread (or at
 *               once, on the CPU);
 *   launch.cu   nvcc, in a build with CUDA: kernel<<<grid, block, 0, stream>>>.
 * The run_* functions below pick the grid, fill the arguments and call
 * device_launch (labkit/kernel.h), which queues the launcher for the device:
 * each is one launch, queued, and returns without waiting.
 *
 * The grids:
 *   copy, scale      one thread per element, blocks of LAUNCH_BLOCK threads
 *                    along x, the last block rounded up;
 *   strided copy     one thread per element too, numbered as README's step 1
 *                    says: ceil(n / stride) x stride threads, rounded up to
 *                    whole blocks;
 *   products         one thread per cell of c, blocks of TILE x TILE threads:
 *                    x along the columns of c, y along its rows;
 *   sums             one thread per element, blocks of REDUCE_BLOCK threads;
 *                    the total is set to 0 first, in the same launch;
 *   transposes       blocks of TRANSPOSE_TILE x TRANSPOSE_ROWS threads (32 x 8),
 *                    x along the columns of in, y along its rows: the naive
 *                    one a thread per element, yours a block per tile of
 *                    TRANSPOSE_TILE x TRANSPOSE_TILE elements (each thread
 *                    moves TRANSPOSE_TILE / TRANSPOSE_ROWS = 4 of them).
 * Every grid is rounded up, so every kernel gets threads past the end of its
 * work, which must do nothing.
 *
 * The pointers are a device's memory (tensor_data of a tensor on it, or, on
 * the CPU, any host array), and the kernels touch nothing else. Plain C, so
 * that both compilers read it. */
#ifndef LAB09_LAUNCH_H
#define LAB09_LAUNCH_H

#include <stdint.h>

#include "labkit/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LAUNCH_BLOCK 256 /* threads per block of copy, scale and the strided copy */
#define TILE 16          /* the products' blocks: TILE x TILE threads, and the tiles' size */
#define REDUCE_BLOCK 256 /* threads per block of the sums: the shared-memory tree's width */
/* The transposes' blocks: a warp along each row of a tile, 8 rows of threads
 * (256, as the other kernels'), each thread moving 4 floats of its tile's
 * 32 x 32: 1024 threads a block would run as well on a GPU, but a simulated
 * GPU switches between every one of them at each barrier. */
#define TRANSPOSE_TILE 32
#define TRANSPOSE_ROWS 8

/* ---- step 1: copy, scale, strided copy ------------------------------------------------------ */

typedef enum stream_kernel { KERNEL_COPY, KERNEL_SCALE, KERNEL_STRIDED } stream_kernel;

typedef struct stream_args {
    const float *in; /* n floats on the device */
    float *out;      /* n floats */
    int64_t n;
    int64_t stride;           /* the strided copy's */
    float alpha;              /* the scale's */
    unsigned blocks, threads; /* the grid: `blocks` blocks of `threads` threads along x */
} stream_args;

/* out = in (KERNEL_COPY), out = alpha in (KERNEL_SCALE), or out = in by your
 * strided_copy_kernel, whose consecutive threads copy elements `stride` apart
 * (KERNEL_STRIDED; stride 1 for the others). One launch on d, queued. */
status run_stream(device d, stream_kernel kernel, const float *in, float *out, int64_t n, int64_t stride,
                  float alpha);

/* The same on a grid the caller chooses (the check runs a few threads alone to
 * see which elements they copy). */
status run_stream_grid(device d, stream_kernel kernel, const float *in, float *out, int64_t n, int64_t stride,
                       float alpha, unsigned blocks, unsigned threads);

/* Threads the strided copy needs for n elements: ceil(n / stride) x stride. */
int64_t strided_threads(int64_t n, int64_t stride);

/* ---- step 2: products ---------------------------------------------------------------------- */

typedef enum product_kernel { PRODUCT_NAIVE, PRODUCT_TILED } product_kernel;

typedef struct product_args {
    const float *a; /* [m, k], row-major, on the device */
    const float *b; /* [k, n] */
    float *c;       /* [m, n] */
    int64_t m, n, k;
    unsigned grid_x, grid_y; /* blocks along the columns (x) and the rows (y) of c */
} product_args;

/* c = a b by your naive_matmul_kernel or tiled_matmul_kernel: one launch on d, queued. */
status run_product(device d, product_kernel kernel, const float *a, const float *b, float *c, int64_t m,
                   int64_t n, int64_t k);

/* ---- step 3: sums -------------------------------------------------------------------------- */

typedef enum sum_kernel { SUM_ATOMIC, SUM_BLOCK, SUM_WARP } sum_kernel;

typedef struct sum_args {
    const float *x; /* n floats on the device */
    int64_t n;
    float *total;      /* one float: set to 0, then the sum */
    unsigned *atomics; /* one counter, set to 0, then the atomics on total; or NULL: not counted */
    unsigned blocks;
} sum_args;

/* *total = the sum of x's n values by your sum_atomic_kernel, sum_block_kernel
 * or sum_warp_kernel; with `atomics`, *atomics = how many atomic additions to
 * the total they made (total_add counts them, given_kernels.cuh). The total
 * and the counter are set to 0 first, in the same launch. One launch on d,
 * queued. */
status run_sum(device d, sum_kernel kernel, const float *x, int64_t n, float *total, unsigned *atomics);

/* ---- step 5: a transpose ------------------------------------------------------------------- */

typedef enum transpose_kind { TRANSPOSE_NAIVE, TRANSPOSE_TILED } transpose_kind;

typedef struct transpose_args {
    const float *in; /* [rows, cols], row-major, on the device */
    float *out;      /* [cols, rows] */
    int64_t rows, cols;
    unsigned grid_x, grid_y; /* blocks along the columns (x) and the rows (y) of in */
} transpose_args;

/* out = in transposed, by the given naive_transpose_kernel (given_kernels.cuh)
 * or your transpose_kernel: one launch on d, queued. */
status run_transpose(device d, transpose_kind kernel, const float *in, float *out, int64_t rows,
                     int64_t cols);

/* The names of the kernels, for tables and messages. */
const char *stream_kernel_name(stream_kernel kernel);
const char *product_kernel_name(product_kernel kernel);
const char *sum_kernel_name(sum_kernel kernel);
const char *transpose_kernel_name(transpose_kind kernel);

/* ---- the launchers ------------------------------------------------------------------------- */

extern const kernel_launchers copy_launchers, scale_launchers, strided_launchers, naive_launchers,
    tiled_launchers, sum_atomic_launchers, sum_block_launchers, sum_warp_launchers, naive_transpose_launchers,
    transpose_launchers;

/* The launches on a real GPU (launch.cu; only in a build with CUDA). */
void copy_on_cuda(const void *args, void *stream);
void scale_on_cuda(const void *args, void *stream);
void strided_on_cuda(const void *args, void *stream);
void naive_on_cuda(const void *args, void *stream);
void tiled_on_cuda(const void *args, void *stream);
void sum_atomic_on_cuda(const void *args, void *stream);
void sum_block_on_cuda(const void *args, void *stream);
void sum_warp_on_cuda(const void *args, void *stream);
void naive_transpose_on_cuda(const void *args, void *stream);
void transpose_on_cuda(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
