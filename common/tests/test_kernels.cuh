/* test_kernels.cuh: the kernels of test_kernel, written once in CUDA's C subset.
 *
 * The C compiler builds this text for the CPU and the simulated GPU
 * (test_kernel.c includes it after labkit/cuda_emulation.h), nvcc builds the
 * very same text for a real GPU (test_kernel_cuda.cu, only in a build with
 * CUDA). These two need nothing but index arithmetic from blockIdx, blockDim
 * and threadIdx; kernels whose threads cooperate (shared memory, barriers,
 * shuffles, atomics) are test_cooperative_kernels.cuh's. */

/* out[i] += i: reads what the queue wrote before it, writes what comes after. */
__global__ void add_index_kernel(float *out, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += (float)i;
}

/* out[r, c] = 1000 r + c, one thread per cell of a 2-D grid of 2-D blocks. */
__global__ void cell_id_kernel(float *out, int64_t rows, int64_t cols)
{
    const int64_t r = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) out[r * cols + c] = (float)(1000 * r + c);
}
