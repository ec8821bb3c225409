/* layer_kernels.cuh: your three kernels, steps 2, 3 and 5 of README.md (with
 * the functions of lab.c that launch them).
 *
 * Single-source kernels: the C compiler builds this file for the simulated GPU
 * (launch.c, after labkit/cuda_emulation.h) and nvcc builds the very same text
 * for a real one (launch.cu). So keep to the C subset of CUDA: index arithmetic
 * from blockIdx, blockDim and threadIdx, no shared memory, no __syncthreads().
 * The grid is 1-D and rounded up to whole blocks (launch.h): a thread whose
 * index is past the end of the work must do nothing. */

/* ==== Step 2: the direct convolution (README, "Step 2") =================== */

/* Goal: thread i computes y's element i, [n, k, oh, ow] in y's own order: the
 * sum, over every channel c and filter tap (r, s), of w[k, c, r, s] times the
 * input under it, x[n, c, oh + r - pad, ow + s - pad], where a tap over the
 * padding adds nothing. conv_dims (launch.h) holds every size you need. */
__global__ void conv_direct_kernel(const float *x, const float *w, float *y, conv_dims d)
{
    /* TODO: your code here (until then no thread writes anything, and the
     * check says so once lab_conv_direct launches this) */
    (void)x, (void)w, (void)y, (void)d;
}

/* ==== Step 3: im2col (README, "Step 3") =================================== */

/* Goal: thread i stands for channel c of output pixel (oh, ow) of image n,
 * numbered [n, c, oh, ow] (ow the fastest). It writes the R S values that the
 * filter's channel c sees there into the pixel's column of cols
 * [C R S, N H_out W_out]: tap (r, s) goes to row (c, r, s), the order of a
 * filter's own values; a tap over the padding writes 0. */
__global__ void im2col_kernel(const float *x, float *cols, conv_dims d)
{
    /* TODO: your code here */
    (void)x, (void)cols, (void)d;
}

/* ==== Step 5: a stable softmax (README, "Step 5") ========================= */

/* Goal: thread i turns row i of scores [rows, cols] into softmax(scale x row),
 * in place, without overflowing however large the scores are. With causal,
 * only the columns j <= i count, and the others become exactly 0. */
__global__ void softmax_rows_kernel(float *scores, int64_t rows, int64_t cols, float scale, int causal)
{
    /* TODO: your code here */
    (void)scores, (void)rows, (void)cols, (void)scale, (void)causal;
}
