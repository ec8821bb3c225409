// bench_cuda.cu: cuBLAS, cudaMemcpy and a bare kernel launch called directly,
// the baselines of the benches on a real GPU (bench_cuda.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench_cuda.h"

namespace
{

double now_seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess) return;
    std::fprintf(stderr, "bench_cuda: %s failed: %s\n", what, cudaGetErrorString(err));
    std::exit(1);
}

__global__ void empty_kernel() {}

// ---- the tuned softmax of bench_attention ----------------------------------

constexpr int softmax_block = 256;             // threads per row
constexpr int64_t softmax_cached_cols = 12288; // 48 KiB of shared memory: a row read once

__device__ float warp_max(float v)
{
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Every thread of the block gets the block's maximum (or sum): each warp
// reduces its own values, then every warp reduces the warps' results.
__device__ float block_reduce(float v, float *partial, bool maximum)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    v = maximum ? warp_max(v) : warp_sum(v);
    __syncthreads(); // the previous reduction's readers are done with partial
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = lane < warps ? partial[lane] : (maximum ? -INFINITY : 0.0f);
    return maximum ? warp_max(v) : warp_sum(v);
}

// One block per row: the maximum of scale x row, the sum of exp(scale x row -
// max), then each value over the sum; with `cached`, the row's scaled values
// and then their exponentials stay in shared memory between the passes.
__global__ void softmax_rows_block(float *scores, int64_t cols, float scale, bool cached)
{
    extern __shared__ float row_cache[];
    __shared__ float partial[32];
    float *row = scores + static_cast<int64_t>(blockIdx.x) * cols;
    float max = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        const float v = scale * row[j];
        if (cached) row_cache[j] = v;
        max = fmaxf(max, v);
    }
    max = block_reduce(max, partial, true);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        const float e = expf((cached ? row_cache[j] : scale * row[j]) - max);
        if (cached) row_cache[j] = e;
        sum += e;
    }
    const float inverse = 1.0f / block_reduce(sum, partial, false);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        row[j] = (cached ? row_cache[j] : expf(scale * row[j] - max)) * inverse;
}

// A cuBLAS handle of the bench's own on a new stream of device `index`, as a
// program calling cuBLAS directly would make them; exits on failure.
cublasHandle_t cublas_on_new_stream(int index, cudaStream_t *stream)
{
    check(cudaSetDevice(index), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cublasHandle_t handle;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS ||
        cublasSetStream(handle, *stream) != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "bench_cuda: cublasCreate failed\n");
        std::exit(1);
    }
    return handle;
}

} // namespace

extern "C" double bench_cuda_sgemm_seconds(int index, const float *a, const float *b, float *c, int n,
                                           int reps)
{
    cudaStream_t stream;
    const cublasHandle_t handle = cublas_on_new_stream(index, &stream);
    const float one = 1.0f, zero = 0.0f;
    std::vector<double> times;
    for (int r = -1; r < reps; ++r) { // r = -1: a warm-up
        const double start = now_seconds();
        // Row-major c = a b is column-major c^T = b^T a^T: swap the operands.
        cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n);
        check(cudaStreamSynchronize(stream), "cublasSgemm");
        if (r >= 0) times.push_back(now_seconds() - start);
    }
    cublasDestroy(handle);
    cudaStreamDestroy(stream);
    return median(times);
}

extern "C" double bench_cuda_gemm_ex_seconds(int index, enum bench_gemm_type type, const void *a,
                                             const void *b, float *c, int n, int reps, int batch)
{
    cudaStream_t stream;
    const cublasHandle_t handle = cublas_on_new_stream(index, &stream);
    const cudaDataType in = type == BENCH_GEMM_BF16  ? CUDA_R_16BF
                            : type == BENCH_GEMM_F16 ? CUDA_R_16F
                                                     : CUDA_R_32F;
    const cublasComputeType_t compute =
        type == BENCH_GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const float one = 1.0f, zero = 0.0f;
    std::vector<double> times;
    for (int r = -1; r < reps; ++r) { // r = -1: a warm-up (cuBLAS picks its kernel)
        const double start = now_seconds();
        for (int i = 0; i < batch; ++i) {
            // Row-major c = a b is column-major c^T = b^T a^T: swap the operands.
            const cublasStatus_t s =
                cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, in, n, a, in, n, &zero, c,
                             CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT);
            if (s != CUBLAS_STATUS_SUCCESS) {
                std::fprintf(stderr, "bench_cuda: cublasGemmEx failed: %s\n", cublasGetStatusString(s));
                std::exit(1);
            }
        }
        check(cudaStreamSynchronize(stream), "cublasGemmEx");
        if (r >= 0) times.push_back((now_seconds() - start) / batch);
    }
    cublasDestroy(handle);
    cudaStreamDestroy(stream);
    return median(times);
}

extern "C" double bench_cuda_memcpy_seconds(int index, void *device_ptr, void *host, size_t bytes,
                                            int to_device, int reps)
{
    check(cudaSetDevice(index), "cudaSetDevice");
    std::vector<double> times;
    for (int r = -1; r < reps; ++r) {
        const double start = now_seconds();
        if (to_device)
            check(cudaMemcpy(device_ptr, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
        else
            check(cudaMemcpy(host, device_ptr, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
        if (r >= 0) times.push_back(now_seconds() - start);
    }
    return median(times);
}

extern "C" double bench_cuda_launch_seconds(int index, int launches)
{
    check(cudaSetDevice(index), "cudaSetDevice");
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    std::vector<double> times;
    for (int i = 0; i < launches; ++i) {
        if (i % 256 == 0) check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        const double start = now_seconds();
        empty_kernel<<<1, 1, 0, stream>>>();
        times.push_back(now_seconds() - start);
    }
    check(cudaStreamSynchronize(stream), "empty_kernel");
    cudaStreamDestroy(stream);
    return median(times);
}

extern "C" void bench_cuda_softmax_rows(const void *args, void *stream)
{
    const bench_softmax_args *p = static_cast<const bench_softmax_args *>(args);
    if (p->rows <= 0 || p->cols <= 0) return;
    const bool cached = p->cols <= softmax_cached_cols;
    const size_t shared = cached ? static_cast<size_t>(p->cols) * sizeof(float) : 0;
    softmax_rows_block<<<static_cast<unsigned>(p->rows), softmax_block, shared,
                         static_cast<cudaStream_t>(stream)>>>(p->scores, p->cols, p->scale, cached);
}
