// test_kernel_cuda.cu: the kernels of test_kernels.cuh on a real GPU.
//
// nvcc compiles here the very kernel text that test_kernel.c runs on the CPU
// and the simulated GPU. device_launch calls these on the host at once, with the
// device's stream; they only start the kernel there, which returns at once too.
#include <cstdint>

#include <cuda_runtime.h>

#include "test_kernel_launch.h"

#include "test_kernels.cuh"

void add_index_on_cuda(const void *args, void *stream)
{
    const vector_args *a = static_cast<const vector_args *>(args);
    add_index_kernel<<<dim3(a->grid_x), dim3(a->block_x), 0, static_cast<cudaStream_t>(stream)>>>(a->out,
                                                                                                  a->n);
}

void cell_id_on_cuda(const void *args, void *stream)
{
    const matrix_args *a = static_cast<const matrix_args *>(args);
    const dim3 grid(a->grid_x, a->grid_y, 1), block(a->block_x, a->block_y, 1);
    cell_id_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(a->out, a->rows, a->cols);
}
