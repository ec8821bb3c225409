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
    __shared__ float k_tile[FLASH_TILE * FLASH_STRIDE]; /* keys start .. start + keys - 1 */
    __shared__ float v_tile[FLASH_TILE * FLASH_STRIDE];
    const int64_t t = threadIdx.x, part = t % FLASH_SPLIT;
    const int64_t row = (int64_t)blockIdx.x * FLASH_ROWS + t / FLASH_SPLIT;
    const bool live = row < n; /* past n: copies tiles and meets the barriers, owns no row */
    float q_row[FLASH_MAX_HEAD], acc[FLASH_MAX_HEAD];
    for (int c = 0; c < FLASH_MAX_HEAD; ++c) {
        q_row[c] = live && c < d ? scale * q[row * d + c] : 0.0f;
        acc[c] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    /* The same for every thread of the block, so that all meet the same barriers. */
    const int64_t block_end = ((int64_t)blockIdx.x + 1) * FLASH_ROWS;
    const int64_t end = causal && block_end < n ? block_end : n;
    /* This thread copies column `column` of the tile's rows first, first + step, ...
     * (zeros past d: the loops below then need no test of c against d) */
    const int64_t column = t % FLASH_MAX_HEAD, first = t / FLASH_MAX_HEAD,
                  step = FLASH_THREADS / FLASH_MAX_HEAD;
    for (int64_t start = 0; start < end; start += FLASH_TILE) {
        const int64_t keys = end - start < FLASH_TILE ? end - start : FLASH_TILE;
        __syncthreads(); /* every thread is done with the tile this one overwrites */
        for (int64_t j = first; j < keys; j += step) { /* neighbouring threads, neighbouring floats */
            k_tile[j * FLASH_STRIDE + column] = column < d ? k[(start + j) * d + column] : 0.0f;
            v_tile[j * FLASH_STRIDE + column] = column < d ? v[(start + j) * d + column] : 0.0f;
        }
        __syncthreads(); /* the whole tile is there */
        if (!live) continue;
        /* The keys rise with j: past the row's diagonal, all are masked. */
        for (int64_t j = part; j < keys && !(causal && start + j > row); j += FLASH_SPLIT) {
            const float *key = &k_tile[j * FLASH_STRIDE], *value = &v_tile[j * FLASH_STRIDE];
            float score = 0.0f;
            for (int c = 0; c < FLASH_MAX_HEAD; ++c) score += q_row[c] * key[c]; /* 0 past d */
            if (score > m) { /* the first key: e^(-inf) = 0 rescales nothing */
                const float rescale = expf(m - score);
                l *= rescale;
                for (int c = 0; c < FLASH_MAX_HEAD; ++c) acc[c] *= rescale;
                m = score;
            }
            const float p = expf(score - m); /* <= 1: never overflows */
            l += p;
            for (int c = 0; c < FLASH_MAX_HEAD; ++c) acc[c] += p * value[c];
        }
    }
    /* The row's FLASH_SPLIT parts are neighbouring lanes of one warp: after
     * the offsets FLASH_SPLIT / 2, ..., 1, every part holds the whole row. */
    for (int offset = FLASH_SPLIT / 2; offset > 0; offset /= 2) {
        const float m_other = __shfl_xor_sync(0xffffffffu, m, offset);
        const float l_other = __shfl_xor_sync(0xffffffffu, l, offset);
        const float both = fmaxf(m, m_other);
        const float mine = m == -INFINITY ? 0.0f : expf(m - both);
        const float theirs = m_other == -INFINITY ? 0.0f : expf(m_other - both);
        l = l * mine + l_other * theirs;
        for (int c = 0; c < FLASH_MAX_HEAD; ++c)
            acc[c] = acc[c] * mine + __shfl_xor_sync(0xffffffffu, acc[c], offset) * theirs;
        m = both;
    }
    for (int c = 0; c < FLASH_MAX_HEAD; ++c)
        if (live && c < d && c % FLASH_SPLIT == part) out[row * d + c] = acc[c] / l;
}
