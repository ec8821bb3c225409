/* test_kernel_tools_kernels.cuh: kernels for test_kernel_tools, the kernel
 * sanitizer's and the memory profiler's tests, in CUDA's C subset.
 *
 * The mistakes each carry a comment "expect: <kind>" on the line the
 * sanitizer must name (the test reads this file to find the line); the other
 * kernels are right, and the sanitizer must say nothing of them. The
 * profiler's kernels have known counts: a copy at a stride, a naive and a
 * tiled product, a transpose through a shared tile with and without padding,
 * a branch that splits every warp, a histogram. */

#define TT_TILE 16

/* ==== mistakes ============================================================== */

/* No bounds check: the threads of the rounded-up grid write past the end. */
__global__ void write_past_end_kernel(float *out, int n)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    (void)n;
    out[i] = 1.0f; /* expect: write past end */
}

/* Reads its left neighbour, the first thread too: index -1. */
__global__ void read_before_start_kernel(const float *in, float *out, int n)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) out[i] = in[i - 1]; /* expect: read before start */
}

/* A shared array of 32 written at threadIdx.x + 1 by 32 threads. */
__global__ void shared_past_end_kernel(float *out)
{
    __shared__ float row[32];
    const int t = (int)threadIdx.x;
    row[t + 1] = (float)t; /* expect: shared past end */
    __syncthreads();
    out[t] = t > 0 ? row[t] : 0.0f;
}

/* The tiled product without its second barrier: the next tile overwrites the
 * shared tiles while other threads still read them. */
__global__ void tiled_one_barrier_kernel(const float *a, const float *b, float *c, int n)
{
    __shared__ float a_tile[TT_TILE][TT_TILE];
    __shared__ float b_tile[TT_TILE][TT_TILE];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int row = (int)blockIdx.y * TT_TILE + ty, col = (int)blockIdx.x * TT_TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n; t += TT_TILE) {
        a_tile[ty][tx] = row < n && t + tx < n ? a[row * n + t + tx] : 0.0f; /* expect: race write */
        b_tile[ty][tx] = t + ty < n && col < n ? b[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TT_TILE; ++i) sum += a_tile[ty][i] * b_tile[i][tx]; /* expect: race read */
    }
    if (row < n && col < n) c[row * n + col] = sum;
}

/* The right one, for the profiler's and the sanitizer's clean run. */
__global__ void tiled_kernel(const float *a, const float *b, float *c, int n)
{
    __shared__ float a_tile[TT_TILE][TT_TILE];
    __shared__ float b_tile[TT_TILE][TT_TILE];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int row = (int)blockIdx.y * TT_TILE + ty, col = (int)blockIdx.x * TT_TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n; t += TT_TILE) {
        a_tile[ty][tx] = row < n && t + tx < n ? a[row * n + t + tx] : 0.0f;
        b_tile[ty][tx] = t + ty < n && col < n ? b[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TT_TILE; ++i) sum += a_tile[ty][i] * b_tile[i][tx];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = sum;
}

/* Half the threads fill a shared array that every thread reads. */
__global__ void half_written_kernel(float *out)
{
    __shared__ float s[64];
    const int t = (int)threadIdx.x;
    if (t < 32) s[t] = (float)t;
    __syncthreads();
    out[t] = s[t]; /* expect: uninitialized */
}

/* Each thread reads its right neighbour's element, then writes its own over
 * it, with no barrier between: thread t + 1 writes what thread t alone read
 * (one reader: the race is found against the word's last reader). */
__global__ void shift_left_kernel(const float *in, float *out)
{
    __shared__ float s[64];
    const int t = (int)threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    const float right = t + 1 < 64 ? s[t + 1] : 0.0f; /* expect: war read */
    s[t] = right;                                     /* expect: war write */
    out[t] = right;
}

/* Every thread reads s[0]; the last one then writes it, with no barrier
 * between: the word's last reader is the writer itself, and the race is
 * found against the reader before it. */
__global__ void last_writes_kernel(const float *in, float *out)
{
    __shared__ float s[64];
    const int t = (int)threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    const float first = s[0];         /* expect: shared read */
    if (t == 63) s[0] = first + 1.0f; /* expect: last write */
    out[t] = first;
}

/* Every thread adds into one cell of global memory without an atomic. */
__global__ void unguarded_sum_kernel(const float *in, float *total, int n)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) total[0] = total[0] + in[i]; /* expect: global race */
}

/* The same with atomicAdd: no race. */
__global__ void atomic_sum_kernel(const float *in, float *total, int n)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) atomicAdd(total, in[i]);
}

/* ==== the profiler's ======================================================== */

/* out[i] = in[i * stride]: 32 consecutive threads read floats `stride` apart. */
__global__ void strided_copy_kernel(const float *in, float *out, int n, int stride)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) out[i] = in[i * stride];
}

/* One thread per cell, a row of a and a column of b each (lab 04's kernel). */
__global__ void naive_kernel(const float *a, const float *b, float *c, int n)
{
    const int row = (int)(blockIdx.y * blockDim.y + threadIdx.y),
              col = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (row >= n || col >= n) return;
    float sum = 0.0f;
    for (int p = 0; p < n; ++p) sum += a[row * n + p] * b[p * n + col];
    c[row * n + col] = sum;
}

/* out = in transposed, 32 x 32 blocks of 32 x 8 threads through a shared tile
 * of `width` floats a row: 32 (every column in one bank) or 33 (padded). */
#define TRANSPOSE_KERNEL(name, width)                                                                 \
    __global__ void name(const float *in, float *out, int n)                                          \
    {                                                                                                 \
        __shared__ float tile[32][width];                                                             \
        const int x = (int)(blockIdx.x * 32 + threadIdx.x);                                           \
        const int y0 = (int)(blockIdx.y * 32 + threadIdx.y);                                          \
        for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y0 + j) * n + x];    \
        __syncthreads();                                                                              \
        const int tx = (int)(blockIdx.y * 32 + threadIdx.x);                                          \
        const int ty0 = (int)(blockIdx.x * 32 + threadIdx.y);                                         \
        for (int j = 0; j < 32; j += 8) out[(ty0 + j) * n + tx] = tile[threadIdx.x][threadIdx.y + j]; \
    }
TRANSPOSE_KERNEL(transpose_kernel, 32)
TRANSPOSE_KERNEL(transpose_padded_kernel, 33)

/* Odd and even lanes take different branches (stores to different arrays,
 * which the compiler cannot merge into one): every warp diverges once. */
__global__ void odd_even_kernel(int *values, int *odd, int n)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    const int v = values[i];
    if (threadIdx.x % 2)
        odd[i] = v * 3 + 1;
    else
        values[i] = v / 2;
}

/* Some threads of the block return before the barrier the others wait at. */
__global__ void divergent_barrier_kernel(float *out)
{
    const int t = (int)threadIdx.x;
    if (t >= 16) return;
    __syncthreads();
    out[t] = 1.0f;
}

/* A histogram of values in [0, 16): one atomicAdd per element. */
__global__ void histogram_kernel(const int *values, unsigned *bins, int n)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) atomicAdd(&bins[values[i] & 15], 1u);
}
