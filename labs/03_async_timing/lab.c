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
    /* TODO: your code here */
    (void)w, (void)seconds;
    return todo("step 1: lab_time_naive");
}

/* ==== Step 2: wait before you stop the clock (README, "Step 2") ============== */

/* Goal: the same measurement, made honest: the clock stops only once the
 * device has done the work. */
status lab_time_synchronized(workload *w, double *seconds)
{
    /* TODO: your code here */
    (void)w, (void)seconds;
    return todo("step 2: lab_time_synchronized");
}

/* ==== Step 3: read one value (README, "Step 3") ============================= */

/* Goal: the same, but what makes the host wait is reading the single value the
 * work produces (w->result) on the host, as printing a result does. Look up:
 * tensor_item (tensor.h). */
status lab_time_read_one(workload *w, double *seconds, float *value)
{
    /* TODO: your code here */
    (void)w, (void)seconds, (void)value;
    return todo("step 3: lab_time_read_one");
}

/* ==== Step 4: a benchmark that tells the truth (README, "Step 4") ============ */

/* Goal: the lesson's benchmark(): fill in every field of *out for one run of w
 * (lab.h says what each one is). The memory peak and the busy time must be
 * those of this run alone, and the events are gone when it returns, whatever
 * happened. Look up: event.h (all of it), counters_reset and counters_read
 * (counters.h). */
status lab_benchmark(workload *w, measurement *out)
{
    /* TODO: your code here */
    (void)w, (void)out;
    return todo("step 4: lab_benchmark");
}

/* ==== Step 5: the host keeps working (README, "Step 5") ===================== */

/* Goal: after queueing the work, keep the host busy with chunks of its own
 * work, host_work_chunk(state, HOST_WORK_STEPS), for exactly as long as the
 * device is still working on it, and count them. Never wait for the device:
 * ask. Look up: event_done (event.h), host_work_chunk (workloads.h). */
status lab_count_host_work(workload *w, int64_t *chunks)
{
    /* TODO: your code here */
    (void)w, (void)chunks;
    return todo("step 5: lab_count_host_work");
}

/* ==== Step 6: the utilisation illusion (README, "Step 6") ==================== */

/* Goal: the two numbers of the illusion from one measurement: the busy
 * fraction and the fraction of the peak (lab.h says which times to use).
 * Look up: device_get_properties (device.h). */
status lab_utilisation(const workload *w, const measurement *m, utilisation *out)
{
    /* TODO: your code here */
    (void)w, (void)m, (void)out;
    return todo("step 6: lab_utilisation");
}
