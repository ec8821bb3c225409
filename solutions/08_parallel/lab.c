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
    /* In the parallel loop below, a, b, c and the sizes are shared: every
     * thread reads a and b, and writes its own rows of c. Everything declared
     * inside the loop (i, the row pointer, a_ip, p, j) is private: each
     * thread has its own. */
    if (threads < 1)
        return fail(STATUS_BAD_ARGUMENT, "lab_matmul_omp: threads = %d; give 1 or more", threads);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < m; ++i) {
        float *c_row = c + i * n;
        for (int64_t j = 0; j < n; ++j) c_row[j] = 0.0f;
        for (int64_t p = 0; p < k; ++p) {
            const float a_ip = a[i * k + p];
            const float *b_row = b + p * n;
            for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
        }
    }
    return STATUS_OK;
}

/* ==== Step 2: speed-up and efficiency (README, "Step 2") =================== */

/* Goal: how many times faster `workers` workers did the work than one, and
 * which share of the ideal that is. */
status lab_scaling(double one_worker, double seconds, int workers, double *speedup, double *efficiency)
{
    if (!(one_worker > 0.0) || !(seconds > 0.0) || workers < 1)
        return fail(
            STATUS_BAD_ARGUMENT,
            "lab_scaling: one_worker = %g s, seconds = %g s, workers = %d; times must be positive and "
            "workers 1 or more",
            one_worker, seconds, workers);
    *speedup = one_worker / seconds;
    *efficiency = *speedup / workers;
    return STATUS_OK;
}

/* ==== Step 3: two GPUs at once (README, "Step 3") ========================== */

/* Goal: every device busy with its own products at the same time; return once
 * all are done. Look up queue_products (products.h) and device_synchronize
 * (labkit/device.h). */
status lab_run_at_once(const product_work *work, int n)
{
    if (!work || n < 1) return fail(STATUS_BAD_ARGUMENT, "lab_run_at_once: give 1 or more works (n = %d)", n);
    /* Queue everything first: each device starts as soon as its products are
     * queued, while the host goes on to the next device. */
    status first_failure = STATUS_OK;
    int queued = 0;
    while (queued < n && first_failure == STATUS_OK) {
        first_failure = queue_products(&work[queued]);
        if (first_failure == STATUS_OK) ++queued;
    }
    /* Only then wait, for each device in turn: every device queued, even
     * after a failure, since its kernels still use the caller's tensors. */
    for (int i = 0; i < queued; ++i) {
        const status s = device_synchronize(work[i].dev);
        if (first_failure == STATUS_OK) first_failure = s;
    }
    return first_failure;
}

/* ==== Step 4: a batch shared out (README, "Step 4") ======================== */

/* Goal: device i's slice of a batch of `rows` rows, in device order, the sizes
 * differing by at most one. */
status lab_slice(int64_t rows, int n, int i, int64_t *first, int64_t *count)
{
    if (rows < 0 || n < 1 || i < 0 || i >= n || !first || !count)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_slice: rows = %lld, n = %d, i = %d; need rows >= 0 and 0 <= i < n", (long long)rows,
                    n, i);
    const int64_t base = rows / n, extra = rows % n; /* the first `extra` devices get one row more */
    *count = base + (i < extra ? 1 : 0);
    *first = i * base + (i < extra ? i : extra);
    return STATUS_OK;
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
    if (!replicas || n < 1 || n > DP_MAX_DEVICES || rows < 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_data_parallel_step: 1 to %d replicas (n = %d), rows >= 1 (%lld)", DP_MAX_DEVICES, n,
                    (long long)rows);
    const int64_t inputs = replica_inputs(replicas[0]);
    tensor *grads[DP_MAX_DEVICES][REPLICA_MAX_GRADIENTS];
    int ngrads = 0;
    /* Every device's slice first: each call queues its device's work and
     * returns, so the devices compute at the same time. */
    for (int d = 0; d < n; ++d) {
        int64_t first = 0, count = 0;
        status s = lab_slice(rows, n, d, &first, &count);
        if (s == STATUS_OK)
            s = replica_forward_backward(replicas[d], images + first * inputs, labels + first, count);
        ngrads = replica_gradients(replicas[d], grads[d]);
        /* The slice's gradient is the mean over its own rows: weighted by its
         * share of the batch, the sum over the devices is the batch's mean. */
        for (int g = 0; s == STATUS_OK && g < ngrads; ++g)
            s = op_scale(grads[d][g], (float)count / (float)rows, grads[d][g]);
        if (s != STATUS_OK) return s;
    }
    /* The sum across the devices, one gradient tensor at a time: afterwards
     * every replica holds the same, whole-batch gradient. */
    for (int g = 0; g < ngrads; ++g) {
        tensor *same[DP_MAX_DEVICES];
        for (int d = 0; d < n; ++d) same[d] = grads[d][g];
        status s = all_reduce_sum(same, n);
        if (s != STATUS_OK) return s;
    }
    /* The same gradient and the same parameters: the same step everywhere. */
    for (int d = 0; d < n; ++d) {
        status s = replica_sgd_step(replicas[d], lr, momentum);
        if (s != STATUS_OK) return s;
    }
    return STATUS_OK;
}
