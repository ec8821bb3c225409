/* sim_backend.c: a simulated GPU.
 *
 * Each simulated device is a worker thread that runs its own queue in order, as
 * a GPU runs a CUDA stream. The host thread only appends to the queue, so an
 * operation "returns at once" and the work happens behind its back; reading a
 * result waits until the queue has drained. Its memory is host memory that the
 * device owns, up to a capacity (LABKIT_SIM_MEMORY), so running out of device
 * memory can be practised. Events are stamped when the worker reaches them. A
 * graph is a list of items that one item on the queue replays.
 *
 * Beside that compute queue, a device has a copy queue (labkit/copy_queue.h):
 * a second worker thread, its copy engine, started on first use, which runs
 * only uploads from the host, events and waits. An item that waits for an
 * event of the other queue holds its worker until that queue has passed it;
 * every wait is for an event recorded before it, so the two never wait for
 * each other.
 *
 * A kernel whose launch fails on the worker (a barrier that not every thread
 * reaches, a block too large: labkit/cuda_emulation.h) leaves an error with
 * its device, as CUDA does; the next call that waits for the device returns
 * it (once), and the queue goes on meanwhile. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend.h"
#include "../clock.h"
#include "../guarded_memory.h"
#include "../units.h"
#include "coop_guard.h"
#include "coop_internal.h"
#include "fiber.h"
#include "sim_costs.h"
#include "sim_ops.h"
#include "sim_properties.h"

/* Like the CUDA driver's limit on pending launches: a host that runs far ahead
 * of its device eventually waits for room in the queue. */
#define QUEUE_CAPACITY 1024

typedef struct sim_event {
    /* clock_seconds() when each queue reached its last record there, written
     * by that queue's worker alone: the event's time is its last record's */
    double stamp[BACKEND_QUEUES];
    backend_queue queue; /* the queue of its last record */
    /* its last record's place on each queue (0: none yet): reached once that
     * queue's `completed` gets there, recorded[queue] being the one that
     * counts; its memory may go back once both queues have passed theirs */
    uint64_t recorded[BACKEND_QUEUES];
} sim_event;

typedef enum item_kind {
    ITEM_OP,
    ITEM_KERNEL,
    ITEM_COPY,
    ITEM_UPLOAD,
    ITEM_GRAPH,
    ITEM_RELEASE,        /* frees dst, a graph */
    ITEM_RELEASE_MEMORY, /* gives dst, device memory, back */
    ITEM_EVENT,
    ITEM_WAIT, /* holds the queue until the other one has passed an event */
    ITEM_STOP
} item_kind;

struct sim_graph;

typedef struct item {
    item_kind kind;
    op_call op; /* ITEM_OP */
    void *dst;  /* ITEM_COPY, ITEM_RELEASE, ITEM_RELEASE_MEMORY */
    const void *src;
    size_t bytes;
    sim_event *event;              /* ITEM_EVENT */
    backend_queue queue;           /* ITEM_EVENT: its own queue; ITEM_WAIT: the queue waited for */
    uint64_t seq;                  /* ITEM_WAIT: the place waited for */
    const struct sim_graph *graph; /* ITEM_GRAPH */
    kernel_fn kernel;              /* ITEM_KERNEL: kernel(args, NULL) */
    unsigned char args[KERNEL_MAX_ARGS];
} item;

/* A captured graph: the items its launch replays, in order. */
typedef struct sim_graph {
    size_t count;
    item items[];
} sim_graph;

struct sim_device;

/* One queue and the worker thread that runs it. */
typedef struct sim_queue {
    struct sim_device *dev;
    backend_queue which;
    item ring[QUEUE_CAPACITY];
    uint64_t submitted, completed; /* items ever queued / ever finished */
    uint64_t wake_at; /* a waiter (the host, the other worker) waits until `completed` reaches this */
    bool worker_idle;
    pthread_cond_t work_arrived; /* the worker waits on it when the queue is empty */
    pthread_t worker;
    bool started;
    double busy_seconds;
} sim_queue;

typedef struct sim_device {
    pthread_mutex_t lock;    /* both queues' */
    pthread_cond_t progress; /* waiters wait on it for room, an event, a drain */
    bool ready;              /* the lock and conditions made */
    sim_queue queues[BACKEND_QUEUES];
    size_t allocated; /* bytes handed out (tensors; not the scratch) */
    double *scratch;
    /* a failed launch's message, until a call that waits for the device returns it */
    bool failed;
    char failure[COOP_MESSAGE_CAPACITY];
} sim_device;

static sim_device devices[LABKIT_MAX_SIM_DEVICES];
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t capacity; /* bytes per device (LABKIT_SIM_MEMORY), from sim_configure */

void sim_configure(size_t capacity_bytes) { capacity = capacity_bytes; }

/* ---- waiting for a queue ------------------------------------------------- */

/* With the lock held: waits until q has finished `target` items. */
static void wait_locked(sim_device *dev, sim_queue *q, uint64_t target)
{
    while (q->completed < target) {
        if (target < q->wake_at) q->wake_at = target;
        pthread_cond_wait(&dev->progress, &dev->lock);
    }
}

static void wait_until_completed(sim_device *dev, sim_queue *q, uint64_t target)
{
    pthread_mutex_lock(&dev->lock);
    wait_locked(dev, q, target);
    pthread_mutex_unlock(&dev->lock);
}

/* ---- the workers --------------------------------------------------------- */

/* The first failure is kept (as CUDA reports the first); later ones are lost. */
static void note_failure(sim_device *dev, const char *message)
{
    pthread_mutex_lock(&dev->lock);
    if (!dev->failed) {
        dev->failed = true;
        snprintf(dev->failure, sizeof dev->failure, "%s", message);
    }
    pthread_mutex_unlock(&dev->lock);
}

typedef struct op_on_worker {
    double *scratch;
    const op_call *op;
} op_on_worker;

static void run_op(void *p)
{
    const op_on_worker *w = p;
    sim_run_op(w->scratch, w->op);
}

static void execute(sim_device *dev, const item *it)
{
    const double start = clock_seconds();
    char message[COOP_MESSAGE_CAPACITY];
    switch (it->kind) {
    case ITEM_OP: {
        op_on_worker w = { dev->scratch, &it->op };
        if (!coop_run_guarded(run_op, &w, message, sizeof message)) note_failure(dev, message);
        free(it->op.scratch); /* a low-precision product's widened inputs, if any */
        sim_occupy_until(start, KERNEL_MIN_SECONDS);
        break;
    }
    case ITEM_KERNEL:
        if (!coop_run_launcher_guarded(it->kernel, it->args, message, sizeof message))
            note_failure(dev, message);
        sim_occupy_until(start, KERNEL_MIN_SECONDS);
        break;
    case ITEM_COPY: memcpy(it->dst, it->src, it->bytes); break;
    case ITEM_UPLOAD: /* a transfer from the host: it pays the bus's latency */
        memcpy(it->dst, it->src, it->bytes);
        sim_occupy_until(start, TRANSFER_LATENCY_SECONDS);
        break;
    case ITEM_GRAPH: /* every item as if queued one by one, minimum times included */
        for (size_t i = 0; i < it->graph->count; ++i) execute(dev, &it->graph->items[i]);
        break;
    case ITEM_RELEASE: free(it->dst); break;
    case ITEM_RELEASE_MEMORY: guarded_free(it->dst); break;
    case ITEM_EVENT: it->event->stamp[it->queue] = start; break;
    case ITEM_WAIT: wait_until_completed(dev, &dev->queues[it->queue], it->seq); break;
    case ITEM_STOP: break;
    }
}

static void *worker_main(void *arg)
{
    sim_queue *q = arg;
    sim_device *dev = q->dev;
    fiber_signal_stack_install(); /* a crash report can run after a GPU thread's stack overflowed */
    pthread_mutex_lock(&dev->lock);
    for (;;) {
        while (q->completed == q->submitted) {
            q->worker_idle = true;
            pthread_cond_wait(&q->work_arrived, &dev->lock);
        }
        q->worker_idle = false;
        item it = q->ring[q->completed % QUEUE_CAPACITY];
        pthread_mutex_unlock(&dev->lock);

        const double start = clock_seconds();
        execute(dev, &it);
        /* A wait for the other queue is time idle, not busy. */
        const double busy = it.kind == ITEM_WAIT ? 0.0 : clock_seconds() - start;

        pthread_mutex_lock(&dev->lock);
        q->busy_seconds += busy;
        q->completed++;
        /* Wake the waiters only when what one waits for has happened: waking
         * them on every item would cost the worker a system call each time. */
        if (q->completed >= q->wake_at) {
            q->wake_at = UINT64_MAX;
            pthread_cond_broadcast(&dev->progress);
        }
        if (it.kind == ITEM_STOP) break;
    }
    pthread_mutex_unlock(&dev->lock);
    fiber_signal_stack_remove();
    return NULL;
}

/* ---- the host's side of the queues ----------------------------------------- */

/* With the lock held: appends an item to q and returns its place (1-based);
 * an event's item learns its queue. A host that finds the queue full waits
 * until a quarter of it has drained, so that it and the worker do not hand the
 * lock back and forth on every item. */
static uint64_t append_locked(sim_device *dev, sim_queue *q, item *it)
{
    if (q->submitted - q->completed >= QUEUE_CAPACITY)
        wait_locked(dev, q, q->submitted - QUEUE_CAPACITY * 3 / 4);
    const uint64_t place = q->submitted + 1;
    if (it->kind == ITEM_EVENT) it->queue = q->which;
    q->ring[q->submitted % QUEUE_CAPACITY] = *it;
    q->submitted = place;
    if (q->worker_idle) pthread_cond_signal(&q->work_arrived);
    return place;
}

/* At exit: let each worker finish its queue, then stop it, so that no memory
 * or thread is left behind for valgrind or LeakSanitizer to report. Every
 * wait between the queues is for an item queued before the stops. */
static void stop_all_workers(void)
{
    for (int i = 0; i < LABKIT_MAX_SIM_DEVICES; ++i) {
        sim_device *dev = &devices[i];
        if (!dev->ready) continue;
        bool stopping[BACKEND_QUEUES] = { false };
        pthread_mutex_lock(&dev->lock);
        for (int q = 0; q < BACKEND_QUEUES; ++q) {
            item stop = { .kind = ITEM_STOP };
            stopping[q] = dev->queues[q].started;
            if (stopping[q]) append_locked(dev, &dev->queues[q], &stop);
        }
        pthread_mutex_unlock(&dev->lock);
        for (int q = 0; q < BACKEND_QUEUES; ++q) {
            if (stopping[q]) pthread_join(dev->queues[q].worker, NULL);
            dev->queues[q].started = false;
        }
        free(dev->scratch);
        dev->scratch = NULL;
    }
}

/* Starts queue `which` of a ready device, if it has not started. With start_lock held. */
static void start_queue(sim_device *dev, backend_queue which)
{
    sim_queue *q = &dev->queues[which];
    if (q->started) return;
    static bool exit_handler_set = false;
    q->dev = dev;
    q->which = which;
    q->wake_at = UINT64_MAX;
    pthread_cond_init(&q->work_arrived, NULL);
    if (pthread_create(&q->worker, NULL, worker_main, q) != 0) return;
    q->started = true;
    if (!exit_handler_set) exit_handler_set = atexit(stop_all_workers) == 0;
}

/* Queue `which` of device `index`, its worker started on first use, so that a
 * program that never touches a simulated GPU (or its copy queue) never pays
 * for a thread. NULL when the thread could not be started. */
static sim_queue *queue_at(int index, backend_queue which)
{
    sim_device *dev = &devices[index];
    pthread_mutex_lock(&start_lock);
    if (!dev->ready) {
        pthread_mutex_init(&dev->lock, NULL);
        pthread_cond_init(&dev->progress, NULL);
        dev->ready = true;
    }
    if (!dev->scratch) dev->scratch = calloc(sim_scratch_doubles(), sizeof(double));
    if (dev->scratch) start_queue(dev, QUEUE_COMPUTE);
    if (dev->queues[QUEUE_COMPUTE].started) start_queue(dev, which);
    pthread_mutex_unlock(&start_lock);
    return dev->queues[which].started ? &dev->queues[which] : NULL;
}

/* The device, its compute queue started. */
static sim_device *device_at(int index) { return queue_at(index, QUEUE_COMPUTE) ? &devices[index] : NULL; }

static status no_worker(int index, backend_queue which)
{
    return fail(STATUS_BACKEND_FAILED, "sim:%d: could not start the worker thread of its %s queue", index,
                which == QUEUE_COPIES ? "copy" : "compute");
}

static status enqueue_on(int index, backend_queue which, item *it)
{
    sim_queue *q = queue_at(index, which);
    if (!q) return no_worker(index, which);
    pthread_mutex_lock(&q->dev->lock);
    append_locked(q->dev, q, it);
    pthread_mutex_unlock(&q->dev->lock);
    return STATUS_OK;
}

static status enqueue(int index, item *it) { return enqueue_on(index, QUEUE_COMPUTE, it); }

/* A failed launch's error, returned once by a call that waited for the device. */
static status take_failure(sim_device *dev, int index)
{
    char message[COOP_MESSAGE_CAPACITY];
    pthread_mutex_lock(&dev->lock);
    const bool failed = dev->failed;
    if (failed) snprintf(message, sizeof message, "%s", dev->failure);
    dev->failed = false;
    pthread_mutex_unlock(&dev->lock);
    return failed ? fail(STATUS_KERNEL_FAILED, "sim:%d: %s", index, message) : STATUS_OK;
}

/* Both queues, as they stand when the host asks. */
static status sim_synchronize(int index)
{
    sim_device *dev = device_at(index);
    if (!dev) return no_worker(index, QUEUE_COMPUTE);
    pthread_mutex_lock(&dev->lock);
    for (int q = 0; q < BACKEND_QUEUES; ++q) wait_locked(dev, &dev->queues[q], dev->queues[q].submitted);
    pthread_mutex_unlock(&dev->lock);
    return take_failure(dev, index);
}

/* ---- memory ---------------------------------------------------------------- */

static status sim_alloc(int index, size_t bytes, void **out)
{
    sim_device *dev = device_at(index);
    if (!dev) return no_worker(index, QUEUE_COMPUTE);
    char asked[32], used[32], total[32];
    bytes_text(bytes, asked, sizeof asked);
    if (bytes > capacity - dev->allocated)
        return fail(STATUS_OUT_OF_MEMORY,
                    "sim:%d: out of memory: asked for %s with %s of its %s in use.\n"
                    "  hint: free tensors you no longer need (tensor_free), use smaller batches, or give "
                    "the simulated GPUs more memory (LABKIT_SIM_MEMORY=8G).",
                    index, asked, bytes_text(dev->allocated, used, sizeof used),
                    bytes_text(capacity, total, sizeof total));
    /* Ends at a guard page: a kernel's index past the end stops at its line,
     * where a real GPU needs compute-sanitizer to see it (guarded_memory.h). */
    *out = guarded_alloc(bytes);
    if (!*out)
        return fail(STATUS_OUT_OF_MEMORY,
                    "sim:%d: the host has no memory left for %s (the simulated GPU's memory is host memory)",
                    index, asked);
    dev->allocated += bytes;
    return STATUS_OK;
}

/* With the lock held: makes queue `waiter` hold, on the device, until queue
 * `waited` has finished `place` items; nothing where it needs no wait (the
 * same queue runs in order; a place already passed). */
static void wait_on_device_locked(sim_device *dev, backend_queue waiter, backend_queue waited, uint64_t place)
{
    if (waiter == waited || dev->queues[waited].completed >= place) return;
    item wait = { .kind = ITEM_WAIT, .queue = waited, .seq = place };
    append_locked(dev, &dev->queues[waiter], &wait);
}

/* The bytes count as free at once (the host's order, which keeps the peak
 * figure exact); the memory itself goes back in queue order, since work already
 * queued on either queue may still read or write it. */
static void sim_release(int index, void *ptr, size_t bytes)
{
    sim_device *dev = device_at(index);
    if (!dev) { /* no worker: nothing can still use it */
        devices[index].allocated -= bytes;
        guarded_free(ptr);
        return;
    }
    item it = { .kind = ITEM_RELEASE_MEMORY, .dst = ptr };
    pthread_mutex_lock(&dev->lock);
    dev->allocated -= bytes;
    wait_on_device_locked(dev, QUEUE_COMPUTE, QUEUE_COPIES, dev->queues[QUEUE_COPIES].submitted);
    append_locked(dev, &dev->queues[QUEUE_COMPUTE], &it);
    pthread_mutex_unlock(&dev->lock);
}

static status sim_memory_info(int index, size_t in_use, size_t *free_bytes, size_t *total_bytes)
{
    (void)index;
    *total_bytes = capacity;
    *free_bytes = *total_bytes > in_use ? *total_bytes - in_use : 0;
    return STATUS_OK;
}

/* ---- copies ---------------------------------------------------------------- */

/* Host to device, as cudaMemcpy does it: after the queued work, before return. */
static status sim_upload(int index, void *dst, const void *src, size_t bytes)
{
    status s = sim_synchronize(index);
    if (s == STATUS_OK) sim_transfer(dst, src, bytes);
    return s;
}

static status sim_download(int index, void *dst, const void *src, size_t bytes)
{
    return sim_upload(index, dst, src, bytes);
}

static status sim_upload_async(int index, backend_queue queue, void *dst, const void *src, size_t bytes)
{
    item it = { .kind = ITEM_UPLOAD, .dst = dst, .src = src, .bytes = bytes };
    return enqueue_on(index, queue, &it);
}

static status sim_copy_within(int index, void *dst, const void *src, size_t bytes)
{
    item it = { .kind = ITEM_COPY, .dst = dst, .src = src, .bytes = bytes };
    return enqueue(index, &it);
}

/* Between two simulated GPUs: once both queues have drained, like a peer copy
 * that the host waits for. */
static status sim_copy_peer(int dst_index, void *dst, int src_index, const void *src, size_t bytes)
{
    status s = sim_synchronize(src_index);
    if (s == STATUS_OK) s = sim_synchronize(dst_index);
    if (s == STATUS_OK) sim_transfer(dst, src, bytes);
    return s;
}

/* ---- work and events ------------------------------------------------------- */

/* A low-precision matrix product widens its inputs to float32 before OpenBLAS
 * multiplies them (sim_ops.c): the room for them is taken here, on the host's
 * side, so that a shortage is reported by the call, and the worker frees it.
 * Like cuBLAS's workspace on a real GPU, it is not counted as device memory. */
static status sim_run(int index, const op_call *op)
{
    item it = { .kind = ITEM_OP, .op = *op };
    if (matmul_needs_scratch(op)) {
        const size_t bytes = (size_t)matmul_scratch_floats(op) * sizeof(float);
        it.op.scratch = malloc(bytes);
        if (!it.op.scratch) {
            char text[32];
            return fail(STATUS_OUT_OF_MEMORY,
                        "op_matmul on sim:%d: no host memory for the inputs widened to float32 (%s); "
                        "a simulated GPU has no tensor cores, so it multiplies 16-bit and TF32 inputs in "
                        "float32",
                        index, bytes_text(bytes, text, sizeof text));
        }
    }
    status s = enqueue(index, &it);
    if (s != STATUS_OK) free(it.op.scratch);
    return s;
}

static status sim_enqueue(int index, kernel_fn fn, const void *args, size_t args_size)
{
    item it = { .kind = ITEM_KERNEL, .kernel = fn };
    if (args_size > 0) memcpy(it.args, args, args_size); /* args may be NULL when there are none */
    return enqueue(index, &it);
}

static status sim_event_create(int index, void **out)
{
    (void)index;
    *out = calloc(1, sizeof(sim_event));
    return *out ? STATUS_OK : fail(STATUS_OUT_OF_MEMORY, "event_create: no host memory left");
}

/* Whether both queues have passed e's last record on each (so that no item
 * of either will stamp it). With the lock held. */
static bool passed_locked(const sim_device *dev, const sim_event *e)
{
    for (int q = 0; q < BACKEND_QUEUES; ++q)
        if (dev->queues[q].completed < e->recorded[q]) return false;
    return true;
}

static void sim_event_destroy(int index, void *ev)
{
    /* Returns at once, as cudaEventDestroy does: an event a worker has still
     * to stamp is freed in queue order, after its stamps. (Waiting here would
     * hide a program that destroys its events before the work they time.) */
    sim_device *dev = device_at(index);
    if (!dev) {
        free(ev);
        return;
    }
    const sim_event *e = ev;
    pthread_mutex_lock(&dev->lock);
    const bool passed = passed_locked(dev, e);
    if (!passed) {
        wait_on_device_locked(dev, QUEUE_COMPUTE, QUEUE_COPIES, e->recorded[QUEUE_COPIES]);
        item release = { .kind = ITEM_RELEASE, .dst = ev };
        append_locked(dev, &dev->queues[QUEUE_COMPUTE], &release);
    }
    pthread_mutex_unlock(&dev->lock);
    if (passed) free(ev);
}

static status sim_event_record(int index, backend_queue queue, void *ev)
{
    sim_queue *q = queue_at(index, queue);
    if (!q) return no_worker(index, queue);
    sim_event *e = ev;
    item it = { .kind = ITEM_EVENT, .event = e };
    /* The worker only writes the stamp; the place in the queue is the host's. */
    pthread_mutex_lock(&q->dev->lock);
    const uint64_t place = append_locked(q->dev, q, &it);
    e->queue = queue, e->recorded[queue] = place;
    pthread_mutex_unlock(&q->dev->lock);
    return STATUS_OK;
}

static status sim_event_wait(int index, backend_queue queue, void *ev)
{
    sim_queue *q = queue_at(index, queue);
    if (!q) return no_worker(index, queue);
    const sim_event *e = ev;
    pthread_mutex_lock(&q->dev->lock);
    wait_on_device_locked(q->dev, queue, e->queue, e->recorded[e->queue]);
    pthread_mutex_unlock(&q->dev->lock);
    return STATUS_OK;
}

static bool sim_event_done(int index, void *ev)
{
    sim_device *dev = device_at(index);
    if (!dev) return false;
    const sim_event *e = ev;
    pthread_mutex_lock(&dev->lock);
    bool done = dev->queues[e->queue].completed >= e->recorded[e->queue];
    pthread_mutex_unlock(&dev->lock);
    return done;
}

static status sim_event_synchronize(int index, void *ev)
{
    sim_device *dev = device_at(index);
    if (!dev) return no_worker(index, QUEUE_COMPUTE);
    const sim_event *e = ev;
    pthread_mutex_lock(&dev->lock);
    wait_locked(dev, &dev->queues[e->queue], e->recorded[e->queue]);
    pthread_mutex_unlock(&dev->lock);
    return take_failure(dev, index);
}

static status sim_event_elapsed_ms(int index, void *start, void *end, double *ms)
{
    (void)index;
    const sim_event *a = start, *b = end;
    *ms = (b->stamp[b->queue] - a->stamp[a->queue]) * 1e3;
    return STATUS_OK;
}

/* The compute queue's: the copy engine's time is not the device's computing. */
static double sim_busy_seconds(int index)
{
    sim_device *dev = device_at(index);
    if (!dev) return 0.0;
    pthread_mutex_lock(&dev->lock);
    double busy = dev->queues[QUEUE_COMPUTE].busy_seconds;
    pthread_mutex_unlock(&dev->lock);
    return busy;
}

/* ---- graphs ------------------------------------------------------------------- */

/* The item that the same call would have queued. */
static item item_of(const graph_cmd *c)
{
    item it = { .dst = c->dst, .src = c->src, .bytes = c->bytes };
    switch (c->kind) {
    case GRAPH_CMD_OP: it.kind = ITEM_OP, it.op = c->op; break;
    case GRAPH_CMD_KERNEL:
        it.kind = ITEM_KERNEL, it.kernel = c->kernel;
        memcpy(it.args, c->args, sizeof it.args);
        break;
    case GRAPH_CMD_COPY: it.kind = ITEM_COPY; break;
    case GRAPH_CMD_UPLOAD: it.kind = ITEM_UPLOAD; break;
    }
    return it;
}

static status sim_graph_build(int index, const graph_cmd *cmds, size_t count, void **out)
{
    sim_graph *g = malloc(sizeof *g + count * sizeof(item));
    if (!g)
        return fail(STATUS_OUT_OF_MEMORY, "graph_end_capture: no host memory left for sim:%d's graph", index);
    g->count = count;
    for (size_t i = 0; i < count; ++i) g->items[i] = item_of(&cmds[i]);
    *out = g;
    return STATUS_OK;
}

/* The host queues one item, however many the graph holds. */
static status sim_graph_launch(int index, void *g)
{
    item it = { .kind = ITEM_GRAPH, .graph = g };
    return enqueue(index, &it);
}

/* In queue order, like device memory: launches queued before still replay it. */
static void sim_graph_destroy(int index, void *g)
{
    item it = { .kind = ITEM_RELEASE, .dst = g };
    if (enqueue(index, &it) != STATUS_OK) free(g); /* no worker: nothing can still replay it */
}

static status sim_properties(int index, device_properties *out)
{
    return sim_device_properties(index, capacity, out);
}

const backend sim_backend = {
    .name = "sim",
    .host_memory = true,
    .alloc = sim_alloc,
    .release = sim_release,
    .memory_info = sim_memory_info,
    .upload = sim_upload,
    .download = sim_download,
    .upload_async = sim_upload_async,
    .copy_within = sim_copy_within,
    .copy_peer = sim_copy_peer,
    .run = sim_run,
    .enqueue = sim_enqueue,
    .synchronize = sim_synchronize,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .event_wait = sim_event_wait,
    .event_synchronize = sim_event_synchronize,
    .event_done = sim_event_done,
    .event_elapsed_ms = sim_event_elapsed_ms,
    .busy_seconds = sim_busy_seconds,
    .properties = sim_properties,
    .graph_build = sim_graph_build,
    .graph_launch = sim_graph_launch,
    .graph_destroy = sim_graph_destroy,
};
