/* test_cooperative_launch.h: what test_cooperative.c and
 * test_cooperative_cuda.cu share: the arguments of the kernels of
 * test_cooperative_kernels.cuh and their real GPU launchers. Plain C, so that
 * both compilers read it. Each field has the very type of the kernel's
 * parameter it feeds: a kernel with barriers is called through libffi on the
 * simulated GPU, which passes values unconverted. */
#ifndef LABKIT_TESTS_COOPERATIVE_LAUNCH_H
#define LABKIT_TESTS_COOPERATIVE_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The tiled products: grid and blocks follow from m and n (TILE x TILE). */
typedef struct matmul_args {
    const float *a, *b;
    float *c;
    int m, n, k;
} matmul_args;

/* The reductions, the dynamic shared memory kernel (shared_bytes per block). */
typedef struct vector_pair_args {
    const float *in;
    float *out;
    int n;
    unsigned grid, block;
    size_t shared_bytes;
} vector_pair_args;

typedef struct histogram_args {
    const int *values;
    int n;
    unsigned *bins;
    unsigned grid, block;
} histogram_args;

typedef struct atomics_args {
    const int *v;
    int n;
    int *ints;
    unsigned *uints;
    float *floats;
    unsigned long long *wide;
    unsigned grid, block;
} atomics_args;

typedef struct trace_args {
    int *counter, *trace;
    unsigned grid, block;
} trace_args;

/* The kernels that take an output and an int (shuffles, the mistakes). */
typedef struct out_args {
    int *out;
    int value;
    unsigned grid, block;
} out_args;

/* The real GPU's launchers (test_cooperative_cuda.cu), only in a build with
 * CUDA: kernel<<<grid, block, shared_bytes, stream>>>. */
void tiled_matmul_on_cuda(const void *args, void *stream);
void block_sum_on_cuda(const void *args, void *stream);
void warp_sum_on_cuda(const void *args, void *stream);
void shuffle_on_cuda(const void *args, void *stream);
void histogram_on_cuda(const void *args, void *stream);
void atomics_on_cuda(const void *args, void *stream);
void reverse_block_on_cuda(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
