// test_copy_queue_cuda.cu: test_copy_queue's gate on a real GPU: one thread
// that says it has started, then reads a flag in mapped pinned memory until
// the host sets it.
#include <cuda_runtime.h>

#include "copy_queue_gate.h"

__global__ void gate_kernel(volatile int *flags)
{
    flags[GATE_ENTERED] = 1;
    __threadfence_system();
    while (flags[GATE_OPEN] == 0) {
    }
}

void gate_wait_on_cuda(const void *args, void *stream)
{
    const gate_args *a = static_cast<const gate_args *>(args);
    gate_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(a->device_view);
}

int gate_make_on_cuda(gate *g)
{
    void *host = nullptr, *device = nullptr;
    if (cudaHostAlloc(&host, GATE_FLAGS * sizeof(int), cudaHostAllocMapped) != cudaSuccess) return 0;
    if (cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess) {
        cudaFreeHost(host);
        return 0;
    }
    g->flags = static_cast<volatile int *>(host);
    g->device_view = static_cast<volatile int *>(device);
    g->flags[GATE_OPEN] = g->flags[GATE_ENTERED] = 0;
    return 1;
}

void gate_free_on_cuda(gate *g)
{
    if (g->flags) cudaFreeHost(const_cast<int *>(g->flags));
    g->flags = g->device_view = nullptr;
}
