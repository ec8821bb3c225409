/* timer.h: the host's wall clock, and small statistics over repeated timings.
 *
 * A wall-clock time around GPU work measures only how long the host took to
 * queue it, unless the host waited (device_synchronize, a blocking read). Use
 * events (event.h) for the device's own time. */
#ifndef LABKIT_TIMER_H
#define LABKIT_TIMER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on a monotonic clock; only differences mean anything. */
double wall_seconds(void);

/* Seconds of CPU the calling thread has used (CLOCK_THREAD_CPUTIME_ID): time
 * it actually ran on a core, never the time it waited for one, so other
 * programs on the machine do not add to it. */
double thread_cpu_seconds(void);

/* Seconds of CPU the whole process has used, all its threads together. */
double process_cpu_seconds(void);

/* Median of n values (n >= 1); `values` is reordered. 0 when n is 0. */
double median_of(double *values, size_t n);
double min_of(const double *values, size_t n); /* 0 when n is 0 */

#ifdef __cplusplus
}
#endif
#endif
