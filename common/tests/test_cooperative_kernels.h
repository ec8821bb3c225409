/* test_cooperative_kernels.h: the launchers of test_cooperative_kernels.cuh's
 * kernels for device_launch (test_cooperative_sim.c): the emulation's, and a
 * real GPU's where nvcc compiled them (test_cooperative_cuda.cu). The kernels
 * that are mistakes, and the known-wrong versions, have no real GPU launcher:
 * on a GPU they hang or compute garbage. */
#ifndef LABKIT_TESTS_COOPERATIVE_KERNELS_H
#define LABKIT_TESTS_COOPERATIVE_KERNELS_H

#include "labkit/kernel.h"
#include "test_cooperative_launch.h"

/* mirrors of the .cuh's constants, for the tests' references */
#define TEST_TILE 16
#define TEST_REDUCE_BLOCK 256
#define TEST_HISTOGRAM_BINS 16
#define TEST_SHUFFLE_RESULTS 7

/* matmul_args */
extern const kernel_launchers tiled_matmul, tiled_matmul_one_barrier;
/* vector_pair_args */
extern const kernel_launchers block_sum, block_sum_unsynced, warp_sum, warp_sum_up, reverse_block;
extern const kernel_launchers histogram; /* histogram_args */
extern const kernel_launchers atomics;   /* atomics_args */
extern const kernel_launchers trace;     /* trace_args */
/* out_args */
extern const kernel_launchers shuffle, early_return, two_barriers, mask_leaves_out, mask_never_comes,
    deep_recursion, wide_count, struct_argument;

/* The source lines of the mistakes' barriers (test_cooperative_kernels.cuh). */
extern const int early_return_barrier_line, first_half_barrier_line, second_half_barrier_line,
    mask_leaves_out_line, mask_never_comes_line;

#endif
