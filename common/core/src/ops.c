/* ops.c: the front of every operation: check the operands (present, one device,
 * right dtypes and shapes), describe the work as an op_call, hand it to the
 * device's backend. Nothing here computes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "labkit/ops.h"
#include "launch.h"
#include "tensor_internal.h"

/* ---- checks -------------------------------------------------------------- */

typedef struct operand {
    const char *name;
    const tensor *t;
} operand;

static status require_present(const char *op, const operand *xs, int n)
{
    for (int i = 0; i < n; ++i)
        if (!xs[i].t)
            return fail(STATUS_BAD_ARGUMENT, "%s: %s is NULL; create it first (tensor_empty)", op,
                        xs[i].name);
    return STATUS_OK;
}

/* The same-device rule: all operands on the first one's device. */
static status require_one_device(const char *op, const operand *xs, int n)
{
    for (int i = 1; i < n; ++i) {
        if (device_equal(xs[i].t->dev, xs[0].t->dev)) continue;
        return fail(STATUS_WRONG_DEVICE,
                    "%s: operands are on different devices (%s on %s, %s on %s).\n"
                    "  hint: move one with tensor_to(%s, tensor_device(%s), &moved) first; "
                    "nothing is copied implicitly.",
                    op, xs[0].name, device_name(xs[0].t->dev), xs[i].name, device_name(xs[i].t->dev),
                    xs[i].name, xs[0].name);
    }
    return STATUS_OK;
}

static bool is_16_bit_float(dtype type) { return type == DTYPE_BF16 || type == DTYPE_F16; }

static status require_dtype(const char *op, operand x, dtype type)
{
    if (x.t->type == type) return STATUS_OK;
    char what[128];
    describe(x.t, what, sizeof what);
    if (type == DTYPE_F32 && is_16_bit_float(x.t->type))
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: %s is %s; this operation computes in float32 only: convert it to f32 with "
                    "tensor_convert first (only op_matmul takes %s inputs)",
                    op, x.name, what, dtype_name(x.t->type));
    return fail(STATUS_BAD_ARGUMENT, "%s: %s is %s but must be %s", op, x.name, what,
                type == DTYPE_F32 ? "float32 (DTYPE_F32)" : "int32 (DTYPE_I32)");
}

static status require_same_shape(const char *op, operand x, operand y)
{
    if (x.t->shp.ndim == y.t->shp.ndim && memcmp(x.t->shp.dims, y.t->shp.dims, sizeof x.t->shp.dims) == 0)
        return STATUS_OK;
    char a[96], b[96];
    return fail(STATUS_BAD_ARGUMENT, "%s: %s is %s but %s is %s; the shapes must be equal", op, x.name,
                shape_format(x.t->shp, a, sizeof a), y.name, shape_format(y.t->shp, b, sizeof b));
}

static status require_matrix(const char *op, operand x)
{
    if (x.t->shp.ndim == 2) return STATUS_OK;
    char a[96];
    return fail(STATUS_BAD_ARGUMENT,
                "%s: %s is %s but must be a matrix [rows, cols]; tensor_reshape can make it one", op, x.name,
                shape_format(x.t->shp, a, sizeof a));
}

static status require_elements(const char *op, operand x, int64_t n, const char *why)
{
    if (x.t->numel == n) return STATUS_OK;
    char a[96];
    return fail(STATUS_BAD_ARGUMENT, "%s: %s is %s (%" PRId64 " elements) but must have %" PRId64 " (%s)", op,
                x.name, shape_format(x.t->shp, a, sizeof a), x.t->numel, n, why);
}

static status require_distinct(const char *op, operand out, operand in)
{
    if (out.t->data != in.t->data) return STATUS_OK;
    return fail(STATUS_BAD_ARGUMENT, "%s: %s and %s share memory; this operation needs a separate output", op,
                out.name, in.name);
}

/* Presence, then the same-device rule, then float32 for every operand listed. */
static status require_f32_on_one_device(const char *op, const operand *xs, int n)
{
    TRY(require_present(op, xs, n));
    TRY(require_one_device(op, xs, n));
    for (int i = 0; i < n; ++i) TRY(require_dtype(op, xs[i], DTYPE_F32));
    return STATUS_OK;
}

/* ---- element-wise -------------------------------------------------------- */

static op_call call_of(op_kind kind, const tensor *a, const tensor *b, tensor *out, float alpha)
{
    op_call c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.n = out->numel;
    c.a = a ? (const float *)a->data : NULL;
    c.b = b ? (const float *)b->data : NULL;
    c.out = (float *)out->data;
    c.alpha = alpha;
    return c;
}

status op_fill(tensor *out, float value)
{
    operand xs[] = { { "out", out } };
    status s = require_present("op_fill", xs, 1);
    if (s == STATUS_OK && out->type != DTYPE_I32) s = require_dtype("op_fill", xs[0], DTYPE_F32);
    if (s != STATUS_OK) return s;
    /* Filling with a float's bits works for int32 tensors too, for 0 only. */
    if (out->type == DTYPE_I32 && value != 0.0f)
        return fail(STATUS_BAD_ARGUMENT, "op_fill: an int32 tensor can only be filled with 0 here");
    op_call c = call_of(OP_FILL, NULL, NULL, out, value);
    return launch_op(out, &c);
}

static status binary(const char *name, op_kind kind, const tensor *a, const tensor *b, tensor *out,
                     float alpha)
{
    operand xs[] = { { "a", a }, { "b", b }, { "out", out } };
    TRY(require_f32_on_one_device(name, xs, 3));
    TRY(require_same_shape(name, xs[0], xs[1]));
    TRY(require_same_shape(name, xs[0], xs[2]));
    op_call c = call_of(kind, a, b, out, alpha);
    return launch_op(out, &c);
}

static status unary(const char *name, op_kind kind, const char *in_name, const tensor *a, tensor *out,
                    float alpha)
{
    operand xs[] = { { in_name, a }, { "out", out } };
    TRY(require_f32_on_one_device(name, xs, 2));
    TRY(require_same_shape(name, xs[0], xs[1]));
    op_call c = call_of(kind, a, NULL, out, alpha);
    return launch_op(out, &c);
}

status op_add(const tensor *a, const tensor *b, tensor *out)
{
    return binary("op_add", OP_ADD, a, b, out, 0);
}
status op_sub(const tensor *a, const tensor *b, tensor *out)
{
    return binary("op_sub", OP_SUB, a, b, out, 0);
}
status op_mul(const tensor *a, const tensor *b, tensor *out)
{
    return binary("op_mul", OP_MUL, a, b, out, 0);
}
status op_scale(const tensor *a, float alpha, tensor *out)
{
    return unary("op_scale", OP_SCALE, "a", a, out, alpha);
}
status op_relu(const tensor *x, tensor *out) { return unary("op_relu", OP_RELU, "x", x, out, 0); }
status op_sigmoid(const tensor *x, tensor *out) { return unary("op_sigmoid", OP_SIGMOID, "x", x, out, 0); }

status op_axpy(float alpha, const tensor *x, tensor *y)
{
    operand xs[] = { { "x", x }, { "y", y } };
    TRY(require_f32_on_one_device("op_axpy", xs, 2));
    TRY(require_same_shape("op_axpy", xs[0], xs[1]));
    op_call c = call_of(OP_AXPY, x, y, y, alpha);
    return launch_op(y, &c);
}

static status backward(const char *name, op_kind kind, const char *saved_name, const tensor *saved,
                       const tensor *grad_out, tensor *grad_in)
{
    operand xs[] = { { saved_name, saved }, { "grad_out", grad_out }, { "grad_in", grad_in } };
    TRY(require_f32_on_one_device(name, xs, 3));
    TRY(require_same_shape(name, xs[0], xs[1]));
    TRY(require_same_shape(name, xs[0], xs[2]));
    op_call c = call_of(kind, saved, grad_out, grad_in, 0);
    return launch_op(grad_in, &c);
}

status op_relu_backward(const tensor *x, const tensor *grad_out, tensor *grad_in)
{
    return backward("op_relu_backward", OP_RELU_BACKWARD, "x", x, grad_out, grad_in);
}

status op_sigmoid_backward(const tensor *y, const tensor *grad_out, tensor *grad_in)
{
    return backward("op_sigmoid_backward", OP_SIGMOID_BACKWARD, "y", y, grad_out, grad_in);
}

/* ---- matrix product ------------------------------------------------------ */

/* a and b: f32, bf16 or f16, both the same; MATMUL_TF32 for f32 only. */
static status require_matmul_inputs(const char *op, const operand *xs, matmul_precision precision)
{
    char a[128], b[128];
    const dtype type = xs[0].t->type;
    for (int i = 0; i < 2; ++i)
        if (xs[i].t->type == DTYPE_I32)
            return fail(STATUS_BAD_ARGUMENT, "%s: %s is %s but must be f32, bf16 or f16", op, xs[i].name,
                        describe(xs[i].t, a, sizeof a));
    if (xs[1].t->type != type)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: a is %s but b is %s; both inputs must have one dtype: tensor_convert one of them",
                    op, describe(xs[0].t, a, sizeof a), describe(xs[1].t, b, sizeof b));
    if (precision != MATMUL_DEFAULT && precision != MATMUL_TF32)
        return fail(STATUS_BAD_ARGUMENT, "%s: precision %d is neither MATMUL_DEFAULT nor MATMUL_TF32", op,
                    (int)precision);
    if (precision == MATMUL_TF32 && type != DTYPE_F32)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: MATMUL_TF32 rounds f32 inputs to TF32, but a and b are %s already; "
                    "use MATMUL_DEFAULT",
                    op, dtype_name(type));
    return STATUS_OK;
}

/* out (and bias): float32, whatever the inputs, since the products are
 * accumulated and written in float32. */
static status require_f32_result(const char *op, operand x)
{
    if (x.t->type == DTYPE_F32) return STATUS_OK;
    char what[128];
    return fail(STATUS_BAD_ARGUMENT,
                "%s: %s is %s but must be f32: a matrix product accumulates and writes float32, whatever "
                "its inputs (tensor_convert the result afterwards for a 16-bit copy)",
                op, x.name, describe(x.t, what, sizeof what));
}

static status matmul(const char *op, const tensor *a, bool trans_a, const tensor *b, bool trans_b,
                     const tensor *bias, tensor *out, matmul_precision precision)
{
    operand xs[] = { { "a", a }, { "b", b }, { "out", out }, { "bias", bias } };
    TRY(require_present(op, xs, bias ? 4 : 3));
    TRY(require_one_device(op, xs, bias ? 4 : 3));
    TRY(require_matmul_inputs(op, xs, precision));
    for (int i = 2; i < (bias ? 4 : 3); ++i) TRY(require_f32_result(op, xs[i]));
    for (int i = 0; i < 3; ++i) TRY(require_matrix(op, xs[i]));
    int64_t m = a->shp.dims[trans_a ? 1 : 0], k = a->shp.dims[trans_a ? 0 : 1];
    int64_t kb = b->shp.dims[trans_b ? 1 : 0], n = b->shp.dims[trans_b ? 0 : 1];
    char sa[96], sb[96], so[96];
    if (k != kb)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: inner dimensions differ: op(a) is [%" PRId64 ", %" PRId64
                    "] (a is %s%s) and op(b) is [%" PRId64 ", %" PRId64
                    "] (b is %s%s); op(a)'s columns must equal op(b)'s rows",
                    op, m, k, shape_format(a->shp, sa, sizeof sa), trans_a ? ", transposed" : "", kb, n,
                    shape_format(b->shp, sb, sizeof sb), trans_b ? ", transposed" : "");
    if (out->shp.dims[0] != m || out->shp.dims[1] != n)
        return fail(STATUS_BAD_ARGUMENT, "%s: out is %s but the product is [%" PRId64 ", %" PRId64 "]", op,
                    shape_format(out->shp, so, sizeof so), m, n);
    if (bias) TRY(require_elements(op, xs[3], n, "one value per output column"));
    TRY(require_distinct(op, xs[2], xs[0]));
    TRY(require_distinct(op, xs[2], xs[1]));
    op_call c = call_of(OP_MATMUL, NULL, NULL, out, 1.0f);
    c.m = m, c.k = k, c.cols = n, c.rows = m;
    c.trans_a = trans_a, c.trans_b = trans_b;
    c.c = bias ? (const float *)bias->data : NULL;
    c.in_type = a->type;
    c.tf32 = precision == MATMUL_TF32;
    if (a->type == DTYPE_F32) {
        c.a = (const float *)a->data, c.b = (const float *)b->data;
    } else {
        c.a16 = (const uint16_t *)a->data, c.b16 = (const uint16_t *)b->data;
    }
    return launch_op(out, &c);
}

status op_matmul(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                 tensor *out)
{
    return matmul("op_matmul", a, trans_a, b, trans_b, bias, out, MATMUL_DEFAULT);
}

status op_matmul_precision(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                           tensor *out, matmul_precision precision)
{
    return matmul("op_matmul_precision", a, trans_a, b, trans_b, bias, out, precision);
}

/* ---- loss ---------------------------------------------------------------- */

static status require_labels(const char *op, const tensor *labels, int64_t rows)
{
    operand l = { "labels", labels };
    TRY(require_dtype(op, l, DTYPE_I32));
    TRY(require_elements(op, l, rows, "one label per row"));
    return STATUS_OK;
}

status op_softmax_cross_entropy(const tensor *logits, const tensor *labels, tensor *probs, tensor *loss)
{
    const char *op = "op_softmax_cross_entropy";
    operand xs[] = { { "logits", logits }, { "probs", probs }, { "loss", loss }, { "labels", labels } };
    TRY(require_present(op, xs, 4));
    TRY(require_one_device(op, xs, 4));
    for (int i = 0; i < 3; ++i) TRY(require_dtype(op, xs[i], DTYPE_F32));
    TRY(require_matrix(op, xs[0]));
    TRY(require_same_shape(op, xs[0], xs[1]));
    TRY(require_elements(op, xs[2], 1, "the mean loss"));
    TRY(require_labels(op, labels, logits->shp.dims[0]));
    op_call c = call_of(OP_SOFTMAX_XENT, logits, NULL, probs, 0);
    c.rows = logits->shp.dims[0], c.cols = logits->shp.dims[1];
    c.labels = (const int32_t *)labels->data;
    c.out2 = (float *)loss->data;
    return launch_op(probs, &c);
}

status op_softmax_cross_entropy_backward(const tensor *probs, const tensor *labels, tensor *grad_logits)
{
    const char *op = "op_softmax_cross_entropy_backward";
    operand xs[] = { { "probs", probs }, { "grad_logits", grad_logits }, { "labels", labels } };
    TRY(require_present(op, xs, 3));
    TRY(require_one_device(op, xs, 3));
    for (int i = 0; i < 2; ++i) TRY(require_dtype(op, xs[i], DTYPE_F32));
    TRY(require_matrix(op, xs[0]));
    TRY(require_same_shape(op, xs[0], xs[1]));
    TRY(require_labels(op, labels, probs->shp.dims[0]));
    op_call c = call_of(OP_SOFTMAX_XENT_BACKWARD, probs, NULL, grad_logits, 0);
    c.rows = probs->shp.dims[0], c.cols = probs->shp.dims[1];
    c.labels = (const int32_t *)labels->data;
    return launch_op(grad_logits, &c);
}

/* ---- reductions ---------------------------------------------------------- */

static status reduce(const char *op, op_kind kind, const tensor *x, tensor *out)
{
    operand xs[] = { { "x", x }, { "out", out } };
    TRY(require_f32_on_one_device(op, xs, 2));
    TRY(require_elements(op, xs[1], 1, "a one-element result"));
    op_call c = call_of(kind, x, NULL, out, 0);
    c.n = x->numel;
    return launch_op(out, &c);
}

status op_sum(const tensor *x, tensor *out) { return reduce("op_sum", OP_SUM, x, out); }
status op_mean(const tensor *x, tensor *out) { return reduce("op_mean", OP_MEAN, x, out); }
status op_norm(const tensor *x, tensor *out) { return reduce("op_norm", OP_NORM, x, out); }

status op_column_sum(const tensor *x, tensor *out)
{
    const char *op = "op_column_sum";
    operand xs[] = { { "x", x }, { "out", out } };
    TRY(require_f32_on_one_device(op, xs, 2));
    TRY(require_matrix(op, xs[0]));
    TRY(require_elements(op, xs[1], x->shp.dims[1], "one sum per column of x"));
    TRY(require_distinct(op, xs[1], xs[0]));
    op_call c = call_of(OP_COLUMN_SUM, x, NULL, out, 0);
    c.rows = x->shp.dims[0], c.cols = x->shp.dims[1];
    return launch_op(out, &c);
}

status op_argmax(const tensor *x, tensor *out)
{
    const char *op = "op_argmax";
    operand xs[] = { { "x", x }, { "out", out } };
    TRY(require_present(op, xs, 2));
    TRY(require_one_device(op, xs, 2));
    TRY(require_dtype(op, xs[0], DTYPE_F32));
    TRY(require_dtype(op, xs[1], DTYPE_I32));
    TRY(require_matrix(op, xs[0]));
    TRY(require_elements(op, xs[1], x->shp.dims[0], "one index per row of x"));
    op_call c;
    memset(&c, 0, sizeof c);
    c.kind = OP_ARGMAX;
    c.a = (const float *)x->data;
    c.rows = x->shp.dims[0], c.cols = x->shp.dims[1], c.n = x->numel;
    c.iout = (int32_t *)out->data;
    return launch_op(out, &c);
}

status op_accuracy(const tensor *logits, const tensor *labels, tensor *out)
{
    const char *op = "op_accuracy";
    operand xs[] = { { "logits", logits }, { "out", out }, { "labels", labels } };
    TRY(require_present(op, xs, 3));
    TRY(require_one_device(op, xs, 3));
    for (int i = 0; i < 2; ++i) TRY(require_dtype(op, xs[i], DTYPE_F32));
    TRY(require_matrix(op, xs[0]));
    TRY(require_elements(op, xs[1], 1, "the fraction of correct rows"));
    TRY(require_labels(op, labels, logits->shp.dims[0]));
    op_call c = call_of(OP_ACCURACY, logits, NULL, out, 0);
    c.rows = logits->shp.dims[0], c.cols = logits->shp.dims[1], c.n = logits->numel;
    c.labels = (const int32_t *)labels->data;
    return launch_op(out, &c);
}

/* ---- fused ---------------------------------------------------------------- */

/* Tensor i of a list, named for a message: "params[2]". */
static operand listed(const char *list, int i, const tensor *t, char *name, size_t size)
{
    snprintf(name, size, "%s[%d]", list, i);
    return (operand){ name, t };
}

status op_sgd_momentum(tensor *const *params, const tensor *const *grads, tensor *const *velocities,
                       int count, float lr, float momentum)
{
    const char *op = "op_sgd_momentum";
    if (!params || !grads || (momentum != 0.0f && !velocities))
        return fail(STATUS_BAD_ARGUMENT, "%s: %s is NULL; give one array of %d tensors for each%s", op,
                    !params  ? "params"
                    : !grads ? "grads"
                             : "velocities",
                    count, momentum != 0.0f ? " (velocities may be NULL with momentum 0 only)" : "");
    if (count < 1 || count > OP_SGD_MAX_TENSORS)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: count is %d but must be 1 to %d (OP_SGD_MAX_TENSORS); call it once per group of "
                    "at most %d parameters",
                    op, count, OP_SGD_MAX_TENSORS, OP_SGD_MAX_TENSORS);
    if (!(lr == lr) || !(momentum == momentum))
        return fail(STATUS_BAD_ARGUMENT, "%s: lr (%g) and momentum (%g) must be numbers, not NaN", op,
                    (double)lr, (double)momentum);
    const bool with_velocity = momentum != 0.0f;
    op_call c;
    memset(&c, 0, sizeof c);
    c.kind = OP_SGD_MOMENTUM;
    c.alpha = momentum, c.beta = lr;
    c.sgd.count = count;
    for (int i = 0; i < count; ++i) {
        char pn[32], gn[32], vn[32];
        operand xs[] = { listed("params", i, params[i], pn, sizeof pn),
                         listed("grads", i, grads[i], gn, sizeof gn),
                         listed("velocities", i, with_velocity ? velocities[i] : NULL, vn, sizeof vn) };
        const int n = with_velocity ? 3 : 2;
        TRY(require_f32_on_one_device(op, xs, n));
        TRY(require_one_device(op, (operand[]){ { "params[0]", params[0] }, xs[0] }, 2));
        for (int k = 1; k < n; ++k) TRY(require_same_shape(op, xs[0], xs[k]));
        for (int k = 0; k < n; ++k)
            for (int l = k + 1; l < n; ++l) TRY(require_distinct(op, xs[k], xs[l]));
        /* Threads of one kernel update every tensor at once: a tensor listed
         * twice would be updated twice by the unfused calls, and raced on here. */
        for (int j = 0; j < i; ++j) {
            const tensor *mine[] = { params[i], grads[i], with_velocity ? velocities[i] : NULL };
            const tensor *theirs[] = { params[j], grads[j], with_velocity ? velocities[j] : NULL };
            for (int k = 0; k < n; ++k)
                for (int l = 0; l < n; ++l)
                    if (mine[k]->data == theirs[l]->data && (k != 1 || l != 1))
                        return fail(STATUS_BAD_ARGUMENT,
                                    "%s: %s[%d] and %s[%d] share memory; each parameter, and its velocity, "
                                    "must be listed once (only gradients may be shared)",
                                    op,
                                    k == 0   ? "params"
                                    : k == 1 ? "grads"
                                             : "velocities",
                                    i,
                                    l == 0   ? "params"
                                    : l == 1 ? "grads"
                                             : "velocities",
                                    j);
        }
        c.sgd.param[i] = (float *)params[i]->data;
        c.sgd.grad[i] = (const float *)grads[i]->data;
        c.sgd.velocity[i] = with_velocity ? (float *)velocities[i]->data : NULL;
        c.sgd.offset[i + 1] = c.sgd.offset[i] + params[i]->numel;
    }
    c.n = c.sgd.offset[count];
    return launch_op(params[0], &c);
}
