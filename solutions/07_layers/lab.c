/* lab.c: lab 07, layers as matrix products. Each function is one step of
 * README.md; lab.h says what each must do. Steps 2, 3, 5 and 7 also have a
 * kernel, in layer_kernels.cuh.
 * Build and run: ./lab run 07; check: ./lab check 07; stuck: ./lab hint 07. */
#include "lab.h"

#include <math.h>

#include "given.h"
#include "launch.h"

/* ==== Step 1: the output's size (README, "Step 1") ======================== */

/* Goal: the convolution's output shape, and a clear refusal of every shape
 * pair that has none. Sliding an R-row filter down H + 2 pad rows: how many
 * places does it fit? Look up shape4 (tensor.h) and fail (status.h). */
status lab_conv_output_shape(shape x, shape w, int64_t pad, shape *y)
{
    char xs[64], ws[64];
    if (!y) return fail(STATUS_BAD_ARGUMENT, "lab_conv_output_shape: y is NULL");
    if (x.ndim != 4 || w.ndim != 4)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_conv_output_shape: x is %s and w is %s; both must be 4-D, x [N, C, H, W] and "
                    "w [K, C, R, S]",
                    shape_format(x, xs, sizeof xs), shape_format(w, ws, sizeof ws));
    if (x.dims[1] != w.dims[1])
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_conv_output_shape: x %s has %lld channels but the filters w %s have %lld; they "
                    "must be the same C",
                    shape_format(x, xs, sizeof xs), (long long)x.dims[1], shape_format(w, ws, sizeof ws),
                    (long long)w.dims[1]);
    if (pad < 0)
        return fail(STATUS_BAD_ARGUMENT, "lab_conv_output_shape: pad is %lld; it cannot be negative",
                    (long long)pad);
    const int64_t h_out = x.dims[2] + 2 * pad - w.dims[2] + 1, w_out = x.dims[3] + 2 * pad - w.dims[3] + 1;
    if (h_out < 1 || w_out < 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_conv_output_shape: a %lld x %lld filter does not fit in a %lld x %lld image padded "
                    "with %lld zeros on each side",
                    (long long)w.dims[2], (long long)w.dims[3], (long long)x.dims[2], (long long)x.dims[3],
                    (long long)pad);
    *y = shape4(x.dims[0], w.dims[0], h_out, w_out);
    return STATUS_OK;
}

/* ==== Step 2: the direct convolution (README, "Step 2") =================== */

/* Goal: run your conv_direct_kernel (layer_kernels.cuh: write it first) on y's
 * device, one thread per element of y, and return without waiting. Look up
 * conv_args and conv_direct_launchers (launch.h), tensor_data,
 * tensor_data_const and device_launch (labkit/kernel.h). */
status lab_conv_direct(const tensor *x, const tensor *w, int64_t pad, tensor *y)
{
    conv_dims d;
    status s = conv_prepare("lab_conv_direct", x, w, pad, y, &d); /* given: operands that fit; fills d */
    if (s != STATUS_OK) return s;
    const conv_args args = {
        .x = tensor_data_const(x), .w = tensor_data_const(w), .y = tensor_data(y), .d = d
    };
    return device_launch(tensor_device(y), &conv_direct_launchers, &args, sizeof args);
}

/* ==== Step 3: im2col (README, "Step 3") =================================== */

/* Goal: run your im2col_kernel (layer_kernels.cuh) on cols's device, one thread
 * per channel of each output pixel, and return without waiting. Look up
 * im2col_args and im2col_launchers (launch.h). */
status lab_im2col(const tensor *x, int64_t r, int64_t s, int64_t pad, tensor *cols)
{
    conv_dims d;
    status st = im2col_prepare("lab_im2col", x, r, s, pad, cols, &d); /* given: operands that fit; fills d */
    if (st != STATUS_OK) return st;
    const im2col_args args = { .x = tensor_data_const(x), .cols = tensor_data(cols), .d = d };
    return device_launch(tensor_device(cols), &im2col_launchers, &args, sizeof args);
}

/* ==== Step 4: convolution as one matrix product (README, "Step 4") ======== */

/* Goal: the convolution as im2col, one op_matmul and the given reorder, with
 * the buffer and the product's result made here and released before you
 * return. Look up tensor_empty, tensor_reshape and tensor_free (tensor.h),
 * op_matmul (ops.h) and conv_reorder (given.h). */
status lab_conv_im2col(const tensor *x, const tensor *w, int64_t pad, tensor *y)
{
    conv_dims d;
    status s = conv_prepare("lab_conv_im2col", x, w, pad, y, &d); /* given: operands that fit; fills d */
    if (s != STATUS_OK) return s;
    const device dev = tensor_device(y);
    const int64_t taps = d.c * d.r * d.s, pixels = d.n * d.h_out * d.w_out;
    tensor *cols = NULL, *filters = NULL, *product = NULL;
    s = tensor_empty(&cols, dev, DTYPE_F32, shape2(taps, pixels)); /* every element is written by im2col */
    if (s == STATUS_OK) s = tensor_empty(&product, dev, DTYPE_F32, shape2(d.k, pixels));
    /* w viewed as [K, C R S]: the same memory, no copy. tensor_reshape counts a
     * reference on w, hence the cast; w itself is not changed. */
    if (s == STATUS_OK) s = tensor_reshape((tensor *)w, shape2(d.k, taps), &filters);
    if (s == STATUS_OK) s = lab_im2col(x, d.r, d.s, pad, cols);
    if (s == STATUS_OK) s = op_matmul(filters, false, cols, false, NULL, product);
    if (s == STATUS_OK) s = conv_reorder(product, y);
    /* Freed in queue order: the work queued above still finishes first. */
    tensor_free(cols), tensor_free(filters), tensor_free(product);
    return s;
}

/* ==== Step 5: a stable softmax (README, "Step 5") ========================= */

/* Goal: run your softmax_rows_kernel (layer_kernels.cuh) on the scores'
 * device, one thread per row, and return without waiting. Look up
 * softmax_args and softmax_rows_launchers (launch.h). */
status lab_softmax_rows(tensor *scores, float scale, bool causal)
{
    status s = softmax_prepare("lab_softmax_rows", scores, scale); /* given: a float32 matrix, scale > 0 */
    if (s != STATUS_OK) return s;
    const softmax_args args = { .scores = tensor_data(scores),
                                .rows = tensor_dim(scores, 0),
                                .cols = tensor_dim(scores, 1),
                                .scale = scale,
                                .causal = causal };
    return device_launch(tensor_device(scores), &softmax_rows_launchers, &args, sizeof args);
}

/* ==== Step 6: self-attention (README, "Step 6") =========================== */

/* Goal: lesson 002's softmax(Q K^T / sqrt(d_k)) V as two products and your
 * softmax, with the n x n scores made here and released before you return.
 * Look up op_matmul's transposes (ops.h), tensor_empty and tensor_free. */
status lab_attention(const tensor *q, const tensor *k, const tensor *v, bool causal, tensor *out)
{
    status s = attention_prepare("lab_attention", q, k, v, out); /* given: four [n, d] on one device */
    if (s != STATUS_OK) return s;
    const int64_t n = tensor_dim(q, 0), d = tensor_dim(q, 1);
    tensor *scores = NULL;
    s = tensor_empty(&scores, tensor_device(q), DTYPE_F32, shape2(n, n));
    if (s == STATUS_OK) s = op_matmul(q, false, k, true, NULL, scores); /* q k^T: k read transposed */
    if (s == STATUS_OK) s = lab_softmax_rows(scores, (float)(1.0 / sqrt((double)d)), causal);
    if (s == STATUS_OK) s = op_matmul(scores, false, v, false, NULL, out);
    tensor_free(scores);
    return s;
}

/* ==== Step 7: attention in one pass (README, "Step 7") ==================== */

/* Goal: run your flash_attention_kernel (layer_kernels.cuh) on the operands'
 * device, a block of FLASH_THREADS threads per FLASH_ROWS rows, and return
 * without waiting: no tensor of your own this time. Look up flash_args and
 * flash_attention_launchers (launch.h); the scale is step 6's. */
status lab_flash_attention(const tensor *q, const tensor *k, const tensor *v, bool causal, tensor *out)
{
    status s =
        flash_prepare("lab_flash_attention", q, k, v, out); /* given: step 6's, and d <= FLASH_MAX_HEAD */
    if (s != STATUS_OK) return s;
    const int64_t d = tensor_dim(q, 1);
    const flash_args args = { .q = tensor_data_const(q),
                              .k = tensor_data_const(k),
                              .v = tensor_data_const(v),
                              .out = tensor_data(out),
                              .n = tensor_dim(q, 0),
                              .d = d,
                              .scale = (float)(1.0 / sqrt((double)d)),
                              .causal = causal };
    return device_launch(tensor_device(out), &flash_attention_launchers, &args, sizeof args);
}
