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
    /* TODO: your code here */
    (void)w, (void)seconds;
    return todo("step 1: lab_time_naive (README, \"Asynchronous execution\")");
}

/* ============================================================================
 * Step 2 (README, "Honest timing"): as step 1, but wait for the device before
 * you stop the clock. Moving one line is the whole fix.
 * ========================================================================== */
status lab_time_synchronized(workload *w, double *seconds)
{
    /* TODO: your code here */
    (void)w, (void)seconds;
    return todo("step 2: lab_time_synchronized (README, \"Honest timing\")");
}

/* ============================================================================
 * Step 3 (README, "Honest timing"): as step 1, but before you stop the clock
 * read the single value of w->result on the host (tensor_item). No explicit
 * synchronisation: the read waits for the work by itself.
 * ========================================================================== */
status lab_time_read_one(workload *w, double *seconds, float *value)
{
    /* TODO: your code here */
    (void)w, (void)seconds, (void)value;
    return todo("step 3: lab_time_read_one (README, \"Honest timing\")");
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
    /* TODO: your code here */
    (void)w, (void)out;
    return todo("step 4: lab_benchmark (README, \"A benchmark that tells the truth\")");
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
    /* TODO: your code here */
    (void)w, (void)chunks;
    return todo("step 5: lab_count_host_work (README, \"The host keeps working\")");
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
    /* TODO: your code here */
    (void)w, (void)m, (void)out;
    return todo("step 6: lab_utilisation (README, \"The utilisation illusion\")");
}
