/* bench_cuda.h: what a user would call instead of the kit on a real GPU:
 * cuBLAS, cudaMemcpy and a bare kernel launch, called directly (bench_cuda.cu,
 * built only with CUDA). Each returns seconds. The benches set the kit's paths
 * beside these, in the same run and on the same buffers. Also a tuned row
 * softmax, CUDA-only, that bench_attention queues with the kit's products. */
#ifndef BENCH_CUDA_H
#define BENCH_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Median seconds of `reps` row-major products c = a b (n x n, float32, device
 * pointers on GPU `index`) by cublasSgemm on its own handle and stream,
 * each synchronised. */
double bench_cuda_sgemm_seconds(int index, const float *a, const float *b, float *c, int n, int reps);

/* The operands of bench_cuda_gemm_ex_seconds, as op_matmul multiplies them at
 * each precision (labkit/ops.h): float32, float32 read as TF32, bf16, f16. */
enum bench_gemm_type { BENCH_GEMM_F32 = 0, BENCH_GEMM_TF32, BENCH_GEMM_BF16, BENCH_GEMM_F16 };

/* Median seconds per product over `reps` runs of `batch` row-major products
 * c = a b queued back to back and synchronised once (n x n; a and b of
 * `type`, c float32; device pointers on GPU `index`) by cublasGemmEx on its own
 * handle and stream, float32 accumulation (CUBLAS_COMPUTE_32F, or
 * CUBLAS_COMPUTE_32F_FAST_TF32 for BENCH_GEMM_TF32): the call the kit makes
 * for a tensor-core product, made directly. */
double bench_cuda_gemm_ex_seconds(int index, enum bench_gemm_type type, const void *a, const void *b,
                                  float *c, int n, int reps, int batch);

/* Median seconds of `reps` cudaMemcpy of `bytes`, host -> device (to_device)
 * or back, between host buffer `host` and device pointer `device_ptr`. */
double bench_cuda_memcpy_seconds(int index, void *device_ptr, void *host, size_t bytes, int to_device,
                                 int reps);

/* Median host seconds of one launch of an empty kernel <<<1, 1>>> on a stream
 * of GPU `index`, over `launches` launches (synchronised every 256). */
double bench_cuda_launch_seconds(int index, int launches);

/* In place, every row of scores [rows, cols] (device memory) becomes
 * softmax(scale x row): one block of 256 threads per row, the row held in
 * shared memory when it fits (up to 12288 columns) so that it is read from
 * memory once, the maximum and the sum reduced with warp shuffles. The tuned
 * kind (PyTorch's is alike), CUDA-only: it needs shared memory and barriers. */
typedef struct bench_softmax_args {
    float *scores;
    int64_t rows, cols;
    float scale;
} bench_softmax_args;

/* A kernel_fn (labkit/kernel.h) for device_launch on a cuda:N device: starts
 * the softmax of `args` (a bench_softmax_args) on `stream`. */
void bench_cuda_softmax_rows(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
