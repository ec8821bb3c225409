/* blas.c: making sure OpenBLAS uses the CPU it runs on.
 *
 * OpenBLAS picks its kernels when it loads, from the CPU's identity. Some
 * virtual machines present an anonymous CPU, and OpenBLAS then falls back to
 * kernels for a 2004 Pentium 4 ("Prescott"): matrix products run 3 to 5 times
 * slower than the hardware allows. The choice is made before main() runs, so
 * the kit cannot change it from inside; it can say so, and ./lab sets
 * OPENBLAS_CORETYPE for the programs it starts. */
#include <cblas.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "backend.h"
#include "labkit/properties.h"

static const char *const pre_avx2_kernels[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem",
                                                "Atom",     "Sandybridge", "Bulldozer", "Barcelona", "Opteron"};

const char *cpu_blas_kernels(void)
{
    const char *core = openblas_get_corename();
    return core ? core : "unknown";
}

const char *cpu_blas_better_coretype(void)
{
    const int lanes = host_cpu_simd_lanes();
    if (lanes < 8) return NULL; /* no AVX2 + FMA: the old kernels are the right ones */
    const char *core = cpu_blas_kernels();
    for (size_t i = 0; i < sizeof pre_avx2_kernels / sizeof *pre_avx2_kernels; ++i)
        if (strcasecmp(core, pre_avx2_kernels[i]) == 0) return lanes >= 16 ? "SkylakeX" : "Haswell";
    return NULL;
}

void blas_warn_if_slow_kernels(void)
{
    static atomic_bool checked = false;
    if (atomic_exchange(&checked, true)) return;
    const char *better = cpu_blas_better_coretype();
    if (!better) return;
    fprintf(stderr,
            "labkit: OpenBLAS chose its \"%s\" kernels, older than this CPU; matrix products will run several "
            "times slower than it allows.\n"
            "  hint: run through ./lab, or export OPENBLAS_CORETYPE=%s before starting the program.\n",
            cpu_blas_kernels(), better);
}
