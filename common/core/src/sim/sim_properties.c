/* sim_properties.c: what a simulated GPU says it is: the CPU it runs on, with
 * its own name, memory and notes. */
#include <stdio.h>

#include "../backend.h"
#include "sim_properties.h"

status sim_device_properties(int index, size_t capacity, device_properties *out)
{
    device_properties cpu;
    const status s = host_cpu_properties(&cpu);
    if (s != STATUS_OK) return s;
    *out = cpu;
    snprintf(out->name, sizeof out->name, "Simulated GPU sim:%d (on %.90s)", index, cpu.name);
    out->memory_bytes = capacity;
    snprintf(out->notes, sizeof out->notes,
             "a worker thread on the CPU; matrix products use OpenBLAS, so its peak is the CPU's");
    snprintf(
        out->tensor_notes, sizeof out->tensor_notes,
        "no tensor cores (a simulated GPU): bf16, f16 and TF32 inputs are widened to float32 by the GPU "
        "kernels and multiplied by OpenBLAS: tensor cores' rounding and float32 accumulation, at the CPU's "
        "float32 speed");
    return STATUS_OK;
}
