// cuda_ops.cu: the real GPU's operations: the shared kernels of ../kernels,
// compiled by nvcc, and cuBLAS for the matrix product. Every call is queued on
// the device's stream and returns at once.
#include <cstdio>

#include "cuda_internal.h"

struct gpu_context {
    cudaStream_t stream;
    const cublas_api *api;
    cublasHandle_t blas;
    cuda_lt *lt;
    double *partials;
};

#define LAUNCH(kernel, grid, block, ctx, ...) kernel<<<(grid), (block), 0, (ctx)->stream>>>(__VA_ARGS__)

// cuBLAS is column-major. A row-major [m, n] matrix read column-major is its
// transpose, so out = op(a) op(b) (row-major) is out^T = op(b)^T op(a)^T: the
// same call with a and b swapped and m and n swapped. b, stored [k, n] (or
// [n, k] when trans_b), read column-major is b^T with leading dimension n (or
// op(b) with leading dimension k, which CUBLAS_OP_T turns into op(b)^T); a
// likewise with k (or m).
static status float32_gemm(gpu_context *ctx, const op_call *op)
{
    const int m = (int)op->m, n = (int)op->cols, k = (int)op->k;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = ctx->api->sgemm(ctx->blas, op->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                       op->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, op->b,
                                       op->trans_b ? k : n, op->a, op->trans_a ? m : k, &zero, op->out, n);
    if (s != CUBLAS_STATUS_SUCCESS)
        return fail(STATUS_BACKEND_FAILED, "%s:%d: cublasSgemm failed: %s (m=%d n=%d k=%d)", __FILE__,
                    __LINE__, ctx->api->status_string(s), m, n, k);
    return STATUS_OK;
}

// The tensor cores' product: bf16 or f16 inputs, or float32 inputs read as
// TF32, accumulated in float32 (CUBLAS_COMPUTE_32F, or its _FAST_TF32 form)
// and written as float32. The same swapped column-major call as above.
static status tensor_core_gemm(gpu_context *ctx, const op_call *op)
{
    const int m = (int)op->m, n = (int)op->cols, k = (int)op->k;
    const float one = 1.0f, zero = 0.0f; // the scale type of both compute types is float
    const bool wide = op->in_type == DTYPE_F32;
    const cudaDataType in = wide ? CUDA_R_32F : op->in_type == DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    const void *a = wide ? (const void *)op->a : (const void *)op->a16;
    const void *b = wide ? (const void *)op->b : (const void *)op->b16;
    const cublasComputeType_t compute = op->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cublasStatus_t s = ctx->api->gemm_ex(ctx->blas, op->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                         op->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, b, in,
                                         op->trans_b ? k : n, a, in, op->trans_a ? m : k, &zero, op->out,
                                         CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        return fail(STATUS_BACKEND_FAILED, "%s:%d: cublasGemmEx (%s inputs%s) failed: %s (m=%d n=%d k=%d)",
                    __FILE__, __LINE__,
                    wide                        ? "f32"
                    : op->in_type == DTYPE_BF16 ? "bf16"
                                                : "f16",
                    op->tf32 ? " as TF32" : "", ctx->api->status_string(s), m, n, k);
    return STATUS_OK;
}

// A float32 product with a bias is one cuBLASLt call, the bias added in its
// epilogue (cuda_blas_lt.h); where cuBLASLt cannot make it, and for the other
// products, cuBLAS's call, and gpu_ops.cuh adds the bias with a kernel.
static status gpu_gemm(gpu_context *ctx, const op_call *op, bool *bias_added)
{
    TRY(lt_gemm_bias(ctx->lt, ctx->stream, op, bias_added));
    if (*bias_added) return STATUS_OK;
    return op->in_type == DTYPE_F32 && !op->tf32 ? float32_gemm(ctx, op) : tensor_core_gemm(ctx, op);
}

// A launch that the driver refused (bad configuration, no kernel image for this
// GPU's architecture) shows up here, right after it.
static status gpu_launch_status(gpu_context *ctx)
{
    (void)ctx;
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) return STATUS_OK;
    return fail(STATUS_BACKEND_FAILED,
                "%s:%d: a kernel launch failed: %s (%s)\n"
                "  hint: cudaErrorNoKernelImageForDevice means this GPU's architecture was not built; "
                "configure with -DCMAKE_CUDA_ARCHITECTURES=<its compute capability, e.g. 86>",
                __FILE__, __LINE__, cudaGetErrorName(err), cudaGetErrorString(err));
}

#include "../kernels/gpu_ops.cuh"

size_t cuda_scratch_doubles(void) { return REDUCE_THREADS; }

status cuda_run_op(cudaStream_t stream, const cublas_api *api, cublasHandle_t blas, cuda_lt *lt,
                   double *scratch, const op_call *op)
{
    gpu_context ctx = { stream, api, blas, lt, scratch };
    return gpu_run_op(&ctx, op);
}
