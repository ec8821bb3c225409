/* queues.h: which of a device's two queues the host's work goes to now
 * (internal; the public side is labkit/copy_queue.h). */
#ifndef LABKIT_QUEUES_H
#define LABKIT_QUEUES_H

#include "backend.h"
#include "labkit/copy_queue.h"

/* QUEUE_COPIES while the host has d's copy queue open, else QUEUE_COMPUTE. */
backend_queue queue_now(device d);

/* The refusal of a call that the copy queue cannot take while it is open: it
 * `what` (queues work, waits for the device). Nothing was done. */
status copy_queue_refuse(device d, const char *call, const char *what);

#endif
