/* given_kernels.cuh: what your sums share, and the naive transpose your
 * transpose is held against (given: not a step), single-source
 * like your kernels: launch.c compiles it for the simulated GPU and the CPU,
 * launch.cu for a real one, both before memory_kernels.cuh. */

/* The one way your sums add to the total: atomicAdd(total, value), the
 * read-modify-write that no other thread can interleave with; and, when the
 * launch counts them (the check does, with a counter; a timed run passes
 * NULL), one more atomic on the counter. Inline: a kernel not yet written
 * leaves it unused. */
static __device__ inline void total_add(float *total, float value, unsigned *atomics)
{
    atomicAdd(total, value);
    if (atomics) atomicAdd(atomics, 1u);
}

/* Launched first by every sum, as one thread: the total (and the counter)
 * start at 0. */
__global__ void sum_reset_kernel(float *total, unsigned *atomics)
{
    *total = 0.0f;
    if (atomics) *atomics = 0u;
}

/* Step 5's comparison: out [cols, rows] = in [rows, cols] transposed, one
 * thread per element, x along in's columns. A warp reads 32 consecutive floats
 * of a row of in (coalesced) and writes them down a column of out, `rows`
 * floats apart: one 32-byte sector per thread, 32 per request. */
__global__ void naive_transpose_kernel(const float *in, float *out, int64_t rows, int64_t cols)
{
    const int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) out[col * rows + row] = in[row * cols + col];
}
