/* lab.c: lab 04, matrix products. Each function is one step of README.md; lab.h
 * says what each must do, and step 6 also has a kernel in naive_kernel.cuh.
 * Build and run: ./lab run 04; check: ./lab check 04. */
#include "lab.h"

#include <cblas.h>
#include <limits.h>

#include "naive_launch.h"

/* The kernel of step 6, compiled by the C compiler for the simulated GPU: the
 * emulation header turns CUDA's qualifiers and indices into plain C first. */
#include "labkit/cuda_emulation.h"
#include "naive_kernel.cuh"

/* Step 1 (README, "Step 1: a layer is a matrix product"): the weighted sums of
 * every neuron at once, w x, then the sigmoid of each. op_matmul writes into
 * out; op_sigmoid may then work in place. */
status lab_layer_forward(const tensor *w, const tensor *x, tensor *out)
{
    status s = op_matmul(w, false, x, false, NULL, out);
    if (s != STATUS_OK) return s;
    return op_sigmoid(out, out);
}

/* Step 2 (README, "Step 2: the naive triple loop"): for each cell (i, j) of c,
 * walk row i of a and column j of b together and add up the products. */
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

/* Step 3 (README, "Step 3: loop order"): the same products and sums, with the
 * j loop innermost: a[i, p] stays put while row p of b is added, scaled, onto
 * row i of c. Row i of c starts at zero. */
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

/* Step 4 (README, "Step 4: OpenBLAS"): one cblas_sgemm (cblas.h), c = 1 op(a)
 * op(b) + 0 c, row-major. Each matrix's leading dimension is the length of its
 * rows as stored: a is stored [m, k], or [k, m] when transposed; b [k, n], or
 * [n, k]. cblas takes int sizes: refuse larger ones rather than let them wrap. */
status lab_matmul_openblas(const float *a, bool trans_a, const float *b, bool trans_b, float *c, int64_t m,
                           int64_t n, int64_t k)
{
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_matmul_openblas: m=%lld n=%lld k=%lld; cblas_sgemm takes int sizes", (long long)m,
                    (long long)n, (long long)k);
    const int lda = (int)(trans_a ? m : k), ldb = (int)(trans_b ? k : n);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, 1.0f, a, lda, b, ldb, 0.0f, c, (int)n);
    return STATUS_OK;
}

/* Step 5 (README, "Step 5: GFLOP/s and the fraction of peak"): each of the
 * m n cells of c takes k multiplications and k additions. */
status lab_gflops(int64_t m, int64_t n, int64_t k, double seconds, double *gflops)
{
    if (!(seconds > 0.0))
        return fail(STATUS_BAD_ARGUMENT, "lab_gflops: seconds = %g; a time must be positive", seconds);
    *gflops = 2.0 * (double)m * (double)n * (double)k / seconds / 1e9;
    return STATUS_OK;
}

/* Step 5: the peak comes from the device's properties; 0 means unknown. */
status lab_fraction_of_peak(double gflops, device d, double *fraction)
{
    device_properties props;
    status s = device_get_properties(d, &props);
    if (s != STATUS_OK) return s;
    *fraction = props.peak_gflops > 0.0 ? gflops / props.peak_gflops : 0.0;
    return STATUS_OK;
}

/* ---- step 6: the naive kernel on a GPU -------------------------------------- */

/* Given: the simulated GPU's launcher of your kernel (naive_launch.h). */
void naive_matmul_on_sim(const void *args, void *stream)
{
    const naive_matmul_args *p = args;
    const dim3 grid = { p->grid_x, p->grid_y, 1 }, block = { p->block_x, p->block_y, 1 };
    LAUNCH(naive_matmul_kernel, grid, block, stream, p->a, p->b, p->c, p->m, p->n, p->k);
}

/* Given: a GPU, one device for all three, and shapes [m, k] x [k, n] -> [m, n]. */
static status check_naive_operands(const tensor *a, const tensor *b, const tensor *c)
{
    char sa[48], sb[48], sc[48];
    if (!a || !b || !c) return fail(STATUS_BAD_ARGUMENT, "lab_matmul_naive_gpu: a, b and c must not be NULL");
    const device d = tensor_device(c);
    if (!device_is_gpu(d))
        return fail(STATUS_WRONG_DEVICE,
                    "lab_matmul_naive_gpu: c is on %s, which is not a GPU.\n"
                    "  hint: the naive kernel runs on cuda:N or sim:N; on the CPU use lab_matmul_ikj",
                    device_name(d));
    if (!device_equal(tensor_device(a), d) || !device_equal(tensor_device(b), d))
        return fail(STATUS_WRONG_DEVICE,
                    "lab_matmul_naive_gpu: a, b and c are on %s, %s and %s; they must share one GPU",
                    device_name(tensor_device(a)), device_name(tensor_device(b)), device_name(d));
    if (tensor_dtype(a) != DTYPE_F32 || tensor_dtype(b) != DTYPE_F32 || tensor_dtype(c) != DTYPE_F32 ||
        tensor_shape(a).ndim != 2 || tensor_shape(b).ndim != 2 || tensor_shape(c).ndim != 2 ||
        tensor_dim(a, 1) != tensor_dim(b, 0) || tensor_dim(c, 0) != tensor_dim(a, 0) ||
        tensor_dim(c, 1) != tensor_dim(b, 1))
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_matmul_naive_gpu: shapes %s x %s -> %s; need float32 [m, k] x [k, n] -> [m, n]",
                    shape_format(tensor_shape(a), sa, sizeof sa),
                    shape_format(tensor_shape(b), sb, sizeof sb),
                    shape_format(tensor_shape(c), sc, sizeof sc));
    return STATUS_OK;
}

/* Step 6 (README, "Step 6: one thread per output cell"): write the kernel in
 * naive_kernel.cuh, then launch it here. Fill a naive_matmul_args
 * (naive_launch.h): the device pointers (tensor_data, tensor_data_const), the
 * sizes, blocks of 16 x 16 threads, and enough blocks to cover c, x along its
 * columns and y along its rows, rounded up. Then device_enqueue it on c's
 * device with the launcher for that kind of GPU: naive_matmul_on_cuda on a
 * cuda:N device, naive_matmul_on_sim on a sim:N one. */
status lab_matmul_naive_gpu(const tensor *a, const tensor *b, tensor *c)
{
    status s = check_naive_operands(a, b, c);
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
        .grid_x = (unsigned)((n + side - 1) / side),
        .grid_y = (unsigned)((m + side - 1) / side),
        .block_x = side,
        .block_y = side,
    };
    const device d = tensor_device(c);
    return device_enqueue(d, d.kind == DEVICE_CUDA ? naive_matmul_on_cuda : naive_matmul_on_sim, &args,
                          sizeof args);
}
