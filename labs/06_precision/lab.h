/* lab.h: what you write in lab 06 (low precision: tensor cores, bf16, f16 and
 * TF32). Each function belongs to one step of README.md; your code goes in
 * lab.c.
 *
 * Every function returns a status: STATUS_OK, or a failure with a message made
 * by fail() (labkit/status.h). The untouched lab.c returns todo(...) everywhere,
 * so the programs tell you which step comes next instead of crashing. */
#ifndef LAB06_LAB_H
#define LAB06_LAB_H

#include <stdbool.h>
#include <stdint.h>

#include "labkit/labkit.h"

/* The four ways a GPU multiplies matrices of float32 numbers, from the most
 * exact to the fastest:
 *   LAB_FP32   float32 inputs, float32 products and sums: the FP32 cores
 *   LAB_TF32   float32 inputs read with 10 mantissa bits (TF32), float32 sums:
 *              tensor cores (PyTorch's allow_tf32)
 *   LAB_BF16   bfloat16 inputs (7 mantissa bits), float32 sums: tensor cores
 *   LAB_F16    float16 inputs (10 mantissa bits), float32 sums: tensor cores */
typedef enum lab_precision { LAB_FP32 = 0, LAB_TF32, LAB_BF16, LAB_F16 } lab_precision;
#define LAB_PRECISIONS 4

/* Given (measure.c), not a step: "FP32", "TF32", "BF16" or "F16" ("?" for
 * anything else), for messages. */
const char *precision_name(lab_precision p);

/* ==== Step 1: rounding to bfloat16 by hand (README, "Step 1") ============== */

/* The bits of x rounded to bfloat16: the top 16 bits of x's float32 pattern
 * after rounding to nearest, ties to even. What comes out of a value too large
 * for bf16 is an infinity of its sign, never a NaN; infinities stay infinities;
 * a NaN stays a NaN (any bf16 NaN; the library and CUDA give 0x7FFF). Do not
 * call the library's float_to_bf16: it is the answer. */
status lab_float_to_bf16(float x, uint16_t *bits);

/* ==== Step 2: half the bits, half the bytes (README, "Step 2") ============= */

/* *out = the float32 matrix x as a product at precision p stores it, on x's
 * device: for LAB_BF16 and LAB_F16 a new tensor of that dtype holding x
 * rounded, made there without crossing the bus; for LAB_FP32 and LAB_TF32, x
 * itself (one more reference, nothing allocated): TF32 is float32 in memory.
 * Either way the caller releases *out with tensor_free; *out is NULL on
 * failure. x must be f32. */
status lab_operand(tensor *x, lab_precision p, tensor **out);

/* ==== Step 3: a product at a precision (README, "Step 3") ================== */

/* out [M, N] = op(a) op(b) (+ bias [N] on every row, unless bias is NULL), at
 * precision p: the operands are what lab_operand made for p (f32 for LAB_FP32
 * and LAB_TF32, bf16 for LAB_BF16, f16 for LAB_F16), and out and bias are
 * float32. op(a) is a, or a transposed when trans_a (a is then stored [K, M]);
 * likewise b. Operands of any other dtype are refused (STATUS_BAD_ARGUMENT):
 * a product called bf16 must never quietly run in float32. */
status lab_matmul_at(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                     tensor *out, lab_precision p);

/* ==== Step 4: what it costs in accuracy (README, "Step 4") ================= */

/* *u = the unit roundoff of precision p's inputs: the largest relative error
 * of rounding one float32 to it, half the gap between 1 and the next number
 * it holds (as a power of two). */
status lab_unit_roundoff(lab_precision p, double *u);

/* *error = ||got - ref|| / ||ref||, the relative error of n values against a
 * float64 reference, both norms Euclidean (Frobenius for a matrix). A NaN in
 * got makes the error NaN. Refused when n < 1 or ref is all zeros. */
status lab_relative_error(const float *got, const double *ref, int64_t n, double *error);

/* ==== Step 5: the peak that applies (README, "Step 5") ===================== */

/* *gflops = the theoretical peak, in GFLOP/s, of a product at precision p on a
 * device with properties *props: the tensor cores' peak for p where the
 * device has one for that format (props->peak_tf32_gflops, ..._bf16_, ..._fp16_),
 * otherwise the FP32 peak (props->peak_gflops), since the product then runs on
 * the FP32 cores. 0 where that is unknown too. */
status lab_peak_gflops(const device_properties *props, lab_precision p, double *gflops);

/* ==== Step 6: training with bf16 products (README, "Step 6") =============== */

/* out = op(a) op(b) (+ bias) as mixed-precision training computes it: a and b
 * are float32 (the activations, the gradients, the master weights), each
 * product reads them at precision p (lab_operand, lab_matmul_at), and out is
 * float32. a and b are left exactly as they were, and nothing is left behind
 * on the device. The given MLP (mixed_mlp.c) makes every product of its
 * forward and backward passes through this function. */
status lab_mixed_product(tensor *a, bool trans_a, tensor *b, bool trans_b, const tensor *bias, tensor *out,
                         lab_precision p);

#endif
