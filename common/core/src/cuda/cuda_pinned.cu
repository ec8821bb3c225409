// cuda_pinned.cu: page-locked host memory, which a GPU's copy engine reads and
// writes directly: tensors on the host made with pinned = true (backend.h).
#include <cuda_runtime.h>

#include "../backend.h"

extern "C" void *cuda_host_alloc_pinned(size_t bytes)
{
    void *p = nullptr;
    if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return p;
}

extern "C" bool cuda_host_free_pinned(void *p)
{
    cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess || attributes.type != cudaMemoryTypeHost) {
        cudaGetLastError();
        return false;
    }
    return cudaFreeHost(p) == cudaSuccess;
}
