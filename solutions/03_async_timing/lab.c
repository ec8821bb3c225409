/* lab.c: your work for lab 03, asynchronous execution and honest timing.
 *
 * Each function is a step of README.md, in order; lab.h says what each one
 * returns. After each step, `./lab check 03` says what holds and what to do
 * next; `./lab hint 03` gives a nudge. */
#include "lab.h"

/* ==== Step 1: the naive clock (README, "Step 1") ============================ */

/* Goal: how long w->run(w) takes by the host's clock alone, as the lesson's
 * first timing measures it; then, outside the measurement, let the device
 * finish. Look up: wall_seconds (timer.h), device_synchronize (device.h). */
status lab_time_naive(workload *w, double *seconds)
{
    const double start = wall_seconds();
    status s = w->run(w);
    *seconds = wall_seconds() - start;                  /* the work may still be queued here */
    if (s == STATUS_OK) s = device_synchronize(w->dev); /* outside the measurement */
    return s;
}

/* ==== Step 2: wait before you stop the clock (README, "Step 2") ============== */

/* Goal: the same measurement, made honest: the clock stops only once the
 * device has done the work. */
status lab_time_synchronized(workload *w, double *seconds)
{
    const double start = wall_seconds();
    status s = w->run(w);
    if (s == STATUS_OK) s = device_synchronize(w->dev); /* until the queue is empty */
    *seconds = wall_seconds() - start;
    return s;
}

/* ==== Step 3: read one value (README, "Step 3") ============================= */

/* Goal: the same, but what makes the host wait is reading the single value the
 * work produces (w->result) on the host, as printing a result does. Look up:
 * tensor_item (tensor.h). */
status lab_time_read_one(workload *w, double *seconds, float *value)
{
    const double start = wall_seconds();
    status s = w->run(w);
    if (s == STATUS_OK) s = tensor_item(w->result, value); /* waits until the value is written */
    *seconds = wall_seconds() - start;
    return s;
}

/* ==== Step 4: a benchmark that tells the truth (README, "Step 4") ============ */

/* Goal: the lesson's benchmark(): fill in every field of *out for one run of w
 * (lab.h says what each one is). The memory peak and the busy time must be
 * those of this run alone, and the events are gone when it returns, whatever
 * happened. Look up: event.h (all of it), counters_reset and counters_read
 * (counters.h). */
status lab_benchmark(workload *w, measurement *out)
{
    event *start = NULL, *end = NULL;
    device_counters counters;
    double ms = 0.0;
    *out = (measurement){ 0 };

    status s = event_create(&start, w->dev);
    if (s == STATUS_OK) s = event_create(&end, w->dev);
    if (s == STATUS_OK) s = counters_reset(w->dev); /* the peak and busy time of this run only */
    const double t0 = wall_seconds();
    if (s == STATUS_OK) s = event_record(start);
    if (s == STATUS_OK) s = w->run(w);
    out->launch_seconds = wall_seconds() - t0; /* what the naive clock says */
    if (s == STATUS_OK) s = event_record(end);
    if (s == STATUS_OK) s = event_synchronize(end); /* the device reached the end */
    out->host_seconds = wall_seconds() - t0;
    if (s == STATUS_OK) s = event_elapsed_ms(start, end, &ms);
    out->device_seconds = ms / 1e3;
    if (s == STATUS_OK) s = counters_read(w->dev, &counters);
    if (s == STATUS_OK) {
        out->peak_bytes = counters.memory_peak;
        out->busy_seconds = counters.busy_seconds;
    }
    event_destroy(start); /* whatever happened; destroying NULL does nothing */
    event_destroy(end);
    return s;
}

/* ==== Step 5: the host keeps working (README, "Step 5") ===================== */

/* Goal: after queueing the work, keep the host busy with chunks of its own
 * work, host_work_chunk(state, HOST_WORK_STEPS), for exactly as long as the
 * device is still working on it, and count them. Never wait for the device:
 * ask. Look up: event_done (event.h), host_work_chunk (workloads.h). */
status lab_count_host_work(workload *w, int64_t *chunks)
{
    event *done = NULL;
    uint64_t state = 1;
    *chunks = 0;

    status s = event_create(&done, w->dev);
    if (s == STATUS_OK) s = w->run(w);
    if (s == STATUS_OK) s = event_record(done); /* after the work: reached when it is done */
    while (s == STATUS_OK && !event_done(done)) {
        state = host_work_chunk(state, HOST_WORK_STEPS); /* the host's own work */
        ++*chunks;
    }
    event_destroy(done);
    return s;
}

/* ==== Step 6: the utilisation illusion (README, "Step 6") ==================== */

/* Goal: the two numbers of the illusion from one measurement: the busy
 * fraction and the fraction of the peak (lab.h says which times to use).
 * Look up: device_get_properties (device.h). */
status lab_utilisation(const workload *w, const measurement *m, utilisation *out)
{
    device_properties props;
    *out = (utilisation){ 0 };
    if (!(m->host_seconds > 0.0))
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_utilisation: host_seconds is %g; measure with lab_benchmark first", m->host_seconds);
    status s = device_get_properties(w->dev, &props);
    if (s != STATUS_OK) return s;
    const double busy = m->busy_seconds > 0.0 ? m->busy_seconds : m->device_seconds;
    out->busy_fraction = busy / m->host_seconds;
    out->achieved_gflops = w->flops / m->host_seconds / 1e9;
    out->peak_gflops = props.peak_gflops;
    out->peak_fraction = props.peak_gflops > 0.0 ? out->achieved_gflops / props.peak_gflops : 0.0;
    return STATUS_OK;
}
