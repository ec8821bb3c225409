/* product_kernel.cuh: the work of step 3 (given): lab 04's naive kernel, one
 * thread per cell of c = a b, all n x n.
 *
 * A single-source kernel: the C compiler builds it for the simulated GPU
 * (products.c, through labkit/cuda_emulation.h), where every thread runs in
 * turn on the device's own worker thread; nvcc builds the same text for a
 * real GPU (products.cu). So two simulated GPUs compute on two threads of
 * their own, and on two cores at once where two are free; a product through
 * op_matmul would go to OpenBLAS instead, whose one pool of threads serves
 * every caller in turn. */

__global__ void product_kernel(const float *a, const float *b, float *c, int64_t n)
{
    const int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float sum = 0.0f;
    for (int64_t p = 0; p < n; ++p) sum += a[row * n + p] * b[p * n + col];
    c[row * n + col] = sum;
}
