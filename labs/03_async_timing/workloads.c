/* workloads.c: the device work that lab 03 measures (see workloads.h). */
#include "workloads.h"

#include <stdio.h>
#include <string.h>

/* ---- matrix products, the lesson's proc() ------------------------------------ */

/* One run: x and y live only inside it. Every call is checked in turn; whatever
 * was created is freed, on success and on failure alike. */
static status run_matmuls(workload *w, bool read_every_step)
{
    tensor *x = NULL, *y = NULL;
    const shape square = shape2(w->n, w->n);
    status s = tensor_full(&x, w->dev, square, 0.5f); /* a queued fill on a GPU */
    if (s == STATUS_OK) s = tensor_empty(&y, w->dev, DTYPE_F32, square);
    for (int64_t i = 0; i < w->count && s == STATUS_OK; ++i) {
        s = op_matmul(x, false, x, false, NULL, y); /* y = x x; queued on a GPU */
        if (s == STATUS_OK && read_every_step) {
            float value;
            s = op_sum(y, w->result);
            if (s == STATUS_OK) s = tensor_item(w->result, &value); /* the host waits here */
        }
    }
    if (s == STATUS_OK) s = op_sum(y, w->result); /* the single value to read */
    tensor_free(x);                               /* freed in queue order */
    tensor_free(y);
    return s;
}

static status run_plain(workload *w) { return run_matmuls(w, false); }
static status run_reading(workload *w) { return run_matmuls(w, true); }

static status make_matmuls(workload *w, device d, int64_t n, int64_t count, bool reading)
{
    memset(w, 0, sizeof *w);
    if (n < 1 || n > 8192 || count < 1 || count > 1000)
        return fail(STATUS_BAD_ARGUMENT,
                    "workload_matmuls: n = %lld and count = %lld; "
                    "use 1 <= n <= 8192 and 1 <= count <= 1000",
                    (long long)n, (long long)count);
    snprintf(w->name, sizeof w->name, "%lld matmuls %lldx%lld%s", (long long)count, (long long)n,
             (long long)n, reading ? " (read each)" : "");
    w->dev = d;
    w->run = reading ? run_reading : run_plain;
    w->n = n;
    w->count = count;
    /* a product of two n x n matrices: n^2 dot products of length n, 2 n^3 FLOP;
     * the sums add n^2 each */
    w->flops = (double)count * (2.0 * n * n * n + (reading ? (double)n * n : 0.0)) + (double)n * n;
    /* every element of y is n * 0.5 * 0.5 = n / 4; exact in float for these n */
    w->expected = (float)((double)n * n * n / 4.0);
    return tensor_zeros(&w->result, d, shape1(1));
}

status workload_matmuls(workload *w, device d, int64_t n, int64_t count)
{
    return make_matmuls(w, d, n, count, false);
}

status workload_matmuls_reading(workload *w, device d, int64_t n, int64_t count)
{
    return make_matmuls(w, d, n, count, true);
}

/* ---- x = x + 1, the utilisation illusion ------------------------------------ */

static status run_increments(workload *w)
{
    tensor *one = NULL;
    status s = tensor_ones(&one, w->dev, shape1(1));
    if (s == STATUS_OK) s = op_fill(w->result, 0.0f); /* x = 0 */
    for (int64_t i = 0; i < w->count && s == STATUS_OK; ++i)
        s = op_add(w->result, one, w->result); /* x = x + 1 */
    tensor_free(one);
    return s;
}

status workload_increments(workload *w, device d, int64_t count)
{
    memset(w, 0, sizeof *w);
    /* float32 counts exactly up to 2^24 */
    if (count < 1 || count > (1 << 24))
        return fail(STATUS_BAD_ARGUMENT, "workload_increments: count = %lld; use 1 to 2^24",
                    (long long)count);
    snprintf(w->name, sizeof w->name, "%lld x (x = x + 1)", (long long)count);
    w->dev = d;
    w->run = run_increments;
    w->n = 1;
    w->count = count;
    w->flops = (double)count; /* one addition per launch */
    w->expected = (float)count;
    return tensor_zeros(&w->result, d, shape1(1));
}

void workload_free(workload *w)
{
    if (!w) return;
    tensor_free(w->result);
    memset(w, 0, sizeof *w);
}

/* ---- independent host work ---------------------------------------------------- */

uint64_t host_work_chunk(uint64_t state, int64_t count)
{
    /* xorshift64: each step needs the one before, so no compiler can skip ahead */
    if (state == 0) state = 1;
    for (int64_t i = 0; i < count; ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
    }
    return state;
}
