/* device.c: the device registry (which devices exist), the strict parser of
 * device names, and the questions asked of a device as a whole (synchronise,
 * memory, properties). The registry is the library's only global state; it is
 * filled once, on first use, from cudart and the environment.
 *
 * Real and simulated GPUs coexist: cuda:N are the GPUs cudart counts, sim:N the
 * ones LABKIT_SIM_GPUS asks for. The lessons' helpers (gpu_count, try_gpu,
 * try_all_gpus) speak of real GPUs where there is at least one, and of the
 * simulated ones only where there is none, so a lesson reads the same on a
 * laptop and on a workstation; the simulated GPUs stay reachable by name. */
#include "labkit/device.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "backend.h"
#include "capture.h"
#include "labkit/process_rank.h"

#define DEFAULT_SIM_MEMORY ((size_t)4 << 30) /* 4 GiB, a small real card */

static struct {
    pthread_once_t once;
    status init_status;
    char init_error[512];
    int cuda_count;
    int sim_count;
    size_t sim_memory;
    device_counters counters[LABKIT_MAX_DEVICES];
    atomic_bool sim_announced;
    atomic_bool init_error_reported;
} registry = { .once = PTHREAD_ONCE_INIT };

static const char *const cuda_names[LABKIT_MAX_CUDA_DEVICES] = { "cuda:0",  "cuda:1",  "cuda:2",  "cuda:3",
                                                                 "cuda:4",  "cuda:5",  "cuda:6",  "cuda:7",
                                                                 "cuda:8",  "cuda:9",  "cuda:10", "cuda:11",
                                                                 "cuda:12", "cuda:13", "cuda:14", "cuda:15" };
static const char *const sim_names[LABKIT_MAX_SIM_DEVICES] = { "sim:0", "sim:1", "sim:2", "sim:3",
                                                               "sim:4", "sim:5", "sim:6", "sim:7" };

/* ---- reading the environment ------------------------------------------- */

/* A whole decimal number with no sign, spaces or junk, at most `max`. */
static bool parse_count(const char *text, long max, long *out)
{
    if (!text || !*text) return false;
    long value = 0;
    for (const char *p = text; *p; ++p) {
        if (!isdigit((unsigned char)*p)) return false;
        value = value * 10 + (*p - '0');
        if (value > max) return false;
    }
    *out = value;
    return true;
}

/* "4G", "512M", "65536K" or a number of bytes. */
static bool parse_bytes(const char *text, size_t *out)
{
    if (!text || !*text || !isdigit((unsigned char)text[0])) return false;
    errno = 0;
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno) return false;
    unsigned shift = 0;
    if (*end == 'K')
        shift = 10, ++end;
    else if (*end == 'M')
        shift = 20, ++end;
    else if (*end == 'G')
        shift = 30, ++end;
    if (*end != '\0' || value == 0 || value > (SIZE_MAX >> shift)) return false;
    *out = (size_t)value << shift;
    return true;
}

static void read_environment(void)
{
    /* Unset or empty: the default (no simulated GPUs, 4 GiB each). */
    const char *sims = getenv("LABKIT_SIM_GPUS");
    long count = 0;
    if (sims && *sims && !parse_count(sims, LABKIT_MAX_SIM_DEVICES, &count)) {
        registry.init_status = STATUS_BAD_ARGUMENT;
        snprintf(registry.init_error, sizeof registry.init_error,
                 "LABKIT_SIM_GPUS=\"%s\" is not a number of simulated GPUs.\n"
                 "  hint: use a whole number from 0 to %d, e.g. LABKIT_SIM_GPUS=2, or unset it.",
                 sims, LABKIT_MAX_SIM_DEVICES);
        return;
    }
    const char *memory = getenv("LABKIT_SIM_MEMORY");
    size_t bytes = DEFAULT_SIM_MEMORY;
    if (memory && *memory && !parse_bytes(memory, &bytes)) {
        registry.init_status = STATUS_BAD_ARGUMENT;
        snprintf(registry.init_error, sizeof registry.init_error,
                 "LABKIT_SIM_MEMORY=\"%s\" is not a size.\n"
                 "  hint: give bytes or a number with K, M or G (powers of 1024), e.g. 512M or 2G.",
                 memory);
        return;
    }
    registry.sim_count = (int)count;
    registry.sim_memory = bytes;
}

static void initialise(void)
{
    registry.init_status = STATUS_OK;
#ifdef LABKIT_WITH_CUDA
    registry.cuda_count = cuda_device_count();
    if (registry.cuda_count > LABKIT_MAX_CUDA_DEVICES) registry.cuda_count = LABKIT_MAX_CUDA_DEVICES;
#endif
    read_environment();
    sim_configure(registry.sim_memory);
}

status devices_init(void)
{
    pthread_once(&registry.once, initialise);
    if (registry.init_status != STATUS_OK) return fail(registry.init_status, "%s", registry.init_error);
    return STATUS_OK;
}

/* Every query goes through here. A bad setting is reported once and then the
 * kit carries on with the CPU alone, as the header promises. */
static void ensure_initialised(void)
{
    pthread_once(&registry.once, initialise);
    if (registry.init_status != STATUS_OK && !atomic_exchange(&registry.init_error_reported, true))
        fprintf(stderr, "labkit: %s\n  (carrying on without simulated GPUs)\n", registry.init_error);
}

/* The one line that says what sim:N are, on first use of one. */
static void announce_simulated_gpus(void)
{
    if (atomic_load(&registry.sim_announced) || atomic_exchange(&registry.sim_announced, true)) return;
    if (process_rank_is_quiet()) return; /* lab 10's other ranks: rank 0 says it for them */
    const int n = registry.sim_count;
    if (n == 1)
        fprintf(stderr,
                "labkit: sim:0 is a simulated GPU (LABKIT_SIM_GPUS=1): a worker thread on this CPU with "
                "its own queue and memory; it behaves like a GPU but computes at the CPU's speed.\n");
    else
        fprintf(stderr,
                "labkit: sim:0 to %s are simulated GPUs (LABKIT_SIM_GPUS=%d): worker threads on this CPU, "
                "each with its own queue and memory; they behave like GPUs but compute at the CPU's speed.\n",
                sim_names[n - 1], n);
}

/* ---- devices ------------------------------------------------------------ */

device device_cpu(void)
{
    device d = { DEVICE_CPU, 0 };
    return d;
}

int device_count(device_kind kind)
{
    ensure_initialised();
    switch (kind) {
    case DEVICE_CPU: return 1;
    case DEVICE_CUDA: return registry.cuda_count;
    case DEVICE_SIM: return registry.sim_count;
    }
    return 0;
}

int gpu_count(void)
{
    ensure_initialised();
    return registry.cuda_count > 0 ? registry.cuda_count : registry.sim_count;
}

static device gpu_at(int i)
{
    device d = { registry.cuda_count > 0 ? DEVICE_CUDA : DEVICE_SIM, i };
    if (d.kind == DEVICE_SIM) announce_simulated_gpus();
    return d;
}

device try_gpu(int i)
{
    if (i >= 0 && i < gpu_count()) return gpu_at(i);
    return device_cpu();
}

int try_all_gpus(device *out, int capacity)
{
    if (!out || capacity < 1) return 0;
    int n = gpu_count();
    if (n == 0) {
        out[0] = device_cpu();
        return 1;
    }
    int written = 0;
    for (int i = 0; i < n && written < capacity; ++i) out[written++] = gpu_at(i);
    return written;
}

int device_list(device *out, int capacity)
{
    if (!out || capacity < 1) return 0;
    ensure_initialised();
    int written = 0;
    out[written++] = device_cpu();
    for (int i = 0; i < registry.cuda_count && written < capacity; ++i)
        out[written++] = (device){ DEVICE_CUDA, i };
    for (int i = 0; i < registry.sim_count && written < capacity; ++i)
        out[written++] = (device){ DEVICE_SIM, i };
    return written;
}

bool device_equal(device a, device b) { return a.kind == b.kind && a.index == b.index; }

bool device_is_gpu(device d) { return d.kind == DEVICE_CUDA || d.kind == DEVICE_SIM; }

bool device_exists(device d)
{
    ensure_initialised();
    switch (d.kind) {
    case DEVICE_CPU: return d.index == 0;
    case DEVICE_CUDA: return d.index >= 0 && d.index < registry.cuda_count;
    case DEVICE_SIM: return d.index >= 0 && d.index < registry.sim_count;
    }
    return false;
}

const char *device_name(device d)
{
    switch (d.kind) {
    case DEVICE_CPU: return d.index == 0 ? "cpu" : "invalid";
    case DEVICE_CUDA:
        return d.index >= 0 && d.index < LABKIT_MAX_CUDA_DEVICES ? cuda_names[d.index] : "invalid";
    case DEVICE_SIM: return d.index >= 0 && d.index < LABKIT_MAX_SIM_DEVICES ? sim_names[d.index] : "invalid";
    }
    return "invalid";
}

/* "cpu, sim:0, sim:1" and, without GPUs, how to get simulated ones. */
static void describe_present(char *buf, size_t size)
{
    device all[LABKIT_MAX_DEVICES];
    int n = device_list(all, LABKIT_MAX_DEVICES);
    size_t used = 0;
    for (int i = 0; i < n && used < size; ++i)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", device_name(all[i]));
    if (n == 1 && used < size)
        snprintf(buf + used, size - used, " (no GPU: LABKIT_SIM_GPUS=2 simulates two)");
}

status device_check(device d)
{
    if (device_exists(d)) return STATUS_OK;
    char present[256];
    describe_present(present, sizeof present);
    return fail(STATUS_WRONG_DEVICE, "device %s does not exist here.\n  present here: %s", device_name(d),
                present);
}

/* ---- parsing ------------------------------------------------------------ */

static status not_a_device_name(const char *text)
{
    char present[256];
    describe_present(present, sizeof present);
    return fail(STATUS_BAD_ARGUMENT,
                "\"%s\" is not a device name.\n"
                "  accepted forms: cpu, cuda (= cuda:0), cuda:N, sim:N (N = 0, 1, 2, ...; "
                "lowercase, no spaces)\n"
                "  present here: %s",
                text, present);
}

/* The index after "cuda:" or "sim:": digits only, no leading zero, small. */
static bool parse_index(const char *text, int *out)
{
    if (text[0] == '0' && text[1] != '\0') return false;
    long value;
    if (!parse_count(text, 1000000, &value)) return false;
    *out = (int)value;
    return true;
}

/* Why no cuda:N is here: no GPU, or CUDA failed to start, and then what it
 * said, with the one limit of this process known to stop it (CUDA reserves
 * address space for the GPU's memory and more when it starts). */
static void why_no_cuda(char *why, size_t size)
{
    char said[200] = "";
#ifdef LABKIT_WITH_CUDA
    cuda_start_failure(said, sizeof said);
#endif
    if (!said[0]) {
        snprintf(why, size, "\n  no NVIDIA GPU was found (no driver, no device, or a build without CUDA)");
        return;
    }
    struct rlimit limit;
    char hint[200] = "";
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        snprintf(hint, sizeof hint,
                 "\n  hint: this process may use %.1f GiB of address space (ulimit -v), and CUDA reserves"
                 " more than the GPU's memory when it starts: lift the limit (ulimit -v unlimited)",
                 (double)limit.rlim_cur / (1024.0 * 1024.0 * 1024.0));
    snprintf(why, size, "\n  CUDA did not start: %s%s", said, hint);
}

status device_parse(const char *text, device *out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "device_parse: out is NULL; pass the address of a device");
    if (!text)
        return fail(STATUS_BAD_ARGUMENT,
                    "device_parse: text is NULL; pass a name such as \"cpu\" or \"sim:0\"");
    ensure_initialised();
    device d;
    if (strcmp(text, "cpu") == 0) {
        d = device_cpu();
    } else if (strcmp(text, "cuda") == 0) {
        d.kind = DEVICE_CUDA, d.index = 0;
    } else if (strncmp(text, "cuda:", 5) == 0 && parse_index(text + 5, &d.index)) {
        d.kind = DEVICE_CUDA;
    } else if (strncmp(text, "sim:", 4) == 0 && parse_index(text + 4, &d.index)) {
        d.kind = DEVICE_SIM;
    } else {
        return not_a_device_name(text);
    }
    if (!device_exists(d)) {
        char present[256];
        describe_present(present, sizeof present);
        char why[512] = "";
        if (d.kind == DEVICE_SIM && registry.sim_count == 0)
            snprintf(why, sizeof why,
                     "\n  no simulated GPU was asked for: LABKIT_SIM_GPUS=2 gives sim:0 and sim:1");
        else if (d.kind == DEVICE_CUDA && registry.cuda_count == 0)
            why_no_cuda(why, sizeof why);
        return fail(STATUS_WRONG_DEVICE, "device \"%s\" does not exist here.%s\n  present here: %s", text,
                    why, present);
    }
    if (d.kind == DEVICE_SIM) announce_simulated_gpus();
    *out = d;
    return STATUS_OK;
}

/* ---- the per-device state that the front end keeps ----------------------- */

int device_slot(device d)
{
    if (!device_exists(d)) return -1;
    switch (d.kind) {
    case DEVICE_CPU: return 0;
    case DEVICE_CUDA: return 1 + d.index;
    case DEVICE_SIM: return 1 + LABKIT_MAX_CUDA_DEVICES + d.index;
    }
    return -1;
}

device_counters *counters_of(device d)
{
    int slot = device_slot(d);
    return slot < 0 ? NULL : &registry.counters[slot];
}

const backend *backend_of(device d)
{
    if (!device_exists(d)) return NULL;
    switch (d.kind) {
    case DEVICE_CPU: return &cpu_backend;
    case DEVICE_SIM: announce_simulated_gpus(); return &sim_backend;
    case DEVICE_CUDA:
#ifdef LABKIT_WITH_CUDA
        return cuda_backend_get();
#else
        return NULL;
#endif
    }
    return NULL;
}

status device_synchronize(device d)
{
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    if (capturing(d))
        return capture_refuse(d, "device_synchronize", "waits for the device",
                              "to wait for the recorded work, synchronize after graph_launch");
    if (d.kind == DEVICE_CPU) return STATUS_OK;
    counters_of(d)->syncs++;
    return backend_of(d)->synchronize(d.index);
}

status device_memory_info(device d, size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes)
        return fail(STATUS_BAD_ARGUMENT, "device_memory_info: free_bytes and total_bytes must not be NULL");
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    return backend_of(d)->memory_info(d.index, counters_of(d)->memory_current, free_bytes, total_bytes);
}

status device_get_properties(device d, device_properties *out)
{
    if (!out)
        return fail(STATUS_BAD_ARGUMENT,
                    "device_get_properties: out is NULL; pass the address of a device_properties");
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    return backend_of(d)->properties(d.index, out);
}

status device_memory_bandwidth(device d, double *gbs)
{
    if (!gbs)
        return fail(STATUS_BAD_ARGUMENT,
                    "device_memory_bandwidth: gbs is NULL; pass the address of a double for the GB/s");
    *gbs = 0.0;
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    if (d.kind == DEVICE_CPU) {
        *gbs = host_memory_bandwidth_gbs();
        return STATUS_OK;
    }
    device_properties p;
    s = device_get_properties(d, &p);
    if (s == STATUS_OK) *gbs = p.memory_bandwidth_gbs;
    return s;
}

double device_compute_gflops(device d)
{
    device_properties p;
    if (d.kind == DEVICE_CPU || d.kind == DEVICE_SIM) /* a simulated GPU computes on the CPU's cores */
        return host_cpu_properties(&p) == STATUS_OK ? p.peak_gflops : 0.0;
    return device_get_properties(d, &p) == STATUS_OK ? p.peak_gflops : 0.0;
}
