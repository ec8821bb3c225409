/* graph.c: capturing a device's work into a graph, and launching it as one
 * launch (labkit/graph.h). The recording itself is capture.c's; the replay is
 * the backend's. */
#include "labkit/graph.h"

#include <stdlib.h>

#include "backend.h"
#include "capture.h"
#include "queues.h"

struct graph {
    device dev;
    void *handle;           /* the backend's replayable form; NULL when nothing was recorded */
    int64_t operations;     /* operations and kernels: what eager launches it replaces */
    device_counters copies; /* the copies and bytes of one launch (the copy fields only) */
    kept_memory *kept;      /* memory of tensors freed during the capture */
    size_t nkept;
};

/* Memory goes back as tensor_free gives it back: counted free now, released in
 * queue order, after the work queued on it. */
static void release_kept(device d, kept_memory *kept, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        counters_of(d)->memory_current -= kept[i].bytes;
        backend_of(d)->release(d.index, kept[i].ptr, kept[i].bytes);
    }
}

status graph_begin_capture(device d)
{
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    if (capturing(d))
        return fail(STATUS_BAD_ARGUMENT,
                    "graph_begin_capture: %s is already capturing a graph; the capture goes on.\n"
                    "  hint: end it first with graph_end_capture(%s, &g): one capture per device at a time.",
                    device_name(d), device_name(d));
    if (copy_queue_is_open(d))
        return copy_queue_refuse(d, "graph_begin_capture", "starts a capture of the compute queue's work");
    return capture_start(d);
}

/* What one launch adds to the counters: its operations and kernels, and its
 * copies counted as the same calls run eagerly count them. */
static void tally(graph *g, const recording *r)
{
    for (size_t i = 0; i < r->count; ++i) {
        const graph_cmd *c = &r->cmds[i];
        if (c->kind == GRAPH_CMD_OP || c->kind == GRAPH_CMD_KERNEL) {
            g->operations++;
        } else if (c->kind == GRAPH_CMD_UPLOAD && device_is_gpu(g->dev)) {
            g->copies.h2d_copies++, g->copies.h2d_bytes += c->bytes;
        } else { /* a copy within the device; on the CPU, an upload is one too */
            g->copies.d2d_copies++, g->copies.d2d_bytes += c->bytes;
        }
    }
}

static status build(graph *g, device d, const recording *r)
{
    g->dev = d;
    tally(g, r);
    if (r->count == 0) return STATUS_OK; /* an empty graph: launching it does nothing */
    return backend_of(d)->graph_build(d.index, r->cmds, r->count, &g->handle);
}

status graph_end_capture(device d, graph **out)
{
    if (!out)
        return fail(STATUS_BAD_ARGUMENT,
                    "graph_end_capture: out is NULL; pass the address of a graph pointer (the capture, if "
                    "any, goes on)");
    *out = NULL;
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    recording *r = capture_stop(d);
    if (!r)
        return fail(STATUS_BAD_ARGUMENT,
                    "graph_end_capture: %s is not capturing a graph.\n"
                    "  hint: call graph_begin_capture(%s) first, then queue the work to record.",
                    device_name(d), device_name(d));
    graph *g = calloc(1, sizeof *g);
    s = g ? build(g, d, r) : fail(STATUS_OUT_OF_MEMORY, "graph_end_capture: no host memory left for a graph");
    if (s == STATUS_OK) {
        g->kept = r->kept, g->nkept = r->nkept;
        r->kept = NULL;
        counters_of(d)->graphs++;
        *out = g;
    } else {
        release_kept(d, r->kept, r->nkept); /* no graph will use it */
        free(g);
    }
    recording_free(r);
    return s;
}

status graph_launch(graph *g)
{
    if (!g) return fail(STATUS_BAD_ARGUMENT, "graph_launch: g is NULL; make one with graph_end_capture");
    if (capturing(g->dev))
        return capture_refuse(g->dev, "graph_launch", "launches a graph", "launch graphs outside a capture");
    if (copy_queue_is_open(g->dev)) return copy_queue_refuse(g->dev, "graph_launch", "launches a graph");
    device_counters *c = counters_of(g->dev);
    c->launches++;
    c->replayed += (uint64_t)g->operations;
    c->h2d_copies += g->copies.h2d_copies, c->h2d_bytes += g->copies.h2d_bytes;
    c->d2d_copies += g->copies.d2d_copies, c->d2d_bytes += g->copies.d2d_bytes;
    if (!g->handle) return STATUS_OK;
    return backend_of(g->dev)->graph_launch(g->dev.index, g->handle);
}

void graph_free(graph *g)
{
    if (!g) return;
    if (g->handle) backend_of(g->dev)->graph_destroy(g->dev.index, g->handle);
    release_kept(g->dev, g->kept, g->nkept);
    counters_of(g->dev)->graphs--;
    free(g->kept);
    free(g);
}

bool graph_capturing(device d) { return capturing(d); }

int64_t graph_operations(const graph *g) { return g ? g->operations : 0; }

device graph_device(const graph *g) { return g ? g->dev : device_cpu(); }
