/* lab.h: what you write in lab 03 (asynchronous execution and honest timing).
 *
 * Each function is one step of README.md; labs/03_async_timing/lab.c holds them.
 * They all measure a workload (workloads.h, given): some device work that
 * w->run(w) queues. Every function returns STATUS_OK, or the status of the
 * first call that failed. The clocks of steps 1 to 3 write *seconds in any
 * case: when a call fails, the time until it returned. */
#ifndef LAB03_LAB_H
#define LAB03_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "labkit/labkit.h"
#include "workloads.h"

/* ==== Step 1: the naive clock (README, "Step 1") ============================ */

/* The lesson's first timing: *seconds is the host clock (wall_seconds) around
 * w->run(w) and nothing else. Afterwards, outside the measurement, it waits
 * for the device, so that the next measurement starts with an idle device. */
status lab_time_naive(workload *w, double *seconds);

/* ==== Step 2: wait before you stop the clock (README, "Step 2") ============== */

/* The same, but the clock stops only after the device has finished the work. */
status lab_time_synchronized(workload *w, double *seconds);

/* ==== Step 3: read one value (README, "Step 3") ============================= */

/* The same, but the clock stops after reading, on the host, the one value that
 * w->result holds; *value is that value. The read is the only wait. */
status lab_time_read_one(workload *w, double *seconds, float *value);

/* ==== Step 4: a benchmark that tells the truth (README, "Step 4") ============ */

/* What the lesson's benchmark() reports about one run of a workload. */
typedef struct measurement {
    double launch_seconds; /* host clock when run() returned: the lesson's t_cpu */
    double host_seconds;   /* host clock once the device had reached the end event */
    double device_seconds; /* between two events around the work: the device's time */
    double busy_seconds;   /* the device's busy time, from its counters (simulated GPUs; else 0) */
    size_t peak_bytes;     /* the most device memory in use during the run */
} measurement;

/* The lesson's benchmark(): one run of w timed by the host clock and by two
 * events around it, with the device's memory peak and busy time over that run.
 * Every event it makes, it destroys, also when a later call fails (the second
 * event_create, say). */
status lab_benchmark(workload *w, measurement *out);

/* ==== Step 5: the host keeps working (README, "Step 5") ===================== */

/* Runs w, then does chunks of independent host work (host_work_chunk,
 * HOST_WORK_STEPS steps each) until the device has done that work, without ever
 * waiting for it; *chunks is how many chunks fitted in. */
status lab_count_host_work(workload *w, int64_t *chunks);

/* ==== Step 6: the utilisation illusion (README, "Step 6") ==================== */

/* The two numbers of the utilisation illusion. */
typedef struct utilisation {
    double busy_fraction;   /* the device's busy time over the host's time (1 = always busy) */
    double achieved_gflops; /* the workload's arithmetic (w->flops) over the host's time */
    double peak_gflops;     /* the device's theoretical FP32 peak */
    double peak_fraction;   /* achieved_gflops / peak_gflops, a fraction (0 when the peak is unknown) */
} utilisation;

/* From a benchmark's measurement m of workload w: how busy the device was and
 * how much of its peak it used. The busy time is m->busy_seconds where the
 * device counts it (not 0), else m->device_seconds. STATUS_BAD_ARGUMENT when
 * m->host_seconds is not above 0. */
status lab_utilisation(const workload *w, const measurement *m, utilisation *out);

#endif
