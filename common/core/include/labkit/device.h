/* device.h: where a tensor lives and where work runs.
 *
 * A device is a kind and an index: "cpu", "cuda:N" (a real NVIDIA GPU, counted
 * through cudart) or "sim:N" (a simulated GPU: a worker thread with its own queue
 * and memory). Simulated GPUs exist when LABKIT_SIM_GPUS=N (0 to 8) asks for
 * them, beside any real ones.
 *
 * The lessons' helpers, gpu_count(), try_gpu() and try_all_gpus(), speak of the
 * real GPUs where there is at least one, and of the simulated ones only where
 * there is none: on a workstation try_gpu(0) is cuda:0 whatever
 * LABKIT_SIM_GPUS says, on a laptop it is sim:0. The simulated GPUs of a machine
 * with a real one are still there by name ("sim:0") and in device_list(), so an
 * instructor can show both side by side and the same tests run everywhere. */
#ifndef LABKIT_DEVICE_H
#define LABKIT_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/properties.h"
#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LABKIT_MAX_CUDA_DEVICES 16
#define LABKIT_MAX_SIM_DEVICES 8
#define LABKIT_MAX_DEVICES (1 + LABKIT_MAX_CUDA_DEVICES + LABKIT_MAX_SIM_DEVICES)

typedef enum device_kind { DEVICE_CPU = 0, DEVICE_CUDA, DEVICE_SIM } device_kind;

typedef struct device {
    device_kind kind;
    int index; /* 0 for the CPU */
} device;

/* Reads the environment (LABKIT_SIM_GPUS, LABKIT_SIM_MEMORY; unset or empty: the
 * defaults) and counts the real GPUs. Every other function calls it on first
 * use; call it yourself to see a bad setting as an error, as the kit's programs
 * do before any work (they stop with exit status 2: labkit/environment.h).
 * After a failure the library carries on without simulated GPUs (the real ones
 * stay). */
status devices_init(void);

device device_cpu(void);

/* The number of GPUs the lessons' helpers see: the real ones if there is any,
 * else the simulated ones (maybe 0). */
int gpu_count(void);

/* How many devices of one kind exist here: 1 for DEVICE_CPU, the real GPUs for
 * DEVICE_CUDA (0 without a driver, a device or a build with CUDA), the
 * simulated ones for DEVICE_SIM. */
int device_count(device_kind kind);

/* The lessons' helpers: GPU i if it exists, else the CPU. */
device try_gpu(int i);

/* Every GPU, or just the CPU when there is none. Writes at most `capacity`
 * devices to `out` and returns how many it wrote. */
int try_all_gpus(device *out, int capacity);

/* Every device: the CPU, then the real GPUs, then the simulated ones. Writes at
 * most `capacity` and returns how many it wrote. */
int device_list(device *out, int capacity);

/* Parses "cpu", "cuda" (= cuda:0), "cuda:N" or "sim:N" strictly; anything else,
 * or a device that does not exist here, is an error listing what is accepted. */
status device_parse(const char *text, device *out);

/* "cpu", "cuda:0", "sim:1"; "invalid" for a device that cannot exist. */
const char *device_name(device d);

bool device_equal(device a, device b);
bool device_is_gpu(device d); /* cuda or sim */
bool device_exists(device d);

/* Fails with a message naming the devices present if `d` does not exist. */
status device_check(device d);

/* Blocks until every operation queued on `d` has finished (counted as a blocking
 * synchronisation). A no-op on the CPU, whose operations run at once. */
status device_synchronize(device d);

/* Free and total memory of the device, in bytes. */
status device_memory_info(device d, size_t *free_bytes, size_t *total_bytes);

/* What the device is made of: name, memory, multiprocessors, cores, clock and
 * its theoretical FP32 peak (labkit/properties.h). */
status device_get_properties(device d, device_properties *out);

/* Device d's memory bandwidth, GB/s: a GPU's is its properties' (real or
 * modelled); the CPU's is measured, once a process, as the best of a few copies
 * of 64 MiB, each byte counted read and written. The measurement takes about
 * 0.2 s of CPU and touches 256 MiB, which is why device_get_properties leaves
 * it out: most programs that read a CPU's properties want its peak, not this. */
status device_memory_bandwidth(device d, double *gbs);

/* The FP32 rate, in GFLOP/s, at which device d's work really runs, for
 * estimating how long a run will take: its peak, except on a simulated GPU,
 * whose modelled card computes on the CPU's cores (the CPU's peak then). Not
 * for a utilisation, which divides by the device's own peak. 0 when unknown. */
double device_compute_gflops(device d);

#ifdef __cplusplus
}
#endif
#endif
