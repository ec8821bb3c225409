/* test_copy_queue.c: a device's copy queue (labkit/copy_queue.h) runs beside
 * its compute queue, each in its own order, and only events order one after
 * the other; while it is open it takes uploads and events, nothing else.
 *
 *   test_copy_queue cpu | sim:0 | cuda:0      (exits 77 when the device is absent)
 *
 * On a GPU, real or simulated, a gate kernel holds the compute queue until the
 * host opens it (copy_queue_gate.h), so the tests see what the copy queue does
 * meanwhile without timing anything: an upload that arrives while the compute
 * queue is held ran beside it. A test that holds a queue never waits forever:
 * it gives up after WAIT_LIMIT_SECONDS, says so and opens the gate. On the cpu
 * there is no queue to hold (its work runs at once): the tests of what is
 * taken, refused and counted run there too. */
#include <time.h>

#include "copy_queue_gate.h"
#include "harness.h"
#include "labkit/copy_queue.h"
#include "labkit/counters.h"
#include "labkit/device.h"
#include "labkit/event.h"
#include "labkit/graph.h"
#include "labkit/kernel.h"
#include "labkit/ops.h"
#include "labkit/tensor.h"

#define WAIT_LIMIT_SECONDS 20.0
/* Long enough for a copy of BIG floats to have finished on any machine, loaded or not,
 * had nothing held it back: used only where a wrong library could pass, never fail. */
#define HELD_SECONDS 0.05
#define SMALL 1024
#define BIG (4 << 20) /* 16 MiB: a simulated GPU's copy engine takes milliseconds over it */

static device dev;

/* ============================================================================
 * the gate
 * ========================================================================== */

static volatile int sim_gate_flags[GATE_FLAGS];
static gate the_gate;

static void set_flag(volatile int *flags, int which, int value)
{
    __atomic_store_n((int *)&flags[which], value, __ATOMIC_RELEASE);
}

static int flag(volatile int *flags, int which)
{
    return __atomic_load_n((int *)&flags[which], __ATOMIC_ACQUIRE);
}

void gate_wait_on_sim(const void *args, void *stream)
{
    (void)stream;
    const gate_args *a = args;
    const struct timespec pause = { 0, 100000 }; /* 0.1 ms: the worker waits without spinning a core */
    set_flag(a->device_view, GATE_ENTERED, 1);
    while (!flag(a->device_view, GATE_OPEN)) nanosleep(&pause, NULL);
}

#ifdef LABKIT_TEST_BUILT_WITH_CUDA
#define GATE_ON_CUDA gate_wait_on_cuda
#else
#define GATE_ON_CUDA NULL
#endif

static const kernel_launchers gate_kernel = { "gate_kernel", gate_wait_on_sim, GATE_ON_CUDA };

static bool make_gate(void)
{
#ifdef LABKIT_TEST_BUILT_WITH_CUDA
    if (dev.kind == DEVICE_CUDA) return gate_make_on_cuda(&the_gate) != 0;
#endif
    the_gate.flags = the_gate.device_view = sim_gate_flags;
    return true;
}

static void free_gate(void)
{
#ifdef LABKIT_TEST_BUILT_WITH_CUDA
    if (dev.kind == DEVICE_CUDA) gate_free_on_cuda(&the_gate);
#endif
}

/* Holds the compute queue: once this returns, the queue is at the gate, and
 * what is queued there after it waits for open_gate(). */
static status close_gate(void)
{
    set_flag(the_gate.flags, GATE_OPEN, 0);
    set_flag(the_gate.flags, GATE_ENTERED, 0);
    const gate_args args = { the_gate.device_view };
    status s = device_launch(dev, &gate_kernel, &args, sizeof args);
    const double start = harness_seconds();
    const struct timespec pause = { 0, 100000 };
    while (s == STATUS_OK && !flag(the_gate.flags, GATE_ENTERED)) {
        if (harness_seconds() - start > WAIT_LIMIT_SECONDS)
            return fail(STATUS_BACKEND_FAILED, "the compute queue of %s did not reach the gate within %.0f s",
                        device_name(dev), WAIT_LIMIT_SECONDS);
        nanosleep(&pause, NULL);
    }
    return s;
}

static void open_gate(void) { set_flag(the_gate.flags, GATE_OPEN, 1); }

/* Whether e is reached within WAIT_LIMIT_SECONDS (polled: never a wait that cannot end). */
static bool reached_within_limit(const event *e)
{
    const double start = harness_seconds();
    const struct timespec pause = { 0, 200000 };
    while (!event_done(e)) {
        if (harness_seconds() - start > WAIT_LIMIT_SECONDS) return false;
        nanosleep(&pause, NULL);
    }
    return true;
}

static bool holds_a_queue(void)
{
    if (device_is_gpu(dev)) return true;
    harness_skip("the cpu's work runs at once: it has no queue to hold");
    return false;
}

/* A new tensor of n zeros, made before the copies that fill it. Its zeros are
 * written by the compute queue, which the copy queue does not wait for unless
 * told to (event_wait_on_device): here the host waits for them. */
static status zeros_made(tensor **out, int64_t n)
{
    status s = tensor_zeros(out, dev, shape1(n));
    return s == STATUS_OK ? device_synchronize(dev) : s;
}

/* ---- host data ------------------------------------------------------------ */

static float *pinned_filled(int64_t n, float value)
{
    float *p = host_alloc((size_t)n * sizeof(float), 1);
    for (int64_t i = 0; p && i < n; ++i) p[i] = value;
    return p;
}

/* What a test works on: n pinned host floats of one value, a device tensor of
 * n zeros for them, and two events. */
typedef struct fixture {
    int64_t n;
    float *host;
    tensor *x;
    event *first, *second;
} fixture;

static status fixture_make(fixture *f, int64_t n, float value)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    f->host = pinned_filled(n, value);
    if (!f->host) return fail(STATUS_OUT_OF_MEMORY, "no pinned host memory for %lld floats", (long long)n);
    status s = zeros_made(&f->x, n);
    if (s == STATUS_OK) s = event_create(&f->first, dev);
    if (s == STATUS_OK) s = event_create(&f->second, dev);
    return s;
}

/* Whatever a test left behind: the gate opened, the copy queue closed, both
 * queues drained, everything freed. */
static void fixture_free(fixture *f)
{
    open_gate();
    if (copy_queue_is_open(dev)) copy_queue_end(dev);
    device_synchronize(dev);
    event_destroy(f->first);
    event_destroy(f->second);
    tensor_free(f->x);
    host_free(f->host, 1);
    memset(f, 0, sizeof *f);
}

/* On the copy queue: a wait for `after` (NULL: none), the upload of f's host
 * values into f->x, then `done` recorded (NULL: none). */
static status upload_on_copy_queue(fixture *f, const event *after, event *done)
{
    status s = copy_queue_begin(dev);
    if (s != STATUS_OK) return s;
    if (after) s = event_wait_on_device(after);
    if (s == STATUS_OK) s = tensor_copy_from_host_async(f->x, f->host, f->n);
    if (s == STATUS_OK && done) s = event_record(done);
    const status closed = copy_queue_end(dev);
    return s == STATUS_OK ? closed : s;
}

/* Whether x holds `value` first and last (read blocking, after both queues). */
static bool holds(const fixture *f, float value)
{
    f->host[0] = f->host[f->n - 1] = -1.0f; /* so that a read that wrote nothing shows */
    return tensor_to_host(f->x, f->host, f->n) == STATUS_OK && f->host[0] == value &&
           f->host[f->n - 1] == value;
}

/* ============================================================================
 * the two queues run apart, and events order them
 * ========================================================================== */

/* The compute queue is held by the gate, a fill of x queued behind it; an
 * upload into x on the copy queue still arrives, and the fill, run when the
 * gate opens, overwrites it: the copy ran beside the compute queue, not in
 * its order (where it would have come after the fill). */
static void test_an_upload_on_the_copy_queue_arrives_while_the_compute_queue_is_held(void)
{
    if (!holds_a_queue()) return;
    fixture f;
    event *computed = NULL, *uploaded = NULL;
    REQUIRE_OK(fixture_make(&f, SMALL, 3.0f));
    computed = f.first, uploaded = f.second;
    REQUIRE_OK(close_gate());
    REQUIRE_OK(op_fill(f.x, 9.0f));
    REQUIRE_OK(event_record(computed));
    EXPECT_OK(upload_on_copy_queue(&f, NULL, uploaded));
    EXPECT_MSG(reached_within_limit(uploaded),
               "the upload on the copy queue did not arrive within %.0f s while the compute queue was held: "
               "it waited behind the compute queue",
               WAIT_LIMIT_SECONDS);
    EXPECT_MSG(!event_done(computed), "the compute queue passed its gate before it was opened");
    open_gate();
    EXPECT_OK(event_synchronize(computed));
    EXPECT_MSG(holds(&f, 9.0f),
               "x does not hold the 9s of the fill queued behind the gate, after an upload of 3s beside it: "
               "the upload ran after the fill, in the compute queue's order");
cleanup:
    fixture_free(&f);
}

/* A copy-queue upload that waits for an event after the gate does not start
 * until the gate opens. (Were the wait lost, the copy would be done long
 * before HELD_SECONDS; a loaded machine could at worst make this miss a lost
 * wait, never fail a kept one.) */
static void test_the_copy_queue_waits_on_the_device_for_an_event_of_the_compute_queue(void)
{
    if (!holds_a_queue()) return;
    fixture f;
    event *gate_passed = NULL, *uploaded = NULL;
    REQUIRE_OK(fixture_make(&f, SMALL, 5.0f));
    gate_passed = f.first, uploaded = f.second;
    REQUIRE_OK(close_gate());
    REQUIRE_OK(event_record(gate_passed));
    EXPECT_OK(upload_on_copy_queue(&f, gate_passed, uploaded));
    const struct timespec held = { 0, (long)(HELD_SECONDS * 1e9) };
    nanosleep(&held, NULL);
    EXPECT_MSG(!event_done(uploaded), "the copy ran while the compute queue was still before the event it "
                                      "waits for: event_wait_on_device was not kept");
    open_gate();
    EXPECT_MSG(reached_within_limit(uploaded), "the copy never ran after the gate opened");
    EXPECT(holds(&f, 5.0f));
cleanup:
    fixture_free(&f);
}

/* The compute queue's sum of x waits for x's upload on the copy queue: every
 * one of BIG ones is counted (a sum that ran beside the copy would miss some,
 * the copy being milliseconds long on a simulated GPU). The host waits once,
 * for the sum's value. Runs on the cpu too, where all of it happens at once. */
static void test_the_compute_queue_waits_on_the_device_for_the_upload_it_needs(void)
{
    fixture f;
    tensor *sum = NULL;
    event *gate_passed = NULL, *uploaded = NULL;
    device_counters c;
    REQUIRE_OK(fixture_make(&f, BIG, 1.0f));
    gate_passed = f.first, uploaded = f.second;
    REQUIRE_OK(zeros_made(&sum, 1));
    REQUIRE_OK(counters_reset(dev));
    if (device_is_gpu(dev)) REQUIRE_OK(close_gate()); /* the copy starts once the compute queue gets here */
    REQUIRE_OK(event_record(gate_passed));
    EXPECT_OK(upload_on_copy_queue(&f, gate_passed, uploaded));
    EXPECT_OK(event_wait_on_device(uploaded));
    EXPECT_OK(op_sum(f.x, sum));
    open_gate();
    float total = 0.0f;
    EXPECT_OK(tensor_item(sum, &total));
    EXPECT_MSG(total == (float)BIG, "the sum is %.0f, not %d: it ran before the upload it waits for was done",
               total, BIG);
    REQUIRE_OK(counters_read(dev, &c));
    const bool gpu = device_is_gpu(dev);
    EXPECT_EQ_I64(c.copy_queue_copies, 1);
    EXPECT_EQ_I64(gpu ? c.h2d_copies : c.d2d_copies, gpu ? 1 : 2); /* the cpu counts the read as a copy too */
    EXPECT_EQ_I64(c.queue_waits, 2);
    EXPECT_EQ_I64(c.syncs, gpu ? 1 : 0); /* the read alone: nothing else made the host wait */
cleanup:
    tensor_free(sum);
    fixture_free(&f);
}

/* device_synchronize and a blocking read wait for the copy queue too. */
static void test_a_synchronisation_waits_for_both_queues(void)
{
    fixture f;
    REQUIRE_OK(fixture_make(&f, BIG, 2.0f));
    EXPECT_OK(upload_on_copy_queue(&f, NULL, f.second));
    EXPECT_OK(device_synchronize(dev));
    EXPECT_MSG(event_done(f.second), "device_synchronize returned before the copy queue had drained");
    EXPECT(holds(&f, 2.0f));
cleanup:
    fixture_free(&f);
}

/* One round of the test below: the upload's end to the free's event, in ms. */
static bool free_during_upload(const float *host, event *gate_passed, event *copied, event *freed,
                               const device_counters *before, double *ms)
{
    tensor *x = NULL;
    device_counters after;
    bool ok = zeros_made(&x, BIG) == STATUS_OK && close_gate() == STATUS_OK &&
              event_record(gate_passed) == STATUS_OK;
    ok = ok && copy_queue_begin(dev) == STATUS_OK;
    ok = ok && event_wait_on_device(gate_passed) == STATUS_OK &&
         tensor_copy_from_host_async(x, host, BIG) == STATUS_OK && event_record(copied) == STATUS_OK;
    tensor_free(x); /* allowed while open, on both queues' terms */
    if (copy_queue_is_open(dev)) ok = copy_queue_end(dev) == STATUS_OK && ok;
    ok = ok && event_record(freed) == STATUS_OK && counters_read(dev, &after) == STATUS_OK;
    EXPECT_EQ_I64(after.memory_current, before->memory_current);
    open_gate();
    ok = device_synchronize(dev) == STATUS_OK && ok;
    return ok && event_elapsed_ms(copied, freed, ms) == STATUS_OK;
}

/* A tensor freed while an upload into it still waits on the copy queue: its
 * memory counts as free at once and goes back after the upload. The compute
 * queue gives it back, so an event recorded there after the free is stamped
 * after the event that ends the upload (on a simulated GPU a freed mapping is
 * kept for reuse: a copy into it would not crash, it would write into the next
 * tensor made there; under AddressSanitizer it would be reported). Memory
 * given back too early shows when the compute queue, let through the gate,
 * gets to the free before the copy queue, woken then, has copied 16 MiB: a
 * millisecond ahead, in every round seen; ROUNDS rounds for a busy machine. */
#define ROUNDS 4
static void test_a_tensor_freed_before_its_upload_ran_goes_back_after_it(void)
{
    if (!holds_a_queue()) return;
    float *host = pinned_filled(BIG, 7.0f);
    event *gate_passed = NULL, *copied = NULL, *freed = NULL;
    device_counters before;
    REQUIRE(host);
    REQUIRE_OK(event_create(&gate_passed, dev));
    REQUIRE_OK(event_create(&copied, dev));
    REQUIRE_OK(event_create(&freed, dev));
    REQUIRE_OK(device_synchronize(dev));
    REQUIRE_OK(counters_read(dev, &before));
    for (int round = 0; round < ROUNDS; ++round) {
        double ms = 0.0;
        if (!free_during_upload(host, gate_passed, copied, freed, &before, &ms)) {
            harness_fail(__FILE__, __LINE__, "round %d: %s", round, last_error());
            goto cleanup;
        }
        EXPECT_MSG(ms >= 0.0, "round %d: the memory went back %.3f ms before the upload into it had ended",
                   round, -ms);
    }
cleanup:
    open_gate();
    if (copy_queue_is_open(dev)) copy_queue_end(dev);
    device_synchronize(dev);
    event_destroy(gate_passed);
    event_destroy(copied);
    event_destroy(freed);
    host_free(host, 1);
}

/* An event on the copy queue and one on the compute queue are stamped on one
 * clock: their difference is a time, as between two of one queue. */
static void test_events_of_the_two_queues_measure_between_them(void)
{
    fixture f;
    event *before = NULL, *after = NULL;
    REQUIRE_OK(fixture_make(&f, SMALL, 1.0f));
    before = f.first, after = f.second;
    REQUIRE_OK(event_record(before));
    EXPECT_OK(upload_on_copy_queue(&f, before, after));
    EXPECT_OK(event_synchronize(after));
    double ms = -1.0;
    EXPECT_OK(event_elapsed_ms(before, after, &ms));
    EXPECT_MSG(ms >= 0.0, "%.4f ms from an event before the copy to one after it", ms);
cleanup:
    fixture_free(&f);
}

/* An event recorded on the compute queue, held by the gate, and then again on
 * the free copy queue is the copy queue's: reached at once, and stamped then,
 * not when the compute queue gets to its older record after the gate opens
 * (as a CUDA event is its last cudaEventRecord). */
static void test_an_event_recorded_again_on_the_other_queue_is_its_last_record(void)
{
    if (!holds_a_queue()) return;
    event *e = NULL, *after = NULL;
    REQUIRE_OK(event_create(&e, dev));
    REQUIRE_OK(event_create(&after, dev));
    REQUIRE_OK(close_gate());
    REQUIRE_OK(event_record(e));
    REQUIRE_OK(copy_queue_begin(dev));
    EXPECT_OK(event_record(e));
    EXPECT_OK(event_record(after));
    EXPECT_OK(copy_queue_end(dev));
    EXPECT_MSG(reached_within_limit(after), "the copy queue did not reach its event while the compute queue "
                                            "was held");
    EXPECT_MSG(event_done(e),
               "the event is not reached: its older record, behind the gate, was taken for it");
    const struct timespec held = { 0, (long)(HELD_SECONDS * 1e9) };
    nanosleep(&held, NULL); /* the older record is stamped this much later */
    open_gate();
    EXPECT_OK(device_synchronize(dev));
    double ms = -1.0;
    EXPECT_OK(event_elapsed_ms(e, after, &ms));
    EXPECT_MSG(ms >= 0.0,
               "%.3f ms from the event to the next one of the copy queue: its time is its older record's, "
               "on the compute queue",
               ms);
cleanup:
    open_gate();
    if (copy_queue_is_open(dev)) copy_queue_end(dev);
    device_synchronize(dev);
    event_destroy(e);
    event_destroy(after);
}

/* An event destroyed while its record still waits on the held copy queue: it
 * returns at once, as cudaEventDestroy does, and its memory goes back only
 * after the copy queue has stamped it (a stamp into freed memory is what
 * AddressSanitizer, in the suite's debug-asan run, and valgrind would report). */
static void test_an_event_destroyed_before_its_copy_queue_stamp_outlives_it(void)
{
    if (!holds_a_queue()) return;
    event *gate_passed = NULL, *e = NULL;
    REQUIRE_OK(event_create(&gate_passed, dev));
    REQUIRE_OK(event_create(&e, dev));
    REQUIRE_OK(close_gate());
    REQUIRE_OK(event_record(gate_passed));
    REQUIRE_OK(copy_queue_begin(dev));
    EXPECT_OK(event_wait_on_device(gate_passed));
    EXPECT_OK(event_record(e));
    EXPECT_OK(copy_queue_end(dev));
    EXPECT(!event_done(e));
    event_destroy(e);
    e = NULL;
    open_gate();
    EXPECT_OK(device_synchronize(dev));
cleanup:
    open_gate();
    if (copy_queue_is_open(dev)) copy_queue_end(dev);
    device_synchronize(dev);
    event_destroy(gate_passed);
    event_destroy(e);
}

/* ============================================================================
 * what the open copy queue takes, refuses and counts
 * ========================================================================== */

static void expect_refusal_names(const char *call)
{
    EXPECT_CONTAINS(last_error(), call);
    EXPECT_CONTAINS(last_error(), "copy queue is open");
    EXPECT_CONTAINS(last_error(), "copy_queue_end");
}

static void add_kernel_nothing(const void *args, void *stream) { (void)args, (void)stream; }

/* While open: uploads, events and frees are taken; everything that queues
 * other work or waits for the device is refused, names itself, does nothing. */
static void test_while_open_only_uploads_and_events_are_taken(void)
{
    float *host = pinned_filled(SMALL, 1.0f);
    int32_t labels[4] = { 1, 2, 3, 4 };
    tensor *x = NULL, *y = NULL, *one = NULL, *ints = NULL, *made = NULL, *spare = NULL;
    event *e = NULL;
    graph *g = NULL;
    float value = 0.0f;
    REQUIRE(host);
    REQUIRE_OK(zeros_made(&x, SMALL));
    REQUIRE_OK(zeros_made(&y, SMALL));
    REQUIRE_OK(zeros_made(&spare, SMALL));
    REQUIRE_OK(zeros_made(&one, 1));
    REQUIRE_OK(tensor_empty(&ints, dev, DTYPE_I32, shape1(4)));
    REQUIRE_OK(event_create(&e, dev));
    REQUIRE_OK(copy_queue_begin(dev));
    EXPECT(copy_queue_is_open(dev));
    /* taken */
    EXPECT_OK(tensor_copy_from_host_async(x, host, SMALL));
    EXPECT_OK(tensor_copy_from_host_async_i32(ints, labels, 4));
    EXPECT_OK(event_record(e));
    EXPECT_OK(event_wait_on_device(e));
    EXPECT_OK(event_synchronize(e)); /* waiting, queueing nothing */
    EXPECT_OK(device_synchronize(dev));
    tensor_free(spare);
    spare = NULL;
    /* refused, each naming itself */
    EXPECT_REFUSED(op_add(x, y, y), STATUS_BAD_ARGUMENT);
    expect_refusal_names("an operation");
    const kernel_launchers nothing = { "nothing", add_kernel_nothing, add_kernel_nothing };
    EXPECT_REFUSED(device_launch(dev, &nothing, NULL, 0), STATUS_BAD_ARGUMENT);
    expect_refusal_names("device_enqueue");
    EXPECT_REFUSED(tensor_zeros(&made, dev, shape1(4)), STATUS_BAD_ARGUMENT);
    expect_refusal_names("creates a tensor");
    EXPECT(made == NULL);
    EXPECT_REFUSED(tensor_copy_from_host(x, host, SMALL), STATUS_BAD_ARGUMENT);
    expect_refusal_names("tensor_copy_from_host");
    EXPECT_REFUSED(tensor_item(one, &value), STATUS_BAD_ARGUMENT);
    expect_refusal_names("tensor_item");
    EXPECT_REFUSED(tensor_to_host(x, host, SMALL), STATUS_BAD_ARGUMENT);
    expect_refusal_names("tensor_to_host");
    EXPECT_REFUSED(tensor_copy(y, x), STATUS_BAD_ARGUMENT);
    expect_refusal_names("tensor_copy");
    EXPECT_REFUSED(graph_begin_capture(dev), STATUS_BAD_ARGUMENT);
    expect_refusal_names("graph_begin_capture");
    EXPECT(!graph_capturing(dev));
    EXPECT_REFUSED(copy_queue_begin(dev), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "already open");
    EXPECT(copy_queue_is_open(dev)); /* still open: the refusals changed nothing */
    EXPECT_OK(copy_queue_end(dev));
    EXPECT(!copy_queue_is_open(dev));
    EXPECT_REFUSED(copy_queue_end(dev), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "not open");
    /* closed: the same calls work again, after the uploads (e follows them) */
    EXPECT_OK(event_wait_on_device(e));
    EXPECT_OK(op_add(x, y, y));
    float got[SMALL];
    EXPECT_OK(tensor_to_host(y, got, SMALL));
    EXPECT(got[0] == 1.0f && got[SMALL - 1] == 1.0f);
    /* a capture and the copy queue exclude each other */
    REQUIRE_OK(graph_begin_capture(dev));
    EXPECT_REFUSED(copy_queue_begin(dev), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "capturing");
    EXPECT_REFUSED(event_wait_on_device(e), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "event_wait_on_device");
    EXPECT_OK(graph_end_capture(dev, &g));
    EXPECT(!copy_queue_is_open(dev));
cleanup:
    if (graph_capturing(dev)) graph_end_capture(dev, &g);
    if (copy_queue_is_open(dev)) copy_queue_end(dev);
    graph_free(g);
    event_destroy(e);
    tensor_free(x);
    tensor_free(y);
    tensor_free(one);
    tensor_free(ints);
    tensor_free(spare);
    tensor_free(made);
    host_free(host, 1);
}

/* Bad arguments: a device that does not exist, an event never recorded. */
static void test_misuse_is_refused_with_what_to_do(void)
{
    event *never = NULL;
    const device absent = { DEVICE_SIM, LABKIT_MAX_SIM_DEVICES - 1 };
    EXPECT(copy_queue_begin(absent) != STATUS_OK);
    EXPECT(!copy_queue_is_open(absent));
    EXPECT(copy_queue_end(absent) != STATUS_OK);
    EXPECT_REFUSED(event_wait_on_device(NULL), STATUS_BAD_ARGUMENT);
    REQUIRE_OK(event_create(&never, dev));
    EXPECT_REFUSED(event_wait_on_device(never), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "never recorded");
cleanup:
    event_destroy(never);
}

/* One device's open copy queue leaves another device's work alone. */
static void test_an_open_copy_queue_leaves_the_other_device_alone(void)
{
    device other = dev;
    tensor *a = NULL;
    if (device_is_gpu(dev))
        REQUIRE(test_second_gpu(dev, &other));
    else
        REQUIRE_OK(device_parse("sim:0", &other)); /* CTest gives every test LABKIT_SIM_GPUS=2 */
    REQUIRE_OK(copy_queue_begin(dev));
    EXPECT(!copy_queue_is_open(other));
    EXPECT_OK(tensor_zeros(&a, other, shape1(8)));
    EXPECT_OK(op_add(a, a, a));
    EXPECT_OK(copy_queue_end(dev));
cleanup:
    if (copy_queue_is_open(dev)) copy_queue_end(dev);
    tensor_free(a);
}

int main(int argc, char **argv)
{
    const int found = test_device_argument(argc, argv, "DEVICE (cpu, sim:0, cuda:0)", &dev);
    if (found != 0) return found;
    if (!make_gate()) {
        fprintf(stderr, "test_copy_queue: no mapped pinned memory for the gate on %s\n", device_name(dev));
        return 1;
    }
    printf("the copy queue of %s\n", device_name(dev));
    RUN_TEST(test_an_upload_on_the_copy_queue_arrives_while_the_compute_queue_is_held);
    RUN_TEST(test_the_copy_queue_waits_on_the_device_for_an_event_of_the_compute_queue);
    RUN_TEST(test_the_compute_queue_waits_on_the_device_for_the_upload_it_needs);
    RUN_TEST(test_a_synchronisation_waits_for_both_queues);
    RUN_TEST(test_a_tensor_freed_before_its_upload_ran_goes_back_after_it);
    RUN_TEST(test_events_of_the_two_queues_measure_between_them);
    RUN_TEST(test_an_event_recorded_again_on_the_other_queue_is_its_last_record);
    RUN_TEST(test_an_event_destroyed_before_its_copy_queue_stamp_outlives_it);
    RUN_TEST(test_while_open_only_uploads_and_events_are_taken);
    RUN_TEST(test_misuse_is_refused_with_what_to_do);
    RUN_TEST(test_an_open_copy_queue_leaves_the_other_device_alone);
    free_gate();
    return harness_finish();
}
