/* copy_queue.h: a device's second queue, for copies from the host, so that the
 * next batch crosses the bus while the device computes on this one.
 *
 * A GPU moves data with copy engines that work beside its multiprocessors: a
 * copy queued on a second CUDA stream runs while the kernels of the first one
 * run. Every device here has two queues. The compute queue takes all the work,
 * as it always did; the copy queue takes only the host's queued uploads
 * (tensor_copy_from_host_async and its _i32 form) and events, while the host
 * has it open:
 *
 *   copy_queue_begin(d);                    from here, d's queued uploads and
 *   event_wait_on_device(step_done);        events go to the copy queue
 *   tensor_copy_from_host_async(x, images, n);
 *   event_record(uploaded);
 *   copy_queue_end(d);                      back to the compute queue
 *   event_wait_on_device(uploaded);         the compute queue waits for the copy
 *   ...the step on x...
 *   event_record(step_done);
 *
 * The two queues run at the same time, each in its own order, and nothing
 * orders one after the other but events: record an event on one queue, and
 * make the other wait for it with event_wait_on_device (event.h), which
 * returns at once (the device waits, not the host). So a copy into a tensor
 * that a step still reads must wait for the event after that step, and the
 * step must wait for the event after its copy: otherwise one reads what the
 * other is still writing, now and then, as on a real GPU. That holds for a
 * new tensor too: tensor_zeros and its kin write it on the compute queue, so
 * a copy into it waits for an event recorded after it was made.
 *
 * What each device makes of it:
 *   cuda:N  a second CUDA stream, created on first use; the copies go by DMA
 *           from pinned host memory (host_alloc(bytes, 1)) while kernels run
 *   sim:N   a second worker thread, the copy engine: a copy on it takes the
 *           bus's latency (10 us and up) there, not on the compute queue
 *   cpu     copies are done at once by the calling thread, as ever: the copy
 *           queue changes nothing there but where the calls are counted
 *
 * While the copy queue is open, anything else that queues work on d (an
 * operation, a kernel, a graph, a new tensor, a copy within d or to another
 * device, a capture) or copies between d and the host while waiting for it (a
 * blocking copy, tensor_item) is refused with a message naming it, and does
 * nothing. Waiting without queueing anything (event_synchronize,
 * device_synchronize) is allowed, and so is freeing a tensor, on both queues'
 * terms: its memory goes back once the work queued on either queue is done.
 * Each device has one copy queue, opened and closed by one thread at a time.
 *
 * The counters (counters.h) count the copies as before (host-to-device), and
 * also how many of them went on the copy queue and how many times a queue
 * waited for an event of the other on the device. */
#ifndef LABKIT_COPY_QUEUE_H
#define LABKIT_COPY_QUEUE_H

#include <stdbool.h>

#include "labkit/device.h"
#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens d's copy queue: d's queued uploads and events go there until copy_queue_end.
 * Refused where d does not exist, where its copy queue is already open, or
 * while d captures a graph (graph.h: a graph holds the compute queue's work). */
status copy_queue_begin(device d);

/* Closes it: what the host queues on d next goes to the compute queue again.
 * The copies queued go on. Refused where the copy queue is not open. */
status copy_queue_end(device d);

/* Whether d's copy queue is open (false for a device that does not exist). */
bool copy_queue_is_open(device d);

#ifdef __cplusplus
}
#endif
#endif
