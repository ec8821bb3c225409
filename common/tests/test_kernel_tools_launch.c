/* test_kernel_tools_launch.c: the kernels of test_kernel_tools_kernels.cuh
 * for the simulated GPU, built for the kernel tools (cmake/kernel_tools.cmake),
 * and their launchers. Every field passed has its parameter's type: kernels
 * with barriers are called through libffi. */
#include "labkit/cuda_emulation.h"
#include "test_kernel_tools_launch.h"

#include "test_kernel_tools_kernels.cuh"

const char tools_kernels_file[] = TOOLS_KERNELS_FILE;

static dim3 line_of(unsigned n)
{
    const dim3 d = { n, 1, 1 };
    return d;
}

static dim3 square(unsigned n)
{
    const dim3 d = { n, n, 1 };
    return d;
}

static void write_past_end(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(write_past_end_kernel, line_of(p->grid), line_of(p->block), stream, p->c, p->n);
}

static void read_before_start(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(read_before_start_kernel, line_of(p->grid), line_of(p->block), stream, p->a, p->c, p->n);
}

static void shared_past_end(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(shared_past_end_kernel, line_of(1), line_of(32), stream, p->c);
}

static void tiled_one_barrier(const void *raw, void *stream)
{
    const tools_args *p = raw;
    const unsigned tiles = (unsigned)(p->n + TT_TILE - 1) / TT_TILE;
    LAUNCH(tiled_one_barrier_kernel, square(tiles), square(TT_TILE), stream, p->a, p->b, p->c, p->n);
}

static void tiled(const void *raw, void *stream)
{
    const tools_args *p = raw;
    const unsigned tiles = (unsigned)(p->n + TT_TILE - 1) / TT_TILE;
    LAUNCH(tiled_kernel, square(tiles), square(TT_TILE), stream, p->a, p->b, p->c, p->n);
}

static void half_written(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(half_written_kernel, line_of(1), line_of(64), stream, p->c);
}

static void shift_left(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(shift_left_kernel, line_of(1), line_of(64), stream, p->a, p->c);
}

static void last_writes(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(last_writes_kernel, line_of(1), line_of(64), stream, p->a, p->c);
}

static void unguarded_sum(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(unguarded_sum_kernel, line_of(p->grid), line_of(p->block), stream, p->a, p->c, p->n);
}

static void atomic_sum(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(atomic_sum_kernel, line_of(p->grid), line_of(p->block), stream, p->a, p->c, p->n);
}

static void strided_copy(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(strided_copy_kernel, line_of(p->grid), line_of(p->block), stream, p->a, p->c, p->n, p->stride);
}

static void naive(const void *raw, void *stream)
{
    const tools_args *p = raw;
    const unsigned tiles = (unsigned)(p->n + TT_TILE - 1) / TT_TILE;
    LAUNCH(naive_kernel, square(tiles), square(TT_TILE), stream, p->a, p->b, p->c, p->n);
}

static void transpose(const void *raw, void *stream)
{
    const tools_args *p = raw;
    const dim3 block = { 32, 8, 1 };
    LAUNCH(transpose_kernel, square((unsigned)p->n / 32), block, stream, p->a, p->c, p->n);
}

static void transpose_padded(const void *raw, void *stream)
{
    const tools_args *p = raw;
    const dim3 block = { 32, 8, 1 };
    LAUNCH(transpose_padded_kernel, square((unsigned)p->n / 32), block, stream, p->a, p->c, p->n);
}

static void odd_even(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(odd_even_kernel, line_of(p->grid), line_of(p->block), stream, p->ia, p->ib, p->n);
}

static void histogram(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(histogram_kernel, line_of(p->grid), line_of(p->block), stream, p->ia, p->bins, p->n);
}

static void divergent_barrier(const void *raw, void *stream)
{
    const tools_args *p = raw;
    LAUNCH(divergent_barrier_kernel, line_of(1), line_of(32), stream, p->c);
}

kernel_fn tools_launcher(tools_kernel k)
{
    static const kernel_fn launchers[TOOLS_KERNELS] = {
        [WRITE_PAST_END] = write_past_end,
        [READ_BEFORE_START] = read_before_start,
        [SHARED_PAST_END] = shared_past_end,
        [TILED_ONE_BARRIER] = tiled_one_barrier,
        [TILED] = tiled,
        [HALF_WRITTEN] = half_written,
        [SHIFT_LEFT] = shift_left,
        [LAST_WRITES] = last_writes,
        [UNGUARDED_SUM] = unguarded_sum,
        [ATOMIC_SUM] = atomic_sum,
        [STRIDED_COPY] = strided_copy,
        [NAIVE] = naive,
        [TRANSPOSE] = transpose,
        [TRANSPOSE_PADDED] = transpose_padded,
        [ODD_EVEN] = odd_even,
        [HISTOGRAM] = histogram,
        [DIVERGENT_BARRIER] = divergent_barrier,
    };
    return (unsigned)k < TOOLS_KERNELS ? launchers[k] : NULL;
}
