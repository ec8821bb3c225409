// test_cooperative_cuda.cu: the cooperative kernels of
// test_cooperative_kernels.cuh on a real GPU.
//
// nvcc compiles here the very kernel text that test_cooperative.c runs on the
// CPU and the simulated GPU; shared memory, barriers, shuffles and atomics are
// CUDA's own. labkit/cuda_emulation.h gives nvcc only DYNAMIC_SHARED.
#include <cstdint>

#include <cuda_runtime.h>

#include "labkit/cuda_emulation.h"
#include "test_cooperative_launch.h"

#include "test_cooperative_kernels.cuh"

static cudaStream_t stream_of(void *stream) { return static_cast<cudaStream_t>(stream); }

void tiled_matmul_on_cuda(const void *args, void *stream)
{
    const matmul_args *a = static_cast<const matmul_args *>(args);
    const dim3 grid((a->n + TILE - 1) / TILE, (a->m + TILE - 1) / TILE), block(TILE, TILE);
    tiled_matmul_kernel<<<grid, block, 0, stream_of(stream)>>>(a->a, a->b, a->c, a->m, a->n, a->k);
}

void block_sum_on_cuda(const void *args, void *stream)
{
    const vector_pair_args *a = static_cast<const vector_pair_args *>(args);
    block_sum_kernel<<<a->grid, a->block, 0, stream_of(stream)>>>(a->in, a->out, a->n);
}

void warp_sum_on_cuda(const void *args, void *stream)
{
    const vector_pair_args *a = static_cast<const vector_pair_args *>(args);
    warp_sum_kernel<<<a->grid, a->block, 0, stream_of(stream)>>>(a->in, a->out, a->n);
}

void shuffle_on_cuda(const void *args, void *stream)
{
    const out_args *a = static_cast<const out_args *>(args);
    shuffle_kernel<<<a->grid, a->block, 0, stream_of(stream)>>>(a->out);
}

void histogram_on_cuda(const void *args, void *stream)
{
    const histogram_args *a = static_cast<const histogram_args *>(args);
    histogram_kernel<<<a->grid, a->block, 0, stream_of(stream)>>>(a->values, a->n, a->bins);
}

void atomics_on_cuda(const void *args, void *stream)
{
    const atomics_args *a = static_cast<const atomics_args *>(args);
    atomics_kernel<<<a->grid, a->block, 0, stream_of(stream)>>>(a->v, a->n, a->ints, a->uints, a->floats,
                                                                a->wide);
}

void reverse_block_on_cuda(const void *args, void *stream)
{
    const vector_pair_args *a = static_cast<const vector_pair_args *>(args);
    reverse_block_kernel<<<a->grid, a->block, a->shared_bytes, stream_of(stream)>>>(a->in, a->out, a->n);
}
