// launch.cu: your kernels on a real GPU (given: not a step; launch.h says how
// it fits together).
//
// nvcc compiles here the very memory_kernels.cuh that launch.c runs on the
// simulated GPU. It is included with <...> on purpose: each program compiles
// the kernels beside its own lab.c (lab.cmake). labkit/cuda_emulation.h gives
// nvcc nothing but DYNAMIC_SHARED; __shared__, __syncthreads(), the shuffles
// and atomicAdd are CUDA's own here.
#include <cstdint>

#include <cuda_runtime.h>

#include "launch.h"

#include "labkit/cuda_emulation.h"

#include "given_kernels.cuh"
#include <memory_kernels.cuh>

// Called by device_launch on a cuda:N device, on the host, at once: each only
// starts its kernels on the device's stream, which returns at once too. A
// launch the GPU refuses makes device_launch return the error.
namespace
{
cudaStream_t on(void *stream) { return static_cast<cudaStream_t>(stream); }
const dim3 tile_block(TILE, TILE, 1);
const dim3 transpose_block(TRANSPOSE_TILE, TRANSPOSE_ROWS, 1);
} // namespace

void copy_on_cuda(const void *args, void *stream)
{
    const stream_args *p = static_cast<const stream_args *>(args);
    copy_kernel<<<p->blocks, p->threads, 0, on(stream)>>>(p->in, p->out, p->n);
}

void scale_on_cuda(const void *args, void *stream)
{
    const stream_args *p = static_cast<const stream_args *>(args);
    scale_kernel<<<p->blocks, p->threads, 0, on(stream)>>>(p->in, p->out, p->alpha, p->n);
}

void strided_on_cuda(const void *args, void *stream)
{
    const stream_args *p = static_cast<const stream_args *>(args);
    strided_copy_kernel<<<p->blocks, p->threads, 0, on(stream)>>>(p->in, p->out, p->n, p->stride);
}

void naive_on_cuda(const void *args, void *stream)
{
    const product_args *p = static_cast<const product_args *>(args);
    naive_matmul_kernel<<<dim3(p->grid_x, p->grid_y, 1), tile_block, 0, on(stream)>>>(p->a, p->b, p->c, p->m,
                                                                                      p->n, p->k);
}

void tiled_on_cuda(const void *args, void *stream)
{
    const product_args *p = static_cast<const product_args *>(args);
    tiled_matmul_kernel<<<dim3(p->grid_x, p->grid_y, 1), tile_block, 0, on(stream)>>>(p->a, p->b, p->c, p->m,
                                                                                      p->n, p->k);
}

// The total (and the counter) to 0, then the sum, both on the stream.
void sum_atomic_on_cuda(const void *args, void *stream)
{
    const sum_args *p = static_cast<const sum_args *>(args);
    sum_reset_kernel<<<1, 1, 0, on(stream)>>>(p->total, p->atomics);
    sum_atomic_kernel<<<p->blocks, REDUCE_BLOCK, 0, on(stream)>>>(p->x, p->n, p->total, p->atomics);
}

void sum_block_on_cuda(const void *args, void *stream)
{
    const sum_args *p = static_cast<const sum_args *>(args);
    sum_reset_kernel<<<1, 1, 0, on(stream)>>>(p->total, p->atomics);
    sum_block_kernel<<<p->blocks, REDUCE_BLOCK, 0, on(stream)>>>(p->x, p->n, p->total, p->atomics);
}

void sum_warp_on_cuda(const void *args, void *stream)
{
    const sum_args *p = static_cast<const sum_args *>(args);
    sum_reset_kernel<<<1, 1, 0, on(stream)>>>(p->total, p->atomics);
    sum_warp_kernel<<<p->blocks, REDUCE_BLOCK, 0, on(stream)>>>(p->x, p->n, p->total, p->atomics);
}

void naive_transpose_on_cuda(const void *args, void *stream)
{
    const transpose_args *p = static_cast<const transpose_args *>(args);
    naive_transpose_kernel<<<dim3(p->grid_x, p->grid_y, 1), transpose_block, 0, on(stream)>>>(
        p->in, p->out, p->rows, p->cols);
}

void transpose_on_cuda(const void *args, void *stream)
{
    const transpose_args *p = static_cast<const transpose_args *>(args);
    transpose_kernel<<<dim3(p->grid_x, p->grid_y, 1), transpose_block, 0, on(stream)>>>(p->in, p->out,
                                                                                        p->rows, p->cols);
}
