/* copy_queue_gate.h: a kernel that holds a device's compute queue until the
 * host opens its gate, for test_copy_queue: what the copy queue does while the
 * compute queue is held shows that the two run apart, with no timing involved.
 * Plain C, read by the C compiler and by nvcc. */
#ifndef LABKIT_TESTS_COPY_QUEUE_GATE_H
#define LABKIT_TESTS_COPY_QUEUE_GATE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The gate: two flags in host memory, [GATE_OPEN] that the host sets to 1 and
 * [GATE_ENTERED] that the kernel sets to 1 once it holds the queue; `flags` is
 * the host's view, `device_view` the device's (the same pointer on a simulated
 * GPU, the mapped address on a real one). */
enum { GATE_OPEN = 0, GATE_ENTERED = 1, GATE_FLAGS = 2 };

typedef struct gate {
    volatile int *flags;
    volatile int *device_view;
} gate;

typedef struct gate_args {
    volatile int *device_view;
} gate_args;

/* A simulated GPU's launcher: the worker itself waits (test_copy_queue.c). */
void gate_wait_on_sim(const void *args, void *stream);

/* A real GPU's (test_copy_queue_cuda.cu, in a build with CUDA): one thread
 * that reads the flag until it is set, and the flag in mapped pinned memory. */
void gate_wait_on_cuda(const void *args, void *stream);
int gate_make_on_cuda(gate *g);
void gate_free_on_cuda(gate *g);

#ifdef __cplusplus
}
#endif
#endif
