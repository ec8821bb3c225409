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
    status s = op_matmul(w, false, x, false, NULL, out);
    if (s != STATUS_OK) return s;
    return op_sigmoid(out, out);
}

/* ==== Step 2: the naive triple loop (README, "Step 2") ==================== */

/* Goal: c = a b by the definition: every cell (i, j) of c is the dot product of
 * row i of a and column j of b. lab.h says how a row-major matrix is laid out. */
status lab_matmul_ijk(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (int64_t p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
            c[i * n + j] = sum;
        }
    return STATUS_OK;
}

/* ==== Step 3: loop order (README, "Step 3") =============================== */

/* Goal: the same product and the same sums, with the loops in the order i, p, j
 * so that the innermost loop walks along rows. Mind what c holds before you
 * add onto it. */
status lab_matmul_ikj(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
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

/* ==== Step 4: OpenBLAS (README, "Step 4") ================================= */

/* Goal: c = op(a) op(b) in one call to OpenBLAS, row-major, with or without
 * each transpose. Look up cblas_sgemm (cblas.h); the README's step 4 explains
 * its "leading dimensions". */
status lab_matmul_openblas(const float *a, bool trans_a, const float *b, bool trans_b, float *c, int64_t m,
                           int64_t n, int64_t k)
{
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_matmul_openblas: m=%lld n=%lld k=%lld; cblas_sgemm takes int sizes", (long long)m,
                    (long long)n, (long long)k);
    /* A leading dimension is the length of a row as stored. */
    const int lda = (int)(trans_a ? m : k), ldb = (int)(trans_b ? k : n);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, 1.0f, a, lda, b, ldb, 0.0f, c, (int)n);
    return STATUS_OK;
}

/* ==== Step 5: GFLOP/s and the fraction of peak (README, "Step 5") ========= */

/* Goal: a product's speed in GFLOP/s. How many floating-point operations does
 * one cell of c take? */
status lab_gflops(int64_t m, int64_t n, int64_t k, double seconds, double *gflops)
{
    if (!(seconds > 0.0))
        return fail(STATUS_BAD_ARGUMENT, "lab_gflops: seconds = %g; a time must be positive", seconds);
    *gflops = 2.0 * (double)m * (double)n * (double)k / seconds / 1e9; /* a multiply and an add per term */
    return STATUS_OK;
}

/* Goal: the share of device d's theoretical peak that `gflops` reaches. Look up
 * device_get_properties (labkit/properties.h). */
status lab_fraction_of_peak(double gflops, device d, double *fraction)
{
    device_properties props;
    status s = device_get_properties(d, &props);
    if (s != STATUS_OK) return s;
    *fraction = props.peak_gflops > 0.0 ? gflops / props.peak_gflops : 0.0;
    return STATUS_OK;
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
    const int64_t m = tensor_dim(a, 0), k = tensor_dim(a, 1), n = tensor_dim(b, 1);
    const unsigned side = 16;
    const naive_matmul_args args = {
        .a = tensor_data_const(a),
        .b = tensor_data_const(b),
        .c = tensor_data(c),
        .m = m,
        .n = n,
        .k = k,
        .grid_x = (unsigned)((n + side - 1) / side), /* rounded up: the last block may stick out */
        .grid_y = (unsigned)((m + side - 1) / side),
        .block_x = side,
        .block_y = side,
    };
    return device_launch(tensor_device(c), &naive_matmul_launchers, &args, sizeof args);
}
