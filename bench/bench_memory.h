/* bench_memory.h: what bench_memory.c and bench_memory_cuda.cu share: lab 09's
 * kernels and cudaMemcpy device to device on a real GPU, each timed with CUDA
 * events on device pointers the caller made (built only with CUDA). Each
 * returns the fastest of `reps` runs, in seconds, after one untimed run; a
 * negative value where lab 09's solution was not there to compile. Plain C. */
#ifndef BENCH_MEMORY_H
#define BENCH_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether lab 09's kernels were compiled in (solutions/09_memory exists). */
int bench_memory_has_lab09(void);

/* cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice) on GPU `index`. */
double bench_memory_d2d_seconds(int index, void *dst, const void *src, size_t bytes, int reps);

/* Lab 09's copy (0), scale (1) or strided copy (2) of n floats. */
double bench_memory_stream_seconds(int index, int kernel, const float *in, float *out, int64_t n,
                                   int64_t stride, int reps);

/* Lab 09's naive (0) or tiled (1) product of n x n matrices. */
double bench_memory_product_seconds(int index, int kernel, const float *a, const float *b, float *c,
                                    int64_t n, int reps);

/* Lab 09's sum of n floats, one atomic per element (0), a shared-memory tree
 * (1) or a tree and warp shuffles (2), into the device float *total. */
double bench_memory_sum_seconds(int index, int kernel, const float *x, int64_t n, float *total, int reps);

#ifdef __cplusplus
}
#endif
#endif
