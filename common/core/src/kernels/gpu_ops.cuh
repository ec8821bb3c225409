/* gpu_ops.cuh: how each operation becomes kernel launches on a GPU.
 *
 * Shared by the real and the simulated GPU. The file that includes it first
 * defines:
 *   gpu_context                      the device's stream, BLAS handle, scratch
 *   LAUNCH(kernel, grid, block, ctx, args...)
 *   gpu_gemm(ctx, op, &bias_added)   the matrix product (cuBLAS, or OpenBLAS); declared
 *                                    at least (sim defines it below, with these kernels);
 *                                    it sets bias_added when it added op->c to every row
 *                                    itself, in its epilogue (cuBLASLt's, or the simulated
 *                                    GPU's loop after OpenBLAS), else add_bias_rows_kernel
 *                                    adds it, a kernel more
 *   gpu_launch_status(ctx)           whether the launches were accepted
 * and ctx->partials must hold REDUCE_THREADS doubles. */

#include "elementwise.cuh"
#include "rows.cuh"
#include "convert.cuh"

#define BLOCK_SIZE 256
/* Blocks that share a whole-tensor reduction: at most REDUCE_MAX_BLOCKS, two
 * per multiprocessor of an H100 or H200, each thread reading at least
 * REDUCE_PER_THREAD elements, so that a small tensor starts few threads (each
 * one is a call on the simulated GPU). Four blocks, the earlier choice, kept 4
 * of an H200's 132 multiprocessors at work: 1.8 ms to sum 2^24 floats, whose
 * bytes its memory moves in 14 us (lab 03's reads, 2026-11-27). */
#define REDUCE_MAX_BLOCKS 256
#define REDUCE_PER_THREAD 16
#define REDUCE_THREADS (REDUCE_MAX_BLOCKS * BLOCK_SIZE)
/* The partials are added up FOLD_WIDTH at a time, level after level, until
 * one thread adds up the last FOLD_WIDTH or fewer: one thread reading 1024
 * partials one after the other took 40 us on an H100, longer than everything
 * else in lab 05's training step. */
#define FOLD_WIDTH 32
/* Accuracy counts rows: a few blocks are enough for a batch's. */
#define ACCURACY_BLOCKS 4

static dim3 blocks_for(int64_t n)
{
    dim3 grid = { (unsigned)((n + BLOCK_SIZE - 1) / BLOCK_SIZE), 1, 1 };
    return grid;
}

static dim3 dims(unsigned x)
{
    dim3 d = { x, 1, 1 };
    return d;
}

/* Blocks for a reduction of n elements (REDUCE_MAX_BLOCKS, REDUCE_PER_THREAD). */
static unsigned reduce_blocks(int64_t n)
{
    const int64_t per_block = (int64_t)BLOCK_SIZE * REDUCE_PER_THREAD;
    const int64_t blocks = (n + per_block - 1) / per_block;
    return blocks < 1 ? 1u : blocks > REDUCE_MAX_BLOCKS ? (unsigned)REDUCE_MAX_BLOCKS : (unsigned)blocks;
}

/* out[0] = scale * the sum of the first `count` partials (or its square root). */
static void launch_finish(gpu_context *ctx, int64_t count, double scale, int take_sqrt, float *out)
{
    int64_t stride = 1;
    const int64_t width = FOLD_WIDTH;
    while (count > width) {
        const int64_t runs = (count + width - 1) / width;
        LAUNCH(fold_partials_kernel, blocks_for(runs), dims(BLOCK_SIZE), ctx, ctx->partials, count, width,
               stride);
        count = runs;
        stride *= width;
    }
    LAUNCH(finish_sum_kernel, dims(1), dims(1), ctx, ctx->partials, count, stride, scale, take_sqrt, out);
}

/* The reduction of rows.cuh: partial sums, then their sum. */
static void launch_sum(gpu_context *ctx, const op_call *op)
{
    const int squares = op->kind == OP_NORM;
    const double scale = op->kind == OP_MEAN ? 1.0 / (double)op->n : 1.0;
    const unsigned blocks = reduce_blocks(op->n);
    LAUNCH(partial_sums_kernel, dims(blocks), dims(BLOCK_SIZE), ctx, op->a, op->n, squares, ctx->partials);
    launch_finish(ctx, (int64_t)blocks * BLOCK_SIZE, scale, squares, op->out);
}

static void launch_accuracy(gpu_context *ctx, const op_call *op)
{
    LAUNCH(accuracy_partials_kernel, dims(ACCURACY_BLOCKS), dims(BLOCK_SIZE), ctx, op->a, op->labels,
           op->rows, op->cols, ctx->partials);
    launch_finish(ctx, (int64_t)ACCURACY_BLOCKS * BLOCK_SIZE, 1.0 / (double)op->rows, 0, op->out);
}

/* A block per COLUMN_GROUP columns, COLUMN_SLICES threads down each on a GPU.
 * The simulated GPU runs a block's threads one after another, so more threads
 * buy it nothing, and each costs it a fiber at the barrier (about 0.7 us): it
 * runs 2 down each column, still the shared-memory sum that its kernel
 * sanitizer checks, at a quarter of the fibers (lab 05's check on sim:0 took
 * 0.4 CPU-s more with 8). */
#ifdef __CUDACC__
#define COLUMN_SLICES_RUN COLUMN_SLICES
#else
#define COLUMN_SLICES_RUN 2
#endif
static void launch_column_sum(gpu_context *ctx, const op_call *op)
{
    const dim3 grid = { (unsigned)((op->cols + COLUMN_GROUP - 1) / COLUMN_GROUP), 1, 1 };
    const dim3 block = { COLUMN_GROUP, COLUMN_SLICES_RUN, 1 };
    LAUNCH(column_sum_kernel, grid, block, ctx, op->a, op->rows, op->cols, op->out);
}

/* Each tensor of the list its own run of blocks: a block never straddles two
 * tensors, and finds its tensor once. The list is copied to set the runs (on
 * the simulated GPU the launch runs before this returns). */
static void launch_sgd(gpu_context *ctx, const op_call *op)
{
    sgd_tensors list = op->sgd;
    list.first_block[0] = 0;
    for (int t = 0; t < list.count; ++t)
        list.first_block[t + 1] =
            list.first_block[t] + (list.offset[t + 1] - list.offset[t] + BLOCK_SIZE * SGD_PER_THREAD - 1) /
                                      (BLOCK_SIZE * SGD_PER_THREAD);
    LAUNCH(sgd_momentum_kernel, dims((unsigned)list.first_block[list.count]), dims(BLOCK_SIZE), ctx,
           SGD_LIST_ARGUMENT(list), op->beta, op->alpha);
}

static status launch_matmul(gpu_context *ctx, const op_call *op)
{
    bool bias_added = false;
    if (gpu_gemm(ctx, op, &bias_added) != STATUS_OK) return STATUS_BACKEND_FAILED;
    if (op->c && !bias_added)
        LAUNCH(add_bias_rows_kernel, blocks_for(op->m * op->cols), dims(BLOCK_SIZE), ctx, op->out, op->c,
               op->m, op->cols);
    return STATUS_OK;
}

/* tensor_convert: one kernel per direction (the front end allows only these). */
static void launch_convert(gpu_context *ctx, const op_call *op)
{
    const dim3 grid = blocks_for(op->n), block = dims(BLOCK_SIZE);
    if (op->out_type == DTYPE_BF16)
        LAUNCH(f32_to_bf16_kernel, grid, block, ctx, op->a, op->out16, op->n);
    else if (op->out_type == DTYPE_F16)
        LAUNCH(f32_to_f16_kernel, grid, block, ctx, op->a, op->out16, op->n);
    else if (op->in_type == DTYPE_BF16)
        LAUNCH(bf16_to_f32_kernel, grid, block, ctx, op->a16, op->out, op->n);
    else
        LAUNCH(f16_to_f32_kernel, grid, block, ctx, op->a16, op->out, op->n);
}

static status gpu_run_op(gpu_context *ctx, const op_call *op)
{
    const dim3 grid = blocks_for(op->n), block = dims(BLOCK_SIZE);
    switch (op->kind) {
    case OP_FILL: LAUNCH(fill_kernel, grid, block, ctx, op->out, op->alpha, op->n); break;
    case OP_ADD: LAUNCH(add_kernel, grid, block, ctx, op->a, op->b, op->out, op->n); break;
    case OP_SUB: LAUNCH(sub_kernel, grid, block, ctx, op->a, op->b, op->out, op->n); break;
    case OP_MUL: LAUNCH(mul_kernel, grid, block, ctx, op->a, op->b, op->out, op->n); break;
    case OP_SCALE: LAUNCH(axpy_kernel, grid, block, ctx, op->alpha, op->a, NULL, op->out, op->n); break;
    case OP_AXPY: LAUNCH(axpy_kernel, grid, block, ctx, op->alpha, op->a, op->b, op->out, op->n); break;
    case OP_RELU: LAUNCH(relu_kernel, grid, block, ctx, op->a, op->out, op->n); break;
    case OP_RELU_BACKWARD:
        LAUNCH(relu_backward_kernel, grid, block, ctx, op->a, op->b, op->out, op->n);
        break;
    case OP_SIGMOID: LAUNCH(sigmoid_kernel, grid, block, ctx, op->a, op->out, op->n); break;
    case OP_SIGMOID_BACKWARD:
        LAUNCH(sigmoid_backward_kernel, grid, block, ctx, op->a, op->b, op->out, op->n);
        break;
    case OP_MATMUL:
        if (launch_matmul(ctx, op) != STATUS_OK) return STATUS_BACKEND_FAILED;
        break;
    case OP_SOFTMAX_XENT:
        LAUNCH(softmax_xent_kernel, dims(1), dims(XENT_THREADS), ctx, op->a, op->labels, op->rows, op->cols,
               op->out, op->out2);
        break;
    case OP_ACCURACY: launch_accuracy(ctx, op); break;
    case OP_SOFTMAX_XENT_BACKWARD:
        LAUNCH(softmax_xent_backward_kernel, blocks_for(op->rows * op->cols), block, ctx, op->a, op->labels,
               op->out, op->rows, op->cols);
        break;
    case OP_SUM:
    case OP_MEAN:
    case OP_NORM: launch_sum(ctx, op); break;
    case OP_COLUMN_SUM: launch_column_sum(ctx, op); break;
    case OP_ARGMAX:
        LAUNCH(argmax_rows_kernel, blocks_for(op->rows), block, ctx, op->a, op->rows, op->cols, op->iout);
        break;
    case OP_CONVERT: launch_convert(ctx, op); break;
    case OP_SGD_MOMENTUM: launch_sgd(ctx, op); break;
    }
    return gpu_launch_status(ctx);
}
