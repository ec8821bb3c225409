/* product_kernel.cuh: the work of step 3 (given): c = a b, all n x n, on a
 * GPU. What matters here is that it keeps a device busy for a while, on its
 * own: on a simulated GPU every thread runs in turn on the device's worker
 * thread, so two simulated GPUs compute on two threads of their own, and on
 * two cores at once where two are free (a product through op_matmul would go
 * to OpenBLAS instead, whose one pool of threads serves every caller in
 * turn).
 *
 * Deliberately not lab 04's kernel (step 6 there is yours to write: a 2-D grid
 * of 16 x 16 blocks, one thread per cell, rounded up and bounds-checked):
 * here a 1-D grid of a fixed size walks the n x n cells in a grid-stride loop,
 * each thread taking every (gridDim.x * blockDim.x)-th cell.
 *
 * A single-source kernel: the C compiler builds it for the simulated GPU
 * (products.c, through labkit/cuda_emulation.h); nvcc builds the same text
 * for a real GPU (products.cu). */

__global__ void product_kernel(const float *a, const float *b, float *c, int64_t n)
{
    const int64_t cells = n * n, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t cell = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; cell < cells; cell += stride) {
        const int64_t i = cell / n, j = cell % n;
        float dot = 0.0f;
        for (int64_t p = 0; p < n; ++p) dot += a[i * n + p] * b[p * n + j];
        c[cell] = dot;
    }
}
