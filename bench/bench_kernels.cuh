/* bench_kernels.cuh: the kernels of bench_kernels, written once in CUDA's C
 * subset (the C compiler builds them for sim:0 in bench_kernels.c, nvcc for a
 * real GPU in bench_kernels_cuda.cu). Lab 04's naive product comes from its
 * solution, not from here (bench_kernels.c). */

#define BENCH_TILE 16

/* c [n, n] = a b, TILE x TILE blocks, tiles of a and b staged in shared memory:
 * two block barriers per tile of k, for every thread. */
__global__ void bench_tiled_kernel(const float *a, const float *b, float *c, int n)
{
    __shared__ float a_tile[BENCH_TILE][BENCH_TILE];
    __shared__ float b_tile[BENCH_TILE][BENCH_TILE];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int row = (int)blockIdx.y * BENCH_TILE + ty, col = (int)blockIdx.x * BENCH_TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n; t += BENCH_TILE) {
        a_tile[ty][tx] = row < n && t + tx < n ? a[row * n + t + tx] : 0.0f;
        b_tile[ty][tx] = t + ty < n && col < n ? b[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < BENCH_TILE; ++i) sum += a_tile[ty][i] * b_tile[i][tx];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = sum;
}

/* Nothing but `rounds` block barriers: what a barrier itself costs. */
__global__ void bench_barriers_kernel(int rounds)
{
    for (int r = 0; r < rounds; ++r) __syncthreads();
}
