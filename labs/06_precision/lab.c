/* lab.c: lab 06, low precision: tensor cores, bf16, f16 and TF32. Each
 * function is one step of README.md; lab.h says what each must do. Build and
 * run: ./lab run 06; check: ./lab check 06. */
#include "lab.h"

#include <math.h>
#include <string.h>

/* ==== Step 1: rounding to bfloat16 by hand (README, "Step 1") ============== */

/* Goal: the 16 bits of x rounded to bfloat16, to nearest with ties to even,
 * working on x's 32 bits with integer arithmetic. The README's step 1 shows
 * the bits of a float32 and of a bf16, and which values need care: halfway
 * cases, the largest floats, infinities and NaNs. Look up: memcpy (to read a
 * float's bits), and nothing of labkit/precision.h: it is the answer. */
status lab_float_to_bf16(float x, uint16_t *bits)
{
    /* TODO: your code here */
    (void)x, (void)bits;
    return todo("step 1: lab_float_to_bf16");
}

/* ==== Step 2: half the bits, half the bytes (README, "Step 2") ============= */

/* Goal: x as a product at precision p holds it, where x lives: a 16-bit copy
 * for BF16 and F16, made by the device without a trip to the host; x itself
 * for FP32 and TF32 (which stores no bits fewer). Look up: tensor_empty,
 * tensor_convert and tensor_to in labkit/tensor.h. */
status lab_operand(tensor *x, lab_precision p, tensor **out)
{
    /* TODO: your code here */
    (void)x, (void)p, (void)out;
    return todo("step 2: lab_operand");
}

/* ==== Step 3: a product at a precision (README, "Step 3") ================== */

/* Goal: the product at precision p of operands lab_operand made, with
 * float32 sums and a float32 result; operands of another dtype are refused
 * with a message that says how to make the right ones. Look up: op_matmul and
 * op_matmul_precision in labkit/ops.h. */
status lab_matmul_at(const tensor *a, bool trans_a, const tensor *b, bool trans_b, const tensor *bias,
                     tensor *out, lab_precision p)
{
    /* TODO: your code here */
    (void)a, (void)trans_a, (void)b, (void)trans_b, (void)bias, (void)out, (void)p;
    return todo("step 3: lab_matmul_at");
}

/* ==== Step 4: what it costs in accuracy (README, "Step 4") ================= */

/* Goal: the unit roundoff of p's inputs, from how many mantissa bits the
 * format keeps (README, step 4's table). Look up: ldexp in math.h. */
status lab_unit_roundoff(lab_precision p, double *u)
{
    /* TODO: your code here */
    (void)p, (void)u;
    return todo("step 4: lab_unit_roundoff");
}

/* Goal: ||got - ref|| / ||ref|| over n values, summed so that millions of
 * small squares all count; a reference of zeros is refused. */
status lab_relative_error(const float *got, const double *ref, int64_t n, double *error)
{
    /* TODO: your code here */
    (void)got, (void)ref, (void)n, (void)error;
    return todo("step 4: lab_relative_error");
}

/* ==== Step 5: the peak that applies (README, "Step 5") ===================== */

/* Goal: the theoretical peak of a product at precision p on a device with
 * these properties: its tensor cores' where they handle that format, else the
 * FP32 cores'. Look up: device_properties in labkit/properties.h. */
status lab_peak_gflops(const device_properties *props, lab_precision p, double *gflops)
{
    /* TODO: your code here */
    (void)props, (void)p, (void)gflops;
    return todo("step 5: lab_peak_gflops");
}

/* ==== Step 6: training with bf16 products (README, "Step 6") =============== */

/* Goal: one product of mixed-precision training: float32 tensors in and out,
 * read at precision p for the product only. The master weights must keep all
 * their bits, and nothing may stay behind on the device. Your steps 2 and 3
 * do the work. */
status lab_mixed_product(tensor *a, bool trans_a, tensor *b, bool trans_b, const tensor *bias, tensor *out,
                         lab_precision p)
{
    /* TODO: your code here */
    (void)a, (void)trans_a, (void)b, (void)trans_b, (void)bias, (void)out, (void)p;
    return todo("step 6: lab_mixed_product");
}
