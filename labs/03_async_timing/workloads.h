/* workloads.h: the device work that lab 03 measures. Given: you use it, you do
 * not need to change it (README, "The workloads").
 *
 * A workload queues work on its device and returns. On a GPU, real or simulated,
 * that is at once and the work runs behind the host's back; on the CPU it is after
 * all of it. The last thing a workload's run() queues writes `result`, a
 * one-element tensor, so reading that single value waits for all of the work. */
#ifndef LAB03_WORKLOADS_H
#define LAB03_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

#include "labkit/labkit.h"

typedef struct workload workload;

struct workload {
    char name[64]; /* for tables and plots: "16 matmuls 512x512" */
    device dev;
    status (*run)(workload *w); /* queues the work; see the functions below */
    tensor *result;             /* [1] on dev, written last by run() */
    int64_t n;                  /* matrices are n x n (1 for the increments) */
    int64_t count;              /* how many times run() repeats its step */
    double flops;               /* arithmetic done by one run() */
    float expected;             /* what result holds after run() */
};

/* The lesson's proc(): x = 0.5 everywhere (n x n), then y = x x, `count` times,
 * then result = sum(y) = n^3 / 4. x and y are created inside run() and freed at
 * its end, so device memory peaks at x, y and result together. */
status workload_matmuls(workload *w, device d, int64_t n, int64_t count);

/* The same loop, except that every step also computes sum(y) and reads it on the
 * host (tensor_item): one blocking device-to-host copy per step. */
status workload_matmuls_reading(workload *w, device d, int64_t n, int64_t count);

/* x = x + 1 on a one-element tensor, `count` launches: result = count. */
status workload_increments(workload *w, device d, int64_t count);

/* Frees the result tensor; w can then be made again. */
void workload_free(workload *w);

/* A few microseconds of host work that has nothing to do with the device: `count`
 * steps of a pseudo-random generator, starting from `state`. Returns the new state
 * (keep it, so that the compiler cannot drop the work). */
uint64_t host_work_chunk(uint64_t state, int64_t count);

/* The steps in one chunk of host work in this lab. */
#define HOST_WORK_STEPS 4096

#endif
