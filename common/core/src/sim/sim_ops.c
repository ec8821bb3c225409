/* sim_ops.c: the simulated GPU's operations: the shared kernels of ../kernels,
 * compiled by the C compiler through cuda_emulation.h, and OpenBLAS standing in
 * for cuBLAS. Runs on the simulated device's worker thread. */
#include <cblas.h>
#include <stddef.h>

#include "../op_call.h"
/* The library's kernels are tested: no crash indices (cuda_emulation.h). */
#define LABKIT_TRUSTED_KERNELS 1
#include "labkit/cuda_emulation.h"
#include "labkit/status.h"
#include "sim_ops.h"
#include "../backend.h"

typedef struct gpu_context {
    double *partials;
} gpu_context;

/* The matrix product, defined below, once the kernels are in. */
static status gpu_gemm(gpu_context *ctx, const op_call *op, bool *bias_added);

/* A launch on the simulated GPU cannot be refused. */
static status gpu_launch_status(gpu_context *ctx)
{
    (void)ctx;
    return STATUS_OK;
}

#include "../kernels/gpu_ops.cuh"
#include "../kernels/tf32.cuh"

/* An input as a tensor core would read it, into float32 scratch by the
 * single-source kernels: bf16 and f16 widened, float32 rounded to TF32. */
static void widen_on_worker(gpu_context *ctx, const op_call *op, const float *x, const uint16_t *x16,
                            float *out, int64_t n)
{
    const dim3 grid = blocks_for(n), block = dims(BLOCK_SIZE);
    if (op->in_type == DTYPE_BF16)
        LAUNCH(bf16_to_f32_kernel, grid, block, ctx, x16, out, n);
    else if (op->in_type == DTYPE_F16)
        LAUNCH(f16_to_f32_kernel, grid, block, ctx, x16, out, n);
    else
        LAUNCH(f32_to_tf32_kernel, grid, block, ctx, x, out, n);
}

/* Row-major out[m, n] = op(a) op(b), as cuBLAS does it on a real GPU. The
 * simulated GPU has no tensor cores: a bf16, f16 or TF32 product is OpenBLAS's
 * float32 product of the inputs widened (or rounded to TF32) into the scratch
 * that sim_backend.c gave the call: the same numbers as the CPU's, bit for bit.
 * The bias is added in the product's epilogue, as cuBLASLt's does on a real
 * GPU: a loop on the worker right after OpenBLAS, where the kernel that added
 * it ran every element as a GPU thread of its own. Each element gets one
 * rounded addition either way: the same numbers, bit for bit. */
static status gpu_gemm(gpu_context *ctx, const op_call *op, bool *bias_added)
{
    blas_warn_if_slow_kernels();
    const int m = (int)op->m, n = (int)op->cols, k = (int)op->k;
    const float *a = op->a, *b = op->b;
    if (matmul_needs_scratch(op)) {
        float *wa = op->scratch, *wb = op->scratch + op->m * op->k;
        widen_on_worker(ctx, op, op->a, op->a16, wa, op->m * op->k);
        widen_on_worker(ctx, op, op->b, op->b16, wb, op->k * op->cols);
        a = wa, b = wb;
    }
    cblas_sgemm(CblasRowMajor, op->trans_a ? CblasTrans : CblasNoTrans,
                op->trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, op->trans_a ? m : k, b,
                op->trans_b ? k : n, 0.0f, op->out, n);
    if (op->c) {
        for (int64_t r = 0; r < op->m; ++r)
            for (int64_t c = 0; c < op->cols; ++c) op->out[r * op->cols + c] += op->c[c];
        *bias_added = true;
    }
    return STATUS_OK;
}

size_t sim_scratch_doubles(void) { return REDUCE_THREADS; }

void sim_run_op(double *scratch, const op_call *op)
{
    gpu_context ctx = { scratch };
    gpu_run_op(&ctx, op);
}
