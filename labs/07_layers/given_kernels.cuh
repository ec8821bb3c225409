/* given_kernels.cuh: the reorder kernel (given: not a step), single-source
 * like yours: launch.c compiles it for the simulated GPU, launch.cu for a real
 * one.
 *
 * One product of w [k, c r s] by the im2col buffer [c r s, n h_out w_out]
 * gives the output channel by channel, [k, n, h_out w_out]; a convolution's
 * output is image by image, [n, k, h_out, w_out]. This kernel moves every
 * value to its place: one thread per element of y, reading from the product
 * (scattered) and writing y in order (neighbouring threads, neighbouring
 * floats). */
__global__ void reorder_kernel(const float *product, float *y, int64_t n, int64_t k, int64_t pixels)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; /* y's element, [n, k, pixel] */
    if (i >= n * k * pixels) return;
    const int64_t pixel = i % pixels, channel = i / pixels % k, image = i / (pixels * k);
    y[i] = product[(channel * n + image) * pixels + pixel];
}
