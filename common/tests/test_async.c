/* test_async.c: a simulated GPU is asynchronous, and events time it honestly.
 *
 * Runs with LABKIT_SIM_GPUS=2 (set by CTest). The work is a few 1024x1024 matrix
 * products (2.1 GFLOP each), as many as it takes for at least 50 ms. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/device.h"
#include "labkit/event.h"
#include "labkit/ops.h"
#include "labkit/stats.h"
#include "labkit/tensor.h"
#include "labkit/timer.h"

#define N 1024                  /* the matrices are N x N */
#define MIN_WORK_SECONDS 0.050  /* the requirement's "at least 50 ms" */
#define MAX_MATMULS 256

static device cpu, sim0, sim1;

/* ============================================================================
 * the work: c = a b, repeated, with a = 0.5 and b = 0.25 everywhere, so that every
 * element of c is N/8 = 128 and sum(c) = 128 N^2 = 2^27 exactly
 * ========================================================================== */

typedef struct work {
    tensor *a, *b, *c; /* [N, N] */
    tensor *sum;       /* [1] */
    int matmuls;       /* how many products make at least MIN_WORK_SECONDS */
    double seconds;    /* their time, run and waited for */
} work;

static const float SUM_OF_C = 134217728.0f; /* 2^27 */

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

/* Makes the operands on d and finds how many products take MIN_WORK_SECONDS. */
static bool make_work(work *w, device d)
{
    memset(w, 0, sizeof *w);
    if (tensor_full(&w->a, d, shape2(N, N), 0.5f) != STATUS_OK ||
        tensor_full(&w->b, d, shape2(N, N), 0.25f) != STATUS_OK ||
        tensor_empty(&w->c, d, DTYPE_F32, shape2(N, N)) != STATUS_OK ||
        tensor_empty(&w->sum, d, DTYPE_F32, shape1(1)) != STATUS_OK ||
        queue_matmuls(w, 1) != STATUS_OK || device_synchronize(d) != STATUS_OK) {
        harness_fail(__FILE__, __LINE__, "making the work on %s: %s", device_name(d),
                     last_error());
        free_work(w);
        return false;
    }
    for (int count = 2; count <= MAX_MATMULS; count *= 2) {
        double t0 = wall_seconds();
        if (queue_matmuls(w, count) != STATUS_OK || device_synchronize(d) != STATUS_OK) {
            harness_fail(__FILE__, __LINE__, "timing the work: %s", last_error());
            free_work(w);
            return false;
        }
        double t = wall_seconds() - t0;
        if (t >= MIN_WORK_SECONDS) {
            w->matmuls = count;
            w->seconds = t;
            return true;
        }
    }
    harness_fail(__FILE__, __LINE__, "%d products of %dx%d matrices took less than %g s",
                 MAX_MATMULS, N, N, MIN_WORK_SECONDS);
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
    float value = NAN;
    REQUIRE(make_work(&w, sim0));
    REQUIRE_OK(event_create(&end, sim0));

    const double t0 = wall_seconds();
    REQUIRE_OK(op_fill(w.sum, NAN));
    REQUIRE_OK(queue_matmuls(&w, w.matmuls));
    REQUIRE_OK(op_sum(w.c, w.sum));
    REQUIRE_OK(event_record(end));
    const double t1 = wall_seconds();
    const bool done_at_launch = event_done(end);
    REQUIRE_OK(tensor_item(w.sum, &value));
    const double t2 = wall_seconds();

    printf("  %d products: launched in %.3f ms, read after %.1f ms (%.1f ms when waited for)\n",
           w.matmuls, 1e3 * (t1 - t0), 1e3 * (t2 - t0), 1e3 * w.seconds);
    EXPECT_MSG(t2 - t0 >= MIN_WORK_SECONDS, "the read returned after %.1f ms, before the "
               "work (%.1f ms when waited for) could have run", 1e3 * (t2 - t0), 1e3 * w.seconds);
    EXPECT_MSG(t1 - t0 < 0.1 * (t2 - t0), "launching took %.2f ms of the %.1f ms until the "
               "read returned: the launches did not return at once", 1e3 * (t1 - t0),
               1e3 * (t2 - t0));
    EXPECT_MSG(!done_at_launch, "the device had finished %.0f ms of work the moment the "
               "launches returned", 1e3 * w.seconds);
    EXPECT_MSG(event_done(end), "the read returned before the device reached the work's end");
    EXPECT_MSG(value == SUM_OF_C, "the read gave %.9g, want %.9g (the finished work's result)",
               (double)value, (double)SUM_OF_C);
cleanup:
    event_destroy(end);
    free_work(&w);
}

static void test_device_synchronize_waits_and_counts_one_sync(void)
{
    work w;
    event *end = NULL;
    device_counters c;
    REQUIRE(make_work(&w, sim0));
    REQUIRE_OK(event_create(&end, sim0));
    REQUIRE_OK(counters_reset(sim0));
    const double t0 = wall_seconds();
    REQUIRE_OK(queue_matmuls(&w, w.matmuls));
    REQUIRE_OK(event_record(end));
    REQUIRE_OK(device_synchronize(sim0));
    const double host_seconds = wall_seconds() - t0;
    EXPECT(event_done(end));
    REQUIRE_OK(counters_read(sim0, &c));
    EXPECT_EQ_I64(c.syncs, 1);
    /* the device was busy with the work, and not longer than the host waited */
    EXPECT_MSG(c.busy_seconds >= 0.5 * w.seconds && c.busy_seconds <= host_seconds + 1e-3,
               "busy %.1f ms for work of %.1f ms waited for in %.1f ms", 1e3 * c.busy_seconds,
               1e3 * w.seconds, 1e3 * host_seconds);

    REQUIRE_OK(event_synchronize(end));
    REQUIRE_OK(counters_read(sim0, &c));
    EXPECT_EQ_I64(c.syncs, 2);
cleanup:
    event_destroy(end);
    free_work(&w);
}

static void test_each_operation_counts_one_launch(void)
{
    const device devices[] = {cpu, sim0};
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
            harness_fail(__FILE__, __LINE__, "setting up on %s: %s", device_name(devices[k]),
                         last_error());
        }
        tensor_free(a);
        tensor_free(b);
        tensor_free(c);
    }
}

/* Each simulated GPU has its own queue: a read on sim:1 does not wait for sim:0. */
static void test_a_read_on_one_gpu_does_not_wait_for_another(void)
{
    work w;
    event *end0 = NULL;
    tensor *x = NULL;
    float value = 0.0f;
    REQUIRE(make_work(&w, sim0));
    REQUIRE_OK(tensor_full(&x, sim1, shape1(1), 4.0f));
    REQUIRE_OK(event_create(&end0, sim0));
    REQUIRE_OK(device_synchronize(sim1));

    REQUIRE_OK(queue_matmuls(&w, 2 * w.matmuls));
    REQUIRE_OK(event_record(end0));
    REQUIRE_OK(op_scale(x, 0.5f, x));
    REQUIRE_OK(tensor_item(x, &value));
    EXPECT(value == 2.0f);
    EXPECT_MSG(!event_done(end0), "the read on sim:1 waited for sim:0's %.0f ms of work",
               2e3 * w.seconds);
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
    REQUIRE(make_work(&w, sim0));
    REQUIRE_OK(queue_matmuls(&w, w.matmuls));
    tensor_free(w.a);
    tensor_free(w.b);
    w.a = w.b = NULL;
    REQUIRE_OK(op_sum(w.c, w.sum));
    REQUIRE_OK(tensor_item(w.sum, &value));
    EXPECT_MSG(value == SUM_OF_C, "sum of the product is %.9g, want %.9g", (double)value,
               (double)SUM_OF_C);
cleanup:
    free_work(&w);
}

/* ============================================================================
 * events
 * ========================================================================== */

static void test_events_are_ordered_and_cover_the_queued_work(void)
{
    work w;
    event *e0 = NULL, *e1 = NULL, *e2 = NULL;
    double ms01 = -1.0, ms12 = -1.0, ms02 = -1.0, early = -1.0;
    REQUIRE(make_work(&w, sim0));
    REQUIRE_OK(event_create(&e0, sim0));
    REQUIRE_OK(event_create(&e1, sim0));
    REQUIRE_OK(event_create(&e2, sim0));

    const double t0 = wall_seconds();
    REQUIRE_OK(event_record(e0));
    REQUIRE_OK(queue_matmuls(&w, w.matmuls));
    REQUIRE_OK(event_record(e1));
    REQUIRE_OK(queue_matmuls(&w, w.matmuls));
    REQUIRE_OK(event_record(e2));

    /* not there yet: NOT_READY with a hint to synchronize */
    EXPECT_REFUSED(event_elapsed_ms(e0, e2, &early), STATUS_NOT_READY);
    EXPECT_CONTAINS(last_error(), "synchron");

    REQUIRE_OK(event_synchronize(e2));
    const double host_ms = 1e3 * (wall_seconds() - t0);
    EXPECT(event_done(e0) && event_done(e1) && event_done(e2));
    EXPECT_OK(event_elapsed_ms(e0, e1, &ms01));
    EXPECT_OK(event_elapsed_ms(e1, e2, &ms12));
    EXPECT_OK(event_elapsed_ms(e0, e2, &ms02));
    printf("  e0->e1 %.1f ms, e1->e2 %.1f ms, e0->e2 %.1f ms; host waited %.1f ms; "
           "the work alone %.1f ms\n", ms01, ms12, ms02, host_ms, 1e3 * w.seconds);
    EXPECT(ms01 >= 0.0 && ms12 >= 0.0);
    EXPECT_NEAR(ms02, ms01 + ms12, 1e-3, 1e-9);
    /* stamped when the queue got there: each gap holds its work... */
    EXPECT_MSG(ms01 >= 0.5e3 * w.seconds && ms12 >= 0.5e3 * w.seconds,
               "gaps of %.1f and %.1f ms between events around work of %.1f ms each", ms01,
               ms12, 1e3 * w.seconds);
    /* ...and no more than the host saw pass */
    EXPECT_MSG(ms02 <= host_ms + 0.5, "%.1f ms between events, but the host waited %.1f ms",
               ms02, host_ms);
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

    const double before = wall_seconds();
    REQUIRE_OK(event_record(e0));
    EXPECT(event_done(e0));
    const double after_e0 = wall_seconds();
    for (int i = 0; i < 20; i++) REQUIRE_OK(op_matmul(a, false, b, false, NULL, c));
    const double before_e1 = wall_seconds();
    REQUIRE_OK(event_record(e1));
    const double after = wall_seconds();
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

static void test_events_refuse_mixed_devices_nulls_and_absent_devices(void)
{
    const device absent = {DEVICE_SIM, 7};
    event *on_cpu = NULL, *on_sim = NULL, *never = NULL, *bad = NULL;
    double ms = 0.0;
    REQUIRE_OK(event_create(&on_cpu, cpu));
    REQUIRE_OK(event_create(&on_sim, sim0));
    REQUIRE_OK(event_create(&never, sim0));
    REQUIRE_OK(event_record(on_cpu));
    REQUIRE_OK(event_record(on_sim));
    REQUIRE_OK(event_synchronize(on_sim));

    EXPECT_REFUSED(event_elapsed_ms(on_cpu, on_sim, &ms), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), "cpu");
    EXPECT_CONTAINS(last_error(), "sim:0");
    clear_error();
    status s = event_elapsed_ms(on_sim, never, &ms);
    EXPECT_MSG(s != STATUS_OK && last_error()[0] != '\0',
               "elapsed time to an event never recorded: %s \"%s\"", status_name(s),
               last_error());
    EXPECT_REFUSED(event_elapsed_ms(on_sim, on_sim, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_elapsed_ms(NULL, on_sim, &ms), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_record(NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_synchronize(NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_create(NULL, sim0), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(event_create(&bad, absent), STATUS_WRONG_DEVICE);
    EXPECT(bad == NULL);
    EXPECT(!event_done(NULL));
    event_destroy(NULL);

    /* an event against itself: zero */
    ms = -1.0;
    EXPECT_OK(event_elapsed_ms(on_sim, on_sim, &ms));
    EXPECT(ms == 0.0);
cleanup:
    event_destroy(on_cpu);
    event_destroy(on_sim);
    event_destroy(never);
    event_destroy(bad);
}

/* ============================================================================ */

int main(void)
{
    if (device_parse("sim:0", &sim0) != STATUS_OK || device_parse("sim:1", &sim1) != STATUS_OK) {
        fprintf(stderr, "test_async needs sim:0 and sim:1 (LABKIT_SIM_GPUS=2): %s\n",
                last_error());
        return 1;
    }
    cpu = device_cpu();

    RUN_TEST(test_launch_returns_at_once_and_a_host_read_waits_for_the_work);
    RUN_TEST(test_device_synchronize_waits_and_counts_one_sync);
    RUN_TEST(test_each_operation_counts_one_launch);
    RUN_TEST(test_a_read_on_one_gpu_does_not_wait_for_another);
    RUN_TEST(test_freeing_the_inputs_of_queued_work_is_safe);
    RUN_TEST(test_events_are_ordered_and_cover_the_queued_work);
    RUN_TEST(test_cpu_events_are_stamped_when_recorded);
    RUN_TEST(test_events_refuse_mixed_devices_nulls_and_absent_devices);
    return harness_finish();
}
