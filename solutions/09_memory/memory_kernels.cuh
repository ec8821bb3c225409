/* memory_kernels.cuh: your kernels, steps 1, 2, 3 and 5 of README.md.
 *
 * Single-source kernels: the C compiler builds this file for the simulated GPU
 * and the CPU (launch.c, after labkit/cuda_emulation.h) and nvcc builds the
 * very same text for a real GPU (launch.cu). So keep to the C subset of CUDA;
 * what the threads of a block share is yours to use: __shared__ arrays,
 * __syncthreads(), the warp shuffles (__shfl_down_sync) and atomicAdd.
 * launch.h says the grid each kernel gets (LAUNCH_BLOCK, TILE, REDUCE_BLOCK,
 * TRANSPOSE_TILE and TRANSPOSE_ROWS).
 * Every grid is rounded up to whole blocks: a thread past the end of the work
 * must touch no memory, but still reach every __syncthreads() of its block. */

/* ==== What is left to write ===================================================== */

/* The given launchers ask this before they launch a step's kernels: every
 * step's kernels are written. */
static inline status kernels_todo(int step)
{
    (void)step;
    return STATUS_OK;
}

/* ==== Step 1: bandwidth (README, "Step 1") ====================================== */

/* Goal: out[i] = in[i] for every i < n, thread i copying element i: the 32
 * threads of a warp read 32 consecutive floats, 128 bytes, which the GPU
 * fetches as four 32-byte sectors (coalesced). */
__global__ void copy_kernel(const float *in, float *out, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

/* Goal: out[i] = alpha in[i], thread i on element i: one multiplication per
 * 8 bytes moved. */
__global__ void scale_kernel(const float *in, float *out, float alpha, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = alpha * in[i];
}

/* Goal: out[j] = in[j] for every j < n, as the copy, but consecutive threads
 * `stride` floats apart. Read the array as rows of `stride` floats,
 * ceil(n / stride) rows: thread i walks down column i / rows, to row i % rows,
 * so it copies element j = (i % rows) stride + i / rows. The grid has
 * rows x stride threads, rounded up; a thread past them, or whose j is past
 * the end, copies nothing. */
__global__ void strided_copy_kernel(const float *in, float *out, int64_t n, int64_t stride)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t rows = (n + stride - 1) / stride;
    if (i >= rows * stride) return;
    /* Thread i + 1 is one row further down the same column: stride floats on. */
    const int64_t j = (i % rows) * stride + i / rows;
    if (j < n) out[j] = in[j];
}

/* ==== Step 2: tiles in shared memory (README, "Step 2") ========================= */

/* Goal: your kernel of lab 04 (step 6), as it was: c [m, n] = a [m, k] b [k, n],
 * the thread at x = column, y = row computing the cell c[row, col] from row
 * `row` of a and column `col` of b, read from global memory: 2 k loads for one
 * cell. Threads outside c write nothing. */
__global__ void naive_matmul_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    const int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float sum = 0.0f;
    for (int64_t p = 0; p < k; ++p) sum += a[row * k + p] * b[p * n + col];
    c[row * n + col] = sum;
}

/* Goal: the same c, but each block of TILE x TILE threads walks k in tiles:
 * its threads load a TILE x TILE tile of a (its rows) and one of b (its
 * columns) into shared memory, one float each, wait until all are loaded,
 * multiply the two tiles out of shared memory, and wait again until all are
 * done with them before the next tiles overwrite them: two __syncthreads() per
 * tile, 2 k / TILE loads per cell. Where a tile hangs over the edge of a or b
 * (the last, partial tile of k; the blocks at the edges of c) its thread loads
 * 0, which adds nothing. */
__global__ void tiled_matmul_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t row = (int64_t)blockIdx.y * TILE + ty, col = (int64_t)blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int64_t t = 0; t < k; t += TILE) {
        /* Consecutive threads (tx) load consecutive floats of a row of a and of b. */
        a_tile[ty][tx] = row < m && t + tx < k ? a[row * k + t + tx] : 0.0f;
        b_tile[ty][tx] = t + ty < k && col < n ? b[(t + ty) * n + col] : 0.0f;
        __syncthreads(); /* the tiles are whole */
        for (int i = 0; i < TILE; ++i) sum += a_tile[ty][i] * b_tile[i][tx];
        __syncthreads(); /* nobody reads them any more */
    }
    if (row < m && col < n) c[row * n + col] = sum;
}

/* ==== Step 3: a reduction (README, "Step 3") ==================================== */

/* Goal: *total += x[i] for every i < n, each thread adding its own element
 * with total_add (given_kernels.cuh: an atomicAdd): n atomics, all on one
 * address. */
__global__ void sum_atomic_kernel(const float *x, int64_t n, float *total, unsigned *atomics)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) total_add(total, x[i], atomics);
}

/* Goal: the same total, one atomic per block: the block's REDUCE_BLOCK
 * elements (0 past the end of x) go into a shared array, and a tree halves it,
 * the first half of the threads adding the second half's values to their
 * own, a __syncthreads() after each round, until element 0 holds the block's
 * sum; thread 0 adds it to the total. */
__global__ void sum_block_kernel(const float *x, int64_t n, float *total, unsigned *atomics)
{
    __shared__ float partial[REDUCE_BLOCK];
    const int t = (int)threadIdx.x;
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = REDUCE_BLOCK / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) total_add(total, partial[0], atomics);
}

/* Goal: the tree of sum_block_kernel down to 32 values, then the first warp
 * alone: its 32 threads add them with __shfl_down_sync, halving the offset
 * from 16 to 1, no shared memory and no __syncthreads(); lane 0 ends with the
 * block's sum and adds it to the total. */
__global__ void sum_warp_kernel(const float *x, int64_t n, float *total, unsigned *atomics)
{
    __shared__ float partial[REDUCE_BLOCK];
    const int t = (int)threadIdx.x;
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = REDUCE_BLOCK / 2; stride >= 32; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t < 32) {
        float v = partial[t];
        /* Lane l gets lane l + offset's value: after 16, 8, 4, 2, 1, lane 0 holds all 32. */
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (t == 0) total_add(total, v, atomics);
    }
}

/* ==== Step 5: a transpose through shared memory (README, "Step 5") ============== */

/* Goal: out [cols, rows] = in [rows, cols] transposed: out[c * rows + r] =
 * in[r * cols + c]. Each block of TRANSPOSE_TILE x TRANSPOSE_ROWS threads moves
 * one TRANSPOSE_TILE x TRANSPOSE_TILE tile of in (its x along in's columns,
 * its y along in's rows) through a __shared__ array of TRANSPOSE_TILE x
 * (TRANSPOSE_TILE + 1) floats: its threads read the tile's rows, a warp along
 * each row, TRANSPOSE_ROWS rows at a time; wait until the tile is whole; then
 * write the tile's columns as rows of out, a warp along each. Both global
 * accesses coalesced; the extra column keeps a column's floats in 32 different
 * banks. Where the tile hangs over the edge of in (rows and cols need not be
 * multiples of 32), a thread reads and writes nothing there, but still waits
 * at the barrier. */
__global__ void transpose_kernel(const float *in, float *out, int64_t rows, int64_t cols)
{
    /* One column more than the tile: row r starts 33 r floats in, so a
     * column's 32 floats fall in 32 different banks. */
    __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int64_t row0 = (int64_t)blockIdx.y * TRANSPOSE_TILE, col0 = (int64_t)blockIdx.x * TRANSPOSE_TILE;
    for (int r = ty; r < TRANSPOSE_TILE; r += TRANSPOSE_ROWS)
        if (row0 + r < rows && col0 + tx < cols) tile[r][tx] = in[(row0 + r) * cols + col0 + tx];
    __syncthreads(); /* the tile is whole */
    /* Row col0 + r of out is column col0 + r of in: the tile's column r. */
    for (int r = ty; r < TRANSPOSE_TILE; r += TRANSPOSE_ROWS)
        if (col0 + r < cols && row0 + tx < rows) out[(col0 + r) * rows + row0 + tx] = tile[tx][r];
}
