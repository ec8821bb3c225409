/* clock.h: the library's own monotonic clock (internal).
 *
 * The core stamps events and paces the simulated GPU with it; the harness has
 * its own public wall_seconds() for programs, so the core needs nothing above it. */
#ifndef LABKIT_CLOCK_H
#define LABKIT_CLOCK_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC, which never jumps when the system clock is set:
 * only differences mean anything. */
static inline double clock_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

#endif
