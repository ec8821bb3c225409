/* event.h: device events, the honest way to time work on an asynchronous device.
 *
 * An event recorded on a device is stamped when the device's queue reaches it, not
 * when the host records it. Elapsed time between two stamped events is the time
 * the device spent on the work queued between them. On the CPU, where work runs
 * at once, an event is stamped when it is recorded. */
#ifndef LABKIT_EVENT_H
#define LABKIT_EVENT_H

#include <stdbool.h>

#include "labkit/device.h"
#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct event event;

status event_create(event **out, device d);
/* Returns at once, as cudaEventDestroy does, even while the device has still
 * to reach the event: its memory goes back once it is stamped. */
void event_destroy(event *e);

/* Queues the event on its device; returns at once. It goes on the device's
 * copy queue while the host has that open (copy_queue.h), else on its compute
 * queue; recording it again moves it to the queue of the new record. */
status event_record(event *e);
/* Makes e's device wait for e before it runs what is queued there after this
 * call: the queue the host queues on now (the compute queue, or the copy queue
 * while open) holds back until e, recorded on either queue, is reached.
 * Returns at once: the device waits, not the host (cudaStreamWaitEvent). That
 * is how work on one queue is ordered after work on the other (copy_queue.h). */
status event_wait_on_device(const event *e);
/* Blocks until the device has reached the event (a blocking synchronisation). */
status event_synchronize(event *e);
/* true once the device has reached the event; never blocks. */
bool event_done(const event *e);
/* Milliseconds between two stamped events of one device. STATUS_NOT_READY
 * (with a hint to synchronize) if `end` has not been reached yet. */
status event_elapsed_ms(const event *start, const event *end, double *ms);

#ifdef __cplusplus
}
#endif
#endif
