/* naive_kernel.cuh: your GPU kernel, step 6 of README.md (with
 * lab_matmul_naive_gpu in lab.c, which launches it).
 *
 * A single-source kernel: the C compiler builds this file for the simulated GPU
 * (naive_launch.c, after labkit/cuda_emulation.h) and nvcc builds the very same
 * text for a real one (naive_launch.cu). So keep to the C subset of CUDA: index
 * arithmetic from blockIdx, blockDim and threadIdx, no shared memory, no
 * __syncthreads(). */

/* ==== Step 6: one thread per output cell (README, "Step 6") =============== */

/* Goal: c [m, n] = a [m, k] b [k, n], one thread per cell. Every thread of the
 * grid runs this function once. The thread at global position x = column,
 * y = row computes the one cell c[row, col]: the dot product of row `row` of a
 * and column `col` of b. The grid is rounded up to whole blocks, so some
 * threads fall outside c: they must write nothing. */
__global__ void naive_matmul_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    /* TODO: your code here (until then no thread writes anything, and the
     * check says so once lab_matmul_naive_gpu launches this) */
    (void)a, (void)b, (void)c, (void)m, (void)n, (void)k;
}
