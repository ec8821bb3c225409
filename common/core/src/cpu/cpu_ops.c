/* cpu_ops.c: every operation in plain C (and OpenBLAS for the matrix product),
 * run at once on the calling thread. This is the reference the GPU kernels of
 * ../kernels are compared with; it favours clear loops over speed. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../backend.h"
#include "cpu_ops.h"
#include "labkit/precision.h"

/* ---- element-wise -------------------------------------------------------- */

static void elementwise(const op_call *op)
{
    const float *a = op->a, *b = op->b;
    float *out = op->out;
    const float alpha = op->alpha;
    const int64_t n = op->n;
    switch (op->kind) {
    case OP_FILL:
        for (int64_t i = 0; i < n; ++i) out[i] = alpha;
        break;
    case OP_ADD:
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
        break;
    case OP_SUB:
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] - b[i];
        break;
    case OP_MUL:
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
        break;
    case OP_SCALE:
        for (int64_t i = 0; i < n; ++i) out[i] = alpha * a[i];
        break;
    case OP_AXPY:
        for (int64_t i = 0; i < n; ++i) out[i] = alpha * a[i] + b[i];
        break;
    case OP_RELU:
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] > 0.0f ? a[i] : 0.0f;
        break;
    case OP_RELU_BACKWARD:
        /* b[i] is read whatever the sign: a load that depends on a comparison
         * keeps the compiler from vectorising (a branch per element, half of
         * them mispredicted on real activations). */
        for (int64_t i = 0; i < n; ++i) {
            const float grad = b[i];
            out[i] = a[i] > 0.0f ? grad : 0.0f;
        }
        break;
    case OP_SIGMOID:
        for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / (1.0f + expf(-a[i]));
        break;
    case OP_SIGMOID_BACKWARD:
        for (int64_t i = 0; i < n; ++i) out[i] = b[i] * a[i] * (1.0f - a[i]);
        break;
    /* Not element-wise: cpu_run_op runs them elsewhere. Listed, not left to a
     * default, so that the compiler names an op added to op_kind but to
     * neither switch (-Wswitch). */
    case OP_MATMUL:
    case OP_SOFTMAX_XENT:
    case OP_SOFTMAX_XENT_BACKWARD:
    case OP_SUM:
    case OP_MEAN:
    case OP_NORM:
    case OP_COLUMN_SUM:
    case OP_ARGMAX:
    case OP_ACCURACY:
    case OP_CONVERT:
    case OP_SGD_MOMENTUM: break;
    }
}

/* ---- matrix product -------------------------------------------------------- */

/* out[m, n] = op(a) op(b) (+ bias), row-major, a and b float32. */
static void sgemm_plus_bias(const op_call *op, const float *a, const float *b)
{
    blas_warn_if_slow_kernels();
    const int m = (int)op->m, n = (int)op->cols, k = (int)op->k;
    const int lda = op->trans_a ? m : k, ldb = op->trans_b ? k : n;
    cblas_sgemm(CblasRowMajor, op->trans_a ? CblasTrans : CblasNoTrans,
                op->trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, op->out, n);
    if (!op->c) return;
    for (int64_t r = 0; r < op->m; ++r)
        for (int64_t c = 0; c < op->cols; ++c) op->out[r * op->cols + c] += op->c[c];
}

/* An input as the float32 values a tensor core would multiply: bf16 and f16
 * widened (exactly), or float32 rounded to TF32; same layout. */
static void as_tensor_core_inputs(const op_call *op, const float *x, const uint16_t *x16, float *out,
                                  int64_t n)
{
    switch (op->in_type) {
    case DTYPE_BF16:
        for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_float(x16[i]);
        break;
    case DTYPE_F16:
        for (int64_t i = 0; i < n; ++i) out[i] = f16_to_float(x16[i]);
        break;
    default:
        for (int64_t i = 0; i < n; ++i) out[i] = float_to_tf32(x[i]);
        break;
    }
}

/* The CPU has no tensor cores: a bf16, f16 or TF32 product is the float32
 * product of the inputs as a tensor core reads them, which gives the same
 * numbers (same inputs, float32 accumulation) at float32's speed or below. */
static status matmul(const op_call *op)
{
    if (!matmul_needs_scratch(op)) {
        sgemm_plus_bias(op, op->a, op->b);
        return STATUS_OK;
    }
    const int64_t a_count = op->m * op->k, b_count = op->k * op->cols;
    float *scratch = malloc((size_t)(a_count + b_count) * sizeof(float));
    if (!scratch)
        return fail(STATUS_OUT_OF_MEMORY,
                    "op_matmul on cpu: no host memory for the inputs widened to float32 (%lld floats); "
                    "the CPU has no tensor cores, so it multiplies 16-bit and TF32 inputs in float32",
                    (long long)(a_count + b_count));
    as_tensor_core_inputs(op, op->a, op->a16, scratch, a_count);
    as_tensor_core_inputs(op, op->b, op->b16, scratch + a_count, b_count);
    sgemm_plus_bias(op, scratch, scratch + a_count);
    free(scratch);
    return STATUS_OK;
}

/* ---- conversions: the functions of labkit/precision.h, element by element ---- */

static void convert(const op_call *op)
{
    const int64_t n = op->n;
    switch (op->out_type) {
    case DTYPE_BF16:
        for (int64_t i = 0; i < n; ++i) op->out16[i] = float_to_bf16(op->a[i]);
        break;
    case DTYPE_F16:
        for (int64_t i = 0; i < n; ++i) op->out16[i] = float_to_f16(op->a[i]);
        break;
    default:
        if (op->in_type == DTYPE_BF16)
            for (int64_t i = 0; i < n; ++i) op->out[i] = bf16_to_float(op->a16[i]);
        else
            for (int64_t i = 0; i < n; ++i) op->out[i] = f16_to_float(op->a16[i]);
        break;
    }
}

/* ---- row-wise ---------------------------------------------------------------- */

static int64_t row_argmax(const float *row, int64_t cols)
{
    int64_t best = 0;
    for (int64_t c = 1; c < cols; ++c)
        if (row[c] > row[best]) best = c;
    return best;
}

static bool label_ok(int32_t label, int64_t cols) { return label >= 0 && label < cols; }

/* Softmax of each row, shifted by its maximum so that exp never overflows, and
 * the mean of -log p[label] = log(sum exp(x - max)) - (x[label] - max), which
 * stays finite where p[label] itself would round to 0. A label out of range
 * makes the loss NaN rather than reading outside the row. */
static void softmax_cross_entropy(const op_call *op)
{
    double loss = 0.0;
    for (int64_t r = 0; r < op->rows; ++r) {
        const float *x = op->a + r * op->cols;
        float *p = op->out + r * op->cols;
        const float max = x[row_argmax(x, op->cols)];
        /* Read before the row is overwritten: probs may be the logits (in-place). */
        const int32_t label = op->labels[r];
        const double label_logit = label_ok(label, op->cols) ? (double)(x[label] - max) : NAN;
        double total = 0.0;
        for (int64_t c = 0; c < op->cols; ++c) total += (p[c] = expf(x[c] - max));
        for (int64_t c = 0; c < op->cols; ++c) p[c] = (float)(p[c] / total);
        loss += log(total) - label_logit;
    }
    op->out2[0] = (float)(loss / (double)op->rows);
}

static void softmax_cross_entropy_backward(const op_call *op)
{
    const float inv_rows = 1.0f / (float)op->rows;
    for (int64_t r = 0; r < op->rows; ++r)
        for (int64_t c = 0; c < op->cols; ++c) {
            const float one_hot = op->labels[r] == c ? 1.0f : 0.0f;
            op->out[r * op->cols + c] = (op->a[r * op->cols + c] - one_hot) * inv_rows;
        }
}

/* Row by row into float64 totals for a block of columns: the loads run along
 * memory and vectorise, where a walk down each column strides by a whole row.
 * Each column is still summed in row order, so the result is unchanged. */
#define COLUMN_BLOCK 256
static void column_sum(const op_call *op)
{
    double totals[COLUMN_BLOCK];
    for (int64_t c0 = 0; c0 < op->cols; c0 += COLUMN_BLOCK) {
        const int64_t width = op->cols - c0 < COLUMN_BLOCK ? op->cols - c0 : COLUMN_BLOCK;
        for (int64_t c = 0; c < width; ++c) totals[c] = 0.0;
        for (int64_t r = 0; r < op->rows; ++r) {
            const float *row = op->a + r * op->cols + c0;
            for (int64_t c = 0; c < width; ++c) totals[c] += row[c];
        }
        for (int64_t c = 0; c < width; ++c) op->out[c0 + c] = (float)totals[c];
    }
}

static void argmax_and_accuracy(const op_call *op)
{
    int64_t correct = 0;
    for (int64_t r = 0; r < op->rows; ++r) {
        const int64_t best = row_argmax(op->a + r * op->cols, op->cols);
        if (op->kind == OP_ARGMAX)
            op->iout[r] = (int32_t)best;
        else
            correct += op->labels[r] == best;
    }
    if (op->kind == OP_ACCURACY) op->out[0] = (float)((double)correct / (double)op->rows);
}

/* ---- the fused SGD step ---------------------------------------------------------- */

/* The expressions of OP_SCALE, then OP_AXPY twice (or once), element by
 * element: the same roundings in the same order as the unfused calls, in one
 * pass over memory instead of three. */
static void sgd_momentum(const op_call *op)
{
    const float lr = op->beta, momentum = op->alpha;
    for (int t = 0; t < op->sgd.count; ++t) {
        float *p = op->sgd.param[t], *v = op->sgd.velocity[t];
        const float *g = op->sgd.grad[t];
        const int64_t n = op->sgd.offset[t + 1] - op->sgd.offset[t];
        if (momentum == 0.0f) {
            for (int64_t i = 0; i < n; ++i) p[i] = -lr * g[i] + p[i];
            continue;
        }
        for (int64_t i = 0; i < n; ++i) {
            float velocity = momentum * v[i];
            velocity = 1.0f * g[i] + velocity;
            v[i] = velocity;
            p[i] = -lr * velocity + p[i];
        }
    }
}

/* ---- whole-tensor reductions ------------------------------------------------- */

static void reduction(const op_call *op)
{
    double total = 0.0;
    for (int64_t i = 0; i < op->n; ++i)
        total += op->kind == OP_NORM ? (double)op->a[i] * op->a[i] : (double)op->a[i];
    if (op->kind == OP_MEAN) total /= (double)op->n;
    if (op->kind == OP_NORM) total = sqrt(total);
    op->out[0] = (float)total;
}

/* Every op by name, without a default: an op added to op_kind and not here is
 * a compile error (-Wswitch, with -Werror), as in the GPU's switch
 * (kernels/gpu_ops.cuh), never an op that silently does nothing. */
status cpu_run_op(const op_call *op)
{
    switch (op->kind) {
    case OP_FILL:
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_SCALE:
    case OP_AXPY:
    case OP_RELU:
    case OP_RELU_BACKWARD:
    case OP_SIGMOID:
    case OP_SIGMOID_BACKWARD: elementwise(op); break;
    case OP_MATMUL: return matmul(op);
    case OP_SOFTMAX_XENT: softmax_cross_entropy(op); break;
    case OP_SOFTMAX_XENT_BACKWARD: softmax_cross_entropy_backward(op); break;
    case OP_SUM:
    case OP_MEAN:
    case OP_NORM: reduction(op); break;
    case OP_COLUMN_SUM: column_sum(op); break;
    case OP_ARGMAX:
    case OP_ACCURACY: argmax_and_accuracy(op); break;
    case OP_CONVERT: convert(op); break;
    case OP_SGD_MOMENTUM: sgd_momentum(op); break;
    }
    return STATUS_OK;
}
