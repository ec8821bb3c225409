/* test_cooperative_sim.c: the kernels of test_cooperative_kernels.cuh built by
 * the C compiler, through labkit/cuda_emulation.h, for the CPU and the
 * simulated GPU, and their launchers (test_cooperative_kernels.h). Every field
 * of the launch arguments has its parameter's type: kernels with barriers are
 * called through libffi, which converts nothing. */
#include "labkit/cuda_emulation.h"
#include "test_cooperative_kernels.h"

#include "test_cooperative_kernels.cuh"

#ifdef LABKIT_TEST_BUILT_WITH_CUDA
#define ON_CUDA(launcher) launcher
#else
#define ON_CUDA(launcher) NULL
#endif

const int early_return_barrier_line = EARLY_RETURN_BARRIER_LINE;
const int first_half_barrier_line = FIRST_HALF_BARRIER_LINE,
          second_half_barrier_line = SECOND_HALF_BARRIER_LINE;
const int mask_leaves_out_line = MASK_LEAVES_OUT_LINE, mask_never_comes_line = MASK_NEVER_COMES_LINE;

static dim3 dims(unsigned x, unsigned y)
{
    const dim3 d = { x, y, 1 };
    return d;
}

/* ---- matmul_args: TILE x TILE blocks over c ----------------------------------- */

static dim3 tiles_of(const matmul_args *a)
{
    return dims((unsigned)(a->n + TILE - 1) / TILE, (unsigned)(a->m + TILE - 1) / TILE);
}

static void tiled_matmul_on_sim(const void *raw, void *stream)
{
    const matmul_args *a = raw;
    LAUNCH(tiled_matmul_kernel, tiles_of(a), dims(TILE, TILE), stream, a->a, a->b, a->c, a->m, a->n, a->k);
}

static void tiled_matmul_one_barrier_on_sim(const void *raw, void *stream)
{
    const matmul_args *a = raw;
    LAUNCH(tiled_matmul_one_barrier_kernel, tiles_of(a), dims(TILE, TILE), stream, a->a, a->b, a->c, a->m,
           a->n, a->k);
}

const kernel_launchers tiled_matmul = { "tiled_matmul_kernel", tiled_matmul_on_sim,
                                        ON_CUDA(tiled_matmul_on_cuda) };
const kernel_launchers tiled_matmul_one_barrier = { "tiled_matmul_one_barrier_kernel",
                                                    tiled_matmul_one_barrier_on_sim, NULL };

/* ---- vector_pair_args ------------------------------------------------------------ */

#define VECTOR_PAIR_LAUNCHER(name, kernel)                                                                 \
    static void name(const void *raw, void *stream)                                                        \
    {                                                                                                      \
        const vector_pair_args *a = raw;                                                                   \
        LAUNCH_SHARED(kernel, dims(a->grid, 1), dims(a->block, 1), a->shared_bytes, stream, a->in, a->out, \
                      a->n);                                                                               \
    }

VECTOR_PAIR_LAUNCHER(block_sum_on_sim, block_sum_kernel)
VECTOR_PAIR_LAUNCHER(block_sum_unsynced_on_sim, block_sum_unsynced_kernel)
VECTOR_PAIR_LAUNCHER(warp_sum_on_sim, warp_sum_kernel)
VECTOR_PAIR_LAUNCHER(warp_sum_up_on_sim, warp_sum_up_kernel)
VECTOR_PAIR_LAUNCHER(reverse_block_on_sim, reverse_block_kernel)

const kernel_launchers block_sum = { "block_sum_kernel", block_sum_on_sim, ON_CUDA(block_sum_on_cuda) };
const kernel_launchers block_sum_unsynced = { "block_sum_unsynced_kernel", block_sum_unsynced_on_sim, NULL };
const kernel_launchers warp_sum = { "warp_sum_kernel", warp_sum_on_sim, ON_CUDA(warp_sum_on_cuda) };
const kernel_launchers warp_sum_up = { "warp_sum_up_kernel", warp_sum_up_on_sim, NULL };
const kernel_launchers reverse_block = { "reverse_block_kernel", reverse_block_on_sim,
                                         ON_CUDA(reverse_block_on_cuda) };

/* ---- atomics ------------------------------------------------------------------------ */

static void histogram_on_sim(const void *raw, void *stream)
{
    const histogram_args *a = raw;
    LAUNCH(histogram_kernel, dims(a->grid, 1), dims(a->block, 1), stream, a->values, a->n, a->bins);
}

static void atomics_on_sim(const void *raw, void *stream)
{
    const atomics_args *a = raw;
    LAUNCH(atomics_kernel, dims(a->grid, 1), dims(a->block, 1), stream, a->v, a->n, a->ints, a->uints,
           a->floats, a->wide);
}

static void trace_on_sim(const void *raw, void *stream)
{
    const trace_args *a = raw;
    LAUNCH(trace_kernel, dims(a->grid, 1), dims(a->block, 1), stream, a->counter, a->trace);
}

const kernel_launchers histogram = { "histogram_kernel", histogram_on_sim, ON_CUDA(histogram_on_cuda) };
const kernel_launchers atomics = { "atomics_kernel", atomics_on_sim, ON_CUDA(atomics_on_cuda) };
const kernel_launchers trace = { "trace_kernel", trace_on_sim, NULL };

/* ---- out_args: the shuffles and the mistakes ------------------------------------------ */

static void shuffle_on_sim(const void *raw, void *stream)
{
    const out_args *a = raw;
    LAUNCH(shuffle_kernel, dims(a->grid, 1), dims(a->block, 1), stream, a->out);
}

#define OUT_LAUNCHER(name, kernel)                                                     \
    static void name(const void *raw, void *stream)                                    \
    {                                                                                  \
        const out_args *a = raw;                                                       \
        LAUNCH(kernel, dims(a->grid, 1), dims(a->block, 1), stream, a->out, a->value); \
    }

OUT_LAUNCHER(early_return_on_sim, early_return_kernel)
OUT_LAUNCHER(two_barriers_on_sim, two_barriers_kernel)
OUT_LAUNCHER(mask_leaves_out_on_sim, mask_leaves_out_kernel)
OUT_LAUNCHER(mask_never_comes_on_sim, mask_never_comes_kernel)
OUT_LAUNCHER(deep_recursion_on_sim, deep_recursion_kernel)
/* a->value is an int, the kernel's parameter an int64_t: refused once it meets its barrier */
OUT_LAUNCHER(wide_count_on_sim, wide_count_kernel)

static void struct_argument_on_sim(const void *raw, void *stream)
{
    const out_args *a = raw;
    const int_pair pair = { a->value, 1 };
    LAUNCH(struct_argument_kernel, dims(a->grid, 1), dims(a->block, 1), stream, a->out, pair);
}

const kernel_launchers shuffle = { "shuffle_kernel", shuffle_on_sim, ON_CUDA(shuffle_on_cuda) };
const kernel_launchers early_return = { "early_return_kernel", early_return_on_sim, NULL };
const kernel_launchers two_barriers = { "two_barriers_kernel", two_barriers_on_sim, NULL };
const kernel_launchers mask_leaves_out = { "mask_leaves_out_kernel", mask_leaves_out_on_sim, NULL };
const kernel_launchers mask_never_comes = { "mask_never_comes_kernel", mask_never_comes_on_sim, NULL };
const kernel_launchers deep_recursion = { "deep_recursion_kernel", deep_recursion_on_sim, NULL };
const kernel_launchers wide_count = { "wide_count_kernel", wide_count_on_sim, NULL };
const kernel_launchers struct_argument = { "struct_argument_kernel", struct_argument_on_sim, NULL };
