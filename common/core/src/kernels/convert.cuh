/* convert.cuh: whole tensors between float32 and the 16-bit floats: one kernel
 * per direction, one thread per element, each calling the single-value
 * rounding of half.cuh. tensor_convert runs them on every GPU; the simulated
 * GPU's low-precision matrix products also widen their inputs with them.
 *
 * Single-source, like elementwise.cuh (whose element_index() it uses): nvcc
 * compiles it for real GPUs, the C compiler for simulated ones. */
#include "half.cuh"

/* x is float32 [n], out the bf16 bits [n] */
__global__ void f32_to_bf16_kernel(const float *x, uint16_t *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = bf16_bits_from_float(x[i]);
}

/* x is float32 [n], out the f16 bits [n] */
__global__ void f32_to_f16_kernel(const float *x, uint16_t *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = f16_bits_from_float(x[i]);
}

/* x is bf16 bits [n], out float32 [n] (exact) */
__global__ void bf16_to_f32_kernel(const uint16_t *x, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = float_from_bf16_bits(x[i]);
}

/* x is f16 bits [n], out float32 [n] (exact) */
__global__ void f16_to_f32_kernel(const uint16_t *x, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = float_from_f16_bits(x[i]);
}
