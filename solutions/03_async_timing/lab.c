/* lab.c: your work for lab 03, asynchronous execution and honest timing.
 *
 * Each function is a step of README.md, in order; lab.h says what each returns.
 * Run `./lab check 03` after each step: it names the next one to do. */
#include "lab.h"

/* ============================================================================
 * Step 1 (README, "Asynchronous execution"): time w->run(w) with the host clock
 * (wall_seconds) and nothing else, as the lesson's first cell does. Stop the
 * clock as soon as run() returns. Only then, outside the measurement, wait for
 * the device (device_synchronize(w->dev)), so that the next measurement starts
 * with an idle device.
 * ========================================================================== */
status lab_time_naive(workload *w, double *seconds)
{
    const double start = wall_seconds();
    status s = w->run(w);
    *seconds = wall_seconds() - start; /* the work may still be queued here */
    if (s == STATUS_OK) s = device_synchronize(w->dev);
    return s;
}

/* ============================================================================
 * Step 2 (README, "Honest timing"): as step 1, but wait for the device before
 * you stop the clock. Moving one line is the whole fix.
 * ========================================================================== */
status lab_time_synchronized(workload *w, double *seconds)
{
    const double start = wall_seconds();
    status s = w->run(w);
    if (s == STATUS_OK) s = device_synchronize(w->dev); /* until the queue is empty */
    *seconds = wall_seconds() - start;
    return s;
}

/* ============================================================================
 * Step 3 (README, "Honest timing"): as step 1, but before you stop the clock
 * read the single value of w->result on the host (tensor_item). No explicit
 * synchronisation: the read waits for the work by itself.
 * ========================================================================== */
status lab_time_read_one(workload *w, double *seconds, float *value)
{
    const double start = wall_seconds();
    status s = w->run(w);
    if (s == STATUS_OK) s = tensor_item(w->result, value); /* blocks until written */
    *seconds = wall_seconds() - start;
    return s;
}

/* ============================================================================
 * Step 4 (README, "A benchmark that tells the truth"): the lesson's benchmark().
 * Create two events on w->dev (event_create) and reset the device's counters
 * (counters_reset: the memory peak restarts from what is in use now). Start the
 * host clock, record the start event, run the workload, note launch_seconds,
 * record the end event, wait for it (event_synchronize), note host_seconds.
 * Then device_seconds from event_elapsed_ms (it gives milliseconds), and
 * peak_bytes (memory_peak) and busy_seconds from counters_read. Destroy the
 * events whatever happened.
 * ========================================================================== */
status lab_benchmark(workload *w, measurement *out)
{
    event *start = NULL, *end = NULL;
    device_counters counters;
    double ms = 0.0;
    *out = (measurement){ 0 };

    status s = event_create(&start, w->dev);
    if (s == STATUS_OK) s = event_create(&end, w->dev);
    if (s == STATUS_OK) s = counters_reset(w->dev);
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
    event_destroy(start);
    event_destroy(end);
    return s;
}

/* ============================================================================
 * Step 5 (README, "The host keeps working"): create an event, run the workload
 * and record the event after it. Then, while the device has not reached the
 * event (event_done never blocks), do one chunk of host work,
 *     state = host_work_chunk(state, HOST_WORK_STEPS);
 * and count it. Destroy the event at the end.
 * ========================================================================== */
status lab_count_host_work(workload *w, int64_t *chunks)
{
    event *done = NULL;
    uint64_t state = 1;
    *chunks = 0;

    status s = event_create(&done, w->dev);
    if (s == STATUS_OK) s = w->run(w);
    if (s == STATUS_OK) s = event_record(done);
    while (s == STATUS_OK && !event_done(done)) {
        state = host_work_chunk(state, HOST_WORK_STEPS); /* the host's own work */
        ++*chunks;
    }
    event_destroy(done);
    return s;
}

/* ============================================================================
 * Step 6 (README, "The utilisation illusion"): the busy fraction is the time the
 * device was busy over m->host_seconds: m->busy_seconds where the device counts
 * it (a simulated GPU), otherwise m->device_seconds, the events' span (what a
 * meter such as nvidia-smi sees at best). The achieved rate is w->flops over
 * m->host_seconds, in GFLOP/s; the peak is device_get_properties' peak_gflops.
 * ========================================================================== */
status lab_utilisation(const workload *w, const measurement *m, utilisation *out)
{
    device_properties props;
    *out = (utilisation){ 0 };
    if (m->host_seconds <= 0.0)
        return fail(STATUS_BAD_ARGUMENT, "lab_utilisation: host_seconds is %g; measure first",
                    m->host_seconds);
    status s = device_get_properties(w->dev, &props);
    if (s != STATUS_OK) return s;
    const double busy = m->busy_seconds > 0.0 ? m->busy_seconds : m->device_seconds;
    out->busy_fraction = busy / m->host_seconds;
    out->achieved_gflops = w->flops / m->host_seconds / 1e9;
    out->peak_gflops = props.peak_gflops;
    out->peak_fraction = props.peak_gflops > 0.0 ? out->achieved_gflops / props.peak_gflops : 0.0;
    return STATUS_OK;
}
