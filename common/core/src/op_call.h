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
    OP_ACCURACY               /* out[0] = fraction of rows with argmax == label    */
} op_kind;

typedef struct op_call {
    op_kind kind;
    int64_t n;             /* elements of a (element-wise ops, reductions)          */
    int64_t rows, cols;    /* a viewed as [rows, cols] (row-wise ops)               */
    int64_t m, k;          /* matmul: out is [m, cols], the inner dimension is k    */
    bool trans_a, trans_b; /* matmul                                                */
    float alpha;           /* fill value, scale, axpy factor                        */
    const float *a, *b, *c;
    const int32_t *labels;
    float *out, *out2;
    int32_t *iout;
} op_call;

#endif
