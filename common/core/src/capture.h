/* capture.h: the recording of a device's work while it captures a graph
 * (internal; the public side is labkit/graph.h).
 *
 * graph_begin_capture starts a recording for a device, graph_end_capture takes
 * it. In between, the front end hands that device's queued work (operations,
 * kernels, copies within it, queued uploads) to capture_record instead of its
 * backend, keeps the memory of tensors freed meanwhile (capture_keep), and
 * refuses what a graph cannot hold with capture_refuse. Only this file knows
 * which devices capture, and it needs nothing of the rest of the library, so
 * every file may ask it. */
#ifndef LABKIT_CAPTURE_H
#define LABKIT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "graph_cmd.h"
#include "labkit/device.h"
#include "labkit/status.h"

/* Device memory that a tensor freed during the capture held: the recorded work
 * may still use it at every replay, so its graph gives it back, not tensor_free. */
typedef struct kept_memory {
    void *ptr;
    size_t bytes;
} kept_memory;

typedef struct recording {
    graph_cmd *cmds; /* in the order they were queued */
    size_t count, capacity;
    kept_memory *kept;
    size_t nkept, kept_capacity;
} recording;

/* Whether d is capturing (false for a device that does not exist). */
bool capturing(device d);

/* Starts an empty recording for d, which exists and is not capturing. */
status capture_start(device d);

/* Ends d's recording and hands it to the caller (NULL if d was not capturing). */
recording *capture_stop(device d);

/* Frees the recording's lists (not the memory that it kept). */
void recording_free(recording *r);

/* Appends one piece of work to d's recording; `who` names the call for a
 * failure (no host memory left for the list). */
status capture_record(device d, const graph_cmd *cmd, const char *who);

/* Keeps `bytes` of device memory at ptr with d's recording. false when there is
 * no host memory left for the list: the caller must then leak the memory rather
 * than free it, since the recorded work may use it. */
bool capture_keep(device d, void *ptr, size_t bytes);

/* The refusal of a call that a graph cannot hold. The capture goes on: the call
 * did nothing. `what` says what the call would have done, `hint` what to do. */
static inline status capture_refuse(device d, const char *call, const char *what, const char *hint)
{
    return fail(STATUS_BAD_ARGUMENT,
                "%s: %s is capturing a graph, which cannot hold this call: it %s. Nothing was done; the "
                "capture goes on.\n"
                "  hint: %s; or end the capture first (graph_end_capture).",
                call, device_name(d), what, hint);
}

/* The refusal of a new tensor on a capturing device. */
static inline status capture_refuse_tensor(device d, const char *call)
{
    return capture_refuse(d, call, "creates a tensor there",
                          "create the tensors before graph_begin_capture: a graph works on the same memory "
                          "at every launch");
}

#endif
