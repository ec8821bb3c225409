/* lab.c: lab 04, matrix products. Each function is one step of README.md; lab.h
 * says what each must do. Step 6 also has a kernel, in naive_kernel.cuh.
 * Build and run: ./lab run 04; check: ./lab check 04; stuck: ./lab hint 04. */
#include "lab.h"

#include <cblas.h>
#include <limits.h>

#include "naive_launch.h"

/* ==== Step 1: a layer is a matrix product (README, "Step 1") ============== */

/* Goal: out = sigmoid(w x) for all the layer's neurons at once, on the device
 * where the tensors live. Look up op_matmul and op_sigmoid (labkit/ops.h). */
status lab_layer_forward(const tensor *w, const tensor *x, tensor *out)
{
    /* TODO: your code here */
    (void)w, (void)x, (void)out;
    return todo("step 1: lab_layer_forward");
}

/* ==== Step 2: the naive triple loop (README, "Step 2") ==================== */

/* Goal: c = a b by the definition: every cell (i, j) of c is the dot product of
 * row i of a and column j of b. lab.h says how a row-major matrix is laid out. */
status lab_matmul_ijk(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    /* TODO: your code here */
    (void)a, (void)b, (void)c, (void)m, (void)n, (void)k;
    return todo("step 2: lab_matmul_ijk");
}

/* ==== Step 3: loop order (README, "Step 3") =============================== */

/* Goal: the same product and the same sums, with the loops in the order i, p, j
 * so that the innermost loop walks along rows. Mind what c holds before you
 * add onto it. */
status lab_matmul_ikj(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    /* TODO: your code here */
    (void)a, (void)b, (void)c, (void)m, (void)n, (void)k;
    return todo("step 3: lab_matmul_ikj");
}

/* ==== Step 4: OpenBLAS (README, "Step 4") ================================= */

/* Goal: c = op(a) op(b) in one call to OpenBLAS, row-major, with or without
 * each transpose. Look up cblas_sgemm (cblas.h); the README's step 4 explains
 * its "leading dimensions". */
status lab_matmul_openblas(const float *a, bool trans_a, const float *b, bool trans_b, float *c, int64_t m,
                           int64_t n, int64_t k)
{
    /* TODO: your code here */
    (void)a, (void)trans_a, (void)b, (void)trans_b, (void)c, (void)m, (void)n, (void)k;
    return todo("step 4: lab_matmul_openblas");
}

/* ==== Step 5: GFLOP/s and the fraction of peak (README, "Step 5") ========= */

/* Goal: a product's speed in GFLOP/s. How many floating-point operations does
 * one cell of c take? */
status lab_gflops(int64_t m, int64_t n, int64_t k, double seconds, double *gflops)
{
    /* TODO: your code here */
    (void)m, (void)n, (void)k, (void)seconds, (void)gflops;
    return todo("step 5: lab_gflops");
}

/* Goal: the share of device d's theoretical peak that `gflops` reaches. Look up
 * device_get_properties (labkit/properties.h). */
status lab_fraction_of_peak(double gflops, device d, double *fraction)
{
    /* TODO: your code here */
    (void)gflops, (void)d, (void)fraction;
    return todo("step 5: lab_fraction_of_peak");
}

/* ==== Step 6: one thread per output cell (README, "Step 6") =============== */

/* Goal: run your kernel (naive_kernel.cuh: write it first) on c's GPU with one
 * thread per cell of c, in blocks of 16 x 16 threads, and return without
 * waiting. Look up naive_matmul_args and naive_matmul_launchers
 * (naive_launch.h), tensor_data, tensor_data_const and device_launch
 * (labkit/kernel.h). */
status lab_matmul_naive_gpu(const tensor *a, const tensor *b, tensor *c)
{
    status s = naive_matmul_check_operands(a, b, c); /* given: a GPU, one device, shapes that fit */
    if (s != STATUS_OK) return s;
    /* TODO: your code here */
    return todo("step 6: lab_matmul_naive_gpu (and its kernel in naive_kernel.cuh)");
}
