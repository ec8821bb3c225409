/* measure.c: the timed copies of lab 02 (see measure.h). */
#include "measure.h"

#include <stdlib.h>
#include <string.h>

#define MAX_REPS 101

device partner_of(device d) { return device_is_gpu(d) ? device_cpu() : try_gpu(0); }

/* ---- counting copies ------------------------------------------------------- */

status reset_pair(device d, device other)
{
    status s = counters_reset(d);
    return s == STATUS_OK && !device_equal(d, other) ? counters_reset(other) : s;
}

status copies_between(device d, device other, copy_tally *out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "copies_between: out is NULL");
    *out = (copy_tally){ 0, 0, 0, 0 };
    for (int i = 0; i < (device_equal(d, other) ? 1 : 2); ++i) {
        device_counters c;
        const status s = counters_read(i == 0 ? d : other, &c);
        if (s != STATUS_OK) return s;
        out->copies += c.h2d_copies + c.d2h_copies + c.d2d_copies;
        out->bytes += c.h2d_bytes + c.d2h_bytes + c.d2d_bytes;
        out->h2d += c.h2d_copies;
        out->d2h += c.d2h_copies;
    }
    return STATUS_OK;
}

/* One copy of the whole tensor t, to it from host (to_device) or back. */
static status move(tensor *t, float *host, bool to_device)
{
    return to_device ? tensor_copy_from_host(t, host, tensor_numel(t))
                     : tensor_to_host(t, host, tensor_numel(t));
}

/* ---- one big copy vs many small ones --------------------------------------- */

status time_one_vs_many(device d, int64_t total_bytes, int pieces, bool to_device, int reps,
                        double *one_seconds, double *many_seconds)
{
    if (pieces < 1 || reps < 1 || reps > MAX_REPS || total_bytes < 4 * (int64_t)pieces)
        return fail(STATUS_BAD_ARGUMENT,
                    "time_one_vs_many: %d pieces of %lld bytes in %d runs: "
                    "use 1 to %d runs and at least 4 bytes a piece",
                    pieces, (long long)total_bytes, reps, MAX_REPS);
    const int64_t piece_n = total_bytes / 4 / pieces, n = piece_n * pieces; /* floats */
    float *host = host_alloc((size_t)n * sizeof(float), 0);
    tensor *big = NULL, **small = calloc((size_t)pieces, sizeof *small);
    status s = host && small ? STATUS_OK : fail(STATUS_OUT_OF_MEMORY, "time_one_vs_many: no host memory");
    if (s == STATUS_OK) {
        for (int64_t i = 0; i < n; ++i) host[i] = (float)i; /* touch every page before timing */
        s = tensor_empty(&big, d, DTYPE_F32, shape1(n));
    }
    for (int i = 0; i < pieces && s == STATUS_OK; ++i)
        s = tensor_empty(&small[i], d, DTYPE_F32, shape1(piece_n));

    double one[MAX_REPS], many[MAX_REPS];
    for (int r = -1; r < reps && s == STATUS_OK; ++r) { /* r = -1: a warm-up, not timed */
        double start = wall_seconds();
        s = move(big, host, to_device);
        if (s == STATUS_OK) s = device_synchronize(d);
        if (r >= 0) one[r] = wall_seconds() - start;

        start = wall_seconds();
        for (int i = 0; i < pieces && s == STATUS_OK; ++i) s = move(small[i], host + i * piece_n, to_device);
        if (s == STATUS_OK) s = device_synchronize(d);
        if (r >= 0) many[r] = wall_seconds() - start;
    }
    if (s == STATUS_OK) {
        *one_seconds = median_of(one, (size_t)reps);
        *many_seconds = median_of(many, (size_t)reps);
    }
    for (int i = 0; small && i < pieces; ++i) tensor_free(small[i]);
    free(small);
    tensor_free(big);
    host_free(host, 0);
    return s;
}

/* ---- bandwidth ------------------------------------------------------------- */

const char *const bw_kind_names[BW_KINDS] = {
    [BW_H2D_PAGEABLE] = "host->device, pageable",
    [BW_H2D_PINNED] = "host->device, pinned",
    [BW_D2H_PAGEABLE] = "device->host, pageable",
    [BW_D2H_PINNED] = "device->host, pinned",
};

/* Median seconds of `reps` copies between `host` and t, after one warm-up. */
static status time_copies(tensor *t, float *host, bool to_device, int reps, double *seconds)
{
    double times[MAX_REPS];
    status s = move(t, host, to_device); /* warm-up */
    for (int r = 0; r < reps && s == STATUS_OK; ++r) {
        const double start = wall_seconds();
        s = move(t, host, to_device);
        /* A copy returns once done (as cudaMemcpy does); the synchronize is
         * there so that the figure stays honest should that ever change. */
        if (s == STATUS_OK) s = device_synchronize(tensor_device(t));
        times[r] = wall_seconds() - start;
    }
    if (s == STATUS_OK) *seconds = median_of(times, (size_t)reps);
    return s;
}

status bandwidth_point(device d, size_t bytes, int reps, double gbps[BW_KINDS])
{
    if (bytes < sizeof(float) || reps < 1 || reps > MAX_REPS)
        return fail(STATUS_BAD_ARGUMENT,
                    "bandwidth_point: %zu bytes in %d runs: use at least 4 bytes and "
                    "1 to %d runs",
                    bytes, reps, MAX_REPS);
    const int64_t n = (int64_t)(bytes / sizeof(float));
    float *pageable = host_alloc(bytes, 0), *pinned = host_alloc(bytes, 1);
    tensor *t = NULL;
    status s = pageable && pinned ? STATUS_OK
                                  : fail(STATUS_OUT_OF_MEMORY,
                                         "bandwidth_point: no host memory for "
                                         "two buffers of %zu bytes",
                                         bytes);
    if (s == STATUS_OK) {
        memset(pageable, 1, bytes); /* touch every page: the first touch costs a page fault */
        memset(pinned, 1, bytes);
        s = tensor_empty(&t, d, DTYPE_F32, shape1(n));
    }
    float *buffers[BW_KINDS] = { pageable, pinned, pageable, pinned };
    for (int k = 0; k < BW_KINDS && s == STATUS_OK; ++k) {
        double seconds = 0.0;
        s = time_copies(t, buffers[k], k == BW_H2D_PAGEABLE || k == BW_H2D_PINNED, reps, &seconds);
        gbps[k] = seconds > 0.0 ? (double)bytes / seconds / 1e9 : 0.0;
    }
    tensor_free(t);
    host_free(pageable, 0);
    host_free(pinned, 1);
    return s;
}
