/* lab.h: what you write in lab 04 (matrix products). Each function belongs to
 * one step of README.md; your code goes in lab.c, and for step 6 also in
 * naive_kernel.cuh (the kernel).
 *
 * Matrices are row-major: element (i, j) of an [rows, cols] matrix x is
 * x[i * cols + j]. Every product here is c[m, n] = a[m, k] b[k, n].
 *
 * Every function returns a status: STATUS_OK, or a failure with a message made
 * by fail() (labkit/status.h). The untouched lab.c returns todo(...) everywhere,
 * so the programs tell you which step comes next instead of crashing. */
#ifndef LAB04_LAB_H
#define LAB04_LAB_H

#include <stdbool.h>
#include <stdint.h>

#include "labkit/labkit.h"

/* ==== Step 1: a layer is a matrix product (README, "Step 1") ============== */

/* One layer of a network: out [rows, 1] = sigmoid(w [rows, cols] x [cols, 1]),
 * computed on the device where w, x and out live, with the library's
 * op_matmul and op_sigmoid. out exists already. */
status lab_layer_forward(const tensor *w, const tensor *x, tensor *out);

/* ==== Step 2: the naive triple loop (README, "Step 2") ==================== */

/* c = a b on the CPU with three nested loops in the order i, j, p: for every
 * cell (i, j) of c, the dot product of row i of a with column j of b. Any
 * sizes from 0 up: with k = 0 every dot product is empty, and c all zeros. */
status lab_matmul_ijk(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k);

/* ==== Step 3: loop order (README, "Step 3") =============================== */

/* c = a b on the CPU with the loops in the order i, p, j: the innermost loop
 * walks along a row of b and a row of c, one float after the next. The same
 * sizes as step 2, k = 0 included. */
status lab_matmul_ikj(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k);

/* ==== Step 4: OpenBLAS (README, "Step 4") ================================= */

/* c [m, n] = op(a) op(b) with one call to OpenBLAS's cblas_sgemm. op(a) is a,
 * or a transposed when trans_a (a is then stored [k, m]); likewise op(b) is b
 * [k, n], or b transposed when trans_b (b is then stored [n, k]). Sizes that
 * do not fit cblas_sgemm's int are refused (STATUS_BAD_ARGUMENT). */
status lab_matmul_openblas(const float *a, bool trans_a, const float *b, bool trans_b, float *c, int64_t m,
                           int64_t n, int64_t k);

/* ==== Step 5: GFLOP/s and the fraction of peak (README, "Step 5") ========= */

/* The speed of one product c[m, n] = a[m, k] b[k, n] that took `seconds`, in
 * GFLOP/s (10^9 floating-point operations per second), for products as large
 * as the lesson's (billions of operations). A time that is not positive is a
 * mistake (STATUS_BAD_ARGUMENT). */
status lab_gflops(int64_t m, int64_t n, int64_t k, double seconds, double *gflops);

/* The share of device d's theoretical FP32 peak (device_get_properties) that
 * `gflops` reaches: 0.5 means half of it. 0 when the peak is unknown. A
 * device that does not exist has no peak: device_get_properties's failure is
 * returned as it is. */
status lab_fraction_of_peak(double gflops, device d, double *fraction);

/* ==== Step 6: one thread per output cell (README, "Step 6") =============== */

/* c [m, n] = a [m, k] b [k, n] on a GPU, real or simulated, by your kernel
 * naive_matmul_kernel (naive_kernel.cuh), one thread per cell of c, in blocks
 * of 16 x 16 threads, just enough of them to cover c. All three tensors live
 * on one GPU, whichever it is; the kernel is queued there as one launch and
 * the call returns at once, without waiting for it. On the CPU it is refused
 * (STATUS_WRONG_DEVICE): there, use step 3's loop. */
status lab_matmul_naive_gpu(const tensor *a, const tensor *b, tensor *c);

#endif
