// bench_memory_cuda.cu: lab 09's kernels, and cudaMemcpy device to device, on
// a real GPU (bench_memory.h). The kernels are the very text of lab 09's
// solution, which the C compiler builds for sim:0 in the lab itself; in the
// student copy, which has no solutions, only cudaMemcpy is here.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "bench_memory.h"

#ifdef BENCH_WITH_LAB09
#include "launch.h"

#include "labkit/cuda_emulation.h"

#include "given_kernels.cuh"
#include <memory_kernels.cuh>
#endif

namespace
{

void check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess) return;
    std::fprintf(stderr, "bench_memory: %s failed: %s\n", what, cudaGetErrorString(err));
    std::exit(1);
}

// The fastest of `reps` runs of launch(), each between two events on the
// default stream, after one untimed run (the GPU loads the kernel).
template <typename Launch> double fastest_seconds(int index, int reps, Launch launch)
{
    check(cudaSetDevice(index), "cudaSetDevice");
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    launch();
    check(cudaGetLastError(), "the launch");
    check(cudaDeviceSynchronize(), "the first run");
    float best = INFINITY;
    for (int r = 0; r < reps; ++r) {
        float ms = 0.0f;
        check(cudaEventRecord(start), "cudaEventRecord");
        launch();
        check(cudaEventRecord(stop), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        check(cudaGetLastError(), "the launch");
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        best = ms < best ? ms : best;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return best * 1e-3;
}

#ifdef BENCH_WITH_LAB09
unsigned blocks_for(int64_t threads, int64_t size) { return (unsigned)((threads + size - 1) / size); }
#endif

} // namespace

int bench_memory_has_lab09(void)
{
#ifdef BENCH_WITH_LAB09
    return 1;
#else
    return 0;
#endif
}

double bench_memory_d2d_seconds(int index, void *dst, const void *src, size_t bytes, int reps)
{
    return fastest_seconds(index, reps, [&] { cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice); });
}

#ifdef BENCH_WITH_LAB09

// The grids of labs/09_memory/launch.c.
double bench_memory_stream_seconds(int index, int kernel, const float *in, float *out, int64_t n,
                                   int64_t stride, int reps)
{
    const int64_t threads = kernel == 2 ? (n + stride - 1) / stride * stride : n;
    const unsigned blocks = blocks_for(threads, LAUNCH_BLOCK);
    return fastest_seconds(index, reps, [&] {
        if (kernel == 0)
            copy_kernel<<<blocks, LAUNCH_BLOCK>>>(in, out, n);
        else if (kernel == 1)
            scale_kernel<<<blocks, LAUNCH_BLOCK>>>(in, out, 2.0f, n);
        else
            strided_copy_kernel<<<blocks, LAUNCH_BLOCK>>>(in, out, n, stride);
    });
}

double bench_memory_product_seconds(int index, int kernel, const float *a, const float *b, float *c,
                                    int64_t n, int reps)
{
    const dim3 grid(blocks_for(n, TILE), blocks_for(n, TILE)), block(TILE, TILE);
    return fastest_seconds(index, reps, [&] {
        if (kernel == 0)
            naive_matmul_kernel<<<grid, block>>>(a, b, c, n, n, n);
        else
            tiled_matmul_kernel<<<grid, block>>>(a, b, c, n, n, n);
    });
}

double bench_memory_sum_seconds(int index, int kernel, const float *x, int64_t n, float *total, int reps)
{
    const unsigned blocks = blocks_for(n, REDUCE_BLOCK);
    return fastest_seconds(index, reps, [&] {
        sum_reset_kernel<<<1, 1>>>(total, nullptr);
        if (kernel == 0)
            sum_atomic_kernel<<<blocks, REDUCE_BLOCK>>>(x, n, total, nullptr);
        else if (kernel == 1)
            sum_block_kernel<<<blocks, REDUCE_BLOCK>>>(x, n, total, nullptr);
        else
            sum_warp_kernel<<<blocks, REDUCE_BLOCK>>>(x, n, total, nullptr);
    });
}

#else

double bench_memory_stream_seconds(int, int, const float *, float *, int64_t, int64_t, int) { return -1.0; }
double bench_memory_product_seconds(int, int, const float *, const float *, float *, int64_t, int)
{
    return -1.0;
}
double bench_memory_sum_seconds(int, int, const float *, int64_t, float *, int) { return -1.0; }

#endif
