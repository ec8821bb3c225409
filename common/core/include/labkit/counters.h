/* counters.h: what each device has done, counted, so that a check can prove a lesson
 * ("the loop copies to the host once per epoch", "peak memory is 3 tensors").
 *
 * A copy is counted on the GPU it touches: host (or cpu tensor) to GPU as
 * host-to-device on that GPU, GPU to host (or cpu tensor) as device-to-host on
 * it, GPU to GPU as device-to-device on both, and a copy within one device
 * (tensor_copy, tensor_copy_slice) as device-to-device there. Copies between host
 * memory and the CPU device count as device-to-device on the CPU: no bus is
 * crossed. */
#ifndef LABKIT_COUNTERS_H
#define LABKIT_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "labkit/device.h"
#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct device_counters {
    uint64_t h2d_copies, h2d_bytes;
    uint64_t d2h_copies, d2h_bytes;
    uint64_t d2d_copies, d2d_bytes;
    uint64_t syncs;    /* times the host blocked until the device's queue drained */
    uint64_t launches; /* operations queued (or, on the CPU, run); a graph_launch is one */
    uint64_t replayed; /* operations and kernels run by launched graphs (graph.h) */
    size_t memory_current;
    size_t memory_peak;         /* highest memory_current since the last reset */
    double busy_seconds;        /* time the device spent running its queue (simulated GPUs;
                             0 where it is not measured) */
    uint64_t events;            /* events alive on the device now: created and not yet destroyed
                             (like a CUDA event, each one holds a resource until destroyed) */
    uint64_t copy_queue_copies; /* of the h2d copies, those queued on the copy queue (copy_queue.h) */
    uint64_t queue_waits;       /* times a queue waited on the device for an event (event_wait_on_device) */
    uint64_t graphs;            /* graphs alive on the device now: made by graph_end_capture and not yet
                                   freed (each holds its recording, and on a GPU an executable graph) */
} device_counters;

status counters_read(device d, device_counters *out);
/* Zeroes the counts; the peak restarts from the memory in use now. What is alive
 * now (memory_current, events, graphs) is kept. */
status counters_reset(device d);

#ifdef __cplusplus
}
#endif
#endif
