/* precision.h: the low-precision number formats of tensor cores, one value at
 * a time, rounded exactly as the library (and the GPU) rounds a whole tensor.
 *
 * bf16 and f16 are 16-bit floats; C has no type for them, so their values
 * travel as their bits (uint16_t). TF32 is float32 with 10 mantissa bits
 * instead of 23, kept in a float; tensor cores use it for float32 inputs.
 *
 *   format    sign  exponent  mantissa   largest finite   relative rounding error
 *   float32     1       8        23      3.4e38           2^-24 (6e-8)
 *   TF32        1       8        10      3.4e38           2^-11 (4.9e-4)
 *   f16         1       5        10      65504            2^-11 (normal numbers; subnormals to 2^-24)
 *   bf16        1       8         7      3.4e38           2^-8  (3.9e-3)
 *
 * Every rounding is to nearest, ties to even: a value halfway between two
 * neighbours goes to the one whose last mantissa bit is 0. Beyond the largest
 * finite value by half a unit or more, a value becomes an infinity of its sign;
 * infinities and signed zeros stay as they are; a NaN stays a NaN (the
 * canonical quiet NaN 0x7fff in bf16 and f16, as CUDA gives). Widening a bf16
 * or f16 back to float32 is exact.
 *
 * tensor_convert (tensor.h) applies the same functions to every element, on
 * every device: these are its definition. */
#ifndef LABKIT_PRECISION_H
#define LABKIT_PRECISION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float32 -> bf16: keeps float32's 8 exponent bits and the top 7 mantissa bits. */
uint16_t float_to_bf16(float x);
/* bf16 -> float32, exact: the 16 bits become the top half of a float32. */
float bf16_to_float(uint16_t bits);

/* float32 -> f16: 5 exponent bits, 10 mantissa bits; |x| >= 65520 overflows to
 * infinity, and below 2^-14 the result is a subnormal (a multiple of 2^-24). */
uint16_t float_to_f16(float x);
/* f16 -> float32, exact (subnormals included). */
float f16_to_float(uint16_t bits);

/* x rounded to TF32: the nearest float32 whose low 13 mantissa bits are zero.
 *
 * What cuBLAS does in TF32 mode (CUBLAS_COMPUTE_32F_FAST_TF32, or PyTorch's
 * allow_tf32): the tensor cores read the float32 inputs as TF32; the kernel
 * either rounds them first (cvt.rna.tf32.f32: to nearest, ties away from zero)
 * or lets the hardware ignore the low 13 bits (truncation), and NVIDIA does not
 * say which kernel does which. The products are exact and accumulated in
 * float32 either way. So a TF32 product here (inputs rounded by this function,
 * float32 accumulation) has the same error bound as cuBLAS's up to a factor of
 * 2 at most (truncation's 2^-10 against rounding's 2^-11 per input), but not
 * the same bits. */
float float_to_tf32(float x);

#ifdef __cplusplus
}
#endif
#endif
