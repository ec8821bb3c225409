/* copy_queue.c: which devices have their copy queue open (labkit/copy_queue.h).
 * Only the front end's state: each backend keeps its own second queue. */
#include "labkit/copy_queue.h"

#include "capture.h"
#include "queues.h"

/* In the registry's order (device_slot); true while the host has it open. */
static bool open_now[LABKIT_MAX_DEVICES];

bool copy_queue_is_open(device d)
{
    const int slot = device_slot(d);
    return slot >= 0 && open_now[slot];
}

backend_queue queue_now(device d) { return copy_queue_is_open(d) ? QUEUE_COPIES : QUEUE_COMPUTE; }

status copy_queue_begin(device d)
{
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    if (capturing(d))
        return capture_refuse(d, "copy_queue_begin", "opens the copy queue, whose copies a graph cannot hold",
                              "upload the batch before graph_launch, on the copy queue, outside the capture");
    if (copy_queue_is_open(d))
        return fail(STATUS_BAD_ARGUMENT,
                    "copy_queue_begin: %s's copy queue is already open; it stays open.\n"
                    "  hint: every copy_queue_begin(%s) needs its copy_queue_end(%s) before the next one.",
                    device_name(d), device_name(d), device_name(d));
    open_now[device_slot(d)] = true;
    return STATUS_OK;
}

status copy_queue_end(device d)
{
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    if (!copy_queue_is_open(d))
        return fail(STATUS_BAD_ARGUMENT,
                    "copy_queue_end: %s's copy queue is not open.\n"
                    "  hint: call copy_queue_begin(%s) first, and copy_queue_end once for each.",
                    device_name(d), device_name(d));
    open_now[device_slot(d)] = false;
    return STATUS_OK;
}

status copy_queue_refuse(device d, const char *call, const char *what)
{
    return fail(STATUS_BAD_ARGUMENT,
                "%s: %s's copy queue is open, and it takes only queued uploads from the host and events: "
                "this call %s. Nothing was done.\n"
                "  hint: a copy on the copy queue is a queued one (tensor_copy_from_host_async, or its _i32 "
                "form); everything else goes after copy_queue_end(%s), on the compute queue, which waits "
                "for the copies it needs with event_wait_on_device.",
                call, device_name(d), what, device_name(d));
}
