/* given_kernels.cuh: what your sums share (given: not a step), single-source
 * like your kernels: launch.c compiles it for the simulated GPU and the CPU,
 * launch.cu for a real one, both before memory_kernels.cuh. */

/* The one way your sums add to the total: atomicAdd(total, value), the
 * read-modify-write that no other thread can interleave with; and, when the
 * launch counts them (the check does, with a counter; a timed run passes
 * NULL), one more atomic on the counter. Inline: a kernel not yet written
 * leaves it unused. */
static __device__ inline void total_add(float *total, float value, unsigned *atomics)
{
    atomicAdd(total, value);
    if (atomics) atomicAdd(atomics, 1u);
}

/* Launched first by every sum, as one thread: the total (and the counter)
 * start at 0. */
__global__ void sum_reset_kernel(float *total, unsigned *atomics)
{
    *total = 0.0f;
    if (atomics) *atomics = 0u;
}
