/* elementwise.cuh: one thread per element.
 *
 * Single-source kernels: nvcc compiles this file for real GPUs (cuda/cuda_ops.cu)
 * and the C compiler compiles it for simulated ones (sim/sim_ops.c) through
 * labkit/cuda_emulation.h, which runs every block and thread in turn. Keep to the C
 * subset of CUDA: index arithmetic, no shared memory, no barriers. */

/* This thread's element: block number x threads per block + thread number. */
static __device__ int64_t element_index(void) { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }

__global__ void fill_kernel(float *out, float value, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = value;
}

__global__ void add_kernel(const float *a, const float *b, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = a[i] + b[i];
}

__global__ void sub_kernel(const float *a, const float *b, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = a[i] - b[i];
}

__global__ void mul_kernel(const float *a, const float *b, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = a[i] * b[i];
}

/* out = alpha * a + b: scale when b is NULL, axpy (y += alpha x) when b is y. */
__global__ void axpy_kernel(float alpha, const float *a, const float *b, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = alpha * a[i] + (b ? b[i] : 0.0f);
}

__global__ void relu_kernel(const float *x, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* The gradient passes where the input was positive, and stops elsewhere. */
__global__ void relu_backward_kernel(const float *x, const float *grad_out, float *grad_in, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) grad_in[i] = x[i] > 0.0f ? grad_out[i] : 0.0f;
}

__global__ void sigmoid_kernel(const float *x, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = 1.0f / (1.0f + expf(-x[i]));
}

/* d sigmoid / dx = y (1 - y), from the saved output y. */
__global__ void sigmoid_backward_kernel(const float *y, const float *grad_out, float *grad_in, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) grad_in[i] = grad_out[i] * y[i] * (1.0f - y[i]);
}

/* out[r, c] += bias[c], after a matrix product. */
__global__ void add_bias_rows_kernel(float *out, const float *bias, int64_t rows, int64_t cols)
{
    const int64_t i = element_index();
    if (i < rows * cols) out[i] += bias[i % cols];
}

/* (probs - one_hot(label)) / rows: the gradient of the mean cross-entropy. */
__global__ void softmax_xent_backward_kernel(const float *probs, const int32_t *labels, float *grad,
                                             int64_t rows, int64_t cols)
{
    const int64_t i = element_index();
    if (i >= rows * cols) return;
    const int64_t r = i / cols, c = i % cols;
    const float one_hot = labels[r] == c ? 1.0f : 0.0f;
    grad[i] = (probs[i] - one_hot) / (float)rows;
}
