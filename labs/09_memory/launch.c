/* launch.c: your kernels on a simulated GPU, and on the CPU (given: not a step;
 * launch.h says how it fits together).
 *
 * The C compiler builds your memory_kernels.cuh here, after labkit/cuda_emulation.h
 * has turned CUDA's qualifiers, indices, shared memory, barriers, shuffles and
 * atomics into C. It is included with <...> on purpose: each program compiles
 * the kernels beside its own lab.c (the build puts that directory first on
 * the include path; lab.cmake). */
#include "launch.h"

#include "labkit/cuda_emulation.h"

#include "given_kernels.cuh"
#include <memory_kernels.cuh>

/* ---- the launchers: each runs when the device's queue reaches it ---------------------------- */

static dim3 line_of(unsigned count)
{
    const dim3 d = { count, 1, 1 };
    return d;
}

static void copy_on_sim(const void *args, void *stream)
{
    const stream_args *p = args;
    LAUNCH(copy_kernel, line_of(p->blocks), line_of(p->threads), stream, p->in, p->out, p->n);
}

static void scale_on_sim(const void *args, void *stream)
{
    const stream_args *p = args;
    LAUNCH(scale_kernel, line_of(p->blocks), line_of(p->threads), stream, p->in, p->out, p->alpha, p->n);
}

static void strided_on_sim(const void *args, void *stream)
{
    const stream_args *p = args;
    LAUNCH(strided_copy_kernel, line_of(p->blocks), line_of(p->threads), stream, p->in, p->out, p->n,
           p->stride);
}

static const dim3 tile_block = { TILE, TILE, 1 };

static void naive_on_sim(const void *args, void *stream)
{
    const product_args *p = args;
    const dim3 grid = { p->grid_x, p->grid_y, 1 };
    LAUNCH(naive_matmul_kernel, grid, tile_block, stream, p->a, p->b, p->c, p->m, p->n, p->k);
}

static void tiled_on_sim(const void *args, void *stream)
{
    const product_args *p = args;
    const dim3 grid = { p->grid_x, p->grid_y, 1 };
    LAUNCH(tiled_matmul_kernel, grid, tile_block, stream, p->a, p->b, p->c, p->m, p->n, p->k);
}

/* The total (and the counter) to 0, then the sum: one launch of the queue. */
#define SUM_ON_SIM(kernel, args, stream)                                                                     \
    do {                                                                                                     \
        const sum_args *p = (args);                                                                          \
        LAUNCH(sum_reset_kernel, line_of(1), line_of(1), stream, p->total, p->atomics);                      \
        LAUNCH(kernel, line_of(p->blocks), line_of(REDUCE_BLOCK), stream, p->x, p->n, p->total, p->atomics); \
    } while (0)

static void sum_atomic_on_sim(const void *args, void *stream) { SUM_ON_SIM(sum_atomic_kernel, args, stream); }
static void sum_block_on_sim(const void *args, void *stream) { SUM_ON_SIM(sum_block_kernel, args, stream); }
static void sum_warp_on_sim(const void *args, void *stream) { SUM_ON_SIM(sum_warp_kernel, args, stream); }

static const dim3 transpose_block = { TRANSPOSE_TILE, TRANSPOSE_ROWS, 1 };

static void naive_transpose_on_sim(const void *args, void *stream)
{
    const transpose_args *p = args;
    const dim3 grid = { p->grid_x, p->grid_y, 1 };
    LAUNCH(naive_transpose_kernel, grid, transpose_block, stream, p->in, p->out, p->rows, p->cols);
}

static void transpose_on_sim(const void *args, void *stream)
{
    const transpose_args *p = args;
    const dim3 grid = { p->grid_x, p->grid_y, 1 };
    LAUNCH(transpose_kernel, grid, transpose_block, stream, p->in, p->out, p->rows, p->cols);
}

/* nvcc compiled launch.cu only in a build with CUDA (lab.cmake). */
#ifdef LAB_WITH_CUDA
#define ON_CUDA(launcher) launcher
#else
#define ON_CUDA(launcher) NULL
#endif

const kernel_launchers copy_launchers = { "copy_kernel", copy_on_sim, ON_CUDA(copy_on_cuda) };
const kernel_launchers scale_launchers = { "scale_kernel", scale_on_sim, ON_CUDA(scale_on_cuda) };
const kernel_launchers strided_launchers = { "strided_copy_kernel", strided_on_sim,
                                             ON_CUDA(strided_on_cuda) };
const kernel_launchers naive_launchers = { "naive_matmul_kernel", naive_on_sim, ON_CUDA(naive_on_cuda) };
const kernel_launchers tiled_launchers = { "tiled_matmul_kernel", tiled_on_sim, ON_CUDA(tiled_on_cuda) };
const kernel_launchers sum_atomic_launchers = { "sum_atomic_kernel", sum_atomic_on_sim,
                                                ON_CUDA(sum_atomic_on_cuda) };
const kernel_launchers sum_block_launchers = { "sum_block_kernel", sum_block_on_sim,
                                               ON_CUDA(sum_block_on_cuda) };
const kernel_launchers sum_warp_launchers = { "sum_warp_kernel", sum_warp_on_sim, ON_CUDA(sum_warp_on_cuda) };
const kernel_launchers naive_transpose_launchers = { "naive_transpose_kernel", naive_transpose_on_sim,
                                                     ON_CUDA(naive_transpose_on_cuda) };
const kernel_launchers transpose_launchers = { "transpose_kernel", transpose_on_sim,
                                               ON_CUDA(transpose_on_cuda) };

/* ---- what the programs call ------------------------------------------------------------------- */

const char *stream_kernel_name(stream_kernel kernel)
{
    return kernel == KERNEL_COPY ? "copy" : kernel == KERNEL_SCALE ? "scale" : "strided copy";
}

const char *product_kernel_name(product_kernel kernel) { return kernel == PRODUCT_NAIVE ? "naive" : "tiled"; }

const char *sum_kernel_name(sum_kernel kernel)
{
    return kernel == SUM_ATOMIC ? "atomic sum" : kernel == SUM_BLOCK ? "tree sum" : "tree+warp sum";
}

const char *transpose_kernel_name(transpose_kind kernel)
{
    return kernel == TRANSPOSE_NAIVE ? "naive transpose" : "tiled transpose";
}

/* Blocks of `size` threads that cover `threads` threads, the last one rounded up. */
static int64_t blocks_for(int64_t threads, int64_t size) { return (threads + size - 1) / size; }

int64_t strided_threads(int64_t n, int64_t stride)
{
    return n < 1 || stride < 1 ? 0 : (n + stride - 1) / stride * stride;
}

status run_stream_grid(device d, stream_kernel kernel, const float *in, float *out, int64_t n, int64_t stride,
                       float alpha, unsigned blocks, unsigned threads)
{
    static const kernel_launchers *const launchers[] = { &copy_launchers, &scale_launchers,
                                                         &strided_launchers };
    if ((int)kernel < KERNEL_COPY || kernel > KERNEL_STRIDED)
        return fail(STATUS_BAD_ARGUMENT,
                    "run_stream: kernel %d is none of KERNEL_COPY, KERNEL_SCALE and "
                    "KERNEL_STRIDED (launch.h)",
                    (int)kernel);
    const status s = kernels_todo(1);
    if (s != STATUS_OK) return s;
    if (!in || !out)
        return fail(STATUS_BAD_ARGUMENT, "run_stream: in and out must be device memory, not NULL");
    if (n < 1 || stride < 1)
        return fail(STATUS_BAD_ARGUMENT, "run_stream: n = %lld and stride = %lld; both must be at least 1",
                    (long long)n, (long long)stride);
    if (blocks < 1 || threads < 1 || threads > 1024)
        return fail(STATUS_BAD_ARGUMENT,
                    "run_stream: %u blocks of %u threads; a GPU launches 1 to 1024 threads per block, and at "
                    "least one block",
                    blocks, threads);
    const stream_args args = { in, out, n, stride, alpha, blocks, threads };
    return device_launch(d, launchers[kernel], &args, sizeof args);
}

status run_stream(device d, stream_kernel kernel, const float *in, float *out, int64_t n, int64_t stride,
                  float alpha)
{
    if (kernel != KERNEL_STRIDED) stride = 1;
    const int64_t threads = kernel == KERNEL_STRIDED ? strided_threads(n, stride) : n;
    const int64_t blocks = blocks_for(threads, LAUNCH_BLOCK);
    if (n >= 1 && stride >= 1 && blocks > 2147483647)
        return fail(STATUS_BAD_ARGUMENT,
                    "run_stream: n = %lld needs %lld blocks; a GPU launches at most 2^31 - 1", (long long)n,
                    (long long)blocks);
    return run_stream_grid(d, kernel, in, out, n, stride, alpha, (unsigned)(blocks > 0 ? blocks : 0),
                           LAUNCH_BLOCK);
}

status run_product(device d, product_kernel kernel, const float *a, const float *b, float *c, int64_t m,
                   int64_t n, int64_t k)
{
    if (kernel != PRODUCT_NAIVE && kernel != PRODUCT_TILED)
        return fail(STATUS_BAD_ARGUMENT, "run_product: kernel %d is neither PRODUCT_NAIVE nor PRODUCT_TILED",
                    (int)kernel);
    const status s = kernels_todo(2);
    if (s != STATUS_OK) return s;
    if (!a || !b || !c)
        return fail(STATUS_BAD_ARGUMENT, "run_product: a, b and c must be device memory, not NULL");
    if (m < 1 || n < 1 || k < 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "run_product: [%lld, %lld] x [%lld, %lld]: every size must be at least 1", (long long)m,
                    (long long)k, (long long)k, (long long)n);
    if (blocks_for(m, TILE) > 65535 || blocks_for(n, TILE) > 2147483647)
        return fail(
            STATUS_BAD_ARGUMENT,
            "run_product: c [%lld, %lld] needs more than 65535 blocks of %d rows; a GPU launches at most "
            "65535 along y",
            (long long)m, (long long)n, TILE);
    const product_args args = {
        a, b, c, m, n, k, (unsigned)blocks_for(n, TILE), (unsigned)blocks_for(m, TILE)
    };
    return device_launch(d, kernel == PRODUCT_NAIVE ? &naive_launchers : &tiled_launchers, &args,
                         sizeof args);
}

status run_sum(device d, sum_kernel kernel, const float *x, int64_t n, float *total, unsigned *atomics)
{
    static const kernel_launchers *const launchers[] = { &sum_atomic_launchers, &sum_block_launchers,
                                                         &sum_warp_launchers };
    if ((int)kernel < SUM_ATOMIC || kernel > SUM_WARP)
        return fail(STATUS_BAD_ARGUMENT, "run_sum: kernel %d is none of SUM_ATOMIC, SUM_BLOCK and SUM_WARP",
                    (int)kernel);
    const status s = kernels_todo(3);
    if (s != STATUS_OK) return s;
    if (!x || !total)
        return fail(STATUS_BAD_ARGUMENT, "run_sum: x and total must be device memory, not NULL");
    if (n < 1 || blocks_for(n, REDUCE_BLOCK) > 2147483647)
        return fail(STATUS_BAD_ARGUMENT, "run_sum: n = %lld; it must be 1 to 2^31 - 1 blocks of %d",
                    (long long)n, REDUCE_BLOCK);
    const sum_args args = { x, n, total, atomics, (unsigned)blocks_for(n, REDUCE_BLOCK) };
    return device_launch(d, launchers[kernel], &args, sizeof args);
}

status run_transpose(device d, transpose_kind kernel, const float *in, float *out, int64_t rows, int64_t cols)
{
    if (kernel != TRANSPOSE_NAIVE && kernel != TRANSPOSE_TILED)
        return fail(STATUS_BAD_ARGUMENT,
                    "run_transpose: kernel %d is neither TRANSPOSE_NAIVE nor TRANSPOSE_TILED (launch.h)",
                    (int)kernel);
    const status s = kernels_todo(5);
    if (s != STATUS_OK) return s;
    if (!in || !out)
        return fail(STATUS_BAD_ARGUMENT, "run_transpose: in and out must be device memory, not NULL");
    if (rows < 1 || cols < 1)
        return fail(STATUS_BAD_ARGUMENT, "run_transpose: in is [%lld, %lld]; both sizes must be at least 1",
                    (long long)rows, (long long)cols);
    /* The naive kernel's blocks cover TRANSPOSE_ROWS rows, the tiled one's a whole tile of them. */
    const int64_t block_rows = kernel == TRANSPOSE_NAIVE ? TRANSPOSE_ROWS : TRANSPOSE_TILE;
    if (blocks_for(rows, block_rows) > 65535 || blocks_for(cols, TRANSPOSE_TILE) > 2147483647)
        return fail(
            STATUS_BAD_ARGUMENT,
            "run_transpose: in [%lld, %lld] needs more than 65535 blocks of %lld rows; a GPU launches "
            "at most 65535 along y",
            (long long)rows, (long long)cols, (long long)block_rows);
    const transpose_args args = { in,
                                  out,
                                  rows,
                                  cols,
                                  (unsigned)blocks_for(cols, TRANSPOSE_TILE),
                                  (unsigned)blocks_for(rows, block_rows) };
    return device_launch(d, kernel == TRANSPOSE_NAIVE ? &naive_transpose_launchers : &transpose_launchers,
                         &args, sizeof args);
}
