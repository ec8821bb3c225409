/* properties.c: what devices are made of: the FP32 table of GPU architectures and
 * the peak formula, the host CPU (model, SIMD width, measured clock) and the
 * kernels OpenBLAS chose for it. Asks no device anything: the backends call it. */
#include "labkit/properties.h"

#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"

int fp32_cores_per_multiprocessor(int cc_major, int cc_minor)
{
    /* From NVIDIA's programming guide (arithmetic instructions throughput). */
    switch (cc_major) {
    case 7: return cc_minor == 5 ? 64 : 0; /* Turing                 */
    case 8:
        return cc_minor == 0                                       ? 64  /* Ampere A100            */
               : (cc_minor == 6 || cc_minor == 7 || cc_minor == 9) ? 128 /* GA10x, Orin, Ada */
                                                                   : 0;
    case 9: return cc_minor == 0 ? 128 : 0;                                      /* Hopper                 */
    case 10: return (cc_minor == 0 || cc_minor == 1 || cc_minor == 3) ? 128 : 0; /* Blackwell */
    case 11: return cc_minor == 0 ? 128 : 0;                                     /* Blackwell (Thor)       */
    case 12: return (cc_minor == 0 || cc_minor == 1) ? 128 : 0;                  /* Blackwell GeForce, GB10 */
    default: return 0;
    }
}

double peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz)
{
    if (multiprocessors <= 0 || cores_per_mp <= 0 || clock_ghz <= 0) return 0.0;
    return (double)multiprocessors * cores_per_mp * clock_ghz * 2.0; /* 2: one FMA */
}

/* ---- the host CPU ------------------------------------------------------- */

typedef struct cpu_facts {
    char model[128];
    double mhz;
    int simd_lanes; /* float32 lanes of the widest vector unit */
    bool fma;
} cpu_facts;

static bool has_flag(const char *flags, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = strstr(flags, flag); p; p = strstr(p + 1, flag))
        if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0')) return true;
    return false;
}

/* Seconds of CPU time this thread has used: unlike the wall clock it stops
 * while another program has the core, so a busy machine does not read slow. */
static double thread_cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The clock a core really runs at, turbo included: a chain of dependent
 * register adds retires one add per cycle, so adds per second is the clock.
 * (An add of a constant would not do: recent cores fold those away.) Virtual
 * machines often report only a nominal clock in /proc/cpuinfo. */
static double measured_clock_ghz(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    /* Short attempts, keeping the fastest: an attempt that shares its core with
     * an interrupt or a context switch only reads slower. */
    const uint64_t trips = 1000000, adds_per_trip = 4;
    double best = 0.0;
    for (int attempt = 0; attempt < 12; ++attempt) {
        uint64_t left = trips, x = 1;
        const double start = thread_cpu_seconds();
        __asm__ volatile("1:\n\t"
                         "addq %1, %1\n\taddq %1, %1\n\taddq %1, %1\n\taddq %1, %1\n\t"
                         "subq $1, %0\n\tjnz 1b"
                         : "+r"(left), "+r"(x));
        const double ghz = (double)(trips * adds_per_trip) / (thread_cpu_seconds() - start) / 1e9;
        if (ghz > best) best = ghz;
    }
    return best;
#else
    return 0.0;
#endif
}

static void read_cpuinfo(cpu_facts *f)
{
    snprintf(f->model, sizeof f->model, "unknown CPU");
    f->simd_lanes = 1;
    FILE *in = fopen("/proc/cpuinfo", "r");
    if (!in) return;
    char line[4096];
    bool have_model = false, have_flags = false;
    while (fgets(line, sizeof line, in)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        const char *value = colon + 1 + (colon[1] == ' ');
        if (!have_model && strncmp(line, "model name", 10) == 0) {
            snprintf(f->model, sizeof f->model, "%.*s", (int)strcspn(value, "\n"), value);
            have_model = true;
        } else if (f->mhz == 0 && strncmp(line, "cpu MHz", 7) == 0) {
            sscanf(value, "%lf", &f->mhz);
        } else if (!have_flags && (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0)) {
            have_flags = true;
            f->fma = has_flag(value, "fma") || has_flag(value, "asimd");
            f->simd_lanes = has_flag(value, "avx512f")                             ? 16
                            : has_flag(value, "avx")                               ? 8
                            : (has_flag(value, "sse") || has_flag(value, "asimd")) ? 4
                                                                                   : 1;
        }
    }
    fclose(in);
}

static cpu_facts host_facts;
static double host_measured_ghz;
static pthread_once_t host_facts_once = PTHREAD_ONCE_INIT;

static void learn_host(void)
{
    read_cpuinfo(&host_facts);
    host_measured_ghz = measured_clock_ghz();
}

int host_cpu_simd_lanes(void)
{
    pthread_once(&host_facts_once, learn_host);
    return host_facts.fma ? host_facts.simd_lanes : 1;
}

status host_cpu_properties(device_properties *out)
{
    pthread_once(&host_facts_once, learn_host);
    const cpu_facts f = host_facts;
    const bool measured = host_measured_ghz > 0;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", f.model);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    out->memory_bytes = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    out->multiprocessors = cores > 0 ? (int)cores : 1;
    /* Two FMA units per core is what desktop and server cores since Haswell have;
     * it is an assumption, said so in the notes. */
    int fma_units = f.fma ? 2 : 1;
    out->cores_per_mp = f.simd_lanes * fma_units;
    out->clock_ghz = measured ? host_measured_ghz : f.mhz / 1000.0;
    out->peak_gflops = peak_fp32_gflops(out->multiprocessors, out->cores_per_mp, out->clock_ghz);
    snprintf(
        out->notes, sizeof out->notes,
        "%d logical cores x %d-lane SIMD x %d FMA unit%s (assumed) x %s clock x 2; OpenBLAS kernels: %.24s",
        out->multiprocessors, f.simd_lanes, fma_units, fma_units > 1 ? "s" : "",
        measured ? "measured" : "nominal (/proc/cpuinfo)", cpu_blas_kernels());
    return STATUS_OK;
}

/* ---- OpenBLAS on this CPU --------------------------------------------------
 *
 * OpenBLAS picks its kernels when it loads, from the CPU's identity. Some
 * virtual machines present an anonymous CPU, and OpenBLAS then falls back to
 * kernels for a 2004 Pentium 4 ("Prescott"): matrix products run 3 to 5 times
 * slower than the hardware allows. The choice is made before main() runs, so
 * the kit cannot change it from inside; it can say so, and ./lab sets
 * OPENBLAS_CORETYPE for the programs it starts. */
static const char *const pre_avx2_kernels[] = { "Prescott",  "Core2",  "Penryn",      "Dunnington",
                                                "Nehalem",   "Atom",   "Sandybridge", "Bulldozer",
                                                "Barcelona", "Opteron" };

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
    fprintf(
        stderr,
        "labkit: OpenBLAS chose its \"%s\" kernels, older than this CPU; matrix products will run several "
        "times slower than it allows.\n"
        "  hint: run through ./lab, or export OPENBLAS_CORETYPE=%s before starting the program.\n",
        cpu_blas_kernels(), better);
}
