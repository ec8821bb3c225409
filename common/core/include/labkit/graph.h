/* graph.h: a device's work captured once, then launched again and again as one
 * launch (CUDA graphs; PyTorch's torch.cuda.graph).
 *
 * A training step at a small batch is tens of small operations. Queueing each
 * one costs the host a few microseconds, and a GPU finishes each sooner than
 * that: the GPU waits for the host. A graph records the step once; every later
 * step is one call that queues all of it:
 *
 *   graph *step = NULL;
 *   CHECK(graph_begin_capture(gpu));
 *   CHECK(train_step(...));                   // recorded, not run
 *   CHECK(graph_end_capture(gpu, &step));
 *   for (int i = 0; i < steps; ++i) {
 *       ...write the next batch into the pinned buffer the step uploads from...
 *       CHECK(graph_launch(step));            // the whole step: one launch
 *   }
 *   graph_free(step);
 *
 * While a device captures, what would be queued on it is recorded instead of
 * run: operations (ops.h), kernels (device_enqueue, device_launch: their
 * arguments are copied at the call), copies within the device (tensor_copy
 * between two of its tensors, tensor_copy_slice) and queued uploads
 * (tensor_copy_from_host_async*). Nothing recorded runs before graph_launch.
 *
 * A launch replays exactly what was recorded: the same tensors' memory, sizes
 * and scalars (a learning rate recorded as 0.1 stays 0.1), and for an upload
 * the same host address, read again at every launch. So an upload's source
 * must stay valid, and hold the values wanted, at every launch until the
 * device has passed it (a synchronisation, or an event recorded after the
 * launch): feed a new batch by writing it into that buffer between launches,
 * and capture one graph per buffer to alternate two. As for any queued upload,
 * a real GPU copies from pinned memory (host_alloc(bytes, 1)) by DMA while the
 * host goes on; from ordinary memory CUDA may make the host wait.
 *
 * What a graph cannot hold is refused with STATUS_BAD_ARGUMENT and a message
 * naming the call and the device; the call does nothing and the capture goes
 * on as if it had not been made:
 *   - a read on the host: tensor_item, tensor_to_host*, tensor_to(t, cpu);
 *   - a blocking copy: tensor_copy_from_host*, tensor_from_host*, a copy to or
 *     from another device (tensor_copy, tensor_to);
 *   - a wait: device_synchronize, event_synchronize; and event_record (time a
 *     graph with events recorded before and after graph_launch);
 *   - a new tensor there (tensor_empty, tensor_zeros, tensor_full,
 *     tensor_from_host, tensor_uniform, tensor_to(t, d), ...): a graph works on
 *     the same memory at every launch, so create its tensors before
 *     graph_begin_capture;
 *   - graph_launch of another graph there.
 *
 * tensor_free during a capture is allowed: the memory stays with the graph
 * until graph_free, since the recorded work may use it at every launch. The
 * other tensors a graph uses are the caller's to keep alive for as long as the
 * graph may be launched: a graph launched after one of them was freed reads
 * and writes freed memory, which the kit cannot see.
 *
 * A capture belongs to the device, not to the calling thread: what any thread
 * queues there is recorded. Other devices go on as usual.
 *
 * Counters (counters.h): recording counts nothing. Each graph_launch counts
 * one launch, its operations and kernels in `replayed`, and its copies as
 * copies: a step of K operations is K launches run eagerly, 1 launch and K
 * replayed as a graph.
 *
 * On each kind of device:
 *   - sim: a launch is one item on the device's queue, which its worker thread
 *     replays in order. Each operation still occupies the device at least its
 *     least kernel time, as a real GPU runs every kernel of a graph; what goes
 *     is the host's cost of queueing each one.
 *   - cuda: the recording is issued on the device's stream under stream
 *     capture when the capture ends, instantiated once (cudaGraphInstantiate)
 *     and launched with cudaGraphLaunch on that stream.
 *   - cpu: a launch runs the recorded calls in order, at once. */
#ifndef LABKIT_GRAPH_H
#define LABKIT_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "labkit/device.h"
#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct graph graph;

/* From now on, work queued on d is recorded instead of run. One capture per
 * device at a time: a second one is refused. */
status graph_begin_capture(device d);

/* Ends d's capture and writes the recorded work to *out as a graph that
 * graph_launch replays. Whatever happens d then runs its work as it comes
 * again; on a failure (the backend could not build the graph) *out is NULL.
 * out == NULL is refused and leaves the capture going. */
status graph_end_capture(device d, graph **out);

/* Queues the whole graph on its device, in order with the work queued before
 * and after it: counted as one launch. On the CPU it runs at once. */
status graph_launch(graph *g);

/* Frees the graph (NULL is fine), in queue order after its launches, with the
 * memory of the tensors freed during its capture. */
void graph_free(graph *g);

/* Whether d is capturing a graph. */
bool graph_capturing(device d);

/* The operations and kernels in g: what would be launched one by one without
 * it (its copies are counted as copies). 0 for NULL. */
int64_t graph_operations(const graph *g);

/* The device g runs on (the CPU for NULL). */
device graph_device(const graph *g);

#ifdef __cplusplus
}
#endif
#endif
