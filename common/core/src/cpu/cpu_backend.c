/* cpu_backend.c: the CPU as a device. Its memory is the host's, its work runs at
 * once on the calling thread, so there is nothing to wait for and an event is
 * stamped when it is recorded; a graph is its recorded calls, run in order. */
#include <stdlib.h>
#include <string.h>

#include "../backend.h"
#include "cpu_ops.h"
#include "../clock.h"
#include "../guarded_memory.h"
#include "../sim/coop_guard.h"
#include "../sim/coop_internal.h"

static status cpu_alloc(int index, size_t bytes, void **out)
{
    (void)index;
    /* An index past the end stops at the line that made it (guarded_memory.h). */
    *out = guarded_alloc(bytes);
    if (!*out)
        return fail(STATUS_OUT_OF_MEMORY,
                    "cpu: out of host memory asking for %zu bytes; free tensors you no longer need", bytes);
    return STATUS_OK;
}

static void cpu_release(int index, void *ptr, size_t bytes)
{
    (void)index, (void)bytes;
    guarded_free(ptr);
}

static status cpu_memory_info(int index, size_t in_use, size_t *free_bytes, size_t *total_bytes)
{
    (void)index;
    device_properties p;
    host_cpu_properties(&p);
    *total_bytes = p.memory_bytes;
    *free_bytes = p.memory_bytes > in_use ? p.memory_bytes - in_use : 0;
    return STATUS_OK;
}

static status cpu_copy(int index, void *dst, const void *src, size_t bytes)
{
    (void)index;
    memcpy(dst, src, bytes);
    return STATUS_OK;
}

/* Either queue: the copy is done before the call returns, as all cpu work is. */
static status cpu_upload_async(int index, backend_queue queue, void *dst, const void *src, size_t bytes)
{
    (void)queue;
    return cpu_copy(index, dst, src, bytes);
}

static status cpu_copy_peer(int dst_index, void *dst, int src_index, const void *src, size_t bytes)
{
    (void)src_index;
    return cpu_copy(dst_index, dst, src, bytes);
}

static status cpu_run(int index, const op_call *op)
{
    (void)index;
    return cpu_run_op(op);
}

/* A kernel runs at once on the host thread; a launch that fails there (a
 * barrier that not every thread reaches, ...) is this call's error. */
static status cpu_enqueue(int index, kernel_fn fn, const void *args, size_t args_size)
{
    (void)index, (void)args_size;
    char message[COOP_MESSAGE_CAPACITY];
    if (!coop_run_launcher_guarded(fn, args, message, sizeof message))
        return fail(STATUS_KERNEL_FAILED, "cpu: %s", message);
    return STATUS_OK;
}

static status cpu_nothing_to_wait_for(int index)
{
    (void)index;
    return STATUS_OK;
}

/* ---- events: a time stamp taken at once ---------------------------------- */

static status cpu_event_create(int index, void **out)
{
    (void)index;
    *out = calloc(1, sizeof(double));
    return *out ? STATUS_OK : fail(STATUS_OUT_OF_MEMORY, "event_create: no host memory left");
}

static void cpu_event_destroy(int index, void *ev)
{
    (void)index;
    free(ev);
}

static status cpu_event_record(int index, backend_queue queue, void *ev)
{
    (void)index, (void)queue;
    *(double *)ev = clock_seconds();
    return STATUS_OK;
}

/* Every event is reached when it is recorded: there is never anything to wait for. */
static status cpu_event_wait(int index, backend_queue queue, void *ev)
{
    (void)index, (void)queue, (void)ev;
    return STATUS_OK;
}

static status cpu_event_synchronize(int index, void *ev)
{
    (void)index, (void)ev;
    return STATUS_OK;
}

static bool cpu_event_done(int index, void *ev)
{
    (void)index, (void)ev;
    return true;
}

static status cpu_event_elapsed_ms(int index, void *start, void *end, double *ms)
{
    (void)index;
    *ms = (*(double *)end - *(double *)start) * 1e3;
    return STATUS_OK;
}

static double cpu_busy_seconds(int index)
{
    (void)index;
    return 0.0;
}

static status cpu_properties(int index, device_properties *out)
{
    (void)index;
    return host_cpu_properties(out);
}

/* ---- graphs: the recorded calls, kept and run again in order -------------- */

typedef struct cpu_graph {
    size_t count;
    graph_cmd cmds[];
} cpu_graph;

static status cpu_graph_build(int index, const graph_cmd *cmds, size_t count, void **out)
{
    (void)index;
    cpu_graph *g = malloc(sizeof *g + count * sizeof *cmds);
    if (!g) return fail(STATUS_OUT_OF_MEMORY, "graph_end_capture: no host memory left for the graph");
    g->count = count;
    memcpy(g->cmds, cmds, count * sizeof *cmds);
    *out = g;
    return STATUS_OK;
}

static status cpu_graph_launch(int index, void *graph)
{
    const cpu_graph *g = graph;
    for (size_t i = 0; i < g->count; ++i) {
        const graph_cmd *c = &g->cmds[i];
        switch (c->kind) {
        case GRAPH_CMD_OP: cpu_run_op(&c->op); break;
        case GRAPH_CMD_KERNEL: {
            /* a failed kernel ends the replay, with its message */
            const status s = cpu_enqueue(index, c->kernel, c->args, sizeof c->args);
            if (s != STATUS_OK) return s;
            break;
        }
        case GRAPH_CMD_COPY:
        case GRAPH_CMD_UPLOAD: memcpy(c->dst, c->src, c->bytes); break;
        }
    }
    return STATUS_OK;
}

static void cpu_graph_destroy(int index, void *graph)
{
    (void)index;
    free(graph);
}

const backend cpu_backend = {
    .name = "cpu",
    .host_memory = true,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .memory_info = cpu_memory_info,
    .upload = cpu_copy,
    .download = cpu_copy,
    .upload_async = cpu_upload_async,
    .copy_within = cpu_copy,
    .copy_peer = cpu_copy_peer,
    .run = cpu_run,
    .enqueue = cpu_enqueue,
    .synchronize = cpu_nothing_to_wait_for,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .event_wait = cpu_event_wait,
    .event_synchronize = cpu_event_synchronize,
    .event_done = cpu_event_done,
    .event_elapsed_ms = cpu_event_elapsed_ms,
    .busy_seconds = cpu_busy_seconds,
    .properties = cpu_properties,
    .graph_build = cpu_graph_build,
    .graph_launch = cpu_graph_launch,
    .graph_destroy = cpu_graph_destroy,
};
