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
    /* TODO: your code here */
    (void)bytes_read, (void)bytes_written, (void)seconds, (void)gbs;
    return todo("step 1: lab_bandwidth_gbs");
}

/* ==== Step 2: tiles in shared memory (README, "Step 2") =================== */

/* Goal: the floats one cell of c costs in global loads, naive (tile 1) or
 * tiled. How many tiles of `tile` terms cover k terms? */
status lab_loads_per_output(int64_t k, int tile, double *loads)
{
    /* TODO: your code here */
    (void)k, (void)tile, (void)loads;
    return todo("step 2: lab_loads_per_output");
}

/* ==== Step 3: a reduction (README, "Step 3") ============================== */

/* Goal: the worst error of a float32 sum of n terms, whatever the order:
 * (n - 1) additions, each rounding by u = 2^-24 at most of a partial sum no
 * larger than sum_abs. Look up ldexp (math.h). */
status lab_sum_error_bound(int64_t n, double sum_abs, double *bound)
{
    /* TODO: your code here */
    (void)n, (void)sum_abs, (void)bound;
    return todo("step 3: lab_sum_error_bound");
}

/* ==== Step 4: the roofline (README, "Step 4") ============================= */

/* Goal: FLOP and the least bytes of each kernel, from its size alone. */
status lab_kernel_cost(lab_kernel kernel, int64_t n, double *flop, double *bytes)
{
    /* TODO: your code here */
    (void)kernel, (void)n, (void)flop, (void)bytes;
    return todo("step 4: lab_kernel_cost");
}

/* Goal: FLOP per byte. */
status lab_arithmetic_intensity(double flop, double bytes, double *intensity)
{
    /* TODO: your code here */
    (void)flop, (void)bytes, (void)intensity;
    return todo("step 4: lab_arithmetic_intensity");
}

/* Goal: the roofline at this intensity: memory's roof (bandwidth x intensity)
 * or arithmetic's (the peak), whichever is lower. Look up fmin (math.h). */
status lab_attainable_gflops(double intensity, double peak_gflops, double bandwidth_gbs, double *gflops)
{
    /* TODO: your code here */
    (void)intensity, (void)peak_gflops, (void)bandwidth_gbs, (void)gflops;
    return todo("step 4: lab_attainable_gflops");
}

/* ==== Step 5: a transpose through shared memory (README, "Step 5") ======== */

/* Goal: the passes one warp's read of a tile's column takes, from the length
 * of the tile's rows: which bank does each of the 32 threads' floats fall in,
 * and how many floats does the busiest bank hold? */
status lab_column_read_wavefronts(int row_floats, int *wavefronts)
{
    /* TODO: your code here */
    (void)row_floats, (void)wavefronts;
    return todo("step 5: lab_column_read_wavefronts");
}
