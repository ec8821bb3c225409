// launch.cu: your kernels on a real GPU (given: not a step; launch.h says how
// it fits together).
//
// nvcc compiles here the very layer_kernels.cuh that launch.c runs on the
// simulated GPU. It is included with <...> on purpose: each program compiles
// the kernels beside its own lab.c (lab.cmake).
#include <cmath>
#include <cstdint>

#include <cuda_runtime.h>

#include "launch.h"

#include <layer_kernels.cuh>

#include "given_kernels.cuh"

// Called by device_launch on a cuda:N device, on the host, at once: each only
// starts its kernel on the device's stream, which returns at once too. A launch
// the GPU refuses makes device_launch return the error.
namespace
{
dim3 blocks_for(int64_t threads) { return dim3(launch_blocks(threads), 1, 1); }
const dim3 block(LAUNCH_BLOCK, 1, 1);
} // namespace

void conv_direct_on_cuda(const void *args, void *stream)
{
    const conv_args *p = static_cast<const conv_args *>(args);
    const conv_dims d = p->d;
    const int64_t threads = d.n * d.k * d.h_out * d.w_out;
    if (threads <= 0) return;
    conv_direct_kernel<<<blocks_for(threads), block, 0, static_cast<cudaStream_t>(stream)>>>(p->x, p->w, p->y,
                                                                                             d);
}

void im2col_on_cuda(const void *args, void *stream)
{
    const im2col_args *p = static_cast<const im2col_args *>(args);
    const conv_dims d = p->d;
    const int64_t threads = d.n * d.c * d.h_out * d.w_out;
    if (threads <= 0) return;
    im2col_kernel<<<blocks_for(threads), block, 0, static_cast<cudaStream_t>(stream)>>>(p->x, p->cols, d);
}

void softmax_rows_on_cuda(const void *args, void *stream)
{
    const softmax_args *p = static_cast<const softmax_args *>(args);
    if (p->rows <= 0) return;
    softmax_rows_kernel<<<blocks_for(p->rows), block, 0, static_cast<cudaStream_t>(stream)>>>(
        p->scores, p->rows, p->cols, p->scale, p->causal);
}

void reorder_on_cuda(const void *args, void *stream)
{
    const reorder_args *p = static_cast<const reorder_args *>(args);
    const int64_t threads = p->n * p->k * p->pixels;
    if (threads <= 0) return;
    reorder_kernel<<<blocks_for(threads), block, 0, static_cast<cudaStream_t>(stream)>>>(
        p->product, p->y, p->n, p->k, p->pixels);
}

void flash_attention_on_cuda(const void *args, void *stream)
{
    const flash_args *p = static_cast<const flash_args *>(args);
    if (p->n <= 0) return;
    flash_attention_kernel<<<dim3(flash_blocks(p->n), 1, 1), dim3(FLASH_THREADS, 1, 1), 0,
                             static_cast<cudaStream_t>(stream)>>>(p->q, p->k, p->v, p->out, p->n, p->d,
                                                                  p->scale, p->causal);
}
