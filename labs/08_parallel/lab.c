/* lab.c: lab 08, parallel work. Each function is one step of README.md; lab.h
 * says what each must do. The given code is in given.h, products.h and
 * replica.h. Build and run: ./lab run 08; check: ./lab check 08; stuck:
 * ./lab hint 08. */
#include "lab.h"

/* ==== Step 1: the i-k-j loop on every core (README, "Step 1") ============== */

/* Goal: lab 04's i-k-j loop with its rows shared out among `threads` OpenMP
 * threads. Decide what every thread shares and what each needs its own copy
 * of. Look up OpenMP's parallel for and its num_threads clause (README,
 * "Step 1"). */
status lab_matmul_omp(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k, int threads)
{
    /* TODO: your code here */
    (void)a, (void)b, (void)c, (void)m, (void)n, (void)k, (void)threads;
    return todo("step 1: lab_matmul_omp");
}

/* ==== Step 2: speed-up and efficiency (README, "Step 2") =================== */

/* Goal: how many times faster `workers` workers did the work than one, and
 * which share of the ideal that is. */
status lab_scaling(double one_worker, double seconds, int workers, double *speedup, double *efficiency)
{
    /* TODO: your code here */
    (void)one_worker, (void)seconds, (void)workers, (void)speedup, (void)efficiency;
    return todo("step 2: lab_scaling");
}

/* ==== Step 3: two GPUs at once (README, "Step 3") ========================== */

/* Goal: every device busy with its own products at the same time; return once
 * all are done. Look up queue_products (products.h) and device_synchronize
 * (labkit/device.h). */
status lab_run_at_once(const product_work *work, int n)
{
    /* TODO: your code here */
    (void)work, (void)n;
    return todo("step 3: lab_run_at_once");
}

/* ==== Step 4: a batch shared out (README, "Step 4") ======================== */

/* Goal: device i's slice of a batch of `rows` rows, in device order, the sizes
 * differing by at most one. */
status lab_slice(int64_t rows, int n, int i, int64_t *first, int64_t *count)
{
    /* TODO: your code here */
    (void)rows, (void)n, (void)i, (void)first, (void)count;
    return todo("step 4: lab_slice");
}

/* ==== Step 5: one step of data-parallel training (README, "Step 5") ======== */

/* Goal: each replica learns from its own slice; then every replica holds the
 * gradient of the whole batch's mean loss and takes the same step. Look up
 * replica_forward_backward, replica_gradients and replica_sgd_step
 * (replica.h), op_scale (labkit/ops.h) and all_reduce_sum
 * (labkit/collective.h). */
status lab_data_parallel_step(replica *const *replicas, int n, const float *images, const int32_t *labels,
                              int64_t rows, float lr, float momentum)
{
    /* TODO: your code here */
    (void)replicas, (void)n, (void)images, (void)labels, (void)rows, (void)lr, (void)momentum;
    return todo("step 5: lab_data_parallel_step");
}
