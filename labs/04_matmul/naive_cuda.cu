// naive_cuda.cu: the naive kernel on a real GPU (given: not a step).
//
// nvcc compiles the kernel text of naive_kernel.cuh here, the very file that
// lab.c runs on the simulated GPU. It is included with <...> on purpose: each
// program must compile the kernel that sits beside its own lab.c, and the build
// (lab.cmake) puts that directory first on the program's include path.
#include <cstdint>

#include <cuda_runtime.h>

#include "naive_launch.h"

#include <naive_kernel.cuh>

// Queued by device_enqueue on a cuda:N device: runs on the host at once and
// only starts the kernel on the device's stream, which returns at once too.
void naive_matmul_on_cuda(const void *args, void *stream)
{
    const naive_matmul_args *p = static_cast<const naive_matmul_args *>(args);
    const dim3 grid(p->grid_x, p->grid_y, 1), block(p->block_x, p->block_y, 1);
    naive_matmul_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(p->a, p->b, p->c, p->m, p->n,
                                                                               p->k);
}
