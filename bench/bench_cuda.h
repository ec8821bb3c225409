/* bench_cuda.h: what a user would call instead of the kit on a real GPU:
 * cuBLAS, cudaMemcpy and a bare kernel launch, called directly (bench_cuda.cu,
 * built only with CUDA). Each returns seconds. The benches set the kit's paths
 * beside these, in the same run and on the same buffers. */
#ifndef BENCH_CUDA_H
#define BENCH_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Median seconds of `reps` row-major products c = a b (n x n, float32, device
 * pointers on GPU `index`) by cublasSgemm on its own handle and stream,
 * each synchronised. */
double bench_cuda_sgemm_seconds(int index, const float *a, const float *b, float *c, int n, int reps);

/* Median seconds of `reps` cudaMemcpy of `bytes`, host -> device (to_device)
 * or back, between host buffer `host` and device pointer `device_ptr`. */
double bench_cuda_memcpy_seconds(int index, void *device_ptr, void *host, size_t bytes, int to_device,
                                 int reps);

/* Median host seconds of one launch of an empty kernel <<<1, 1>>> on a stream
 * of GPU `index`, over `launches` launches (synchronised every 256). */
double bench_cuda_launch_seconds(int index, int launches);

#ifdef __cplusplus
}
#endif
#endif
