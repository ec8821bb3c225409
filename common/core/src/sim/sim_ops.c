/* sim_ops.c: the simulated GPU's operations: the shared kernels of ../kernels,
 * compiled by the C compiler through cuda_emulation.h, and OpenBLAS standing in
 * for cuBLAS. Runs on the simulated device's worker thread. */
#include <cblas.h>
#include <stddef.h>

#include "../op_call.h"
#include "labkit/cuda_emulation.h"
#include "labkit/status.h"
#include "sim_ops.h"
#include "../backend.h"

_Thread_local dim3 blockIdx, blockDim, threadIdx, gridDim;

typedef struct gpu_context {
    double *partials;
} gpu_context;

/* Row-major out[m, n] = op(a) op(b), as cuBLAS does it on a real GPU. */
static status gpu_gemm(gpu_context *ctx, const op_call *op)
{
    (void)ctx;
    blas_warn_if_slow_kernels();
    const int m = (int)op->m, n = (int)op->cols, k = (int)op->k;
    cblas_sgemm(CblasRowMajor, op->trans_a ? CblasTrans : CblasNoTrans,
                op->trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, op->a, op->trans_a ? m : k, op->b,
                op->trans_b ? k : n, 0.0f, op->out, n);
    return STATUS_OK;
}

/* A launch on the simulated GPU cannot be refused. */
static status gpu_launch_status(gpu_context *ctx)
{
    (void)ctx;
    return STATUS_OK;
}

#include "../kernels/gpu_ops.cuh"

size_t sim_scratch_doubles(void) { return REDUCE_THREADS; }

void sim_run_op(double *scratch, const op_call *op)
{
    gpu_context ctx = { scratch };
    gpu_run_op(&ctx, op);
}
