/* rows.cuh: reductions. The whole-tensor ones are written with one thread per
 * slice of the data, no shared memory: each thread keeps its own running total,
 * and further kernels add up the threads' partial results, in float64 so that
 * the result matches the CPU's closely. The column sums and the softmax
 * cross-entropy, which lab 05's step runs every time, cooperate in shared
 * memory instead (issue 25): fewer kernels, more threads at work. */

/* partials[t] = sum of x[i] (or x[i]^2) over i = t, t + T, t + 2T, ... where T
 * is the number of threads: neighbouring threads read neighbouring floats. */
__global__ void partial_sums_kernel(const float *x, int64_t n, int squares, double *partials)
{
    const int64_t t = element_index(), threads = (int64_t)gridDim.x * blockDim.x;
    double total = 0.0;
    for (int64_t i = t; i < n; i += threads) total += squares ? (double)x[i] * x[i] : (double)x[i];
    partials[t] = total;
}

/* One level of folding: of the `count` partials partials[0], partials[stride],
 * partials[2 stride], ..., thread t adds up its run of `width`, the i-th for
 * i = t width .. t width + width - 1 (the last run may be shorter), into the
 * run's first, in place. */
__global__ void fold_partials_kernel(double *partials, int64_t count, int64_t width, int64_t stride)
{
    const int64_t first = element_index() * width;
    if (first >= count) return;
    const int64_t end = first + width < count ? first + width : count;
    double total = 0.0;
    for (int64_t i = first; i < end; ++i) total += partials[i * stride];
    partials[first * stride] = total;
}

/* One thread: out[0] = scale * (sum of partials[0], partials[stride], ... count
 * of them), or its square root. */
__global__ void finish_sum_kernel(const double *partials, int64_t count, int64_t stride, double scale,
                                  int take_sqrt, float *out)
{
    double total = 0.0;
    for (int64_t t = 0; t < count; ++t) total += partials[t * stride];
    out[0] = (float)(take_sqrt ? sqrt(total) : total * scale);
}

/* Column sums (a bias's gradient) by a block per COLUMN_GROUP columns: the
 * block's COLUMN_GROUP x blockDim.y threads each add up every blockDim.y-th
 * row of one column (neighbouring threads read neighbouring columns of a row:
 * coalesced), then the first slice adds the slices' totals from shared
 * memory. One thread per column, down 128 rows, kept a GPU's memory system
 * nearly idle: 7 us on an H100 for a [128, 256] gradient. blockDim.y is at
 * most COLUMN_SLICES. */
#define COLUMN_GROUP 32
#define COLUMN_SLICES 8
__global__ void column_sum_kernel(const float *x, int64_t rows, int64_t cols, float *out)
{
    __shared__ double slice_totals[COLUMN_SLICES][COLUMN_GROUP];
    const int64_t c = (int64_t)blockIdx.x * COLUMN_GROUP + threadIdx.x;
    const int64_t slices = blockDim.y;
    double total = 0.0;
    if (c < cols)
        for (int64_t r = threadIdx.y; r < rows; r += slices) total += x[r * cols + c];
    slice_totals[threadIdx.y][threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.y != 0 || c >= cols) return;
    double sum = 0.0;
    for (int64_t s = 0; s < slices; ++s) sum += slice_totals[s][threadIdx.x];
    out[c] = (float)sum;
}

/* The index of a row's largest value (the first one, on ties). */
static __device__ int64_t row_argmax(const float *row, int64_t cols)
{
    int64_t best = 0;
    for (int64_t c = 1; c < cols; ++c)
        if (row[c] > row[best]) best = c;
    return best;
}

__global__ void argmax_rows_kernel(const float *x, int64_t rows, int64_t cols, int32_t *out)
{
    const int64_t r = element_index();
    if (r < rows) out[r] = (int32_t)row_argmax(x + r * cols, cols);
}

/* partials[t] = number of rows t, t + T, ... whose argmax is their label. */
__global__ void accuracy_partials_kernel(const float *x, const int32_t *labels, int64_t rows, int64_t cols,
                                         double *partials)
{
    const int64_t t = element_index(), threads = (int64_t)gridDim.x * blockDim.x;
    double correct = 0.0;
    for (int64_t r = t; r < rows; r += threads) correct += labels[r] == row_argmax(x + r * cols, cols);
    partials[t] = correct;
}

/* One row of the softmax cross-entropy: its softmax into p, and its loss
 * -log p[label] = log(sum exp(x - max)) - (x[label] - max). Shifting by the
 * row's maximum keeps exp from overflowing. A label out of range makes the
 * loss NaN instead of reading outside the row. The CPU's loop (cpu_ops.c) is
 * the same arithmetic: the probabilities are its own, bit for bit. */
static __device__ double softmax_xent_row(const float *in, int32_t label, int64_t cols, float *p)
{
    const float max = in[row_argmax(in, cols)];
    /* read before the row is overwritten (in-place) */
    const double label_logit = (label >= 0 && label < cols) ? (double)(in[label] - max) : NAN;
    double total = 0.0;
    for (int64_t c = 0; c < cols; ++c) total += (p[c] = expf(in[c] - max));
    for (int64_t c = 0; c < cols; ++c) p[c] = (float)(p[c] / total);
    return log(total) - label_logit;
}

/* The whole softmax cross-entropy in one kernel of one block: each of its
 * XENT_THREADS threads takes rows t, t + XENT_THREADS, ..., then the block adds
 * up their losses in shared memory (a tree: half the threads add the other
 * half's, log2(XENT_THREADS) times), and thread 0 writes the mean. It replaced
 * three kernels (partial sums over 4 blocks, a fold, a one-thread sum: 9 us on
 * an H100), whose extra launches cost more than the rows themselves at a
 * batch of 128. The loss is the CPU's within one float32 rounding: the float64
 * terms are added in another order. */
#define XENT_THREADS 256
__global__ void softmax_xent_kernel(const float *x, const int32_t *labels, int64_t rows, int64_t cols,
                                    float *probs, float *loss)
{
    __shared__ double losses[XENT_THREADS];
    const int t = (int)threadIdx.x;
    double mine = 0.0;
    for (int64_t r = t; r < rows; r += XENT_THREADS)
        mine += softmax_xent_row(x + r * cols, labels[r], cols, probs + r * cols);
    losses[t] = mine;
    __syncthreads();
    for (int half = XENT_THREADS / 2; half > 0; half /= 2) {
        if (t < half) losses[t] += losses[t + half];
        __syncthreads();
    }
    if (t == 0) loss[0] = (float)(losses[0] / (double)rows);
}
