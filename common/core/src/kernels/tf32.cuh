/* tf32.cuh: float32 rounded to TF32, element by element (half.cuh's rounding).
 *
 * What a GPU without tensor cores does to compute a TF32 product: round the
 * inputs, then multiply in float32. Only the simulated GPU needs it: a real
 * GPU's cuBLAS reads float32 inputs as TF32 inside its tensor cores. The file is
 * in the same C subset as every kernel, so nvcc would compile it alike; it is
 * kept apart because a kernel that a file compiles but never launches is an
 * error with warnings as errors. Uses element_index() (elementwise.cuh). */
#include "half.cuh"

/* x and out are float32 [n]; out holds x rounded to TF32 */
__global__ void f32_to_tf32_kernel(const float *x, float *out, int64_t n)
{
    const int64_t i = element_index();
    if (i < n) out[i] = tf32_rounded(x[i]);
}
