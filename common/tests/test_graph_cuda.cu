// test_graph_cuda.cu: test_graph's kernel on a real GPU, a launch on the
// stream it is given (recorded, when the stream is capturing).
#include <cstdint>

#include <cuda_runtime.h>

#include "graph_kernel.h"

#include "graph_kernel.cuh"

void scale_add_index_on_cuda(const void *args, void *stream)
{
    const scale_add_index_args *a = static_cast<const scale_add_index_args *>(args);
    const unsigned blocks = (unsigned)((a->n + 127) / 128);
    scale_add_index_kernel<<<blocks, 128, 0, static_cast<cudaStream_t>(stream)>>>(a->out, a->scale, a->n);
}
