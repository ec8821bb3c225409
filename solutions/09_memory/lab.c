/* lab.c: lab 09, the memory hierarchy. Each function is the formula of one
 * step of README.md; lab.h says what each must do. The kernels of steps 1, 2,
 * 3 and 5 are in memory_kernels.cuh.
 * Build and run: ./lab run 09; check: ./lab check 09; stuck: ./lab hint 09. */
#include "lab.h"

#include <math.h>

/* ==== Step 1: bandwidth (README, "Step 1") ================================ */

/* Goal: the GB/s a kernel achieved, counting what it read and what it wrote,
 * in the datasheet's unit. Look up fail (status.h). */
status lab_bandwidth_gbs(double bytes_read, double bytes_written, double seconds, double *gbs)
{
    if (!gbs) return fail(STATUS_BAD_ARGUMENT, "lab_bandwidth_gbs: gbs is NULL");
    if (!(bytes_read >= 0.0) || !(bytes_written >= 0.0) || !(seconds > 0.0))
        return fail(
            STATUS_BAD_ARGUMENT,
            "lab_bandwidth_gbs: %g bytes read, %g written in %g s; bytes must be >= 0 and the time > 0",
            bytes_read, bytes_written, seconds);
    /* Both directions cross the memory's pins: a copy of n floats moves 8 n bytes. */
    *gbs = (bytes_read + bytes_written) / seconds / 1e9;
    return STATUS_OK;
}

/* ==== Step 2: tiles in shared memory (README, "Step 2") =================== */

/* Goal: the floats one cell of c costs in global loads, naive (tile 1) or
 * tiled. How many tiles of `tile` terms cover k terms? */
status lab_loads_per_output(int64_t k, int tile, double *loads)
{
    if (!loads) return fail(STATUS_BAD_ARGUMENT, "lab_loads_per_output: loads is NULL");
    if (k < 1 || tile < 1)
        return fail(STATUS_BAD_ARGUMENT, "lab_loads_per_output: k = %lld, tile = %d; both must be at least 1",
                    (long long)k, tile);
    /* One float of a and one of b per tile, and the partial last tile is a whole step. */
    *loads = 2.0 * (double)((k + tile - 1) / tile);
    return STATUS_OK;
}

/* ==== Step 3: a reduction (README, "Step 3") ============================== */

/* Goal: the worst error of a float32 sum of n terms, whatever the order:
 * (n - 1) additions, each rounding by u = 2^-24 at most of a partial sum no
 * larger than sum_abs. Look up ldexp (math.h). */
status lab_sum_error_bound(int64_t n, double sum_abs, double *bound)
{
    if (!bound) return fail(STATUS_BAD_ARGUMENT, "lab_sum_error_bound: bound is NULL");
    if (n < 1 || !(sum_abs >= 0.0))
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_sum_error_bound: n = %lld, sum_abs = %g; need n >= 1, sum_abs >= 0", (long long)n,
                    sum_abs);
    *bound = (double)(n - 1) * ldexp(1.0, -24) * sum_abs;
    return STATUS_OK;
}

/* ==== Step 4: the roofline (README, "Step 4") ============================= */

/* Goal: FLOP and the least bytes of each kernel, from its size alone. */
status lab_kernel_cost(lab_kernel kernel, int64_t n, double *flop, double *bytes)
{
    if (!flop || !bytes) return fail(STATUS_BAD_ARGUMENT, "lab_kernel_cost: flop and bytes must not be NULL");
    if (n < 1)
        return fail(STATUS_BAD_ARGUMENT, "lab_kernel_cost: n = %lld; it must be at least 1", (long long)n);
    const double x = (double)n;
    switch (kernel) {
    case LAB_COPY: *flop = 0.0, *bytes = 8.0 * x; return STATUS_OK;    /* read n, write n */
    case LAB_SCALE: *flop = x, *bytes = 8.0 * x; return STATUS_OK;     /* one multiplication each */
    case LAB_SUM: *flop = x, *bytes = 4.0 * x + 4.0; return STATUS_OK; /* read n, write one */
    case LAB_PRODUCT: *flop = 2.0 * x * x * x, *bytes = 12.0 * x * x; return STATUS_OK; /* a, b; c */
    default:
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_kernel_cost: kernel %d is none of LAB_COPY, LAB_SCALE, LAB_SUM, LAB_PRODUCT",
                    (int)kernel);
    }
}

/* Goal: FLOP per byte. */
status lab_arithmetic_intensity(double flop, double bytes, double *intensity)
{
    if (!intensity) return fail(STATUS_BAD_ARGUMENT, "lab_arithmetic_intensity: intensity is NULL");
    if (!(flop >= 0.0) || !(bytes > 0.0))
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_arithmetic_intensity: %g FLOP over %g bytes; need flop >= 0, bytes > 0", flop,
                    bytes);
    *intensity = flop / bytes;
    return STATUS_OK;
}

/* Goal: the roofline at this intensity: memory's roof (bandwidth x intensity)
 * or arithmetic's (the peak), whichever is lower. Look up fmin (math.h). */
status lab_attainable_gflops(double intensity, double peak_gflops, double bandwidth_gbs, double *gflops)
{
    if (!gflops) return fail(STATUS_BAD_ARGUMENT, "lab_attainable_gflops: gflops is NULL");
    if (!(intensity >= 0.0) || !(peak_gflops > 0.0) || !(bandwidth_gbs > 0.0))
        return fail(
            STATUS_BAD_ARGUMENT,
            "lab_attainable_gflops: intensity %g, peak %g GFLOP/s, bandwidth %g GB/s; need intensity >= 0 "
            "and both peaks > 0",
            intensity, peak_gflops, bandwidth_gbs);
    /* GB/s x FLOP/B = GFLOP/s */
    *gflops = fmin(peak_gflops, intensity * bandwidth_gbs);
    return STATUS_OK;
}

/* ==== Step 5: a transpose through shared memory (README, "Step 5") ======== */

/* Goal: the passes one warp's read of a tile's column takes, from the length
 * of the tile's rows: which bank does each of the 32 threads' floats fall in,
 * and how many floats does the busiest bank hold? */
status lab_column_read_wavefronts(int row_floats, int *wavefronts)
{
    if (!wavefronts) return fail(STATUS_BAD_ARGUMENT, "lab_column_read_wavefronts: wavefronts is NULL");
    if (row_floats < 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_column_read_wavefronts: rows of %d floats; a row holds at least 1", row_floats);
    /* Count the words each bank is asked for: thread t's word is t row_floats
     * (column 0: another column shifts every bank alike). */
    int per_bank[32] = { 0 }, most = 0;
    for (int t = 0; t < 32; ++t) {
        const int bank = (int)((int64_t)t * row_floats % 32);
        if (++per_bank[bank] > most) most = per_bank[bank];
    }
    *wavefronts = most;
    return STATUS_OK;
}
