/* op_call.h: one operation, described as plain data.
 *
 * The front end (ops.c) validates the user's tensors and fills an op_call; a
 * backend runs it: the CPU at once with plain C and OpenBLAS, a GPU (simulated
 * or real) by queueing it and running the kernels of kernels/. The struct is
 * read by C and by nvcc's C++, so it stays plain. */
#ifndef LABKIT_OP_CALL_H
#define LABKIT_OP_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "labkit/ops.h"
#include "labkit/tensor.h"

typedef enum op_kind {
    OP_FILL,                  /* out[i] = alpha                                   */
    OP_ADD,                   /* out = a + b                                      */
    OP_SUB,                   /* out = a - b                                      */
    OP_MUL,                   /* out = a * b                                      */
    OP_SCALE,                 /* out = alpha * a                                  */
    OP_AXPY,                  /* out = alpha * a + b   (y += alpha x: b == out)    */
    OP_MATMUL,                /* out[M,N] = op(a) op(b) (+ c[N] on every row)     */
    OP_RELU,                  /* out = max(a, 0)                                  */
    OP_RELU_BACKWARD,         /* out = a > 0 ? b : 0   (a: input, b: grad)         */
    OP_SIGMOID,               /* out = 1 / (1 + exp(-a))                          */
    OP_SIGMOID_BACKWARD,      /* out = b * a * (1 - a) (a: output, b: grad)        */
    OP_SOFTMAX_XENT,          /* out = softmax rows of a, out2[0] = mean loss      */
    OP_SOFTMAX_XENT_BACKWARD, /* out = (a - one_hot(labels)) / rows               */
    OP_SUM,                   /* out[0] = sum a                                   */
    OP_MEAN,                  /* out[0] = sum a / n                               */
    OP_NORM,                  /* out[0] = sqrt(sum a^2)                           */
    OP_COLUMN_SUM,            /* out[c] = sum over rows of a[r, c]                */
    OP_ARGMAX,                /* iout[r] = argmax over c of a[r, c]               */
    OP_ACCURACY,              /* out[0] = fraction of rows with argmax == label    */
    OP_CONVERT,               /* a or a16 (in_type) -> out or out16 (out_type)     */
    OP_SGD_MOMENTUM           /* every tensor of sgd: SGD with momentum alpha, lr beta */
} op_kind;

/* The tensors of one fused SGD step: tensor t has offset[t + 1] - offset[t]
 * elements. On a GPU it gets blocks first_block[t] to first_block[t + 1] - 1
 * of the launch (set by the launch, kernels/gpu_ops.cuh), so that every block
 * works on one tensor. */
typedef struct sgd_tensors {
    int count;
    float *param[OP_SGD_MAX_TENSORS];
    const float *grad[OP_SGD_MAX_TENSORS];
    float *velocity[OP_SGD_MAX_TENSORS]; /* NULL with momentum 0 */
    int64_t offset[OP_SGD_MAX_TENSORS + 1];
    int64_t first_block[OP_SGD_MAX_TENSORS + 1];
} sgd_tensors;

typedef struct op_call {
    op_kind kind;
    int64_t n;             /* elements of a (element-wise ops, reductions)          */
    int64_t rows, cols;    /* a viewed as [rows, cols] (row-wise ops)               */
    int64_t m, k;          /* matmul: out is [m, cols], the inner dimension is k    */
    bool trans_a, trans_b; /* matmul                                                */
    float alpha;           /* fill value, scale, axpy factor, SGD's momentum        */
    float beta;            /* SGD's learning rate                                   */
    const float *a, *b, *c;
    const int32_t *labels;
    float *out, *out2;
    int32_t *iout;
    /* Low precision. The 16-bit floats travel as their bits. */
    dtype in_type;             /* matmul: a's and b's dtype; convert: the source's */
    dtype out_type;            /* convert: the destination's dtype                 */
    bool tf32;                 /* matmul: round float32 inputs to TF32 first       */
    const uint16_t *a16, *b16; /* bf16 or f16 operands                             */
    uint16_t *out16;           /* convert: a 16-bit result                         */
    float *scratch;            /* matmul on cpu and sim: room for the inputs widened
                                  to float32, m*k + k*n floats; set by the backend  */
    sgd_tensors sgd;           /* OP_SGD_MOMENTUM                                  */
} op_call;

/* Whether a matrix product needs its inputs widened (or rounded to TF32) into
 * float32 scratch first: on the cpu and simulated GPUs, which have no tensor
 * cores, a low-precision product is a float32 product of rounded inputs. */
static inline bool matmul_needs_scratch(const op_call *op)
{
    return op->kind == OP_MATMUL && (op->in_type != DTYPE_F32 || op->tf32);
}

static inline int64_t matmul_scratch_floats(const op_call *op) { return op->m * op->k + op->k * op->cols; }

#endif
