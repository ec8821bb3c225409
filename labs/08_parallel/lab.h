/* lab.h: what you write in lab 08 (parallel work). Each function belongs to
 * one step of README.md; your code goes in lab.c.
 *
 * Three kinds of workers share out one piece of work: the cores of the CPU
 * (OpenMP threads, step 1), two GPUs (step 3), and the replicas of a network
 * on every device, each learning from its own slice of every batch (steps 4
 * and 5). Step 2 says how much each gained.
 *
 * Every function returns a status: STATUS_OK, or a failure with a message made
 * by fail() (labkit/status.h). The untouched lab.c returns todo(...) everywhere,
 * so the programs tell you which step comes next instead of crashing. */
#ifndef LAB08_LAB_H
#define LAB08_LAB_H

#include <stdint.h>

#include "labkit/collective.h" /* all_reduce_sum (step 5) */
#include "labkit/labkit.h"
#include "products.h"
#include "replica.h"

/* ==== Step 1: the i-k-j loop on every core (README, "Step 1") ============== */

/* c [m, n] = a [m, k] b [k, n] on the CPU: lab 04's loop in the order i, p, j
 * (given.h's matmul_ikj), with the rows of c shared out among `threads`
 * OpenMP threads (1 or more) that run at the same time. Each row is computed
 * by one thread exactly as the serial loop computes it, so c is equal to
 * matmul_ikj's bit for bit. */
status lab_matmul_omp(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k, int threads);

/* ==== Step 2: speed-up and efficiency (README, "Step 2") =================== */

/* The same work took `one_worker` seconds on one worker and `seconds` on
 * `workers` of them: *speedup is how many times faster, *efficiency the share
 * of the ideal (1: every worker fully used). Times that are not positive, or
 * fewer than one worker, are refused (STATUS_BAD_ARGUMENT). */
status lab_scaling(double one_worker, double seconds, int workers, double *speedup, double *efficiency);

/* ==== Step 3: two GPUs at once (README, "Step 3") ========================== */

/* Runs the products of every work[i] (n of them, each on its own device)
 * with all the devices working at the same time, and returns once every
 * product is done. queue_products (products.h) queues one device's products
 * and returns at once. A failure (to queue, or found by a wait) is returned,
 * the first one, once every device that was queued is done: the caller may
 * then free what those kernels read. */
status lab_run_at_once(const product_work *work, int n);

/* ==== Step 4: a batch shared out (README, "Step 4") ======================== */

/* The slice of a batch of `rows` rows (0 or more) that device i of n gets:
 * rows *first .. *first + *count - 1. The slices follow each other in device
 * order, cover the batch, and differ in size by at most one row: the first
 * rows % n devices get one row more. */
status lab_slice(int64_t rows, int n, int i, int64_t *first, int64_t *count);

/* ==== Step 5: one step of data-parallel training (README, "Step 5") ======== */

/* One SGD step on a batch of `rows` images [rows, n0] and labels in host
 * memory, shared out among n replicas (one per device, replica.h): each
 * computes the gradients of its own slice (lab_slice), the gradients are
 * combined across the devices so that every replica holds the gradient of the
 * whole batch's mean loss, and every replica takes the same SGD step with lr
 * and momentum. Afterwards every replica holds the same parameters, those one
 * replica would hold after a step on the whole batch (lab 05's step). rows is
 * 1 or more: a batch of 0 rows has no mean loss, and is refused
 * (STATUS_BAD_ARGUMENT) before any replica steps. With fewer rows than
 * replicas some slices are empty: their replicas take part all the same, and
 * take the same step as the others. A call it makes that fails (a pass, a
 * weighting, a sum, a step) is returned; until every sum is done, no replica
 * has stepped. */
status lab_data_parallel_step(replica *const *replicas, int n, const float *images, const int32_t *labels,
                              int64_t rows, float lr, float momentum);

#endif
