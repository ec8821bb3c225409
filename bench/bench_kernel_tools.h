/* bench_kernel_tools.h: what bench_kernel_tools.c and its launchers
 * (kernel_tools_launch.c, compiled twice: plain, and built for the kernel
 * tools) share. Plain C. */
#ifndef BENCH_KERNEL_TOOLS_H
#define BENCH_KERNEL_TOOLS_H

#include <stdint.h>

#include "labkit/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* c [m, n] = a [m, k] b [k, n]; the tiled kernel takes the one size n
 * (square) as an int. */
typedef struct tools_product_args {
    const float *a, *b;
    float *c;
    int64_t m, n, k;
    int square;
    double *cpu_seconds; /* the worker's CPU time for the launch, written there */
} tools_product_args;

/* The launchers of one compilation: naive is NULL where lab 04's solution is
 * not in this copy of the kit. */
typedef struct tools_launchers {
    const kernel_launchers *naive, *tiled;
} tools_launchers;

/* Lab 09's copy (out = in) and block sum (out[0] = the sum of in), n floats;
 * atomics: the sum's counter (one unsigned). */
typedef struct tools_stream_args {
    const float *in;
    float *out;
    int64_t n;
    unsigned *atomics;
    double *cpu_seconds;
} tools_stream_args;

/* Their launchers (kernel_tools_launch09.c), where lab 09's solution is in
 * this copy of the kit. */
typedef struct tools_launchers09 {
    const kernel_launchers *copy, *sum_block;
} tools_launchers09;

extern const tools_launchers09 bench_tools09_plain, bench_tools09_watched;

extern const tools_launchers bench_tools_plain;   /* compiled as the labs compile it */
extern const tools_launchers bench_tools_watched; /* built for the kernel tools */

#ifdef __cplusplus
}
#endif
#endif
