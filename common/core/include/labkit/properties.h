/* properties.h: what a device is made of, and the FP32 peak that follows.
 *
 * The theoretical FP32 peak of a GPU is
 *     multiprocessors x FP32 cores per multiprocessor x clock x 2,
 * the 2 because one fused multiply-add (a*b + c) counts as two operations.
 * The CPU's is cores x SIMD lanes x FMA units per core x clock x 2. */
#ifndef LABKIT_PROPERTIES_H
#define LABKIT_PROPERTIES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct device_properties {
    char name[128];
    size_t memory_bytes;
    int multiprocessors; /* SMs on a GPU; cores on the CPU */
    int cores_per_mp;    /* FP32 lanes per SM (GPU) or per core (CPU: lanes x FMA units) */
    double clock_ghz;
    int cc_major, cc_minor; /* compute capability; 0.0 for the CPU and simulated GPUs */
    double peak_gflops;     /* theoretical FP32 peak, 0 if unknown */
    char notes[160];        /* how the figures were obtained, or what is unknown */
} device_properties;

/* FP32 cores per multiprocessor for a compute capability, Turing (7.5) to
 * Blackwell (12.x); 0 when the architecture is unknown (never a guess). */
int fp32_cores_per_multiprocessor(int cc_major, int cc_minor);

/* multiprocessors x cores x clock x 2, in GFLOP/s. */
double peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz);

/* The kernels OpenBLAS chose for this CPU when it loaded ("Haswell", "SkylakeX"). */
const char *cpu_blas_kernels(void);

/* The OPENBLAS_CORETYPE that lets OpenBLAS use this CPU fully, when it chose
 * kernels older than the CPU supports (some virtual machines hide their CPU's
 * model, and OpenBLAS then falls back to "Prescott"); NULL when its choice is
 * right. It must be in the environment before the program starts. */
const char *cpu_blas_better_coretype(void);

#ifdef __cplusplus
}
#endif
#endif
