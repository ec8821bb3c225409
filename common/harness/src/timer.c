/* timer.c: the host's wall clock, the CPU clocks, and the median and minimum of repeated timings.
 *
 * Timings are noisy (other programs, frequency scaling, the first run warming
 * caches), so an experiment repeats a measurement and reports the median, which
 * one slow outlier cannot move, or the minimum, the best the machine can do. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime is POSIX, not C17 */

#include "labkit/timer.h"

#include <stdlib.h>
#include <time.h>

double wall_seconds(void)
{
    /* CLOCK_MONOTONIC never jumps when the system clock is set, unlike
     * CLOCK_REALTIME, so a difference of two readings is a true duration. */
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
        return 0.0; /* cannot happen on Linux: the clock always exists */
    }
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static double seconds_of(clockid_t clock)
{
    struct timespec t;
    if (clock_gettime(clock, &t) != 0) return 0.0; /* the CPU clocks exist on Linux */
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double thread_cpu_seconds(void) { return seconds_of(CLOCK_THREAD_CPUTIME_ID); }

double process_cpu_seconds(void) { return seconds_of(CLOCK_PROCESS_CPUTIME_ID); }

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y); /* not x - y: that overflows an int and truncates */
}

double median_of(double *values, size_t n)
{
    if (values == NULL || n == 0) {
        return 0.0;
    }
    /* A handful of timings: sorting them all is simple and fast enough. */
    qsort(values, n, sizeof values[0], compare_doubles);
    if (n % 2 == 1) {
        return values[n / 2];
    }
    return 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double min_of(const double *values, size_t n)
{
    if (values == NULL || n == 0) {
        return 0.0; /* like median_of: nothing measured, nothing to report */
    }
    double smallest = values[0];
    for (size_t i = 1; i < n; i++) {
        if (values[i] < smallest) {
            smallest = values[i];
        }
    }
    return smallest;
}
