/* lab.h: what you write in lab 09 (the memory hierarchy). Each step of
 * README.md has its kernels in memory_kernels.cuh and a small formula here,
 * in lab.c, that turns what the programs measure into the figures of the
 * lesson: GB/s, loads per output, an error bound, a roofline point.
 *
 * Every function returns a status: STATUS_OK, or a failure made by fail()
 * (labkit/status.h) whose message says what was wrong: STATUS_BAD_ARGUMENT for
 * an argument out of range, NULL outputs included. The untouched lab.c returns
 * todo(...) everywhere, so the programs tell you which step comes next. The
 * given code launches your kernels (launch.h), times them and draws. */
#ifndef LAB09_LAB_H
#define LAB09_LAB_H

#include <stdint.h>

#include "labkit/labkit.h"

/* ==== Step 1: bandwidth (README, "Step 1") ================================ */

/* *gbs = the bandwidth a kernel achieved: the bytes it read plus the bytes it
 * wrote, over its time in seconds, in GB/s: 10^9 bytes a second, the unit of
 * a GPU's datasheet and of device_properties.memory_bandwidth_gbs. Refuses
 * negative bytes and a time that is not above 0 (a NaN time included). */
status lab_bandwidth_gbs(double bytes_read, double bytes_written, double seconds, double *gbs);

/* ==== Step 2: tiles in shared memory (README, "Step 2") =================== */

/* *loads = the floats one thread loads from global memory to compute its cell
 * of c = a b, where a has k columns: tile 1 is the naive kernel, one float of
 * a and one of b per term; tile T the tiled kernel, one float of each per
 * tile of T terms, the last tile counting whole even where k is not a
 * multiple of T. Refuses k < 1 and tile < 1. */
status lab_loads_per_output(int64_t k, int tile, double *loads);

/* ==== Step 3: a reduction (README, "Step 3") ============================== */

/* *bound = how far a float32 sum of n terms can be from the exact sum, added
 * in any order: (n - 1) u sum_abs, where u = 2^-24 is float32's unit roundoff
 * (each of the n - 1 additions rounds by at most u of what it has summed so
 * far, itself at most sum_abs, the sum of the terms' magnitudes). Refuses
 * n < 1 and a sum_abs that is not 0 or more (a NaN is neither). */
status lab_sum_error_bound(int64_t n, double sum_abs, double *bound);

/* ==== Step 4: the roofline (README, "Step 4") ============================= */

/* The kernels whose cost you count. */
typedef enum lab_kernel {
    LAB_COPY,   /* out = in, n floats */
    LAB_SCALE,  /* out = alpha in, n floats */
    LAB_SUM,    /* one float = the sum of n floats */
    LAB_PRODUCT /* c = a b, all three n x n */
} lab_kernel;

/* *flop = the floating-point operations `kernel` does on size n (a
 * multiply-add is two); *bytes = the bytes it must move at least: each input
 * read once, each output written once, 4 bytes a float. Refuses n < 1 and a
 * kernel that is none of the four. */
status lab_kernel_cost(lab_kernel kernel, int64_t n, double *flop, double *bytes);

/* *intensity = flop / bytes: the kernel's arithmetic intensity, in FLOP per
 * byte. Refuses bytes that are not above 0 and flop that is not 0 or more
 * (NaN for either included). */
status lab_arithmetic_intensity(double flop, double bytes, double *intensity);

/* *gflops = the roofline: the most GFLOP/s a kernel of this intensity can
 * reach on a device of peak_gflops (its arithmetic) and bandwidth_gbs (its
 * memory): the lower of the two roofs. Refuses an intensity that is not 0 or
 * more and peaks that are not above 0 (NaN for any included). */
status lab_attainable_gflops(double intensity, double peak_gflops, double bandwidth_gbs, double *gflops);

/* ==== Step 5: a transpose through shared memory (README, "Step 5") ======== */

/* *wavefronts = the passes shared memory needs to serve one warp's read of a
 * column of a tile whose rows are row_floats floats long: thread t (0 to 31)
 * reads the float t row_floats + c (any column c), which lies in bank
 * (t row_floats + c) mod 32. A bank serves one 4-byte word a pass, so the
 * bank asked for the most distinct words sets the passes: 1 when the 32
 * floats lie in 32 banks, 32 when all lie in one. The bank conflicts are the
 * passes beyond the first. Refuses row_floats < 1. */
status lab_column_read_wavefronts(int row_floats, int *wavefronts);

#endif
