/* backend.h: what the front end asks of a device's backend (internal).
 *
 * `index` is the device's index within its kind. Each backend keeps its own
 * state per device; the front end keeps the counters and validates arguments, so
 * a backend may assume sizes and pointers are right. */
#ifndef LABKIT_BACKEND_H
#define LABKIT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/device.h"
#include "labkit/kernel.h"
#include "labkit/properties.h"
#include "labkit/counters.h"
#include "labkit/status.h"
#include "graph_cmd.h"
#include "op_call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A device's two queues (labkit/copy_queue.h): every kind of work goes to the
 * compute queue; host-to-device copies and events may go to the copy queue,
 * which runs beside it (a second CUDA stream, a second worker thread). */
typedef enum backend_queue { QUEUE_COMPUTE = 0, QUEUE_COPIES = 1 } backend_queue;
#define BACKEND_QUEUES 2

typedef struct backend {
    const char *name;
    /* true when the device's memory is the host's (the CPU, a simulated GPU):
     * the host may read and write it directly once the device's queue has
     * drained, which is how data crosses between a real and a simulated GPU. */
    bool host_memory;
    /* Memory. release() is ordered after the work already queued, on both
     * queues. */
    status (*alloc)(int index, size_t bytes, void **out);
    void (*release)(int index, void *ptr, size_t bytes);
    status (*memory_info)(int index, size_t in_use, size_t *free_bytes, size_t *total_bytes);
    /* Copies with the host: both return once the copy is done, the way
     * cudaMemcpy does; upload first waits for the queued work (on both
     * queues), download too. */
    status (*upload)(int index, void *dst, const void *src, size_t bytes);
    status (*download)(int index, void *dst, const void *src, size_t bytes);
    /* Host to device in the order of `queue`, returning at once; src must
     * outlive it. */
    status (*upload_async)(int index, backend_queue queue, void *dst, const void *src, size_t bytes);
    /* Copies on one device (queued) and between two devices of this backend
     * (returning once done). */
    status (*copy_within)(int index, void *dst, const void *src, size_t bytes);
    status (*copy_peer)(int dst_index, void *dst, int src_index, const void *src, size_t bytes);
    /* Work. */
    status (*run)(int index, const op_call *op);
    status (*enqueue)(int index, kernel_fn fn, const void *args, size_t args_size);
    /* Returns once both queues have drained. */
    status (*synchronize)(int index);
    /* Events: opaque handles stamped when the queue they were last recorded
     * on reaches them. event_wait makes `queue` wait, on the device, until
     * ev (recorded on either queue) is reached; the host goes on. */
    status (*event_create)(int index, void **out);
    void (*event_destroy)(int index, void *ev);
    status (*event_record)(int index, backend_queue queue, void *ev);
    status (*event_wait)(int index, backend_queue queue, void *ev);
    status (*event_synchronize)(int index, void *ev);
    bool (*event_done)(int index, void *ev);
    status (*event_elapsed_ms)(int index, void *start, void *end, double *ms);
    double (*busy_seconds)(int index);
    status (*properties)(int index, device_properties *out);
    /* Graphs (labkit/graph.h). build turns a recording into the backend's own
     * replayable form, which it owns (it may not keep `cmds`); launch queues one
     * replay of it; destroy frees it in queue order, after its launches. */
    status (*graph_build)(int index, const graph_cmd *cmds, size_t count, void **out);
    status (*graph_launch)(int index, void *g);
    void (*graph_destroy)(int index, void *g);
    /* All-reduce (labkit/collective.h): float32 buffers of `count` elements on
     * devices indices[0..n-1] of this backend each become the sum of all of
     * them, queued on each device. NULL where the backend has no collective of
     * its own: the front end then reduces through the host. */
    status (*all_reduce_sum)(const int *indices, float *const *data, int n, size_t count);
} backend;

extern const backend cpu_backend;
extern const backend sim_backend;

/* The backend of an existing device (NULL for one that does not exist). */
const backend *backend_of(device d);

/* The front end's bookkeeping of a device (NULL for one that does not exist). */
device_counters *counters_of(device d);
/* An existing device's place in the registry, 0 to LABKIT_MAX_DEVICES - 1
 * (the cpu, the real GPUs, the simulated ones); -1 for one that does not exist. */
int device_slot(device d);

/* The registry tells the simulated GPUs their capacity once, when it starts. */
void sim_configure(size_t capacity_bytes);

/* The CPU's figures, shared by the cpu and sim backends; its model's name. */
status host_cpu_properties(device_properties *out);
/* The CPU's memory bandwidth, measured the first time it is asked for (0.1 to
 * 0.5 s of CPU, 256 MiB touched: a third of a small check's run) by
 * device_memory_bandwidth, never by the properties. */
double host_memory_bandwidth_gbs(void);
const char *host_cpu_model(void);
/* float32 lanes of the host's widest FMA unit (1 without FMA). */
int host_cpu_simd_lanes(void);

/* Says once, on stderr, when OpenBLAS picked kernels far slower than this CPU
 * allows (it misjudges some virtual CPUs), and how to fix it. */
void blas_warn_if_slow_kernels(void);

#ifdef LABKIT_WITH_CUDA
/* The CUDA backend (cuda_backend.cu). The count is 0 without a driver or GPU. */
int cuda_device_count(void);
/* Why cuda_device_count found none, where CUDA says more than "no driver" or
 * "no device" (its error's name and text), into text; empty otherwise. */
void cuda_start_failure(char *text, size_t size);
const backend *cuda_backend_get(void);
/* Page-locked host memory (cuda_pinned.cu); NULL when CUDA cannot give it.
 * free returns false for a pointer that cudaMallocHost did not give. */
void *cuda_host_alloc_pinned(size_t bytes);
bool cuda_host_free_pinned(void *p);
#endif

#ifdef __cplusplus
}
#endif
#endif
