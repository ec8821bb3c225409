// naive_launch.cu: your kernel on a real GPU (given: not a step; naive_launch.h
// says how it fits together).
//
// nvcc compiles here the very naive_kernel.cuh that naive_launch.c runs on the
// simulated GPU. It is included with <...> on purpose: each program compiles
// the kernel beside its own lab.c (lab.cmake).
#include <cstdint>

#include <cuda_runtime.h>

#include "naive_launch.h"

#include <naive_kernel.cuh>

// Called by device_launch on a cuda:N device, on the host, at once: it only
// starts the kernel on the device's stream, which returns at once too. A launch
// the GPU refuses (more than 1024 threads in a block, say) makes device_launch
// return the error.
void naive_matmul_on_cuda(const void *args, void *stream)
{
    const naive_matmul_args *p = static_cast<const naive_matmul_args *>(args);
    const dim3 grid(p->grid_x, p->grid_y, 1), block(p->block_x, p->block_y, 1);
    naive_matmul_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(p->a, p->b, p->c, p->m, p->n,
                                                                               p->k);
}
