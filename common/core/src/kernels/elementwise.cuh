/* elementwise.cuh: one thread per element.
 *
 * Single-source kernels: nvcc compiles this file for real GPUs (cuda/cuda_ops.cu)
 * and the C compiler compiles it for simulated ones (sim/sim_ops.c) through
 * labkit/cuda_emulation.h, which runs every block and thread in turn. Keep to the C
 * subset of CUDA: index arithmetic, no shared memory, no barriers. */

#include "../op_call.h" /* sgd_tensors, the fused SGD step's list */

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

/* SGD with momentum over a list of tensors, SGD_PER_THREAD elements per
 * thread, each block on one tensor (op_call.h's sgd_tensors): the expressions of the
 * unfused kernels (axpy_kernel as a scale, then twice as an axpy) on one
 * element, so that the compiler rounds (and, on a GPU, contracts into fused
 * multiply-adds) as it does there. The list travels by value on a GPU, in the
 * kernel's parameters (constant memory, up to 4 KiB, read by every thread at
 * no cost); by address on the simulated GPU, where each thread is a function
 * call that would copy it. */
#ifdef __CUDACC__
#define SGD_LIST_PARAMETER const sgd_tensors list_value
#define SGD_LIST (&list_value)
#define SGD_LIST_ARGUMENT(list) (list)
#else
#define SGD_LIST_PARAMETER const sgd_tensors *list_pointer
#define SGD_LIST list_pointer
#define SGD_LIST_ARGUMENT(list) (&(list))
#endif
#define SGD_PER_THREAD 8 /* elements per thread: the tensor's lookup, and a call per thread on sim, shared */
__global__ void sgd_momentum_kernel(SGD_LIST_PARAMETER, float lr, float momentum)
{
    const sgd_tensors *list = SGD_LIST;
    const int64_t block = blockIdx.x;
    int t = 0;
    while (block >= list->first_block[t + 1]) ++t; /* the same for the whole block */
    const int64_t n = list->offset[t + 1] - list->offset[t];
    const int64_t first = (block - list->first_block[t]) * blockDim.x * SGD_PER_THREAD + threadIdx.x;
    float *p = list->param[t], *v = list->velocity[t];
    const float *g = list->grad[t];
    /* neighbouring threads on neighbouring elements at every k: coalesced */
    for (int k = 0; k < SGD_PER_THREAD; ++k) {
        const int64_t j = first + (int64_t)k * blockDim.x;
        if (j >= n) return;
        if (momentum == 0.0f) {
            p[j] = -lr * g[j] + p[j];
            continue;
        }
        float velocity = momentum * v[j] + 0.0f;
        velocity = 1.0f * g[j] + velocity;
        v[j] = velocity;
        p[j] = -lr * velocity + p[j];
    }
}
