/* bench_common.h: what the benches share: the devices to measure. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/labkit.h"

/* A LABKIT_* setting that cannot be honoured (labkit/environment.h) stops a
 * bench with exit status 2 before it measures anything. */
static inline void bench_settings(void)
{
    if (environment_check() != STATUS_OK || environment_check_program("LABKIT_PYTHON") != STATUS_OK) {
        fprintf(stderr, "bench: %s\n", last_error());
        exit(2);
    }
}

/* The benches compare the CPU with sim:0 everywhere, and on a machine with a
 * real GPU also cuda:0 with CUDA's own libraries: ask for one simulated GPU
 * unless the caller set LABKIT_SIM_GPUS (empty is not a choice). */
static inline void bench_devices(void)
{
    const char *sims = getenv("LABKIT_SIM_GPUS");
    if (!sims || !*sims) setenv("LABKIT_SIM_GPUS", "1", 1);
    bench_settings();
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
    const bool chosen = env && *env;
    const char *candidates[] = { chosen ? env : "python3", chosen ? NULL : "/usr/bin/python3" };
    for (int i = 0; i < 2 && candidates[i] && !found[cuda]; ++i) {
        char command[4200];
        snprintf(command, sizeof command,
                 "'%s' -c 'import sys, torch; sys.exit(0 if %s else 1)' >/dev/null 2>&1", candidates[i],
                 cuda ? "torch.cuda.is_available()" : "True");
        if (system(command) == 0) found[cuda] = candidates[i];
    }
    /* A python chosen on purpose that cannot give the comparison is not
     * replaced by another, nor silently left out. */
    if (chosen && !found[cuda]) {
        fprintf(stderr,
                "bench: LABKIT_PYTHON=\"%s\" cannot import torch%s, so the comparison it was chosen for "
                "cannot run.\n  hint: install PyTorch there, or unset LABKIT_PYTHON to let the bench look "
                "for one.\n",
                env, cuda ? " with a GPU it can see" : "");
        exit(2);
    }
    return found[cuda];
}

#endif
