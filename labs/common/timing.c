/* timing.c: a device's time for a call, measured with events (timing.h). */
#include "timing.h"

#include <math.h>

#include "labkit/event.h"

/* The device's milliseconds for `repeat` calls queued back to back, between
 * two events. */
static status time_batch(timed_call call, const void *context, int repeat, event *start, event *stop,
                         double *ms)
{
    status s = event_record(start);
    for (int i = 0; i < repeat && s == STATUS_OK; ++i) s = call(context);
    if (s == STATUS_OK) s = event_record(stop);
    if (s == STATUS_OK) s = event_synchronize(stop);
    if (s == STATUS_OK) s = event_elapsed_ms(start, stop, ms);
    return s;
}

status time_call(device d, timed_call call, const void *context, int runs, double *best_ms)
{
    if (!call || !best_ms || runs < 1)
        return fail(STATUS_BAD_ARGUMENT, "time_call: call, best_ms and runs >= 1");
    *best_ms = INFINITY;
    event *start = NULL, *stop = NULL;
    double ms = 0.0;
    status s = event_create(&start, d);
    if (s == STATUS_OK) s = event_create(&stop, d);
    if (s == STATUS_OK) s = call(context); /* the warm-up: a GPU loads its kernels, cuBLAS picks its own */
    /* How long one call takes: the fastest of 3, since a busy machine can
     * stall any one of them. Calls shorter than 10 ms are then queued back to
     * back, up to 100 a run, as a network's layers are: a single short one
     * would mostly time the launch. */
    double one = INFINITY;
    for (int i = 0; i < 3 && s == STATUS_OK; ++i) {
        s = time_batch(call, context, 1, start, stop, &ms);
        one = fmin(one, ms);
    }
    const int repeat = one >= 10.0 ? 1 : one <= 0.1 ? 100 : (int)(10.0 / one);
    for (int r = 0; r < runs && s == STATUS_OK; ++r) {
        s = time_batch(call, context, repeat, start, stop, &ms);
        if (s == STATUS_OK && ms / repeat < *best_ms) *best_ms = ms / repeat;
    }
    event_destroy(start), event_destroy(stop);
    return s;
}
