/* lab.c: lab 06, low precision: the reference solution. */
#include "lab.h"

#include <math.h>
#include <string.h>

/* ==== Step 1: rounding to bfloat16 by hand (README, "Step 1") ============== */

status lab_float_to_bf16(float x, uint16_t *bits)
{
    if (!bits)
        return fail(STATUS_BAD_ARGUMENT, "lab_float_to_bf16: bits is NULL; pass the address of a uint16_t");
    uint32_t u;
    memcpy(&u, &x, sizeof u); /* the float's bit pattern (a pointer cast would break C's aliasing rules) */
    /* A NaN first: rounding its bits like a number's could carry them into an
     * infinity (0x7F800001) or a negative zero (0x7FFFFFFF). */
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
        *bits = 0x7FFF;
        return STATUS_OK;
    }
    /* To nearest, ties to even: add just under half of the 16 bits dropped
     * (0x7FFF), plus one more when the last bit kept is 1, so that an exact
     * half carries into it only when that makes it even. A carry runs on into
     * the exponent as it should (1.99999 becomes 2), and past the largest
     * finite value into the infinity 0x7F80. */
    const uint32_t last_kept = (u >> 16) & 1u;
    *bits = (uint16_t)((u + 0x7FFFu + last_kept) >> 16);
    return STATUS_OK;
}

/* ==== Step 2: half the bits, half the bytes (README, "Step 2") ============= */

/* The dtype a product at precision p reads its operands in. */
static dtype operand_dtype(lab_precision p)
{
    return p == LAB_BF16 ? DTYPE_BF16 : p == LAB_F16 ? DTYPE_F16 : DTYPE_F32;
}

static bool known_precision(lab_precision p) { return (int)p >= 0 && (int)p < LAB_PRECISIONS; }

status lab_operand(tensor *x, lab_precision p, tensor **out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "lab_operand: out is NULL");
    *out = NULL;
    if (!x || tensor_dtype(x) != DTYPE_F32)
        return fail(STATUS_BAD_ARGUMENT, "lab_operand: x must be a float32 tensor (it is %s)",
                    x ? dtype_name(tensor_dtype(x)) : "NULL");
    if (!known_precision(p)) return fail(STATUS_BAD_ARGUMENT, "lab_operand: %d is no lab_precision", (int)p);
    /* TF32 is float32 in memory: the tensor cores drop the low bits as they read. */
    if (operand_dtype(p) == DTYPE_F32) return tensor_to(x, tensor_device(x), out);
    /* Converted where x lives, by the device itself: nothing crosses the bus. */
    status s = tensor_empty(out, tensor_device(x), operand_dtype(p), tensor_shape(x));
    if (s == STATUS_OK) s = tensor_convert(x, *out);
    if (s != STATUS_OK) {
        tensor_free(*out);
        *out = NULL;
    }
    return s;
}

/* ==== Step 3: a product at a precision (README, "Step 3") ================== */

status lab_matmul_at(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                     tensor *out, lab_precision p)
{
    if (!a || !b || !out) return fail(STATUS_BAD_ARGUMENT, "lab_matmul_at: a, b and out must not be NULL");
    if (!known_precision(p))
        return fail(STATUS_BAD_ARGUMENT, "lab_matmul_at: %d is no lab_precision", (int)p);
    const dtype want = operand_dtype(p);
    if (tensor_dtype(a) != want || tensor_dtype(b) != want)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_matmul_at: %s products take %s operands, not %s and %s\n"
                    "  hint: make them with lab_operand(x, LAB_%s, &operand)",
                    precision_name(p), dtype_name(want), dtype_name(tensor_dtype(a)),
                    dtype_name(tensor_dtype(b)), precision_name(p));
    const matmul_precision read_as = p == LAB_TF32 ? MATMUL_TF32 : MATMUL_DEFAULT;
    return op_matmul_precision(a, trans_a, b, trans_b, bias, out, read_as);
}

/* ==== Step 4: what it costs in accuracy (README, "Step 4") ================= */

status lab_unit_roundoff(lab_precision p, double *u)
{
    if (!u) return fail(STATUS_BAD_ARGUMENT, "lab_unit_roundoff: u is NULL");
    /* Mantissa bits stored; with the leading 1 that is not stored, p bits of
     * precision leave a gap of 2^-(bits) after 1, and rounding errs by at most
     * half of it. */
    static const int mantissa_bits[LAB_PRECISIONS] = {
        [LAB_FP32] = 23, [LAB_TF32] = 10, [LAB_BF16] = 7, [LAB_F16] = 10
    };
    if (!known_precision(p))
        return fail(STATUS_BAD_ARGUMENT, "lab_unit_roundoff: %d is no lab_precision", (int)p);
    *u = ldexp(1.0, -(mantissa_bits[p] + 1));
    return STATUS_OK;
}

status lab_relative_error(const float *got, const double *ref, int64_t n, double *error)
{
    if (!got || !ref || !error || n < 1)
        return fail(STATUS_BAD_ARGUMENT, "lab_relative_error: got, ref or error is NULL, or n (%lld) < 1",
                    (long long)n);
    double diff = 0.0, norm = 0.0; /* double: millions of float32 squares would lose their last terms */
    for (int64_t i = 0; i < n; ++i) {
        const double d = (double)got[i] - ref[i];
        diff += d * d;
        norm += ref[i] * ref[i];
    }
    if (norm == 0.0)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_relative_error: ref is all zeros; an error relative to 0 means nothing");
    *error = sqrt(diff / norm);
    return STATUS_OK;
}

/* ==== Step 5: the peak that applies (README, "Step 5") ===================== */

status lab_peak_gflops(const device_properties *props, lab_precision p, double *gflops)
{
    if (!props || !gflops) return fail(STATUS_BAD_ARGUMENT, "lab_peak_gflops: props or gflops is NULL");
    double tensor_peak = 0.0;
    switch (p) {
    case LAB_FP32: break;
    case LAB_TF32: tensor_peak = props->peak_tf32_gflops; break;
    case LAB_BF16: tensor_peak = props->peak_bf16_gflops; break;
    case LAB_F16: tensor_peak = props->peak_fp16_gflops; break;
    default: return fail(STATUS_BAD_ARGUMENT, "lab_peak_gflops: %d is no lab_precision", (int)p);
    }
    /* No tensor cores for this format (none at all, or Turing's bf16): the
     * product runs on the FP32 cores. */
    *gflops = tensor_peak > 0 ? tensor_peak : props->peak_gflops;
    return STATUS_OK;
}

/* ==== Step 6: training with bf16 products (README, "Step 6") =============== */

status lab_mixed_product(tensor *a, bool trans_a, tensor *b, bool trans_b, const tensor *bias, tensor *out,
                         lab_precision p)
{
    /* Rounded copies for this product only: the float32 originals (the master
     * weights among them) keep every bit of every update. */
    tensor *a_p = NULL, *b_p = NULL;
    status s = lab_operand(a, p, &a_p);
    if (s == STATUS_OK) s = lab_operand(b, p, &b_p);
    if (s == STATUS_OK) s = lab_matmul_at(a_p, trans_a, b_p, trans_b, bias, out, p);
    tensor_free(a_p); /* queued on a GPU: freed once the product has read it */
    tensor_free(b_p);
    return s;
}
