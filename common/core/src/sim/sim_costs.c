/* sim_costs.c: the floors of a simulated GPU's times (sim_costs.h). */
#include <string.h>

#include "../clock.h"
#include "sim_costs.h"

/* The worker waits out the rest of a kernel's least duration by spinning: a
 * sleep would take far longer than 2 microseconds. */
void sim_occupy_until(double start, double seconds)
{
    while (clock_seconds() - start < seconds) continue;
}

/* The host waits out the transfer latency by spinning, as a driver polling for
 * a small DMA does; sleeping would take far longer than 10 microseconds. */
void sim_transfer(void *dst, const void *src, size_t bytes)
{
    const double start = clock_seconds();
    memcpy(dst, src, bytes);
    sim_occupy_until(start, TRANSFER_LATENCY_SECONDS);
}
