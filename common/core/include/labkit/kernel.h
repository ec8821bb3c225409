/* kernel.h: running your own kernel on a device's queue.
 *
 * The library's operations cover what the labs compute; a lab that writes its
 * own kernel (a naive matrix product, say) queues it here, so that it runs in
 * order with everything else on that device:
 *
 *   - on a simulated GPU, fn(args, NULL) runs on the device's worker thread when
 *     the queue reaches it; fn launches the kernel with LAUNCH() from
 *     labkit/cuda_emulation.h, which runs every block and thread in turn;
 *   - on a real GPU, fn(args, stream) runs at once on the host and must only
 *     launch work on `stream` (a cudaStream_t), kernel<<<grid, block, 0, stream>>>;
 *   - on the CPU, fn(args, NULL) runs at once.
 *
 * `args` is copied (at most KERNEL_MAX_ARGS bytes), so it may live on the
 * caller's stack. Write the kernel once, in a .cuh file that both a .c file
 * (through cuda_emulation.h) and a .cu file include: see labs/04_matmul. */
#ifndef LABKIT_KERNEL_H
#define LABKIT_KERNEL_H

#include <stddef.h>

#include "labkit/device.h"
#include "labkit/status.h"
#include "labkit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KERNEL_MAX_ARGS 256

typedef void (*kernel_fn)(const void *args, void *stream);

/* Queues fn(args, stream) on device d (counted as one launch). */
status device_enqueue(device d, kernel_fn fn, const void *args, size_t args_size);

/* The tensor's memory on its device, to hand to a kernel. Only a kernel on the
 * tensor's own device may touch it; the host must use tensor_to_host. */
void *tensor_data(tensor *t);
const void *tensor_data_const(const tensor *t);

#ifdef __cplusplus
}
#endif
#endif
