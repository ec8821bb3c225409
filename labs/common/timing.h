/* timing.h: a device's time for a call, measured with events (the labs'
 * shared code, labs/common/: labs 07 and 09 time their kernels and the
 * library's with it). Not student work. */
#ifndef LABS_COMMON_TIMING_H
#define LABS_COMMON_TIMING_H

#include "labkit/device.h"
#include "labkit/status.h"

/* A call to time, with what it needs. */
typedef status (*timed_call)(const void *context);

/* *best_ms = the device's milliseconds for one call(context), between two
 * events stamped when the device reaches them: after a warm-up call, the
 * fastest of `runs` runs (noise on a shared machine only ever adds time), each
 * of as many calls queued back to back as fill about 10 ms (at most 100), the
 * way a network queues its layers, judged from the fastest of 3 single calls. */
status time_call(device d, timed_call call, const void *context, int runs, double *best_ms);

#endif
