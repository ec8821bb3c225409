/* test_async.c: a GPU, real or simulated, is asynchronous, and events time it
 * honestly: on the GPU given as argv[1], beside the CPU and a second GPU.
 *
 *   test_async sim:0 | cuda:0      (exits 77 when the device is absent)
 *
 * Runs with LABKIT_SIM_GPUS=2 (set by CTest): the second GPU is sim:1 beside
 * sim:0, and another real GPU or else sim:0 beside cuda:0 (harness.h).
 *
 * The work is sized by the device under test, not fixed: square matrix
 * products, the size doubled from 128 until one product keeps the device busy
 * for MIN_PRODUCT_SECONDS (1024 on two cores, 4096 on an H100), then as many of
 * them as make at least 50 ms with a margin. Each product is timed once, by
 * events: the device's own time, which no other program on the host disturbs.
 * A claim that a count or an event can prove is proved so; what compares with
 * the host's clock keeps wide margins. */
#include <math.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/device.h"
#include "labkit/event.h"
#include "labkit/kernel.h"
#include "labkit/ops.h"
#include "labkit/counters.h"
#include "labkit/tensor.h"

#define MAX_N 4096                /* the largest matrices, MAX_N x MAX_N (192 MiB for three) */
#define MIN_PRODUCT_SECONDS 0.002 /* the size grows until one product takes this long */
#define MIN_WORK_SECONDS 0.050    /* the requirement's "at least 50 ms" */

static device cpu, dev, peer; /* the GPU under test (argv[1]) and a second one */

/* ============================================================================
 * the work: c = a b, repeated, with a = 0.5 and b = 0.25 everywhere, so that every
 * element of c is n/8 and sum(c) = n^3/8 exactly (n a power of two).
 * ========================================================================== */

typedef struct work {
    int64_t n;         /* the matrices are n x n */
    tensor *a, *b, *c; /* [n, n] */
    tensor *sum;       /* [1] */
    int matmuls;       /* how many products make at least MIN_WORK_SECONDS */
    double seconds;    /* their time on the device, by events */
} work;

static float sum_of_c(const work *w) { return (float)(w->n * w->n * w->n / 8); }

static void free_work(work *w)
{
    tensor_free(w->a);
    tensor_free(w->b);
    tensor_free(w->c);
    tensor_free(w->sum);
    memset(w, 0, sizeof *w);
}

static status queue_matmuls(const work *w, int count)
{
    for (int i = 0; i < count; i++) {
        status s = op_matmul(w->a, false, w->b, false, NULL, w->c);
        if (s != STATUS_OK) return s;
    }
    return STATUS_OK;
}

/* The device's time for `count` products, by two events around them: the
 * quickest of `runs` runs (the first may pay for warming up; on a busy host a
 * simulated GPU's worker may lose its core in any one of them). */
static bool time_products(const work *w, device d, int count, int runs, double *seconds)
{
    event *e0 = NULL, *e1 = NULL;
    bool ok = event_create(&e0, d) == STATUS_OK && event_create(&e1, d) == STATUS_OK;
    *seconds = INFINITY;
    for (int run = 0; ok && run < runs; run++) {
        double ms = 0.0;
        ok = event_record(e0) == STATUS_OK && queue_matmuls(w, count) == STATUS_OK &&
             event_record(e1) == STATUS_OK && event_synchronize(e1) == STATUS_OK &&
             event_elapsed_ms(e0, e1, &ms) == STATUS_OK;
        if (ok && ms * 1e-3 < *seconds) *seconds = ms * 1e-3;
    }
    event_destroy(e0);
    event_destroy(e1);
    return ok;
}

/* Makes the operands on d: the smallest size of which one product takes
 * MIN_PRODUCT_SECONDS (MAX_N at most); then how many products make
 * MIN_WORK_SECONDS with a margin, from the device's time for a run of them as
 * long as that (one product alone says little on a busy host). The other
 * kernels the tests queue (fill, sum, scale) run once first, so that none is
 * loaded or warmed up while timed. */
static bool make_work(work *w, device d)
{
    memset(w, 0, sizeof *w);
    for (int64_t n = 128; n <= MAX_N; n *= 2) {
        const shape s = shape2(n, n);
        double one = 0.0;
        w->n = n;
        if (tensor_full(&w->a, d, s, 0.5f) != STATUS_OK || tensor_full(&w->b, d, s, 0.25f) != STATUS_OK ||
            tensor_empty(&w->c, d, DTYPE_F32, s) != STATUS_OK ||
            tensor_empty(&w->sum, d, DTYPE_F32, shape1(1)) != STATUS_OK ||
            op_fill(w->sum, 0.0f) != STATUS_OK || op_sum(w->a, w->sum) != STATUS_OK ||
            op_scale(w->sum, 1.0f, w->sum) != STATUS_OK || !time_products(w, d, 1, 7, &one))
            break;
        if (one < MIN_PRODUCT_SECONDS && n < MAX_N) {
            free_work(w);
            continue;
        }
        /* products in a run, until the run takes MIN_WORK_SECONDS */
        int count = (int)ceil(MIN_WORK_SECONDS / one);
        double run = 0.0;
        for (int attempt = 0; attempt < 8; attempt++) {
            if (count < 1) count = 1;
            if (!time_products(w, d, count, 2, &run)) break;
            if (run >= MIN_WORK_SECONDS) break;
            count = (int)ceil(count * fmax(2.0, 1.2 * MIN_WORK_SECONDS / fmax(run, 1e-6)));
        }
        if (!(run >= MIN_WORK_SECONDS)) break;
        w->matmuls = (int)ceil(1.5 * count * MIN_WORK_SECONDS / run); /* a margin */
        w->seconds = w->matmuls * run / count;
        printf("  work on %s: %d products of %lldx%lld, %.1f ms on the device\n", device_name(d), w->matmuls,
               (long long)n, (long long)n, 1e3 * w->seconds);
        return true;
    }
    harness_fail(__FILE__, __LINE__, "making the work on %s: %s", device_name(d), last_error());
    free_work(w);
    return false;
}

/* ============================================================================
 * asynchrony
 * ========================================================================== */

static void test_launch_returns_at_once_and_a_host_read_waits_for_the_work(void)
{
    work w;
    event *end = NULL;
    REQUIRE(make_work(&w, dev));
    REQUIRE_OK(event_create(&end, dev));
    /* more products until the work, as the read saw it, took at least 50 ms */
    bool measured = false;
    for (int count = w.matmuls, attempt = 0; attempt < 10 && !measured; attempt++, count *= 2) {
        float value = NAN;
        REQUIRE_OK(device_synchronize(dev));
        const double t0 = harness_seconds();
        REQUIRE_OK(op_fill(w.sum, NAN));
        REQUIRE_OK(queue_matmuls(&w, count));
        REQUIRE_OK(op_sum(w.c, w.sum));
        REQUIRE_OK(event_record(end));
        const double t1 = harness_seconds();
        const bool done_at_launch = event_done(end);
        REQUIRE_OK(tensor_item(w.sum, &value));
        const double t2 = harness_seconds();
        printf("  %d products of %lldx%lld: launched in %.3f ms, read after %.1f ms\n", count, (long long)w.n,
               (long long)w.n, 1e3 * (t1 - t0), 1e3 * (t2 - t0));
        if (t2 - t0 < MIN_WORK_SECONDS) continue;
        measured = true;
        /* Half, not a tenth: on a busy host the launching thread can lose its
         * core for a few ms; a launch that waited for its work takes it all. */
        EXPECT_MSG(t1 - t0 < 0.5 * (t2 - t0),
                   "launching took %.2f ms of the %.1f ms until the "
                   "read returned: the launches did not return at once",
                   1e3 * (t1 - t0), 1e3 * (t2 - t0));
        EXPECT_MSG(!done_at_launch,
                   "the device had finished %.0f ms of work the moment the "
                   "launches returned",
                   1e3 * (t2 - t0));
        EXPECT_MSG(event_done(end), "the read returned before the device reached the work's end");
        EXPECT_MSG(value == sum_of_c(&w),
                   "the read gave %.9g, want %.9g (the finished work's "
                   "result)",
                   (double)value, (double)sum_of_c(&w));
    }
    EXPECT_MSG(measured, "the work never took %g s", MIN_WORK_SECONDS);
cleanup:
    event_destroy(end);
    free_work(&w);
}

static void test_device_synchronize_waits_and_counts_one_sync(void)
{
    work w;
    event *start = NULL, *end = NULL;
    device_counters c;
    double ms = -1.0;
    REQUIRE(make_work(&w, dev));
    REQUIRE_OK(event_create(&start, dev));
    REQUIRE_OK(event_create(&end, dev));
    REQUIRE_OK(counters_reset(dev));
    const double t0 = harness_seconds();
    REQUIRE_OK(event_record(start));
    REQUIRE_OK(queue_matmuls(&w, w.matmuls));
    REQUIRE_OK(event_record(end));
    REQUIRE_OK(device_synchronize(dev));
    const double host_seconds = harness_seconds() - t0;
    EXPECT(event_done(end));
    REQUIRE_OK(counters_read(dev, &c));
    EXPECT_EQ_I64(c.syncs, 1);
    /* the device worked on it, by its events, and not longer than the host waited */
    EXPECT_OK(event_elapsed_ms(start, end, &ms));
    EXPECT_MSG(ms >= 0.5e3 * host_seconds && ms <= 1e3 * host_seconds + 1.0,
               "%.1f ms between the events while the host queued the work and waited %.1f ms for it", ms,
               1e3 * host_seconds);
    /* and by its busy time, where it is measured (simulated GPUs; 0 elsewhere) */
    if (dev.kind == DEVICE_SIM)
        EXPECT_MSG(c.busy_seconds >= 0.5 * host_seconds && c.busy_seconds <= host_seconds + 1e-3,
                   "busy %.1f ms while the host queued the work and waited %.1f ms for it",
                   1e3 * c.busy_seconds, 1e3 * host_seconds);
    else
        EXPECT(c.busy_seconds == 0.0);

    REQUIRE_OK(event_synchronize(end));
    REQUIRE_OK(counters_read(dev, &c));
    EXPECT_EQ_I64(c.syncs, 2);
cleanup:
    event_destroy(start);
    event_destroy(end);
    free_work(&w);
}

static void test_each_operation_counts_one_launch(void)
{
    const device devices[] = { cpu, dev };
    for (int k = 0; k < 2; k++) {
        tensor *a = NULL, *b = NULL, *c = NULL;
        device_counters counts;
        if (tensor_ones(&a, devices[k], shape2(37, 53)) == STATUS_OK &&
            tensor_ones(&b, devices[k], shape2(53, 29)) == STATUS_OK &&
            tensor_empty(&c, devices[k], DTYPE_F32, shape2(37, 29)) == STATUS_OK &&
            device_synchronize(devices[k]) == STATUS_OK && counters_reset(devices[k]) == STATUS_OK) {
            EXPECT_OK(op_fill(c, 1.0f));
            EXPECT_OK(op_scale(a, 2.0f, a));
            EXPECT_OK(op_matmul(a, false, b, false, NULL, c));
            EXPECT_OK(counters_read(devices[k], &counts));
            EXPECT_MSG(counts.launches == 3, "%s counted %llu launches for 3 operations",
                       device_name(devices[k]), (unsigned long long)counts.launches);
        } else {
            harness_fail(__FILE__, __LINE__, "setting up on %s: %s", device_name(devices[k]), last_error());
        }
        tensor_free(a);
        tensor_free(b);
        tensor_free(c);
    }
}

/* Each GPU has its own queue: a read on the second GPU does not wait for the
 * work queued on the first. */
static void test_a_read_on_one_gpu_does_not_wait_for_another(void)
{
    work w;
    event *end0 = NULL;
    tensor *x = NULL;
    float value = 0.0f;
    REQUIRE(make_work(&w, dev));
    REQUIRE_OK(tensor_full(&x, peer, shape1(1), 4.0f));
    REQUIRE_OK(event_create(&end0, dev));
    REQUIRE_OK(device_synchronize(peer));

    REQUIRE_OK(queue_matmuls(&w, 4 * w.matmuls));
    REQUIRE_OK(event_record(end0));
    REQUIRE_OK(op_scale(x, 0.5f, x));
    REQUIRE_OK(tensor_item(x, &value));
    EXPECT(value == 2.0f);
    EXPECT_MSG(!event_done(end0), "the read on %s waited for %s's %.0f ms of work", device_name(peer),
               device_name(dev), 4e3 * w.seconds);
    EXPECT_OK(event_synchronize(end0));
cleanup:
    event_destroy(end0);
    tensor_free(x);
    free_work(&w);
}

/* tensor.h: freed memory goes back in queue order, so queued work still finishes. */
static void test_freeing_the_inputs_of_queued_work_is_safe(void)
{
    work w;
    float value = NAN;
    device_counters before, after;
    REQUIRE(make_work(&w, dev));
    const size_t freed = tensor_bytes(w.a) + tensor_bytes(w.b);
    REQUIRE_OK(queue_matmuls(&w, 2 * w.matmuls));
    REQUIRE_OK(counters_read(dev, &before));
    tensor_free(w.a);
    tensor_free(w.b);
    w.a = w.b = NULL;
    /* the tensors are gone for the counters at once, busy device or not */
    REQUIRE_OK(counters_read(dev, &after));
    EXPECT_EQ_I64(after.memory_current, before.memory_current - freed);
    REQUIRE_OK(op_sum(w.c, w.sum));
    REQUIRE_OK(tensor_item(w.sum, &value));
    EXPECT_MSG(value == sum_of_c(&w), "sum of the product is %.9g, want %.9g", (double)value,
               (double)sum_of_c(&w));
cleanup:
    free_work(&w);
}

/* tensor.h: "Creating, copying and freeing follow the device's queue: on a GPU
 * (real or simulated) work is queued and calls return at once". */
static void test_creating_copying_within_and_freeing_on_a_busy_gpu_return_at_once(void)
{
    work w;
    event *end = NULL;
    tensor *z = NULL, *f = NULL, *e = NULL;
    float *got = NULL;
    REQUIRE(make_work(&w, dev));
    REQUIRE_OK(event_create(&end, dev));
    REQUIRE_OK(queue_matmuls(&w, 2 * w.matmuls));
    REQUIRE_OK(event_record(end));

    const double t0 = harness_seconds();
    REQUIRE_OK(tensor_zeros(&z, dev, shape2(37, 53)));
    REQUIRE_OK(tensor_full(&f, dev, shape2(37, 53), 2.5f));
    REQUIRE_OK(tensor_empty(&e, dev, DTYPE_F32, shape2(37, 53)));
    REQUIRE_OK(tensor_copy_slice(f, 0, z, 0, 5)); /* queued like an operation */
    tensor_free(e);
    e = NULL;
    const double t1 = harness_seconds();
    const bool done = event_done(end);
    EXPECT_MSG(!done && t1 - t0 < 0.1 * w.seconds,
               "creating, copying a slice and freeing took %.1f ms behind "
               "%.1f ms of queued work (finished: %s)",
               1e3 * (t1 - t0), 1e3 * w.seconds, done ? "yes" : "no");
    /* and they are what was asked, once read */
    REQUIRE((got = test_malloc(37 * 53 * sizeof(float))));
    REQUIRE_OK(tensor_to_host(f, got, 37 * 53));
    int64_t wrong = 0;
    for (int i = 0; i < 37 * 53; i++) wrong += got[i] != (i < 5 ? 0.0f : 2.5f);
    REQUIRE_OK(tensor_to_host(z, got, 37 * 53));
    for (int i = 0; i < 37 * 53; i++) wrong += got[i] != 0.0f;
    EXPECT_EQ_I64(wrong, 0);
cleanup:
    event_destroy(end);
    tensor_free(z);
    tensor_free(f);
    tensor_free(e);
    free(got);
    free_work(&w);
}

/* Copies from the host to a busy GPU are queued too; the host's data is taken at
 * the call, so the caller may reuse its buffer at once. */
static void test_uploads_to_a_busy_gpu_wait_for_its_queue_like_cudaMemcpy(void)
{
    const int64_t n = 37 * 53;
    work w;
    event *end = NULL;
    tensor *up = NULL, *on_cpu = NULL, *moved = NULL;
    float *host = NULL, *want = NULL, *got = NULL;
    REQUIRE((host = test_malloc((size_t)n * sizeof(float))));
    REQUIRE((want = test_malloc((size_t)n * sizeof(float))));
    REQUIRE((got = test_malloc((size_t)n * sizeof(float))));
    test_rng rng = test_rng_seeded(77);
    test_fill_nonzero(&rng, host, n, 0.1f, 1.0f);
    memcpy(want, host, (size_t)n * sizeof(float));
    REQUIRE_OK(tensor_from_host(&on_cpu, cpu, shape2(37, 53), host));
    REQUIRE(make_work(&w, dev));
    REQUIRE_OK(event_create(&end, dev));
    REQUIRE_OK(queue_matmuls(&w, 2 * w.matmuls));
    REQUIRE_OK(event_record(end));

    /* A copy from ordinary (pageable) host memory returns once it is done, after
     * the work queued before it, as cudaMemcpy does: so the queue has drained
     * when it returns, and the caller may reuse its buffer at once. */
    REQUIRE(!event_done(end));
    REQUIRE_OK(tensor_from_host(&up, dev, shape2(37, 53), host));
    EXPECT_MSG(event_done(end), "tensor_from_host returned before the work queued ahead of it had finished");
    REQUIRE_OK(tensor_to(on_cpu, dev, &moved));
    for (int64_t i = 0; i < n; i++) host[i] = -1.0f; /* the caller reuses its buffer */
    REQUIRE_OK(tensor_to_host(up, got, n));
    EXPECT_BITWISE_EQUAL("tensor_from_host onto a busy GPU", got, want, n);
    REQUIRE_OK(tensor_to_host(moved, got, n));
    EXPECT_BITWISE_EQUAL("tensor_to(cpu -> busy GPU)", got, want, n);

    /* Overwriting a tensor from the host waits the same way, and counts as one
     * host-to-device copy and one synchronisation. */
    REQUIRE_OK(queue_matmuls(&w, 2 * w.matmuls));
    REQUIRE_OK(event_record(end));
    REQUIRE_OK(counters_reset(dev));
    REQUIRE(!event_done(end));
    REQUIRE_OK(tensor_copy_from_host(up, host, n));
    EXPECT_MSG(event_done(end),
               "tensor_copy_from_host returned before the work queued ahead of it had finished");
    device_counters c;
    REQUIRE_OK(counters_read(dev, &c));
    EXPECT_EQ_I64((int64_t)c.h2d_copies, 1);
    EXPECT_EQ_I64((int64_t)c.h2d_bytes, n * 4);
    EXPECT_EQ_I64((int64_t)c.syncs, 1);
    for (int64_t i = 0; i < n; i++) host[i] = 7.0f; /* reused again */
    REQUIRE_OK(tensor_to_host(up, got, n));
    for (int64_t i = 0; i < n; i++) want[i] = -1.0f;
    EXPECT_BITWISE_EQUAL("tensor_copy_from_host onto a busy GPU", got, want, n);
cleanup:
    event_destroy(end);
    tensor_free(up);
    tensor_free(on_cpu);
    tensor_free(moved);
    free(host);
    free(want);
    free(got);
    free_work(&w);
}

/* The queued upload (non_blocking=True): it returns while the work ahead of it
 * is still running, copies no sooner than its turn comes (an operation queued
 * after it sees the new values), and is counted as one host-to-device copy and
 * no wait. From pinned memory, as tensor.h asks: from ordinary memory a real
 * GPU may make the host wait. */
static void test_a_queued_upload_returns_at_once_and_lands_in_queue_order(void)
{
    enum { N = 37 * 53 };
    work w;
    event *end = NULL;
    tensor *t = NULL;
    float *src = host_alloc(N * sizeof(float), 1), got[N];
    double want[N];
    REQUIRE(src != NULL);
    for (int i = 0; i < N; i++) src[i] = (float)(i % 97) - 48.0f;
    for (int i = 0; i < N; i++) want[i] = 2.0 * src[i];
    REQUIRE(make_work(&w, dev));
    REQUIRE_OK(tensor_full(&t, dev, shape2(37, 53), NAN));
    REQUIRE_OK(event_create(&end, dev));
    REQUIRE_OK(counters_reset(dev));
    REQUIRE_OK(queue_matmuls(&w, w.matmuls));
    REQUIRE_OK(event_record(end));
    REQUIRE_OK(tensor_copy_from_host_async(t, src, N));
    EXPECT_MSG(!event_done(end), "the queued upload waited for %.1f ms of work ahead of it", 1e3 * w.seconds);
    REQUIRE_OK(op_scale(t, 2.0f, t));
    device_counters c;
    REQUIRE_OK(counters_read(dev, &c));
    EXPECT_EQ_I64((int64_t)c.h2d_copies, 1);
    EXPECT_EQ_I64((int64_t)c.h2d_bytes, (int64_t)(N * sizeof(float)));
    EXPECT_EQ_I64((int64_t)c.syncs, 0);
    REQUIRE_OK(tensor_to_host(t, got, N)); /* src stays untouched until here */
    EXPECT_CLOSE("2 x the uploaded values", got, want, N, 0.0, 0.0);
    EXPECT_REFUSED(tensor_copy_from_host_async(t, src, N - 1), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "must match");
cleanup:
    event_destroy(end);
    tensor_free(t);
    host_free(src, 1);
    free_work(&w);
}

/* ============================================================================
 * events
 * ========================================================================== */

/* e0, work, e1 | e1 waited for | work, e2. The device was idle before e0 and each
 * wait returns as the device gets there, so each gap between events is close to
 * what the host saw: at least half of it (stamped when reached, not recorded),
 * at most all of it. */
static void test_events_are_ordered_and_cover_the_queued_work(void)
{
    work w;
    event *e0 = NULL, *e1 = NULL, *e2 = NULL;
    REQUIRE(make_work(&w, dev));
    REQUIRE_OK(event_create(&e0, dev));
    REQUIRE_OK(event_create(&e1, dev));
    REQUIRE_OK(event_create(&e2, dev));
    bool measured = false;
    for (int count = w.matmuls, attempt = 0; attempt < 10 && !measured; attempt++, count *= 2) {
        double ms01 = -1.0, ms12 = -1.0, ms02 = -1.0, early = -1.0;
        char early_message[512];
        REQUIRE_OK(device_synchronize(dev));
        const double t0 = harness_seconds();
        REQUIRE_OK(event_record(e0));
        REQUIRE_OK(queue_matmuls(&w, count));
        REQUIRE_OK(event_record(e1));
        clear_error();
        const status early_status = event_elapsed_ms(e0, e1, &early);
        snprintf(early_message, sizeof early_message, "%s", last_error());
        REQUIRE_OK(event_synchronize(e1));
        const double t1 = harness_seconds();
        REQUIRE_OK(queue_matmuls(&w, count));
        REQUIRE_OK(event_record(e2));
        REQUIRE_OK(event_synchronize(e2));
        const double t2 = harness_seconds();
        if (t1 - t0 < MIN_WORK_SECONDS || t2 - t1 < MIN_WORK_SECONDS) continue; /* more work */
        measured = true;

        /* asked before the device got there: NOT_READY, with a hint to synchronize */
        EXPECT_MSG(early_status == STATUS_NOT_READY,
                   "elapsed time asked %.0f ms before the "
                   "end event was reached: %s, want STATUS_NOT_READY",
                   1e3 * (t1 - t0), status_name(early_status));
        EXPECT_CONTAINS(early_message, "synchron");

        EXPECT(event_done(e0) && event_done(e1) && event_done(e2));
        EXPECT_OK(event_elapsed_ms(e0, e1, &ms01));
        EXPECT_OK(event_elapsed_ms(e1, e2, &ms12));
        EXPECT_OK(event_elapsed_ms(e0, e2, &ms02));
        const double host01 = 1e3 * (t1 - t0), host12 = 1e3 * (t2 - t1);
        printf("  e0->e1 %.1f ms (host %.1f), e1->e2 %.1f ms (host %.1f), e0->e2 %.1f ms\n", ms01, host01,
               ms12, host12, ms02);
        EXPECT_MSG(ms01 >= 0.5 * host01 && ms01 <= host01 + 0.5,
                   "%.1f ms between e0 and e1; the host saw %.1f ms", ms01, host01);
        EXPECT_MSG(ms12 >= 0.5 * host12 && ms12 <= host01 + host12 + 0.5,
                   "%.1f ms between e1 and e2; the host saw %.1f ms of work", ms12, host12);
        EXPECT_NEAR(ms02, ms01 + ms12, 1e-3, 1e-9);
    }
    EXPECT_MSG(measured, "the work never took %g s", MIN_WORK_SECONDS);
cleanup:
    event_destroy(e0);
    event_destroy(e1);
    event_destroy(e2);
    free_work(&w);
}

/* On the CPU work runs at once: an event is stamped when recorded. */
static void test_cpu_events_are_stamped_when_recorded(void)
{
    tensor *a = NULL, *b = NULL, *c = NULL;
    event *e0 = NULL, *e1 = NULL;
    double ms = -1.0;
    REQUIRE_OK(tensor_full(&a, cpu, shape2(256, 256), 0.5f));
    REQUIRE_OK(tensor_full(&b, cpu, shape2(256, 256), 0.25f));
    REQUIRE_OK(tensor_empty(&c, cpu, DTYPE_F32, shape2(256, 256)));
    REQUIRE_OK(event_create(&e0, cpu));
    REQUIRE_OK(event_create(&e1, cpu));

    const double before = harness_seconds();
    REQUIRE_OK(event_record(e0));
    EXPECT(event_done(e0));
    const double after_e0 = harness_seconds();
    for (int i = 0; i < 20; i++) REQUIRE_OK(op_matmul(a, false, b, false, NULL, c));
    const double before_e1 = harness_seconds();
    REQUIRE_OK(event_record(e1));
    const double after = harness_seconds();
    EXPECT(event_done(e1));
    EXPECT_OK(event_elapsed_ms(e0, e1, &ms)); /* no synchronize needed */
    EXPECT_MSG(ms >= 1e3 * (before_e1 - after_e0) - 0.05 && ms <= 1e3 * (after - before) + 0.05,
               "%.3f ms between the CPU events; the host saw between %.3f and %.3f ms", ms,
               1e3 * (before_e1 - after_e0), 1e3 * (after - before));
cleanup:
    event_destroy(e0);
    event_destroy(e1);
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
}

/* Work that holds the simulated GPU's worker until the test lets it go (or 10
 * seconds have passed, which the test then reports). */
static atomic_bool let_go, held_too_long;

static void hold_the_worker(const void *args, void *stream)
{
    (void)args, (void)stream;
    int waited_ms = 0;
    while (!atomic_load(&let_go) && waited_ms < 10000) usleep(1000), ++waited_ms;
    atomic_store(&held_too_long, !atomic_load(&let_go));
}

/* cudaEventDestroy returns at once even before the device reaches the event.
 * A destroy that waited for the stamp would hide a timing loop that destroys
 * its events too early: here it would wait for work that only ends once it
 * has returned. (On a real GPU queued host work cannot hold the stream: CUDA's
 * own behaviour is not the kit's to test.) */
static void test_destroying_an_event_not_yet_reached_returns_at_once(void)
{
    if (dev.kind != DEVICE_SIM) {
        harness_skip("tested on a simulated GPU: its worker can be held by the test");
        return;
    }
    event *e = NULL;
    atomic_store(&let_go, false);
    atomic_store(&held_too_long, false);
    REQUIRE_OK(device_enqueue(dev, hold_the_worker, NULL, 0));
    REQUIRE_OK(event_create(&e, dev));
    REQUIRE_OK(event_record(e));
    event_destroy(e); /* the worker is still held: the event is not stamped yet */
    e = NULL;
    atomic_store(&let_go, true);
    REQUIRE_OK(device_synchronize(dev));
    EXPECT_MSG(!atomic_load(&held_too_long),
               "event_destroy waited for the device to reach the event (the worker was held 10 s)");
cleanup:
    atomic_store(&let_go, true);
    event_destroy(e);
    device_synchronize(dev);
}

/* Like a CUDA event, an event holds a resource until it is destroyed: the
 * counters say how many are alive on each device, and a reset keeps that. */
static void test_live_events_are_counted_until_destroyed(void)
{
    const device both[2] = { cpu, dev };
    event *e0 = NULL, *e1 = NULL;
    for (int i = 0; i < 2; i++) {
        const device d = both[i];
        device_counters c;
        REQUIRE_OK(counters_read(d, &c));
        const unsigned long long alive = c.events;
        REQUIRE_OK(event_create(&e0, d));
        REQUIRE_OK(event_create(&e1, d));
        REQUIRE_OK(event_record(e0));
        REQUIRE_OK(counters_reset(d));
        REQUIRE_OK(counters_read(d, &c));
        EXPECT_MSG(c.events == alive + 2,
                   "%s: %llu events alive after creating 2 and a reset (expected %llu)", device_name(d),
                   (unsigned long long)c.events, alive + 2);
        event_destroy(e0);
        e0 = NULL;
        REQUIRE_OK(counters_read(d, &c));
        EXPECT_MSG(c.events == alive + 1, "%s: %llu events alive after destroying 1 (expected %llu)",
                   device_name(d), (unsigned long long)c.events, alive + 1);
        event_destroy(e1);
        e1 = NULL;
        REQUIRE_OK(counters_read(d, &c));
        EXPECT_MSG(c.events == alive, "%s: %llu events alive after destroying both (expected %llu)",
                   device_name(d), (unsigned long long)c.events, alive);
    }
cleanup:
    event_destroy(e0);
    event_destroy(e1);
}

static void test_events_refuse_mixed_devices_nulls_and_absent_devices(void)
{
    const device absent = { DEVICE_SIM, 7 };
    event *on_cpu = NULL, *on_dev = NULL, *on_peer = NULL, *never = NULL, *bad = NULL;
    double ms = 0.0;
    REQUIRE_OK(event_create(&on_cpu, cpu));
    REQUIRE_OK(event_create(&on_dev, dev));
    REQUIRE_OK(event_create(&on_peer, peer));
    REQUIRE_OK(event_create(&never, dev));
    REQUIRE_OK(event_record(on_cpu));
    REQUIRE_OK(event_record(on_dev));
    REQUIRE_OK(event_record(on_peer));
    REQUIRE_OK(event_synchronize(on_dev));
    REQUIRE_OK(event_synchronize(on_peer));

    EXPECT_REFUSED(event_elapsed_ms(on_cpu, on_dev, &ms), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), "cpu");
    EXPECT_CONTAINS(last_error(), device_name(dev));
    EXPECT_REFUSED(event_elapsed_ms(on_dev, on_peer, &ms), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), device_name(dev));
    EXPECT_CONTAINS(last_error(), device_name(peer));
    clear_error();
    status s = event_elapsed_ms(on_dev, never, &ms);
    EXPECT_MSG(s != STATUS_OK && last_error()[0] != '\0',
               "elapsed time to an event never recorded: %s \"%s\"", status_name(s), last_error());
    EXPECT_REFUSED(event_elapsed_ms(on_dev, on_dev, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_elapsed_ms(NULL, on_dev, &ms), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_record(NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_synchronize(NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_create(NULL, dev), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_create(&bad, absent), STATUS_WRONG_DEVICE);
    EXPECT(bad == NULL);
    EXPECT(!event_done(NULL));
    event_destroy(NULL);

    /* an event against itself: zero */
    ms = -1.0;
    EXPECT_OK(event_elapsed_ms(on_dev, on_dev, &ms));
    EXPECT(ms == 0.0);
cleanup:
    event_destroy(on_cpu);
    event_destroy(on_dev);
    event_destroy(on_peer);
    event_destroy(never);
    event_destroy(bad);
}

/* ============================================================================ */

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "GPU   (sim:0, cuda:0, ...)", &dev);
    if (rc != 0) return rc;
    cpu = device_cpu();
    if (!device_is_gpu(dev)) {
        fprintf(stderr, "test_async tests a GPU, not %s\n", device_name(dev));
        return 2;
    }
    if (!test_second_gpu(dev, &peer)) {
        fprintf(stderr, "test_async needs a second GPU beside %s: run it with LABKIT_SIM_GPUS=2\n",
                device_name(dev));
        return 1;
    }
    printf("testing asynchrony on %s, beside cpu and %s\n", device_name(dev), device_name(peer));

    RUN_TEST(test_launch_returns_at_once_and_a_host_read_waits_for_the_work);
    RUN_TEST(test_device_synchronize_waits_and_counts_one_sync);
    RUN_TEST(test_each_operation_counts_one_launch);
    RUN_TEST(test_a_read_on_one_gpu_does_not_wait_for_another);
    RUN_TEST(test_freeing_the_inputs_of_queued_work_is_safe);
    RUN_TEST(test_creating_copying_within_and_freeing_on_a_busy_gpu_return_at_once);
    RUN_TEST(test_uploads_to_a_busy_gpu_wait_for_its_queue_like_cudaMemcpy);
    RUN_TEST(test_a_queued_upload_returns_at_once_and_lands_in_queue_order);
    RUN_TEST(test_events_are_ordered_and_cover_the_queued_work);
    RUN_TEST(test_cpu_events_are_stamped_when_recorded);
    RUN_TEST(test_events_refuse_mixed_devices_nulls_and_absent_devices);
    RUN_TEST(test_live_events_are_counted_until_destroyed);
    RUN_TEST(test_destroying_an_event_not_yet_reached_returns_at_once);
    return harness_finish();
}
