/* lab.h: what you write in lab 07 (layers as matrix products). Each function
 * belongs to one step of README.md; your code goes in lab.c, and the four
 * kernels of steps 2, 3, 5 and 7 in layer_kernels.cuh.
 *
 * Tensors are row-major float32 on one device (the CPU or a GPU, real or
 * simulated; every function here works on each). A convolution's input x is
 * [N, C, H, W]: N images of C channels, each H rows of W values (PyTorch's
 * NCHW). Its filters w are [K, C, R, S]: K filters of C channels, R rows and S
 * columns each. Its output y is [N, K, H_out, W_out]. Stride 1, and `pad` rows
 * and columns of zeros around every image (zero padding). Attention's q, k, v
 * and out are [n, d]: n positions of a sequence, d the head size.
 *
 * Every function returns a status: STATUS_OK, or a failure with a message made
 * by fail() (labkit/status.h). The untouched lab.c returns todo(...) everywhere,
 * so the programs tell you which step comes next instead of crashing. What is
 * given (checks of operands, the reorder, float64 references) is in given.h;
 * how a kernel is launched, in launch.h. */
#ifndef LAB07_LAB_H
#define LAB07_LAB_H

#include <stdbool.h>
#include <stdint.h>

#include "labkit/labkit.h"

/* ==== Step 1: the output's size (README, "Step 1") ======================== */

/* *y = the shape of the convolution of x [N, C, H, W] with w [K, C, R, S] at
 * stride 1 with `pad` zeros on every side: [N, K, H_out, W_out]. Refused with
 * STATUS_BAD_ARGUMENT and a message that says why: x or w not 4-D, channel
 * counts that differ, a negative pad, a filter larger than the padded image. */
status lab_conv_output_shape(shape x, shape w, int64_t pad, shape *y);

/* ==== Step 2: the direct convolution (README, "Step 2") =================== */

/* y = the convolution of x with w, by your conv_direct_kernel
 * (layer_kernels.cuh): one thread per element of y, each adding up its C R S
 * products. Queued on the device where x, w and y live, as one launch; returns
 * without waiting. */
status lab_conv_direct(const tensor *x, const tensor *w, int64_t pad, tensor *y);

/* ==== Step 3: im2col (README, "Step 3") =================================== */

/* cols [C R S, N H_out W_out] = the windows of x that an R x S filter sees:
 * column (n, oh, ow) holds the C R S values under the filter when it sits over
 * output pixel (oh, ow) of image n, in the order of a filter's own values
 * (c, r, s), with 0 where the window hangs over the padding. By your
 * im2col_kernel, one thread per channel c of each output pixel (n, oh, ow), each
 * writing its R S values. One launch, queued; returns without waiting. */
status lab_im2col(const tensor *x, int64_t r, int64_t s, int64_t pad, tensor *cols);

/* ==== Step 4: convolution as one matrix product (README, "Step 4") ======== */

/* The same y as lab_conv_direct, as lab_im2col followed by one op_matmul: w,
 * viewed as [K, C R S], times cols gives [K, N H_out W_out], and given.h's
 * conv_reorder puts that in y's order. The buffer and the product's result are
 * tensors of their own on y's device, released before returning: afterwards
 * the device holds what it held before. Queues exactly 3 launches (im2col, the
 * product, the reorder) and returns without waiting. */
status lab_conv_im2col(const tensor *x, const tensor *w, int64_t pad, tensor *y);

/* ==== Step 5: a stable softmax (README, "Step 5") ========================= */

/* In place: every row of scores [rows, cols] becomes softmax(scale x row), by
 * your softmax_rows_kernel, one thread per row. Stable: no row overflows or
 * gives NaN, however large its scores. With causal, row i keeps only its
 * columns j <= i (the past and itself): columns 0 to min(i, cols - 1), all of
 * them in a row i >= cols of a matrix with more rows than columns; its other
 * columns become exactly 0. One launch, queued; returns without waiting. */
status lab_softmax_rows(tensor *scores, float scale, bool causal);

/* ==== Step 6: self-attention (README, "Step 6") =========================== */

/* out [n, d] = softmax(q k^T / sqrt(d)) v, one head, with the causal mask
 * when asked; q, k, v and out are [n, d] on one device. The n x n scores are a
 * tensor of their own, made here and released before returning, and the only
 * memory used beyond the operands. Queues exactly 3 launches (two products and
 * your softmax) and returns without waiting. */
status lab_attention(const tensor *q, const tensor *k, const tensor *v, bool causal, tensor *out);

/* ==== Step 7: attention in one pass (README, "Step 7") ==================== */

/* The same out as lab_attention, by your flash_attention_kernel
 * (layer_kernels.cuh): one launch, a block per FLASH_ROWS rows of q, which
 * reads K and V a tile at a time into shared memory and keeps, per part of a
 * row, a running max and a running sum (the online softmax), merged at the
 * end, so that the n x n
 * scores are never stored: the memory used is q, k, v and out, and nothing
 * more. The head size d is at most FLASH_MAX_HEAD (launch.h). Queued;
 * returns without waiting. */
status lab_flash_attention(const tensor *q, const tensor *k, const tensor *v, bool causal, tensor *out);

#endif
