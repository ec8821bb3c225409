/* graph_kernel.cuh: test_graph's kernel, written once for both compilers. */

/* out[i] = scale * out[i] + i: it reads what the work before it wrote, and the
 * work after it reads what it writes, so a replay out of order shows. */
__global__ void scale_add_index_kernel(float *out, float scale, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = scale * out[i] + (float)i;
}
