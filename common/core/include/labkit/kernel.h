/* kernel.h: running your own kernel on a device's queue.
 *
 * The library's operations cover what the labs compute; a lab that writes its
 * own kernel (a naive matrix product, say) queues it here, so that it runs in
 * order with everything else on that device:
 *
 *   - on a simulated GPU, fn(args, NULL) runs on the device's worker thread when
 *     the queue reaches it; fn launches the kernel with LAUNCH() from
 *     labkit/cuda_emulation.h, which runs every block and thread, the threads
 *     of a block cooperating at barriers as on a GPU; a launch that fails
 *     (a barrier not every thread reaches, ...) leaves STATUS_KERNEL_FAILED for
 *     the next call that waits for the device;
 *   - on a real GPU, fn(args, stream) runs at once on the host and must only
 *     launch work on `stream` (a cudaStream_t), kernel<<<grid, block, 0, stream>>>;
 *   - on the CPU, fn(args, NULL) runs at once, and a failed launch is this
 *     call's error.
 *
 * `args` is copied (at most KERNEL_MAX_ARGS bytes), so it may live on the
 * caller's stack.
 *
 * Write the kernel once, in a .cuh file that a .c file (through
 * cuda_emulation.h) and, in a build with CUDA, a .cu file include; each defines
 * one launcher, and device_launch() picks the one for the device:
 *
 *   const kernel_launchers naive = {"naive_matmul_kernel", naive_on_sim, NAIVE_ON_CUDA};
 *   CHECK(device_launch(tensor_device(c), &naive, &args, sizeof args));
 *
 * See labs/04_matmul (naive_launch.c and naive_launch.cu). */
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

/* Queues fn(args, stream) on device d (counted as one launch); on the CPU runs
 * it at once and returns STATUS_KERNEL_FAILED when a LAUNCH in it failed. */
status device_enqueue(device d, kernel_fn fn, const void *args, size_t args_size);

/* The launchers of one single-source kernel: on_sim runs it through
 * cuda_emulation.h's LAUNCH (on a simulated GPU's worker, or at once on the
 * CPU); on_cuda starts it on a real GPU's stream. on_cuda is NULL in a program
 * built without CUDA (its .cu file was not compiled). */
typedef struct kernel_launchers {
    const char *name; /* the kernel, for messages: "naive_matmul_kernel" */
    kernel_fn on_sim;
    kernel_fn on_cuda;
} kernel_launchers;

/* Queues the kernel on device d with the launcher for d's kind (counted as one
 * launch). A launcher that is missing for that kind is an error that says why,
 * never a crash. */
status device_launch(device d, const kernel_launchers *k, const void *args, size_t args_size);

/* The tensor's memory on its device, to hand to a kernel. Only a kernel on the
 * tensor's own device may touch it; the host must use tensor_to_host. */
void *tensor_data(tensor *t);
const void *tensor_data_const(const tensor *t);

#ifdef __cplusplus
}
#endif
#endif
