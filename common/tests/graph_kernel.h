/* graph_kernel.h: the kernel of one's own that test_graph records in a graph,
 * and its two launchers (plain C, read by the C compiler and by nvcc). */
#ifndef LABKIT_TESTS_GRAPH_KERNEL_H
#define LABKIT_TESTS_GRAPH_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = scale * out[i] + i over n elements; device_launch copies it. */
typedef struct scale_add_index_args {
    float *out;
    float scale;
    int64_t n;
} scale_add_index_args;

/* Through cuda_emulation.h's LAUNCH (test_graph.c). */
void scale_add_index_on_sim(const void *args, void *stream);
/* A real launch on the stream (test_graph_cuda.cu; only in a build with CUDA). */
void scale_add_index_on_cuda(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
