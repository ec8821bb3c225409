/* bench_common.h: what the benches share: the devices to measure. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The directory of the benches' sources, to find the PyTorch scripts beside them. */
static inline void bench_dir(char *out, size_t size)
{
    snprintf(out, size, "%s", __FILE__);
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(out, size, ".");
}

/* The python whose torch the benches compare with: LABKIT_PYTHON, then python3
 * on PATH (a virtual environment's), then /usr/bin/python3 (Debian's
 * python3-torch); the first that imports torch, and with `cuda` the first
 * whose torch sees a GPU. NULL when none does. */
static inline const char *bench_python(bool cuda)
{
    /* Asked once per kind: importing torch takes seconds, and a bench asks
     * before each of its PyTorch runs. */
    static bool looked[2];
    static const char *found[2];
    if (looked[cuda]) return found[cuda];
    looked[cuda] = true;
    const char *env = getenv("LABKIT_PYTHON");
    const char *candidates[] = { env ? env : "", "python3", "/usr/bin/python3" };
    for (int i = 0; i < 3 && !found[cuda]; ++i) {
        if (!candidates[i][0]) continue;
        char command[4200];
        snprintf(command, sizeof command,
                 "'%s' -c 'import sys, torch; sys.exit(0 if %s else 1)' >/dev/null 2>&1", candidates[i],
                 cuda ? "torch.cuda.is_available()" : "True");
        if (system(command) == 0) found[cuda] = candidates[i];
    }
    return found[cuda];
}

#endif
