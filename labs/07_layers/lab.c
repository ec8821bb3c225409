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
    /* TODO: your code here */
    (void)x, (void)w, (void)pad, (void)y;
    return todo("step 1: lab_conv_output_shape");
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
    /* TODO: your code here */
    (void)d;
    return todo("step 2: lab_conv_direct (and conv_direct_kernel in layer_kernels.cuh)");
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
    /* TODO: your code here */
    (void)d;
    return todo("step 3: lab_im2col (and im2col_kernel in layer_kernels.cuh)");
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
    /* TODO: your code here */
    (void)d;
    return todo("step 4: lab_conv_im2col");
}

/* ==== Step 5: a stable softmax (README, "Step 5") ========================= */

/* Goal: run your softmax_rows_kernel (layer_kernels.cuh) on the scores'
 * device, one thread per row, and return without waiting. Look up
 * softmax_args and softmax_rows_launchers (launch.h). */
status lab_softmax_rows(tensor *scores, float scale, bool causal)
{
    status s = softmax_prepare("lab_softmax_rows", scores, scale); /* given: a float32 matrix, scale > 0 */
    if (s != STATUS_OK) return s;
    /* TODO: your code here */
    (void)causal;
    return todo("step 5: lab_softmax_rows (and softmax_rows_kernel in layer_kernels.cuh)");
}

/* ==== Step 6: self-attention (README, "Step 6") =========================== */

/* Goal: lesson 002's softmax(Q K^T / sqrt(d_k)) V as two products and your
 * softmax, with the n x n scores made here and released before you return.
 * Look up op_matmul's transposes (ops.h), tensor_empty and tensor_free. */
status lab_attention(const tensor *q, const tensor *k, const tensor *v, bool causal, tensor *out)
{
    status s = attention_prepare("lab_attention", q, k, v, out); /* given: four [n, d] on one device */
    if (s != STATUS_OK) return s;
    /* TODO: your code here */
    (void)causal;
    return todo("step 6: lab_attention");
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
    /* TODO: your code here */
    (void)causal;
    return todo("step 7: lab_flash_attention (and flash_attention_kernel in layer_kernels.cuh)");
}
