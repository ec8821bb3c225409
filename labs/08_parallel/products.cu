// products.cu: the kernel of step 3 on a real GPU (given; products.h says
// what it is for). nvcc compiles here the very product_kernel.cuh that
// products.c runs on a simulated GPU.
#include <cstdint>

#include <cuda_runtime.h>

#include "products.h"

#include "product_kernel.cuh"

// Called by device_launch on a cuda:N device, on the host, at once: it only
// starts the kernel on the device's stream. A real GPU notes no timing: the
// wall clock around lab_run_at_once tells whether two GPUs worked at once.
void product_on_cuda(const void *args, void *stream)
{
    const product_args *p = static_cast<const product_args *>(args);
    const dim3 grid(p->blocks, 1, 1), block(PRODUCT_BLOCK_THREADS, 1, 1);
    product_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(p->a, p->b, p->c, p->n);
}
