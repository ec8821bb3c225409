/* bench_common.h: what the benches share: the devices to measure. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "labkit/labkit.h"

/* The benches compare the CPU with sim:0 everywhere, and on a machine with a
 * real GPU also cuda:0 with CUDA's own libraries: ask for one simulated GPU
 * unless the caller set LABKIT_SIM_GPUS. */
static inline void bench_devices(void)
{
    setenv("LABKIT_SIM_GPUS", "1", 0);
    CHECK(devices_init());
}

/* The first GPU: cuda:0 where there is one, else sim:0. */
static inline device bench_gpu(void)
{
    bench_devices();
    return try_gpu(0);
}

/* sim:0 (the CPU when LABKIT_SIM_GPUS=0 was asked for). */
static inline device bench_sim(void)
{
    bench_devices();
    const device sim = { DEVICE_SIM, 0 };
    return device_exists(sim) ? sim : device_cpu();
}

#endif
