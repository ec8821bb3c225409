/* test_cooperative_kernels.cuh: kernels whose threads cooperate, for
 * test_cooperative, written once in CUDA's C subset.
 *
 * The C compiler builds this text for the CPU and the simulated GPU
 * (test_cooperative.c, after labkit/cuda_emulation.h), nvcc the very same text
 * for a real GPU (test_cooperative_cuda.cu, in a build with CUDA): shared
 * memory (static and dynamic), __syncthreads(), __syncwarp(), the shuffles
 * and atomics. The kernels at the end are mistakes the simulated GPU must
 * name (a real GPU hangs or computes garbage on them; only the C side runs
 * them), and two known-wrong versions that the tests must catch. */

#define TILE 16
#define REDUCE_BLOCK 256
#define HISTOGRAM_BINS 16

/* ==== a tiled matrix product ================================================
 * c [m, n] = a [m, k] b [k, n], blocks of TILE x TILE threads, one per cell of
 * c; each block walks k in tiles of a and b staged in shared memory. The first
 * barrier waits until the tiles are loaded, the second until every thread is
 * done with them, before the next tiles overwrite them. */
static __device__ void tiled_product(const float *a, const float *b, float *c, int m, int n, int k,
                                     int second_barrier)
{
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int row = (int)blockIdx.y * TILE + ty, col = (int)blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        a_tile[ty][tx] = row < m && t + tx < k ? a[row * k + t + tx] : 0.0f;
        b_tile[ty][tx] = t + ty < k && col < n ? b[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) sum += a_tile[ty][i] * b_tile[i][tx];
        if (second_barrier) __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = sum;
}

__global__ void tiled_matmul_kernel(const float *a, const float *b, float *c, int m, int n, int k)
{
    tiled_product(a, b, c, m, n, k, 1);
}

/* Known-wrong: no second barrier, so a fast thread overwrites its element of
 * the tiles while the others still read them. */
__global__ void tiled_matmul_one_barrier_kernel(const float *a, const float *b, float *c, int m, int n, int k)
{
    tiled_product(a, b, c, m, n, k, 0);
}

/* ==== reductions ============================================================ */

/* partial[block] = the sum of the block's REDUCE_BLOCK elements of x: a tree in
 * shared memory, halving the active threads at each barrier. */
static __device__ void block_sum_tree(const float *x, float *partial, int n, int barrier_in_loop)
{
    __shared__ float s[REDUCE_BLOCK];
    const int t = (int)threadIdx.x, i = (int)(blockIdx.x * blockDim.x) + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = (int)blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        if (barrier_in_loop) __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}

__global__ void block_sum_kernel(const float *x, float *partial, int n) { block_sum_tree(x, partial, n, 1); }

/* Known-wrong: the tree without its barriers reads sums not yet made. */
__global__ void block_sum_unsynced_kernel(const float *x, float *partial, int n)
{
    block_sum_tree(x, partial, n, 0);
}

/* out[warp] = the sum of the warp's 32 elements of x, by shuffles: lane 0 ends
 * with the total (down), or with its own value only (up: the known-wrong). */
static __device__ void warp_sum_shuffled(const float *x, float *out, int n, int down)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    float v = i < n ? x[i] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += down ? __shfl_down_sync(0xffffffffu, v, offset) : __shfl_up_sync(0xffffffffu, v, offset);
    if (threadIdx.x % warpSize == 0) out[i / warpSize] = v;
}

__global__ void warp_sum_kernel(const float *x, float *out, int n) { warp_sum_shuffled(x, out, n, 1); }

__global__ void warp_sum_up_kernel(const float *x, float *out, int n) { warp_sum_shuffled(x, out, n, 0); }

/* One warp: each shuffle, type and width, SHUFFLE_RESULTS results per lane. */
#define SHUFFLE_RESULTS 7
__global__ void shuffle_kernel(int *out)
{
    const int lane = (int)threadIdx.x, v = 100 + lane;
    int *mine = out + lane * SHUFFLE_RESULTS;
    mine[0] = __shfl_sync(0xffffffffu, v, 3);
    mine[1] = __shfl_xor_sync(0xffffffffu, v, 1);
    mine[2] = __shfl_up_sync(0xffffffffu, v, 1, 8);
    mine[3] = __shfl_down_sync(0xffffffffu, v, 2, 8);
    mine[4] = (int)__shfl_xor_sync(0xffffffffu, (unsigned)lane * 7u, 5, 16);
    mine[5] = (int)(2.0f * __shfl_sync(0xffffffffu, 0.5f * (float)lane, lane + 1));
    /* two half warps, each with its own mask, at once */
    if (lane < 16)
        mine[6] = __shfl_down_sync(0x0000ffffu, v, 1);
    else
        mine[6] = __shfl_down_sync(0xffff0000u, v, 1);
    __syncwarp();
}

/* ==== atomics ================================================================ */

/* bins[b] = how many values fall in bin b (value % HISTOGRAM_BINS): counted per
 * block in shared memory, then added to the global bins. */
__global__ void histogram_kernel(const int *values, int n, unsigned *bins)
{
    __shared__ unsigned local[HISTOGRAM_BINS];
    const int t = (int)threadIdx.x, i = (int)(blockIdx.x * blockDim.x) + t;
    if (t < HISTOGRAM_BINS) local[t] = 0u;
    __syncthreads();
    if (i < n) atomicAdd(&local[values[i] % HISTOGRAM_BINS], 1u);
    __syncthreads();
    if (t < HISTOGRAM_BINS) atomicAdd(&bins[t], local[t]);
}

/* Every atomic function on every type it takes, one call per thread. */
__global__ void atomics_kernel(const int *v, int n, int *ints, unsigned *uints, float *floats,
                               unsigned long long *wide)
{
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    atomicAdd(&ints[0], v[i]);
    atomicSub(&ints[1], v[i]);
    atomicMax(&ints[2], v[i]);
    atomicMin(&ints[3], v[i]);
    atomicCAS(&ints[4], 0, i + 1); /* the first thread to get there wins */
    atomicExch(&ints[5], i);
    atomicAdd(&uints[0], 2u);
    atomicSub(&uints[1], 1u);
    atomicMax(&uints[2], (unsigned)(v[i] + 100));
    atomicMin(&uints[3], (unsigned)(v[i] + 100));
    atomicCAS(&uints[4], 0u, 7u);
    atomicExch(&uints[5], 9u);
    atomicAdd(&floats[0], 0.5f);
    atomicExch(&floats[1], 1.5f);
    atomicAdd(&wide[0], 3ull);
    atomicMax(&wide[1], (unsigned long long)i);
}

/* ==== dynamic shared memory ================================================== */

/* out[i] = in[the same block's element at the mirrored place]: staged in
 * shared memory whose size the launch gives (blockDim.x floats). */
__global__ void reverse_block_kernel(const float *in, float *out, int n)
{
    DYNAMIC_SHARED(float, staged);
    const int t = (int)threadIdx.x, i = (int)(blockIdx.x * blockDim.x) + t;
    staged[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = staged[(int)blockDim.x - 1 - t];
}

/* ==== the order of execution ================================================= */

/* Each thread writes (thread * 4 + phase) into the next place of trace, at
 * four phases parted by a block barrier, a warp barrier and a block barrier. */
__global__ void trace_kernel(int *counter, int *trace)
{
    const int t = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    trace[atomicAdd(counter, 1)] = t * 4 + 0;
    __syncthreads();
    trace[atomicAdd(counter, 1)] = t * 4 + 1;
    __syncwarp();
    trace[atomicAdd(counter, 1)] = t * 4 + 2;
    __syncthreads();
    trace[atomicAdd(counter, 1)] = t * 4 + 3;
}

/* ==== mistakes the simulated GPU names (never run on a real GPU) ============= */

/* Threads at or past `limit` return before the barrier the others wait at. */
enum { EARLY_RETURN_BARRIER_LINE = __LINE__ + 4 };
__global__ void early_return_kernel(int *out, int limit)
{
    if ((int)threadIdx.x >= limit) return;
    __syncthreads();
    out[threadIdx.x] = 1;
}

/* Two barriers on two lines, half of the block at each. */
enum { FIRST_HALF_BARRIER_LINE = __LINE__ + 4, SECOND_HALF_BARRIER_LINE = __LINE__ + 6 };
__global__ void two_barriers_kernel(int *out, int half)
{
    if ((int)threadIdx.x < half)
        __syncthreads();
    else
        __syncthreads();
    out[threadIdx.x] = 2;
}

/* Every lane calls a shuffle whose mask names lanes 0-15 only. */
enum { MASK_LEAVES_OUT_LINE = __LINE__ + 4 };
__global__ void mask_leaves_out_kernel(int *out, int value)
{
    int v = value + (int)threadIdx.x;
    v = __shfl_down_sync(0x0000ffffu, v, 1);
    out[threadIdx.x] = v;
}

/* Lanes 0-15 call a shuffle for the whole warp; lanes 16-31 never do. */
enum { MASK_NEVER_COMES_LINE = __LINE__ + 4 };
__global__ void mask_never_comes_kernel(int *out, int value)
{
    int v = value + (int)threadIdx.x;
    if (threadIdx.x < 16) v = __shfl_down_sync(0xffffffffu, v, 1);
    out[threadIdx.x] = v;
}

/* A thread that recurses `depth` times, 1 KiB a call: more than a fiber's
 * stack holds, less than an OS thread's (thread 0 of the block runs on the
 * latter). */
static __device__ int recurse(volatile char *caller, int depth)
{
    volatile char frame[1024];
    frame[0] = (char)depth;
    frame[1023] = caller ? caller[0] : 0;
    if (depth == 0) return frame[0];
    return recurse(frame, depth - 1) + frame[1023];
}

__global__ void deep_recursion_kernel(int *out, int depth)
{
    __syncthreads();
    out[threadIdx.x] = recurse(0, depth);
}

/* A barrier kernel whose LAUNCH passes an int for its int64_t parameter. */
__global__ void wide_count_kernel(int *out, int64_t count)
{
    __syncthreads();
    if ((int64_t)threadIdx.x < count) out[threadIdx.x] = 3;
}

/* A barrier kernel that takes a struct by value. */
typedef struct int_pair {
    int first, second;
} int_pair;

__global__ void struct_argument_kernel(int *out, int_pair pair)
{
    __syncthreads();
    out[threadIdx.x] = pair.first + pair.second;
}
