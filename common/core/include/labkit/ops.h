/* ops.h: the operations the labs need.
 *
 * Every operation takes its operands on one device and refuses operands on two
 * (the error names both and says how to move one); nothing is copied behind your
 * back. On a GPU, real or simulated, an operation is queued and returns at once;
 * the result is there when a host read (tensor_item, tensor_to_host) returns.
 * Outputs are written, never allocated: create them first. Unless a function says
 * otherwise an output may be one of the inputs (in-place). Shapes are [rows, cols]
 * where a matrix is meant. Scalars results (sum, loss, ...) are one-element tensors
 * that stay on the device until you read them. */
#ifndef LABKIT_OPS_H
#define LABKIT_OPS_H

#include <stdbool.h>

#include "labkit/status.h"
#include "labkit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- element-wise: all operands have the same shape ---- */
status op_fill(tensor *out, float value);
status op_add(const tensor *a, const tensor *b, tensor *out); /* out = a + b */
status op_sub(const tensor *a, const tensor *b, tensor *out); /* out = a - b */
status op_mul(const tensor *a, const tensor *b, tensor *out); /* out = a * b */
status op_scale(const tensor *a, float alpha, tensor *out);   /* out = alpha * a */
status op_axpy(float alpha, const tensor *x, tensor *y);      /* y = y + alpha * x */

/* ---- matrix product: out[M,N] = op(a)[M,K] op(b)[K,N] (+ bias[N] on every row)
 * op(a) is a, or a transposed when trans_a (then a is stored [K,M]); likewise b.
 * bias may be NULL; out may not be a or b.
 *
 * a and b are both f32, or both bf16, or both f16; out and bias are always f32.
 * With 16-bit inputs the products are accumulated in float32 and written as
 * float32 (mixed precision, as tensor cores do it): on a real GPU, cuBLAS on
 * its tensor cores; on the CPU and simulated GPUs, which have none, the same
 * numbers the slow way: the inputs widened to float32 (exactly) and multiplied
 * by OpenBLAS's float32 product. */
status op_matmul(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                 tensor *out);

/* How op_matmul_precision treats its inputs. */
typedef enum matmul_precision {
    MATMUL_DEFAULT = 0, /* as they are: float32 products of f32 inputs, 16-bit ones of bf16/f16 */
    MATMUL_TF32         /* f32 inputs read as TF32 (10 mantissa bits, labkit/precision.h), float32
                           accumulation: cuBLAS's TF32 mode on tensor cores (PyTorch's
                           allow_tf32); elsewhere the inputs rounded by float_to_tf32 first */
} matmul_precision;

/* op_matmul, asking for a precision: MATMUL_TF32 takes f32 inputs only. */
status op_matmul_precision(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                           tensor *out, matmul_precision precision);

/* ---- activations and their backward passes ---- */
status op_relu(const tensor *x, tensor *out);
/* grad_in = grad_out where x > 0, else 0 (x is the ReLU's input). */
status op_relu_backward(const tensor *x, const tensor *grad_out, tensor *grad_in);
status op_sigmoid(const tensor *x, tensor *out);
/* grad_in = grad_out * y * (1 - y) (y is the sigmoid's output). */
status op_sigmoid_backward(const tensor *y, const tensor *grad_out, tensor *grad_in);

/* ---- loss: logits [B,C], labels int32 [B] with values in 0..C-1 ----
 * probs [B,C] = softmax of each row; loss [1] = mean over rows of -log p[label]. */
status op_softmax_cross_entropy(const tensor *logits, const tensor *labels, tensor *probs, tensor *loss);
/* grad_logits [B,C] = (probs - one_hot(labels)) / B: the gradient of the mean loss. */
status op_softmax_cross_entropy_backward(const tensor *probs, const tensor *labels, tensor *grad_logits);

/* ---- reductions into one-element tensors (float64 accumulation) ---- */
status op_sum(const tensor *x, tensor *out);
status op_mean(const tensor *x, tensor *out);
status op_norm(const tensor *x, tensor *out); /* Frobenius: sqrt(sum x^2) */
/* out[C] = sum over the rows of x[R,C] (a bias's gradient). */
status op_column_sum(const tensor *x, tensor *out);
/* out int32 [R] = index of the largest value of each row of x[R,C]. */
status op_argmax(const tensor *x, tensor *out);
/* out [1] = fraction of rows of logits [B,C] whose argmax equals labels [B]. */
status op_accuracy(const tensor *logits, const tensor *labels, tensor *out);

/* ---- fused: one launch (one kernel on a GPU) where the operations above take several ----
 *
 * SGD with momentum over `count` parameters (at most OP_SGD_MAX_TENSORS), for
 * every i:
 *   momentum != 0: velocities[i] = momentum velocities[i] + grads[i], then
 *                  params[i] -= lr velocities[i]
 *   momentum == 0: params[i] -= lr grads[i]      (velocities may be NULL)
 * in one launch, with the arithmetic of op_scale(v, momentum, v),
 * op_axpy(1, g, v), op_axpy(-lr, v, p) (or op_axpy(-lr, g, p)) element by
 * element, in that order: the result is theirs, bit for bit. params[i],
 * grads[i] and velocities[i] have one shape, are float32 and live on one device;
 * no tensor may appear twice or be both a parameter and a gradient. */
#define OP_SGD_MAX_TENSORS 16
status op_sgd_momentum(tensor *const *params, const tensor *const *grads, tensor *const *velocities,
                       int count, float lr, float momentum);

#ifdef __cplusplus
}
#endif
#endif
