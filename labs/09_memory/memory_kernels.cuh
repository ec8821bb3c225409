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

/* The given launchers ask this before they launch a step's kernels. Delete a
 * step's line once its kernels are written: until then the programs stop
 * there, and say so. */
static inline status kernels_todo(int step)
{
    (void)step;
    if (step == 1) return todo("step 1: copy_kernel, scale_kernel and strided_copy_kernel");
    if (step == 2) return todo("step 2: naive_matmul_kernel and tiled_matmul_kernel");
    if (step == 3) return todo("step 3: sum_atomic_kernel, sum_block_kernel and sum_warp_kernel");
    if (step == 5) return todo("step 5: transpose_kernel");
    return STATUS_OK;
}

/* ==== Step 1: bandwidth (README, "Step 1") ====================================== */

/* Goal: out[i] = in[i] for every i < n, thread i copying element i: the 32
 * threads of a warp read 32 consecutive floats, 128 bytes, which the GPU
 * fetches as four 32-byte sectors (coalesced). */
__global__ void copy_kernel(const float *in, float *out, int64_t n)
{
    /* TODO: your code here */
    (void)in, (void)out, (void)n;
}

/* Goal: out[i] = alpha in[i], thread i on element i: one multiplication per
 * 8 bytes moved. */
__global__ void scale_kernel(const float *in, float *out, float alpha, int64_t n)
{
    /* TODO: your code here */
    (void)in, (void)out, (void)alpha, (void)n;
}

/* Goal: out[j] = in[j] for every j < n, as the copy, but consecutive threads
 * `stride` floats apart. Read the array as rows of `stride` floats,
 * ceil(n / stride) rows: thread i walks down column i / rows, to row i % rows,
 * so it copies element j = (i % rows) stride + i / rows. The grid has
 * rows x stride threads, rounded up; a thread past them, or whose j is past
 * the end, copies nothing. */
__global__ void strided_copy_kernel(const float *in, float *out, int64_t n, int64_t stride)
{
    /* TODO: your code here */
    (void)in, (void)out, (void)n, (void)stride;
}

/* ==== Step 2: tiles in shared memory (README, "Step 2") ========================= */

/* Goal: your kernel of lab 04 (step 6), as it was: c [m, n] = a [m, k] b [k, n],
 * the thread at x = column, y = row computing the cell c[row, col] from row
 * `row` of a and column `col` of b, read from global memory: 2 k loads for one
 * cell. Threads outside c write nothing. */
__global__ void naive_matmul_kernel(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    /* TODO: your code here: the body of your naive_matmul_kernel in
     * labs/04_matmul/naive_kernel.cuh (lab 09 gives none: it would be lab 04's answer) */
    (void)a, (void)b, (void)c, (void)m, (void)n, (void)k;
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
    /* TODO: your code here */
    (void)a, (void)b, (void)c, (void)m, (void)n, (void)k;
}

/* ==== Step 3: a reduction (README, "Step 3") ==================================== */

/* Goal: *total += x[i] for every i < n, each thread adding its own element
 * with total_add (given_kernels.cuh: an atomicAdd): n atomics, all on one
 * address. */
__global__ void sum_atomic_kernel(const float *x, int64_t n, float *total, unsigned *atomics)
{
    /* TODO: your code here */
    (void)x, (void)n, (void)total, (void)atomics;
}

/* Goal: the same total, one atomic per block: the block's REDUCE_BLOCK
 * elements (0 past the end of x) go into a shared array, and a tree halves it,
 * the first half of the threads adding the second half's values to their
 * own, a __syncthreads() after each round, until element 0 holds the block's
 * sum; thread 0 adds it to the total. */
__global__ void sum_block_kernel(const float *x, int64_t n, float *total, unsigned *atomics)
{
    /* TODO: your code here */
    (void)x, (void)n, (void)total, (void)atomics;
}

/* Goal: the tree of sum_block_kernel down to 32 values, then the first warp
 * alone: its 32 threads add them with __shfl_down_sync, halving the offset
 * from 16 to 1, no shared memory and no __syncthreads(); lane 0 ends with the
 * block's sum and adds it to the total. */
__global__ void sum_warp_kernel(const float *x, int64_t n, float *total, unsigned *atomics)
{
    /* TODO: your code here */
    (void)x, (void)n, (void)total, (void)atomics;
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
    /* TODO: your code here */
    (void)in, (void)out, (void)rows, (void)cols;
}
