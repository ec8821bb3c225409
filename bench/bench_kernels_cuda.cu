// bench_kernels_cuda.cu: bench_kernels' products on a real GPU: the very
// kernel text the C compiler builds for sim:0, compiled by nvcc.
#include <cstdint>

#include <cuda_runtime.h>

#include "bench_kernels.h"

#include "bench_kernels.cuh"
#ifdef BENCH_WITH_NAIVE
#include <naive_kernel.cuh>
#endif

static dim3 tiles_of(int n)
{
    const unsigned t = (unsigned)(n + BENCH_TILE - 1) / BENCH_TILE;
    return dim3(t, t);
}

void bench_tiled_on_cuda(const void *args, void *stream)
{
    const bench_product_args *p = static_cast<const bench_product_args *>(args);
    bench_tiled_kernel<<<tiles_of(p->n), dim3(BENCH_TILE, BENCH_TILE), 0,
                         static_cast<cudaStream_t>(stream)>>>(p->a, p->b, p->c, p->n);
}

void bench_naive_on_cuda(const void *args, void *stream)
{
#ifdef BENCH_WITH_NAIVE
    const bench_product_args *p = static_cast<const bench_product_args *>(args);
    naive_matmul_kernel<<<tiles_of(p->n), dim3(BENCH_TILE, BENCH_TILE), 0,
                          static_cast<cudaStream_t>(stream)>>>(p->a, p->b, p->c, p->n64, p->n64, p->n64);
#else
    (void)args, (void)stream;
#endif
}
