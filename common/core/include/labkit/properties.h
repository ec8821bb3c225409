/* properties.h: what a device is made of, and the peaks that follow.
 *
 * The theoretical FP32 peak of a GPU is
 *     multiprocessors x FP32 cores per multiprocessor x clock x 2,
 * the 2 because one fused multiply-add (a*b + c) counts as two operations.
 * The CPU's is cores x SIMD lanes x FMA units per core x clock x 2.
 *
 * Tensor cores (Volta and later) multiply small matrices of low-precision
 * inputs (TF32, FP16, BF16) and accumulate in float32, many times faster. Their
 * dense peak is
 *     multiprocessors x tensor FLOP per clock per multiprocessor x clock,
 * with the rate from tensor_flops_per_clock() and, where the kit knows the
 * product, the clock NVIDIA's own figures assume (tensor_core_properties()). */
#ifndef LABKIT_PROPERTIES_H
#define LABKIT_PROPERTIES_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/status.h"

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
    /* Peak memory bandwidth, GB/s (10^9 bytes a second), 0 if unknown: a real
     * GPU's from its memory clock and bus width (x 2, double data rate); a
     * simulated GPU's is its modelled card's. The CPU's is 0 here: it is not
     * read but measured, by device_memory_bandwidth() (labkit/device.h). */
    double memory_bandwidth_gbs;
    char notes[160]; /* how the figures were obtained, or what is unknown */
    /* Tensor cores: dense peaks with float32 accumulation, GFLOP/s; 0 = none or unknown. */
    bool tensor_cores;
    double peak_tf32_gflops, peak_fp16_gflops, peak_bf16_gflops;
    char tensor_notes[224]; /* how they were obtained (at which clock), or why there are none */
} device_properties;

/* FP32 cores per multiprocessor for a compute capability, Turing (7.5) to
 * Blackwell (12.x); 0 when the architecture is unknown (never a guess). */
int fp32_cores_per_multiprocessor(int cc_major, int cc_minor);

/* multiprocessors x cores x clock x 2, in GFLOP/s. */
double peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz);

/* Dense tensor-core FLOP per clock per multiprocessor, float32 accumulation,
 * for one compute capability, as NVIDIA's full-rate parts (data-centre and
 * workstation cards) run them; 0 where the architecture has none for that
 * format or is not in the kit's table. GeForce cards accumulate in float32 at
 * half these rates (tensor_core_properties() applies it). */
typedef struct tensor_rates {
    int tf32, fp16, bf16;
} tensor_rates;
tensor_rates tensor_flops_per_clock(int cc_major, int cc_minor);

/* multiprocessors x FLOP per clock x clock, in GFLOP/s (0 if any is <= 0). */
double peak_tensor_gflops(int multiprocessors, int flops_per_clock, double clock_ghz);

/* Fills p's tensor-core fields (tensor_cores, the three peaks, tensor_notes)
 * from its name, compute capability, multiprocessors and clock_ghz: what
 * device_get_properties() does for a real GPU, and a way to ask about one that
 * is not here. For products the kit knows (H100, H200, L40, L40S) the clock is
 * the one NVIDIA's published figures assume, which may be lower than the boost
 * clock cudart reports (H100 SXM: 1.83 against 1.98 GHz); for others it is
 * p->clock_ghz, and the notes say the peak may then be an overestimate. */
status tensor_core_properties(device_properties *p);

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
