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
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n * d.k * d.h_out * d.w_out) return;
    const int64_t ow = i % d.w_out, oh = i / d.w_out % d.h_out;
    const int64_t k = i / (d.w_out * d.h_out) % d.k, n = i / (d.w_out * d.h_out * d.k);
    float sum = 0.0f;
    for (int64_t c = 0; c < d.c; ++c)
        for (int64_t r = 0; r < d.r; ++r) {
            const int64_t ih = oh + r - d.pad; /* the input row under filter row r */
            if (ih < 0 || ih >= d.h) continue; /* padding: a row of zeros adds nothing */
            for (int64_t s = 0; s < d.s; ++s) {
                const int64_t iw = ow + s - d.pad;
                if (iw < 0 || iw >= d.w) continue;
                sum += x[((n * d.c + c) * d.h + ih) * d.w + iw] * w[((k * d.c + c) * d.r + r) * d.s + s];
            }
        }
    y[i] = sum;
}

/* ==== Step 3: im2col (README, "Step 3") =================================== */

/* Goal: thread i stands for channel c of output pixel (oh, ow) of image n,
 * numbered [n, c, oh, ow] (ow the fastest). It writes the R S values that the
 * filter's channel c sees there into the pixel's column of cols
 * [C R S, N H_out W_out]: tap (r, s) goes to row (c, r, s), the order of a
 * filter's own values; a tap over the padding writes 0. */
__global__ void im2col_kernel(const float *x, float *cols, conv_dims d)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n * d.c * d.h_out * d.w_out) return;
    const int64_t ow = i % d.w_out, oh = i / d.w_out % d.h_out;
    const int64_t c = i / (d.w_out * d.h_out) % d.c, n = i / (d.w_out * d.h_out * d.c);
    const int64_t width = d.n * d.h_out * d.w_out;         /* cols has a column per output pixel */
    const int64_t col = (n * d.h_out + oh) * d.w_out + ow; /* this pixel's */
    for (int64_t r = 0; r < d.r; ++r)
        for (int64_t s = 0; s < d.s; ++s) {
            const int64_t ih = oh + r - d.pad, iw = ow + s - d.pad;
            const int64_t row = (c * d.r + r) * d.s + s;
            const bool inside = ih >= 0 && ih < d.h && iw >= 0 && iw < d.w;
            /* Neighbouring threads (ow, ow + 1) write neighbouring floats of a row. */
            cols[row * width + col] = inside ? x[((n * d.c + c) * d.h + ih) * d.w + iw] : 0.0f;
        }
}

/* ==== Step 5: a stable softmax (README, "Step 5") ========================= */

/* Goal: thread i turns row i of scores [rows, cols] into softmax(scale x row),
 * in place, without overflowing however large the scores are. With causal,
 * only the columns j <= i count, and the others become exactly 0. */
__global__ void softmax_rows_kernel(float *scores, int64_t rows, int64_t cols, float scale, int causal)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    float *row = scores + i * cols;
    /* Stable: every exponent is scale x score minus the row's largest such
     * value, so none is above 0 and exp cannot overflow; the largest becomes
     * exp(0) = 1, so the sum cannot be 0 either. */
    const int64_t seen = causal && i + 1 < cols ? i + 1 : cols; /* columns 0 .. seen - 1 count */
    float max = -INFINITY;
    for (int64_t j = 0; j < seen; ++j) max = fmaxf(max, scale * row[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < seen; ++j) {
        row[j] = expf(scale * row[j] - max);
        sum += row[j];
    }
    for (int64_t j = 0; j < seen; ++j) row[j] /= sum;
    for (int64_t j = seen; j < cols; ++j) row[j] = 0.0f; /* the future: masked */
}

/* ==== Step 7: attention in one pass (README, "Step 7") ==================== */

/* Goal: out [n, d] = softmax(scale q k^T) v, with the causal mask when asked,
 * without storing the scores. Thread t of block b owns row i = b FLASH_TILE + t
 * of q and out: its row of q, its running max m, its running sum l and its
 * row of the output (not yet divided by l) are its own variables and arrays.
 * The block walks K and V a tile of FLASH_TILE rows at a time: its threads
 * copy the tile into shared memory together, wait for each other, then each
 * scores its row against the tile's keys, raises m to the tile's largest
 * score (rescaling l and its output by e^(old m - new m)), and adds the
 * tile's e^(score - m) to l and e^(score - m) v to its output; then they wait
 * again before the next tile overwrites this one. Last, out = output / l. The
 * last tile may have fewer than FLASH_TILE rows, and the last block threads
 * past row n - 1: those meet every barrier but own no row. With causal, row
 * i sees keys j <= i only, and no tile past the block's last row is needed. */
__global__ void flash_attention_kernel(const float *q, const float *k, const float *v, float *out, int64_t n,
                                       int64_t d, float scale, int causal)
{
    __shared__ float k_tile[FLASH_TILE * FLASH_MAX_HEAD]; /* keys start .. start + keys - 1 */
    __shared__ float v_tile[FLASH_TILE * FLASH_MAX_HEAD];
    const int64_t t = threadIdx.x, row = (int64_t)blockIdx.x * FLASH_TILE + t;
    const bool live = row < n; /* past n: copies tiles and meets the barriers, owns no row */
    float q_row[FLASH_MAX_HEAD], acc[FLASH_MAX_HEAD], score[FLASH_TILE];
    for (int64_t c = 0; c < d; ++c) q_row[c] = live ? q[row * d + c] : 0.0f, acc[c] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    /* The same for every thread of the block, so that all meet the same barriers. */
    const int64_t block_end = ((int64_t)blockIdx.x + 1) * FLASH_TILE;
    const int64_t end = causal && block_end < n ? block_end : n;
    for (int64_t start = 0; start < end; start += FLASH_TILE) {
        const int64_t keys = end - start < FLASH_TILE ? end - start : FLASH_TILE;
        __syncthreads(); /* every thread is done with the tile this one overwrites */
        for (int64_t e = t; e < keys * d; e += FLASH_TILE) { /* neighbouring threads, neighbouring floats */
            k_tile[e] = k[start * d + e];
            v_tile[e] = v[start * d + e];
        }
        __syncthreads(); /* the whole tile is there */
        if (!live) continue;
        float tile_max = -INFINITY;
        for (int64_t j = 0; j < keys; ++j) {
            float dot = 0.0f;
            for (int64_t c = 0; c < d; ++c) dot += q_row[c] * k_tile[j * d + c];
            score[j] = causal && start + j > row ? -INFINITY : scale * dot;
            tile_max = fmaxf(tile_max, score[j]);
        }
        /* Every tile holds a key the row sees (key `start` <= row), so the new
         * max is finite; the first tile's rescale is e^-inf = 0 of nothing. */
        const float new_max = fmaxf(m, tile_max), rescale = expf(m - new_max);
        l *= rescale;
        for (int64_t c = 0; c < d; ++c) acc[c] *= rescale;
        for (int64_t j = 0; j < keys; ++j) {
            const float p = expf(score[j] - new_max); /* <= 1: never overflows */
            l += p;
            for (int64_t c = 0; c < d; ++c) acc[c] += p * v_tile[j * d + c];
        }
        m = new_max;
    }
    if (live)
        for (int64_t c = 0; c < d; ++c) out[row * d + c] = acc[c] / l;
}
