/* given.h: what lab 07 gives you besides the launchers of launch.h (given: not
 * a step): the checks of each layer's operands, the reorder after the
 * convolution's product, and the float64 references that main.c and check.c
 * hold your layers against.
 *
 * The references work on host arrays (a tensor's values, copied with
 * host_copy) and compute one output value at a time, so that a large layer
 * can be checked on a sample of its values. Each gives, with its value, the
 * size of the terms it added up: a float32 sum of m terms is off by up to
 * about m x 6e-8 of that size, so errors are measured relative to it. */
#ifndef LAB07_GIVEN_H
#define LAB07_GIVEN_H

#include <stdbool.h>
#include <stdint.h>

/* time_call and host_copy: labs/common/, shared by labs 07 and 09 */
#include "host_copy.h"
#include "labkit/labkit.h"
#include "launch.h"
#include "timing.h"

/* ---- operands ------------------------------------------------------------------ */

/* The checks before a convolution: x [N, C, H, W], w [K, C, R, S] and y, all
 * float32 on one device, y of the shape lab_conv_output_shape gives (your
 * step 1). Fills *d from the shapes. A failure names `who` (your function)
 * and says what to fix. */
status conv_prepare(const char *who, const tensor *x, const tensor *w, int64_t pad, const tensor *y,
                    conv_dims *d);

/* The same for im2col with an r x s filter: cols must be [C r s, N H_out W_out].
 * Fills *d, with d->k = 0 (im2col does not know the filters' count). */
status im2col_prepare(const char *who, const tensor *x, int64_t r, int64_t s, int64_t pad, const tensor *cols,
                      conv_dims *d);

/* scores: float32 [rows, cols]; scale: finite and above 0. */
status softmax_prepare(const char *who, const tensor *scores, float scale);

/* q, k, v and out: float32 [n, d], all four on one device. */
status attention_prepare(const char *who, const tensor *q, const tensor *k, const tensor *v,
                         const tensor *out);

/* attention_prepare's checks, and a head size d of at most FLASH_MAX_HEAD
 * (launch.h): attention in one pass (step 7). */
status flash_prepare(const char *who, const tensor *q, const tensor *k, const tensor *v, const tensor *out);

/* ---- the reorder after the product ------------------------------------------------ */

/* y [N, K, H_out, W_out] from product [K, N H_out W_out], on their device: one
 * launch of the given reorder_kernel (given_kernels.cuh), queued. */
status conv_reorder(const tensor *product, tensor *y);

/* ---- float64 references ------------------------------------------------------------ */

/* Element `index` of y (flat: [n, k, oh, ow]) in float64; *scale (may be NULL)
 * receives the sum of |x w| over its terms. */
double conv_reference(const float *x, const float *w, const conv_dims *d, int64_t index, double *scale);

/* What im2col puts in row `row` (c, r, s) and column `col` (n, oh, ow) of its
 * buffer: the value of x under that filter tap, or 0 in the padding. */
float im2col_reference(const float *x, const conv_dims *d, int64_t row, int64_t col);

/* p[0..cols-1] = softmax(scale x row) in float64 over the row's first `seen`
 * values; the rest are 0 (the causal mask's future). */
void softmax_reference(const float *row, int64_t cols, int64_t seen, double scale, double *p);

/* out[0..d-1] = row `row` of softmax(q k^T / sqrt(d)) v in float64, with the
 * causal mask when asked; q, k, v are [n, d]. scale[0..d-1] (may be NULL)
 * receives, per column, the sum over j of p_j |v[j, c]|. */
void attention_reference(const float *q, const float *k, const float *v, int64_t n, int64_t d, bool causal,
                         int64_t row, double *out, double *scale);

/* ---- errors against the references --------------------------------------------------- */

/* The largest error of y against conv_reference, each relative to its
 * terms' size (|y - ref| / sum |x w|), over `samples` elements spread over y
 * (every one when samples >= y's size). A NaN, a value never written, counts
 * as infinite. *worst (may be NULL) receives that element's index. */
double conv_error(const float *x, const float *w, const conv_dims *d, const float *y, int64_t samples,
                  int64_t *worst);

/* The same for attention's out [n, d], over `samples` rows (every row when
 * samples >= n), each value relative to sum_j p_j |v[j, c]|. */
double attention_error(const float *q, const float *k, const float *v, int64_t n, int64_t d, bool causal,
                       const float *out, int64_t samples, int64_t *worst);

/* ---- measuring a call ------------------------------------------------------------------- */

/* What a device did during one call: its launches and blocking waits, and the
 * memory it used beyond what was in use before, at its peak and left once its
 * work was done. usage_begin resets d's counters; usage_end reads them (before
 * waiting for the device, so that the wait is not counted). */
typedef struct call_usage {
    uint64_t launches, syncs;
    long long peak_bytes, left_bytes;
} call_usage;
size_t usage_begin(device d);
call_usage usage_end(device d, size_t before);

#endif
