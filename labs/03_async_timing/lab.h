/* lab.h: what you write in lab 03 (asynchronous execution and honest timing).
 *
 * Each function is one step of README.md; labs/03_async_timing/lab.c holds them.
 * They all measure a workload (workloads.h): some device work that run() queues.
 * Every function returns STATUS_OK, or the status of the first call that failed. */
#ifndef LAB03_LAB_H
#define LAB03_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "labkit/labkit.h"
#include "workloads.h"

/* Step 1 (README, "Asynchronous execution"): the lesson's first timing, the
 * naive one: the host clock around w->run(w), nothing else. */
status lab_time_naive(workload *w, double *seconds);

/* Step 2 (README, "Honest timing"): the same, but the clock stops only after the
 * device has finished the work (device_synchronize). */
status lab_time_synchronized(workload *w, double *seconds);

/* Step 3 (README, "Honest timing"): the same, but the clock stops after reading
 * the one value w->result holds (a blocking read); *value is that value. */
status lab_time_read_one(workload *w, double *seconds, float *value);

/* What the lesson's benchmark() reports about one run of a workload. */
typedef struct measurement {
    double launch_seconds; /* host clock when run() returned: the lesson's t_cpu */
    double host_seconds;   /* host clock once the device had finished */
    double device_seconds; /* between two events around the work: the device's time */
    double busy_seconds;   /* the device counter's busy time (simulated GPUs; else 0) */
    size_t peak_bytes;     /* the most device memory in use during the run */
} measurement;

/* Step 4 (README, "A benchmark that tells the truth"): the lesson's benchmark():
 * reset the counters, time w->run(w) with the host clock and with two events,
 * wait for the device, then fill in every field of *out. */
status lab_benchmark(workload *w, measurement *out);

/* Step 5 (README, "The host keeps working"): run w, then do chunks of independent
 * host work (host_work_chunk) until the device has finished; *chunks is how many
 * chunks fitted in. */
status lab_count_host_work(workload *w, int64_t *chunks);

/* The two numbers of the utilisation illusion. */
typedef struct utilisation {
    double busy_fraction;   /* of the host's time, the device was busy this much */
    double achieved_gflops; /* the workload's arithmetic over the host's time */
    double peak_gflops;     /* the device's theoretical FP32 peak */
    double peak_fraction;   /* achieved_gflops / peak_gflops */
} utilisation;

/* Step 6 (README, "The utilisation illusion"): from a benchmark's measurement m
 * of workload w, how busy the device looked and how much of its peak it used. */
status lab_utilisation(const workload *w, const measurement *m, utilisation *out);

#endif
