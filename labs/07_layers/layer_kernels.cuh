/* layer_kernels.cuh: your four kernels, steps 2, 3, 5 and 7 of README.md (with
 * the functions of lab.c that launch them).
 *
 * Single-source kernels: the C compiler builds this file for the simulated GPU
 * (launch.c, after labkit/cuda_emulation.h) and nvcc builds the very same text
 * for a real one (launch.cu). So keep to the C subset of CUDA: index arithmetic
 * from blockIdx, blockDim and threadIdx; steps 2, 3 and 5 need no shared
 * memory and no __syncthreads(), step 7 both (__shared__ arrays of a size
 * fixed in launch.h). The grid is 1-D and rounded up to whole blocks
 * (launch.h): a thread whose index is past the end of the work must do
 * nothing (in step 7: nothing but meet its block's barriers). */

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

/* ==== Step 7: attention in one pass (README, "Step 7") ==================== */

/* Goal: out [n, d] = softmax(scale q k^T) v, with the causal mask when asked,
 * without storing the scores. Row i of q and out belongs to FLASH_SPLIT
 * neighbouring threads of block i / FLASH_ROWS (the row's "parts"): part p
 * takes the keys j = p, p + FLASH_SPLIT, p + 2 FLASH_SPLIT, ... so that the
 * row's work is spread over FLASH_SPLIT threads. Each thread keeps the row of
 * q (times scale), a running max m, a running sum l and its own row of the
 * output (not yet divided by l) in its own variables, for its own keys only.
 * The block walks K and V a tile of FLASH_TILE keys at a time: its threads
 * copy the tile into shared memory together (key j at k_tile[j FLASH_STRIDE]:
 * the padding puts the keys that a warp reads at once in different banks),
 * wait for each other, then each scores its row against its keys of the tile
 * one key at a time: when a score raises m, l and the output are rescaled by
 * e^(old m - new m) first; then e^(score - m) is added to l and e^(score - m) v
 * to the output. They wait again before the next tile overwrites this one.
 * Last, the row's parts merge: two states (m1, l1, o1) and (m2, l2, o2)
 * become (m, l1 e^(m1 - m) + l2 e^(m2 - m), o1 e^(m1 - m) + o2 e^(m2 - m)) with
 * m = max(m1, m2), by warp shuffles (__shfl_xor_sync over offsets
 * FLASH_SPLIT / 2, ..., 1: a part that saw no key has m = -inf and weighs 0),
 * and out = output / l, each part writing its columns c = p, p + FLASH_SPLIT, ...
 * The last tile may hold fewer than FLASH_TILE keys, and the last block threads
 * past row n - 1: those copy tiles and meet every barrier but own no row. With
 * causal, row i sees keys j <= i only, and no tile past the block's last row is
 * needed. d is at most FLASH_MAX_HEAD: the tiles' columns from d on and q_row's
 * hold zeros, and every loop over columns runs over all FLASH_MAX_HEAD of them
 * without a test of c against d, so that the compiler keeps the arrays in
 * registers and the loops run at full speed. */
__global__ void flash_attention_kernel(const float *q, const float *k, const float *v, float *out, int64_t n,
                                       int64_t d, float scale, int causal)
{
    /* TODO: your code here */
    (void)q, (void)k, (void)v, (void)out, (void)n, (void)d, (void)scale, (void)causal;
}
