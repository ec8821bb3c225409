/* tensor.c: shapes, creating and freeing tensors, and the device memory they
 * hold (counted for the current and peak figures). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "capture.h"
#include "queues.h"
#include "guarded_memory.h"
#include "launch.h"
#include "tensor_internal.h"

/* ---- shapes ---------------------------------------------------------------- */

shape shape1(int64_t n) { return (shape){ 1, { n, 0, 0, 0 } }; }
shape shape2(int64_t rows, int64_t cols) { return (shape){ 2, { rows, cols, 0, 0 } }; }
shape shape3(int64_t d0, int64_t d1, int64_t d2) { return (shape){ 3, { d0, d1, d2, 0 } }; }
shape shape4(int64_t d0, int64_t d1, int64_t d2, int64_t d3) { return (shape){ 4, { d0, d1, d2, d3 } }; }

int64_t shape_numel(shape s)
{
    if (s.ndim < 1 || s.ndim > TENSOR_MAX_DIMS) return 0;
    int64_t n = 1;
    for (int i = 0; i < s.ndim; ++i) n *= s.dims[i];
    return n;
}

const char *shape_format(shape s, char *buf, size_t size)
{
    if (!buf || size == 0) return "";
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < s.ndim && i < TENSOR_MAX_DIMS && used < size; ++i)
        used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? ", " : "", s.dims[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

/* ---- element types ----------------------------------------------------------- */

size_t dtype_size(dtype type)
{
    switch (type) {
    case DTYPE_F32:
    case DTYPE_I32: return 4;
    case DTYPE_BF16:
    case DTYPE_F16: return 2;
    }
    return 0;
}

const char *dtype_name(dtype type)
{
    switch (type) {
    case DTYPE_F32: return "f32";
    case DTYPE_I32: return "i32";
    case DTYPE_BF16: return "bf16";
    case DTYPE_F16: return "f16";
    }
    return "invalid dtype";
}

/* Largest tensor we accept: keeps numel * 4 far from overflowing size_t. */
#define MAX_ELEMENTS ((int64_t)1 << 40)

static status check_shape(shape s, const char *who)
{
    char text[96];
    if (s.ndim < 1 || s.ndim > TENSOR_MAX_DIMS)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: a shape has 1 to %d dimensions, not %d; build it with shape1() to shape4()", who,
                    TENSOR_MAX_DIMS, s.ndim);
    int64_t n = 1;
    for (int i = 0; i < s.ndim; ++i) {
        if (s.dims[i] < 1 || s.dims[i] > MAX_ELEMENTS || n > MAX_ELEMENTS / s.dims[i])
            return fail(STATUS_BAD_ARGUMENT,
                        "%s: shape %s is not allowed: every dimension must be at least 1 "
                        "and the tensor at most 2^40 elements",
                        who, shape_format(s, text, sizeof text));
        n *= s.dims[i];
    }
    return STATUS_OK;
}

/* ---- device memory, counted -------------------------------------------- */

static status acquire_memory(device d, size_t bytes, void **out)
{
    status s = backend_of(d)->alloc(d.index, bytes, out);
    if (s != STATUS_OK) return s;
    device_counters *c = counters_of(d);
    c->memory_current += bytes;
    if (c->memory_current > c->memory_peak) c->memory_peak = c->memory_current;
    return STATUS_OK;
}

static void return_memory(device d, void *data, size_t bytes)
{
    /* During a capture the recorded work may use this memory at every launch of
     * the graph, which gives it back when it is freed. Should the host have no
     * room left to note it, it is never given back: a leak, not a use after free. */
    if (capturing(d)) {
        capture_keep(d, data, bytes);
        return;
    }
    counters_of(d)->memory_current -= bytes;
    backend_of(d)->release(d.index, data, bytes);
}

/* ---- creation -------------------------------------------------------------- */

status tensor_create(tensor **out, device d, dtype type, shape s, const char *who)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "%s: out is NULL; pass the address of a tensor pointer", who);
    *out = NULL;
    if (dtype_size(type) == 0)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: dtype %d is not one of DTYPE_F32, DTYPE_I32, DTYPE_BF16, DTYPE_F16", who, (int)type);
    status st = check_shape(s, who);
    if (st == STATUS_OK) st = device_check(d);
    if (st != STATUS_OK) return st;
    if (capturing(d)) return capture_refuse_tensor(d, who);
    if (copy_queue_is_open(d)) return copy_queue_refuse(d, who, "creates a tensor there");
    tensor *t = calloc(1, sizeof *t);
    if (!t) return fail(STATUS_OUT_OF_MEMORY, "%s: no host memory left for a tensor's header", who);
    t->dev = d;
    t->type = type;
    t->shp = s;
    for (int i = s.ndim; i < TENSOR_MAX_DIMS; ++i) t->shp.dims[i] = 0;
    t->numel = shape_numel(s);
    t->bytes = (size_t)t->numel * dtype_size(type);
    t->refs = 1;
    st = acquire_memory(d, t->bytes, &t->data);
    if (st != STATUS_OK) {
        free(t);
        return st;
    }
    *out = t;
    return STATUS_OK;
}

status tensor_empty(tensor **out, device d, dtype type, shape s)
{
    return tensor_create(out, d, type, s, "tensor_empty");
}

/* A new tensor with every element `value`, filled by its device. */
static status full(tensor **out, device d, shape s, float value, const char *who)
{
    status st = tensor_create(out, d, DTYPE_F32, s, who);
    if (st == STATUS_OK) {
        const op_call fill = {
            .kind = OP_FILL, .n = (*out)->numel, .out = (float *)(*out)->data, .alpha = value
        };
        st = launch_op(*out, &fill);
    }
    if (st != STATUS_OK && out && *out) {
        tensor_free(*out);
        *out = NULL;
    }
    return st;
}

status tensor_full(tensor **out, device d, shape s, float value)
{
    return full(out, d, s, value, "tensor_full");
}

status tensor_zeros(tensor **out, device d, shape s) { return full(out, d, s, 0.0f, "tensor_zeros"); }

status tensor_ones(tensor **out, device d, shape s) { return full(out, d, s, 1.0f, "tensor_ones"); }

void tensor_free(tensor *t)
{
    if (!t || --t->refs > 0) return;
    if (t->base)
        tensor_free(t->base);
    else
        return_memory(t->dev, t->data, t->bytes);
    free(t);
}

status tensor_reshape(tensor *t, shape s, tensor **out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "tensor_reshape: out is NULL");
    *out = NULL;
    if (!t) return fail(STATUS_BAD_ARGUMENT, "tensor_reshape: t is NULL");
    status st = check_shape(s, "tensor_reshape");
    if (st != STATUS_OK) return st;
    if (shape_numel(s) != t->numel) {
        char from[96], to[96];
        return fail(STATUS_BAD_ARGUMENT,
                    "tensor_reshape: cannot view %s (%" PRId64 " elements) as %s (%" PRId64 " elements); "
                    "the number of elements must stay the same",
                    shape_format(t->shp, from, sizeof from), t->numel, shape_format(s, to, sizeof to),
                    shape_numel(s));
    }
    tensor *view = malloc(sizeof *view);
    if (!view) return fail(STATUS_OUT_OF_MEMORY, "tensor_reshape: no host memory left for a tensor's header");
    *view = *t;
    view->shp = s;
    for (int i = s.ndim; i < TENSOR_MAX_DIMS; ++i) view->shp.dims[i] = 0;
    view->refs = 1;
    view->base = t->base ? t->base : t;
    view->base->refs++;
    *out = view;
    return STATUS_OK;
}

/* ---- questions ------------------------------------------------------------- */

device tensor_device(const tensor *t) { return t ? t->dev : device_cpu(); }
dtype tensor_dtype(const tensor *t) { return t ? t->type : DTYPE_F32; }
shape tensor_shape(const tensor *t) { return t ? t->shp : (shape){ 0, { 0, 0, 0, 0 } }; }
int64_t tensor_numel(const tensor *t) { return t ? t->numel : 0; }
size_t tensor_bytes(const tensor *t) { return t ? t->bytes : 0; }

int64_t tensor_dim(const tensor *t, int i) { return t && i >= 0 && i < t->shp.ndim ? t->shp.dims[i] : 0; }

const char *describe(const tensor *t, char *buf, size_t size)
{
    char dims[96];
    snprintf(buf, size, "%s%s on %s", dtype_name(t->type), shape_format(t->shp, dims, sizeof dims),
             device_name(t->dev));
    return buf;
}

const char *tensor_describe(const tensor *t, char *buf, size_t size)
{
    if (!buf || size == 0) return "";
    if (!t) {
        snprintf(buf, size, "(null tensor)");
        return buf;
    }
    return describe(t, buf, size);
}

/* ---- host buffers ---------------------------------------------------------- */

void *host_alloc(size_t bytes, int pinned)
{
#ifdef LABKIT_WITH_CUDA
    /* Page-locked memory only helps a real GPU's DMA engine. */
    if (pinned && try_gpu(0).kind == DEVICE_CUDA) {
        void *p = cuda_host_alloc_pinned(bytes);
        if (p) return p;
    }
#else
    (void)pinned;
#endif
    return guarded_alloc(bytes); /* an index past the end stops at its line */
}

void host_free(void *p, int pinned)
{
    if (!p) return;
#ifdef LABKIT_WITH_CUDA
    if (pinned && cuda_host_free_pinned(p)) return;
#else
    (void)pinned;
#endif
    guarded_free(p);
}
