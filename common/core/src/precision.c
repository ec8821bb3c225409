/* precision.c: the host's single-value roundings (labkit/precision.h): the very
 * functions the GPU kernels use (kernels/half.cuh), compiled here by the C
 * compiler through the emulation header. */
#include "labkit/precision.h"

#include "labkit/cuda_emulation.h"
#include "kernels/half.cuh"

uint16_t float_to_bf16(float x) { return bf16_bits_from_float(x); }
float bf16_to_float(uint16_t bits) { return float_from_bf16_bits(bits); }
uint16_t float_to_f16(float x) { return f16_bits_from_float(x); }
float f16_to_float(uint16_t bits) { return float_from_f16_bits(bits); }
float float_to_tf32(float x) { return tf32_rounded(x); }
