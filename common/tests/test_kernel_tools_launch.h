/* test_kernel_tools_launch.h: the launchers of test_kernel_tools_kernels.cuh
 * (test_kernel_tools_launch.c, built for the kernel tools), for
 * test_kernel_tools.c. */
#ifndef LABKIT_TESTS_KERNEL_TOOLS_LAUNCH_H
#define LABKIT_TESTS_KERNEL_TOOLS_LAUNCH_H

#include "labkit/kernel.h"

/* What every launcher reads: the buffers a kernel takes, its sizes and its
 * grid (one dimension unless the launcher says otherwise). */
typedef struct tools_args {
    const float *a, *b; /* the kernels' inputs: exactly their parameters' type, for libffi */
    float *c;
    int *ia, *ib;
    unsigned *bins;
    int n, stride;
    unsigned grid, block;
} tools_args;

typedef enum tools_kernel {
    WRITE_PAST_END,
    READ_BEFORE_START,
    SHARED_PAST_END,
    TILED_ONE_BARRIER,
    TILED,
    HALF_WRITTEN,
    SHIFT_LEFT,
    LAST_WRITES,
    UNGUARDED_SUM,
    ATOMIC_SUM,
    STRIDED_COPY,
    NAIVE,
    TRANSPOSE,
    TRANSPOSE_PADDED,
    ODD_EVEN,
    HISTOGRAM,
    DIVERGENT_BARRIER,
    TOOLS_KERNELS
} tools_kernel;

/* The launcher of kernel k, for device_enqueue. */
kernel_fn tools_launcher(tools_kernel k);

/* The path of test_kernel_tools_kernels.cuh, to find its "expect:" lines. */
extern const char tools_kernels_file[];

#endif
