/* sim_properties.c: what a simulated GPU says it is: a modelled card of its
 * own, never the host's figures.
 *
 * If a simulated GPU reported the CPU's peak, a utilisation computed with the
 * wrong device's properties would come out right on it and the mistake would
 * hide. So it describes a small card of the Ampere generation, in round
 * numbers a student can check by hand, that no CPU reaches:
 *
 *   20 multiprocessors of compute capability 8.6 (128 FP32 cores each),
 *   1.5 GHz: 20 x 128 x 1.5 x 2 = 7680 GFLOP/s; 320 GB/s of memory bandwidth
 *   (a 256-bit bus at 10 Gb/s per pin); no tensor cores; the memory that
 *   LABKIT_SIM_MEMORY gives it.
 *
 * It computes on the CPU's cores, so what it achieves is a small fraction of
 * these peaks: they are what the lessons' arithmetic needs, not a promise. */
#include <stdio.h>

#include "../backend.h"
#include "sim_properties.h"

status sim_device_properties(int index, size_t capacity, device_properties *out)
{
    *out = (device_properties){ 0 };
    snprintf(out->name, sizeof out->name, "Simulated GPU sim:%d (a modelled card, computing on %.70s)", index,
             host_cpu_model());
    out->memory_bytes = capacity;
    out->multiprocessors = SIM_MULTIPROCESSORS;
    out->cc_major = SIM_CC_MAJOR;
    out->cc_minor = SIM_CC_MINOR;
    out->cores_per_mp = fp32_cores_per_multiprocessor(SIM_CC_MAJOR, SIM_CC_MINOR);
    out->clock_ghz = SIM_CLOCK_GHZ;
    out->peak_gflops = peak_fp32_gflops(out->multiprocessors, out->cores_per_mp, out->clock_ghz);
    out->memory_bandwidth_gbs = SIM_MEMORY_BANDWIDTH_GBS;
    snprintf(out->notes, sizeof out->notes,
             "a modelled card, not the host: %d SMs x %d cores x %.1f GHz x 2, %.0f GB/s; a worker thread "
             "computes its work on the CPU",
             out->multiprocessors, out->cores_per_mp, out->clock_ghz, out->memory_bandwidth_gbs);
    snprintf(
        out->tensor_notes, sizeof out->tensor_notes,
        "no tensor cores (a simulated GPU): bf16, f16 and TF32 inputs are widened to float32 by the GPU "
        "kernels and multiplied by OpenBLAS: tensor cores' rounding and float32 accumulation, at the CPU's "
        "float32 speed");
    return STATUS_OK;
}
