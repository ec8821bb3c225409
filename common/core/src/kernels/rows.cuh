/* rows.cuh: reductions, written with one thread per row, per column or per slice
 * of the data. No shared memory: each thread keeps its own running total, and a
 * second, one-thread kernel adds up the threads' partial results. That is slower
 * than a tree reduction in shared memory, but it runs unchanged on the simulated
 * GPU, and its float64 partials make the result match the CPU's closely. */

/* partials[t] = sum of x[i] (or x[i]^2) over i = t, t + T, t + 2T, ... where T
 * is the number of threads: neighbouring threads read neighbouring floats. */
__global__ void partial_sums_kernel(const float *x, int64_t n, int squares, double *partials)
{
    const int64_t t = element_index(), threads = (int64_t)gridDim.x * blockDim.x;
    double total = 0.0;
    for (int64_t i = t; i < n; i += threads) total += squares ? (double)x[i] * x[i] : (double)x[i];
    partials[t] = total;
}

/* partials[t * width] = the sum of partials[t * width .. t * width + width - 1],
 * for t < runs: each thread adds up its own run, in place. */
__global__ void fold_partials_kernel(double *partials, int64_t runs, int64_t width)
{
    const int64_t t = element_index();
    if (t >= runs) return;
    double total = 0.0;
    for (int64_t i = 0; i < width; ++i) total += partials[t * width + i];
    partials[t * width] = total;
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

/* One thread per column: the sum down that column (a bias's gradient). */
__global__ void column_sum_kernel(const float *x, int64_t rows, int64_t cols, float *out)
{
    const int64_t c = element_index();
    if (c >= cols) return;
    double total = 0.0;
    for (int64_t r = 0; r < rows; ++r) total += x[r * cols + c];
    out[c] = (float)total;
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

/* Each thread takes rows t, t + T, ...: writes each row's softmax into probs and
 * adds its loss -log p[label] = log(sum exp(x - max)) - (x[label] - max) to
 * partials[t]. Shifting by the row's maximum keeps exp from overflowing. A label
 * out of range makes the loss NaN instead of reading outside the row. */
__global__ void softmax_xent_partials_kernel(const float *x, const int32_t *labels, int64_t rows,
                                             int64_t cols, float *probs, double *partials)
{
    const int64_t t = element_index(), threads = (int64_t)gridDim.x * blockDim.x;
    double loss = 0.0;
    for (int64_t r = t; r < rows; r += threads) {
        const float *in = x + r * cols;
        float *p = probs + r * cols;
        const float max = in[row_argmax(in, cols)];
        const int32_t label = labels[r]; /* read before the row is overwritten (in-place) */
        const double label_logit = (label >= 0 && label < cols) ? (double)(in[label] - max) : NAN;
        double total = 0.0;
        for (int64_t c = 0; c < cols; ++c) total += (p[c] = expf(in[c] - max));
        for (int64_t c = 0; c < cols; ++c) p[c] = (float)(p[c] / total);
        loss += log(total) - label_logit;
    }
    partials[t] = loss;
}
