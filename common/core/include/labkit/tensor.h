/* tensor.h: row-major arrays of up to 4 dimensions that live on one device:
 * float32, int32 (labels), or the 16-bit floats bf16 and f16 (lab 06).
 *
 * A tensor's memory comes from its device's allocator, which counts current and
 * peak bytes (counters.h). Everything follows the device's queue. On a GPU (real or
 * simulated) operations, fills and copies within the device are queued and
 * return at once, and freeing is queued too; a copy between the host and a GPU
 * (tensor_from_host, tensor_to_host, tensor_item, tensor_to to or from the cpu)
 * waits for the work queued before it and returns once done, as cudaMemcpy does
 * with ordinary host memory, so the host buffer may be reused at once.
 *
 * Tensors are reference counted so that tensor_to() can hand back the very same
 * tensor when it is already on the target device (the lessons' `Z.cuda(0) is Z`).
 * Every tensor you obtain, that one included, is released with tensor_free(). */
#ifndef LABKIT_TENSOR_H
#define LABKIT_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "labkit/device.h"
#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TENSOR_MAX_DIMS 4

/* Element types. Every operation computes in f32; i32 holds labels. bf16 and
 * f16 are 16-bit floats, made from f32 tensors by tensor_convert: they are
 * copied and counted like any tensor (at 2 bytes an element), op_matmul
 * multiplies them (ops.h), and every other operation refuses them. */
typedef enum dtype { DTYPE_F32 = 0, DTYPE_I32, DTYPE_BF16, DTYPE_F16 } dtype;

/* Bytes per element: 4 for f32 and i32, 2 for bf16 and f16; 0 for a value
 * that is no dtype. */
size_t dtype_size(dtype type);
/* "f32", "i32", "bf16" or "f16" ("invalid dtype" for anything else). */
const char *dtype_name(dtype type);

typedef struct shape {
    int ndim;
    int64_t dims[TENSOR_MAX_DIMS];
} shape;

shape shape1(int64_t n);
shape shape2(int64_t rows, int64_t cols);
shape shape3(int64_t d0, int64_t d1, int64_t d2);
shape shape4(int64_t d0, int64_t d1, int64_t d2, int64_t d3);
int64_t shape_numel(shape s);
/* "[37, 53]" into buf; returns buf. */
const char *shape_format(shape s, char *buf, size_t size);

typedef struct tensor tensor;

/* Creation. Every creator writes the new tensor to *out (NULL on failure). */
status tensor_empty(tensor **out, device d, dtype type, shape s);
status tensor_zeros(tensor **out, device d, shape s);
status tensor_ones(tensor **out, device d, shape s);
status tensor_full(tensor **out, device d, shape s, float value);
status tensor_from_host(tensor **out, device d, shape s, const float *data);
status tensor_from_host_i32(tensor **out, device d, shape s, const int32_t *data);
/* Seeded random tensors: the same seed gives the same values on every device
 * (they are drawn on the host with a counter-based generator, then copied). */
status tensor_uniform(tensor **out, device d, shape s, float low, float high, uint64_t seed);
status tensor_normal(tensor **out, device d, shape s, float mean, float stddev, uint64_t seed);

/* Releases one reference (NULL is fine). The memory goes back to the device in
 * queue order, so work already queued on it still finishes. */
void tensor_free(tensor *t);

/* `t` on device `d`: `t` itself (one more reference, nothing copied) when it is
 * already there, otherwise a new tensor and one checked copy. */
status tensor_to(tensor *t, device d, tensor **out);

/* Copies src into dst (same shape and dtype; any two devices). */
status tensor_copy(tensor *dst, const tensor *src);

/* dst = src converted element by element: float32 to bf16 or f16 (rounded to
 * nearest, ties to even; overflow to infinity, NaN kept: labkit/precision.h),
 * or bf16 or f16 back to float32 (exact). Same shape, one device; queued there
 * like an operation, and done by the same single-source kernel on every GPU
 * (a plain loop through the same functions on the CPU). Other pairs are
 * refused: bf16 <-> f16 goes through f32, and f32 -> f32 is tensor_copy. */
status tensor_convert(const tensor *src, tensor *dst);

/* Copies `count` elements of src starting at element src_offset into dst at
 * dst_offset (flat, row-major positions), both tensors on one device. Queued
 * there like an operation: how a step writes its loss into slot i of a log that
 * stays on the device. */
status tensor_copy_slice(tensor *dst, int64_t dst_offset, const tensor *src, int64_t src_offset,
                         int64_t count);

/* Copies the whole tensor to host memory, waiting for queued work first.
 * `count` is the capacity of dst in elements and must be at least numel. */
status tensor_to_host(const tensor *t, float *dst, int64_t count);
status tensor_to_host_i32(const tensor *t, int32_t *dst, int64_t count);

/* Overwrites the whole tensor with `count` host values (count must equal numel),
 * after the work already queued on its device: a batch moved into a tensor that
 * is reused every step, with no new allocation. */
status tensor_copy_from_host(tensor *t, const float *src, int64_t count);
status tensor_copy_from_host_i32(tensor *t, const int32_t *src, int64_t count);

/* The same copy, queued: it returns at once and happens when the device's queue
 * reaches it, so the host can prepare the next batch while the device works:
 * PyTorch's x.to(device, non_blocking=True). `src` must stay valid and unchanged
 * until then, that is until a blocking read or a synchronisation of the device,
 * or an event recorded after the copy has been reached. A real GPU copies from
 * pinned memory (host_alloc(bytes, 1)) by DMA while the host goes on; from
 * ordinary memory CUDA may make the host wait. On the CPU the copy is done at
 * once. */
status tensor_copy_from_host_async(tensor *t, const float *src, int64_t count);
status tensor_copy_from_host_async_i32(tensor *t, const int32_t *src, int64_t count);

/* Raw bytes, for any dtype and above all for bf16 and f16, which C has no type
 * for (their bits travel as uint16_t; labkit/precision.h converts one value).
 * `bytes` must equal the tensor's size, numel x dtype_size(type)
 * (tensor_bytes). Blocking, like tensor_from_host and tensor_to_host. The typed
 * calls above refuse a tensor of another dtype and name the right one. */
status tensor_from_host_raw(tensor **out, device d, dtype type, shape s, const void *data, size_t bytes);
status tensor_to_host_raw(const tensor *t, void *dst, size_t bytes);

/* The single value of a one-element float tensor (a blocking read). */
status tensor_item(const tensor *t, float *value);

/* Same data, new shape with the same number of elements (shares memory). */
status tensor_reshape(tensor *t, shape s, tensor **out);

device tensor_device(const tensor *t);
dtype tensor_dtype(const tensor *t);
shape tensor_shape(const tensor *t);
int64_t tensor_numel(const tensor *t);
int64_t tensor_dim(const tensor *t, int i); /* 0 if i is out of range */
size_t tensor_bytes(const tensor *t);
/* "f32[37, 53] on sim:0" into buf; returns buf. */
const char *tensor_describe(const tensor *t, char *buf, size_t size);

/* Host buffers for copies, and the arrays a check hands to a student's loop.
 * Pinned (page-locked) memory lets a real GPU copy by DMA without a staging
 * copy; elsewhere it is ordinary memory. Ordinary buffers end at a page that
 * may not be touched, like the tensors of the CPU and of a simulated GPU: an
 * index past the end stops the program at the line that made it, and the crash
 * report names the line and how far past the end it went. */
void *host_alloc(size_t bytes, int pinned);
void host_free(void *p, int pinned);

#ifdef __cplusplus
}
#endif
#endif
