/* bench_kernels.h: what bench_kernels.c and bench_kernels_cuda.cu share: the
 * arguments of the bench's kernels and their real GPU launchers. Plain C. */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* c [n, n] = a b: the tiled product takes n as an int, lab 04's naive one m,
 * n, k as int64_t (each field its parameter's type). */
typedef struct bench_product_args {
    const float *a, *b;
    float *c;
    int n;
    int64_t n64;
    double *cpu_seconds; /* sim: the worker's CPU time for the launch, written there */
} bench_product_args;

/* `rounds` barriers in `blocks` blocks of 16 x 16 threads. */
typedef struct bench_barriers_args {
    int rounds;
    unsigned blocks;
    double *cpu_seconds;
} bench_barriers_args;

/* out = a + b, n elements, with the library's own kernel. */
typedef struct bench_add_args {
    const float *a, *b;
    float *out;
    int64_t n;
    double *cpu_seconds;
} bench_add_args;

/* The real GPU's launchers (bench_kernels_cuda.cu), only in a build with CUDA;
 * naive only where lab 04's solution is there to compile. */
void bench_tiled_on_cuda(const void *args, void *stream);
void bench_naive_on_cuda(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
