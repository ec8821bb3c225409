/* stats.c: reading and resetting a device's counters. */
#include "labkit/counters.h"

#include "backend.h"

status counters_read(device d, device_counters *out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "counters_read: out is NULL");
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    *out = *counters_of(d);
    out->busy_seconds = backend_of(d)->busy_seconds(d.index) - out->busy_seconds;
    return STATUS_OK;
}

status counters_reset(device d)
{
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    device_counters *c = counters_of(d);
    const size_t current = c->memory_current;
    const uint64_t events = c->events, graphs = c->graphs;
    *c = (device_counters){ 0 };
    c->memory_current = current;
    c->events = events, c->graphs = graphs;
    c->memory_peak = current;
    /* The backend's busy time only grows: keep its value now as the new zero. */
    c->busy_seconds = backend_of(d)->busy_seconds(d.index);
    return STATUS_OK;
}
