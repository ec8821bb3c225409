/* cuda_emulation.h: lets the C compiler build a single-source CUDA kernel file
 * for the simulated GPU.
 *
 * A CUDA kernel is a function that every thread of a grid runs, each knowing its
 * place through blockIdx, blockDim, threadIdx and gridDim. Here those four are
 * thread-local variables, the qualifiers mean nothing, and LAUNCH runs the kernel
 * once per (block, thread), one after the other, on the simulated GPU's worker
 * thread. The results are the same as on a GPU for kernels whose threads do not
 * talk to each other: no __shared__ memory, no __syncthreads(), no atomics. Those
 * are left undefined on purpose, so that a kernel using them fails to compile
 * here and is recognisably CUDA-only. */
#ifndef LABKIT_CUDA_EMULATION_H
#define LABKIT_CUDA_EMULATION_H

#include <math.h>
#include <stdint.h>

#define __global__ static
#define __device__
#define __host__
#define __restrict__ restrict

typedef struct dim3 {
    unsigned x, y, z;
} dim3;

/* Defined once, in the library (sim_ops.c); each thread, so each simulated GPU's
 * worker, has its own copy. Files that include this header only use them. */
extern _Thread_local dim3 blockIdx, blockDim, threadIdx, gridDim;

/* kernel<<<grid, block, 0, stream>>>(args...) becomes: for every block of the
 * grid, for every thread of the block, set the indices and call kernel(args...). */
#define LAUNCH(kernel, grid, block, ctx, ...)                                              \
    do {                                                                                   \
        (void)(ctx);                                                                       \
        gridDim = (grid);                                                                  \
        blockDim = (block);                                                                \
        for (blockIdx.z = 0; blockIdx.z < gridDim.z; ++blockIdx.z)                         \
            for (blockIdx.y = 0; blockIdx.y < gridDim.y; ++blockIdx.y)                     \
                for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)                 \
                    for (threadIdx.z = 0; threadIdx.z < blockDim.z; ++threadIdx.z)         \
                        for (threadIdx.y = 0; threadIdx.y < blockDim.y; ++threadIdx.y)     \
                            for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x) \
                                kernel(__VA_ARGS__);                                       \
    } while (0)

#endif
