/* properties.c: what devices are made of: the FP32 and tensor-core tables of GPU
 * architectures and the peak formulas, the host CPU (model, SIMD width, measured clock) and the
 * kernels OpenBLAS chose for it. Asks no device anything: the backends call it. */
#include "labkit/properties.h"

#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
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

/* ---- tensor cores --------------------------------------------------------
 *
 * Dense FLOP per clock per SM with float32 accumulation (one FMA = 2). From
 * NVIDIA's architecture whitepapers, checked against the published peaks of
 * one product each (SMs x rate x clock = the figure):
 *   7.0 V100 SXM2   80 SMs x 1024 x 1.53 GHz = 125 TFLOPS FP16
 *   7.5 T4          40 SMs x 1024 x 1.59 GHz =  65 TFLOPS FP16
 *   8.0 A100       108 SMs x 2048 x 1.41 GHz = 312 TFLOPS FP16/BF16, 156 TF32
 *   8.6 A6000       84 SMs x 1024 x 1.80 GHz = 155 TFLOPS FP16/BF16, 77 TF32
 *   8.7 Jetson AGX Orin: 16 SMs at 1.3 GHz, 170 sparse INT8 TOPS: A100's rates
 *   8.9 RTX 6000 Ada 142 SMs x 1024 x 2.505 GHz = 364 TFLOPS FP16/BF16, 182 TF32
 *   9.0 H100 SXM   132 SMs x 4096 x 1.83 GHz = 989 TFLOPS FP16/BF16, 495 TF32
 *  10.0 B200       148 SMs x 8192 at about 1.86 GHz = 2.25 PFLOPS FP16/BF16 (NVIDIA
 *                  publishes no per-SM rate for Blackwell: derived from that figure)
 *  12.0 RTX 5090   170 SMs x 1024 / 2 (GeForce) x 2.41 GHz = 210 TFLOPS FP16
 * Volta and Turing have no TF32 or BF16. Orin's and Blackwell's rates are
 * derived from their products' figures, not from a published per-SM table. */
tensor_rates tensor_flops_per_clock(int cc_major, int cc_minor)
{
    const tensor_rates none = { 0, 0, 0 }, volta = { 0, 1024, 0 }, a100 = { 1024, 2048, 2048 },
                       ga10x = { 512, 1024, 1024 }, hopper = { 2048, 4096, 4096 },
                       b200 = { 4096, 8192, 8192 };
    switch (cc_major) {
    case 7: return cc_minor == 0 || cc_minor == 2 || cc_minor == 5 ? volta : none; /* Volta, Xavier, Turing */
    case 8:
        return cc_minor == 0 || cc_minor == 7   ? a100  /* A100, Orin */
               : cc_minor == 6 || cc_minor == 9 ? ga10x /* GA10x, Ada */
                                                : none;
    case 9: return cc_minor == 0 ? hopper : none;
    case 10: return cc_minor == 0 ? b200 : none;
    case 12: return cc_minor == 0 ? ga10x : none; /* Blackwell GeForce and workstation */
    default: return none;
    }
}

double peak_tensor_gflops(int multiprocessors, int flops_per_clock, double clock_ghz)
{
    if (multiprocessors <= 0 || flops_per_clock <= 0 || clock_ghz <= 0) return 0.0;
    return (double)multiprocessors * flops_per_clock * clock_ghz;
}

/* Products whose published tensor figures assume another clock than the boost
 * clock cudart reports, or another rate than their architecture's table: the
 * clock is the figure divided by SMs x rate. First match wins (L40S before L40). */
typedef struct known_product {
    const char *name_part; /* in cudart's name */
    int cc_major, cc_minor, multiprocessors;
    double tensor_clock_ghz;
    double rate_factor;    /* 1, or 0.5 for a part with half-rate float32 accumulation */
    const char *published; /* the figures, for the notes */
} known_product;

static const known_product known_products[] = {
    { "H100", 9, 0, 132, 1.830, 1.0, "H100 SXM: 989 BF16, 495 TF32 dense TFLOPS" },
    { "H200", 9, 0, 132, 1.830, 1.0, "H200: 989 BF16, 495 TF32 dense TFLOPS" },
    { "H100 PCIe", 9, 0, 114, 1.620, 1.0, "H100 PCIe: 756 BF16, 378 TF32 dense TFLOPS" },
    { "L40S", 8, 9, 142, 2.490, 1.0, "L40S: 362 BF16, 183 TF32 dense TFLOPS" },
    { "L40", 8, 9, 142, 2.490, 0.5, "L40: 181 BF16, 90.5 TF32 dense TFLOPS" },
};

static const known_product *find_product(const device_properties *p)
{
    for (size_t i = 0; i < sizeof known_products / sizeof *known_products; ++i) {
        const known_product *k = &known_products[i];
        if (k->cc_major == p->cc_major && k->cc_minor == p->cc_minor &&
            k->multiprocessors == p->multiprocessors && strstr(p->name, k->name_part) &&
            !strstr(p->name, "NVL"))
            return k;
    }
    return NULL;
}

/* Volta and every later architecture have tensor cores, but for the GTX 16
 * series (Turing without them). */
static bool has_tensor_cores(const device_properties *p)
{
    return p->cc_major >= 7 && !strstr(p->name, "GTX 16");
}

static void set_peaks(device_properties *p, tensor_rates r, double factor, double clock_ghz)
{
    p->peak_tf32_gflops = peak_tensor_gflops(p->multiprocessors, (int)(r.tf32 * factor), clock_ghz);
    p->peak_fp16_gflops = peak_tensor_gflops(p->multiprocessors, (int)(r.fp16 * factor), clock_ghz);
    p->peak_bf16_gflops = peak_tensor_gflops(p->multiprocessors, (int)(r.bf16 * factor), clock_ghz);
}

status tensor_core_properties(device_properties *p)
{
    if (!p)
        return fail(STATUS_BAD_ARGUMENT,
                    "tensor_core_properties: p is NULL; pass a device_properties with name, compute "
                    "capability, multiprocessors and clock_ghz filled in");
    p->tensor_cores = has_tensor_cores(p);
    p->peak_tf32_gflops = p->peak_fp16_gflops = p->peak_bf16_gflops = 0.0;
    const tensor_rates r = tensor_flops_per_clock(p->cc_major, p->cc_minor);
    if (!p->tensor_cores) {
        snprintf(p->tensor_notes, sizeof p->tensor_notes,
                 "no tensor cores (compute capability %d.%d%s): low-precision products run on the FP32 cores",
                 p->cc_major, p->cc_minor, p->cc_major >= 7 ? ", GTX 16 series" : "");
        return STATUS_OK;
    }
    if (r.fp16 == 0) {
        snprintf(p->tensor_notes, sizeof p->tensor_notes,
                 "compute capability %d.%d is not in the kit's table: tensor-core peaks unknown", p->cc_major,
                 p->cc_minor);
        return STATUS_OK;
    }
    const known_product *k = find_product(p);
    const bool geforce = strstr(p->name, "GeForce") != NULL;
    const double factor = k ? k->rate_factor : geforce ? 0.5 : 1.0;
    const double clock = k ? k->tensor_clock_ghz : p->clock_ghz;
    set_peaks(p, r, factor, clock);
    if (k)
        snprintf(p->tensor_notes, sizeof p->tensor_notes,
                 "dense, FP32 accumulation: %d SMs x %d (FP16/BF16), %d (TF32) FLOP/clock x %.3f GHz, the "
                 "clock NVIDIA's figures assume (cudart reports %.2f GHz): %s",
                 p->multiprocessors, (int)(r.fp16 * factor), (int)(r.tf32 * factor), clock, p->clock_ghz,
                 k->published);
    else
        snprintf(
            p->tensor_notes, sizeof p->tensor_notes,
            "dense, FP32 accumulation: %d SMs x %d (FP16/BF16), %d (TF32) FLOP/clock x %.2f GHz boost%s; "
            "NVIDIA may quote a lower tensor clock, so this may overestimate",
            p->multiprocessors, (int)(r.fp16 * factor), (int)(r.tf32 * factor), clock,
            geforce ? " (GeForce: FP32 accumulation at half rate)" : "");
    return STATUS_OK;
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
     * an interrupt or a context switch only reads slower. 200000 trips are
     * about 0.25 ms at 3 GHz, a thousand times the clock's own cost; the twelve
     * cost 3 ms of every process that asks (the suite starts a thousand). */
    const uint64_t trips = 200000, adds_per_trip = 4;
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

/* Cores that compute at once: hyperthreads share one core's vector units, so
 * the peak counts a core once however many logical CPUs it shows. The pairs
 * (package, core) of the online CPUs in sysfs; the logical count where sysfs
 * does not say. */
static int physical_cores(int logical)
{
    enum { MOST = 1024 };
    static long seen[MOST];
    int found = 0;
    /* The CPUs the kernel knows of, online or not: a failed open costs as
     * much as a read, and a loop to MOST did a thousand for a 2-core VM. */
    const long configured = sysconf(_SC_NPROCESSORS_CONF);
    const int last = configured > 0 && configured < MOST ? (int)configured : MOST;
    for (int cpu = 0; cpu < last; ++cpu) {
        char path[96];
        long package = -1, core = -1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        const bool read_package = fscanf(f, "%ld", &package) == 1;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
        if (!read_package || !(f = fopen(path, "r"))) continue;
        const bool read_core = fscanf(f, "%ld", &core) == 1;
        fclose(f);
        if (!read_core) continue;
        const long key = package * 1000000 + core;
        bool known = false;
        for (int i = 0; i < found && !known; ++i) known = seen[i] == key;
        if (!known && found < MOST) seen[found++] = key;
    }
    return found > 0 && found <= logical ? found : logical;
}

static cpu_facts host_facts;
static double host_measured_ghz;
static int host_physical_cores;
static pthread_once_t host_facts_once = PTHREAD_ONCE_INIT;

/* Once a process: sysfs is read two files per CPU,
 * and a check asks for the cpu's properties dozens of times. */
static void learn_host(void)
{
    read_cpuinfo(&host_facts);
    host_measured_ghz = measured_clock_ghz();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    host_physical_cores = physical_cores(online > 0 ? (int)online : 1);
}

/* The host's memory bandwidth as a program gets it: the best of a few copies
 * of 64 MiB (more than the caches of the CPUs the kit meets hold), each byte
 * read once and written once. Measured once, when first asked (50 ms of a
 * desktop, 0.3 s of CPU on a slow virtual machine). */
static double host_bandwidth_gbs;
static pthread_once_t host_bandwidth_once = PTHREAD_ONCE_INIT;

static void measure_host_bandwidth(void)
{
    const size_t bytes = (size_t)64 << 20;
    char *from = malloc(bytes), *to = malloc(bytes);
    if (from && to) {
        memset(from, 1, bytes);
        memset(to, 0, bytes); /* the first touch of each page is not part of a copy */
        double best = 0.0;
        for (int attempt = 0; attempt < 4; ++attempt) {
            struct timespec start, end;
            clock_gettime(CLOCK_MONOTONIC, &start);
            memcpy(to, from, bytes);
            clock_gettime(CLOCK_MONOTONIC, &end);
            const double seconds =
                (double)(end.tv_sec - start.tv_sec) + 1e-9 * (double)(end.tv_nsec - start.tv_nsec);
            if (seconds > 0 && 2.0 * (double)bytes / seconds / 1e9 > best)
                best = 2.0 * (double)bytes / seconds / 1e9;
        }
        host_bandwidth_gbs = best;
    }
    free(from);
    free(to);
}

const char *host_cpu_model(void)
{
    pthread_once(&host_facts_once, learn_host);
    return host_facts.model;
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
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int logical = online > 0 ? (int)online : 1;
    out->multiprocessors = host_physical_cores < logical ? host_physical_cores : logical;
    /* Two FMA units per core is what desktop and server cores since Haswell have;
     * it is an assumption, said so in the notes. */
    int fma_units = f.fma ? 2 : 1;
    out->cores_per_mp = f.simd_lanes * fma_units;
    out->clock_ghz = measured ? host_measured_ghz : f.mhz / 1000.0;
    out->peak_gflops = peak_fp32_gflops(out->multiprocessors, out->cores_per_mp, out->clock_ghz);
    snprintf(out->notes, sizeof out->notes,
             "%d cores (%d logical) x %d-lane SIMD x %d FMA unit%s (assumed) x %s clock x 2; OpenBLAS: %.24s",
             out->multiprocessors, logical, f.simd_lanes, fma_units, fma_units > 1 ? "s" : "",
             measured ? "measured" : "nominal (/proc/cpuinfo)", cpu_blas_kernels());
    snprintf(out->tensor_notes, sizeof out->tensor_notes,
             "no tensor cores: bf16, f16 and TF32 inputs are widened to float32 and multiplied by OpenBLAS: "
             "tensor cores' rounding and float32 accumulation, at float32's speed or below");
    return STATUS_OK;
}

double host_memory_bandwidth_gbs(void)
{
    pthread_once(&host_bandwidth_once, measure_host_bandwidth);
    return host_bandwidth_gbs;
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
