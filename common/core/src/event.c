/* event.c: device events, checked and counted; the stamping is the backend's. */
#include "labkit/event.h"

#include <stdlib.h>

#include "backend.h"
#include "capture.h"
#include "queues.h"

struct event {
    device dev;
    void *handle; /* the backend's */
    bool recorded;
};

status event_create(event **out, device d)
{
    if (!out)
        return fail(STATUS_BAD_ARGUMENT, "event_create: out is NULL; pass the address of an event pointer");
    *out = NULL;
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    event *e = calloc(1, sizeof *e);
    if (!e) return fail(STATUS_OUT_OF_MEMORY, "event_create: no host memory left");
    e->dev = d;
    s = backend_of(d)->event_create(d.index, &e->handle);
    if (s != STATUS_OK) {
        free(e);
        return s;
    }
    counters_of(d)->events++;
    *out = e;
    return STATUS_OK;
}

void event_destroy(event *e)
{
    if (!e) return;
    backend_of(e->dev)->event_destroy(e->dev.index, e->handle);
    counters_of(e->dev)->events--;
    free(e);
}

status event_record(event *e)
{
    if (!e) return fail(STATUS_BAD_ARGUMENT, "event_record: e is NULL; create it with event_create");
    /* A graph's replays would stamp it again and again, long after the call: to
     * time a graph, record events around graph_launch. */
    if (capturing(e->dev))
        return capture_refuse(e->dev, "event_record", "records an event",
                              "record events before and after graph_launch to time the recorded work");
    status s = backend_of(e->dev)->event_record(e->dev.index, queue_now(e->dev), e->handle);
    if (s == STATUS_OK) e->recorded = true;
    return s;
}

static status require_recorded(const char *op, const event *e, const char *name)
{
    if (!e) return fail(STATUS_BAD_ARGUMENT, "%s: %s is NULL; create it with event_create", op, name);
    if (!e->recorded)
        return fail(STATUS_BAD_ARGUMENT, "%s: %s was never recorded; call event_record(%s) first", op, name,
                    name);
    return STATUS_OK;
}

status event_wait_on_device(const event *e)
{
    const char *op = "event_wait_on_device";
    status s = require_recorded(op, e, "e");
    if (s != STATUS_OK) return s;
    /* A graph replays the compute queue's work alone: the wait would be lost. */
    if (capturing(e->dev))
        return capture_refuse(e->dev, op, "makes a queue wait for an event",
                              "wait for the event before graph_launch");
    counters_of(e->dev)->queue_waits++;
    return backend_of(e->dev)->event_wait(e->dev.index, queue_now(e->dev), e->handle);
}

status event_synchronize(event *e)
{
    status s = require_recorded("event_synchronize", e, "e");
    if (s != STATUS_OK) return s;
    if (capturing(e->dev))
        return capture_refuse(e->dev, "event_synchronize", "waits for the device",
                              "to wait for the recorded work, synchronize after graph_launch");
    if (device_is_gpu(e->dev)) counters_of(e->dev)->syncs++;
    return backend_of(e->dev)->event_synchronize(e->dev.index, e->handle);
}

bool event_done(const event *e)
{
    return e && e->recorded && backend_of(e->dev)->event_done(e->dev.index, e->handle);
}

status event_elapsed_ms(const event *start, const event *end, double *ms)
{
    const char *op = "event_elapsed_ms";
    if (!ms) return fail(STATUS_BAD_ARGUMENT, "%s: ms is NULL", op);
    status s = require_recorded(op, start, "start");
    if (s == STATUS_OK) s = require_recorded(op, end, "end");
    if (s != STATUS_OK) return s;
    if (!device_equal(start->dev, end->dev))
        return fail(STATUS_WRONG_DEVICE,
                    "%s: start is on %s and end on %s; time work with two events of one device", op,
                    device_name(start->dev), device_name(end->dev));
    if (!event_done(start) || !event_done(end))
        return fail(STATUS_NOT_READY,
                    "%s: %s has not reached the %s event yet.\n"
                    "  hint: call event_synchronize(end) first; the device runs behind the host.",
                    op, device_name(end->dev), event_done(start) ? "end" : "start");
    return backend_of(start->dev)->event_elapsed_ms(start->dev.index, start->handle, end->handle, ms);
}
