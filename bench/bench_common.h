/* bench_common.h: what the benches share: a simulated GPU to measure, and the
 * median of repeated timings. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "labkit/labkit.h"

/* The benches compare the CPU with sim:0; ask for one simulated GPU unless the
 * caller set LABKIT_SIM_GPUS (or a real GPU makes it moot). */
static inline device bench_gpu(void)
{
    setenv("LABKIT_SIM_GPUS", "1", 0);
    CHECK(devices_init());
    return try_gpu(0);
}

#endif
