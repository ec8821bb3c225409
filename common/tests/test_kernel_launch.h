/* test_kernel_launch.h: what test_kernel.c and test_kernel_cuda.cu share: the
 * arguments of each kernel of test_kernels.cuh and its real GPU launchers.
 * Plain C, so that both compilers read it. */
#ifndef LABKIT_TESTS_KERNEL_LAUNCH_H
#define LABKIT_TESTS_KERNEL_LAUNCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything one launch needs; device_launch copies it. The grid and blocks are
 * part of it, so that a test can ask for a shape the device must refuse. */
typedef struct vector_args {
    float *out;
    int64_t n;
    unsigned grid_x, block_x;
} vector_args;

typedef struct matrix_args {
    float *out;
    int64_t rows, cols;
    unsigned grid_x, grid_y, block_x, block_y;
} matrix_args;

/* The real GPU's launchers (test_kernel_cuda.cu): kernel<<<grid, block, 0,
 * stream>>>. Only in a build with CUDA. */
void add_index_on_cuda(const void *args, void *stream);
void cell_id_on_cuda(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
