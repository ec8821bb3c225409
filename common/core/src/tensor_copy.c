/* tensor_copy.c: every way data crosses between the host and devices, each one
 * checked (shapes, dtypes, devices) and counted. While a device captures a graph,
 * the copies it can replay (within the device, queued uploads) are recorded and
 * the blocking ones refused. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "capture.h"
#include "queues.h"
#include "tensor_internal.h"

static void count_copy(uint64_t *copies, uint64_t *bytes, size_t n)
{
    ++*copies;
    *bytes += n;
}

/* A queued upload, recorded in the graph that t's device captures: every launch
 * reads src again. A blocking one cannot be recorded. */
static status record_upload(tensor *t, const void *src, bool queued, const char *who)
{
    if (!queued)
        return capture_refuse(t->dev, who, "copies from the host and waits for the device",
                              "record a queued upload instead (tensor_copy_from_host_async, from pinned "
                              "memory that stays valid for every launch)");
    const graph_cmd cmd = { .kind = GRAPH_CMD_UPLOAD, .dst = t->data, .src = src, .bytes = t->bytes };
    return capture_record(t->dev, &cmd, who);
}

/* Host memory -> tensor: waits for the queues as cudaMemcpy does, or (queued)
 * takes its place in the queue the host queues on now and returns at once. */
static status upload(tensor *t, const void *src, bool queued, const char *who)
{
    if (capturing(t->dev)) return record_upload(t, src, queued, who);
    const backend_queue queue = queue_now(t->dev);
    if (!queued && queue == QUEUE_COPIES)
        return copy_queue_refuse(t->dev, who,
                                 "copies from the host and waits for the device (a blocking copy)");
    device_counters *c = counters_of(t->dev);
    if (device_is_gpu(t->dev)) {
        count_copy(&c->h2d_copies, &c->h2d_bytes, t->bytes);
        if (!queued) c->syncs++; /* a blocking upload first waits for the queue to drain */
    } else {
        count_copy(&c->d2d_copies, &c->d2d_bytes, t->bytes);
    }
    if (queue == QUEUE_COPIES) c->copy_queue_copies++;
    const backend *b = backend_of(t->dev);
    if (queued) return b->upload_async(t->dev.index, queue, t->data, src, t->bytes);
    return b->upload(t->dev.index, t->data, src, t->bytes);
}

/* Tensor -> host memory: waits for the device's queue. */
static status download(const tensor *t, void *dst, const char *who)
{
    if (capturing(t->dev))
        return capture_refuse(t->dev, who,
                              "reads the device's memory on the host, which waits for the device",
                              "read the results after graph_launch");
    if (copy_queue_is_open(t->dev))
        return copy_queue_refuse(t->dev, who,
                                 "reads the device's memory on the host, which waits for the device");
    device_counters *c = counters_of(t->dev);
    if (device_is_gpu(t->dev)) {
        count_copy(&c->d2h_copies, &c->d2h_bytes, t->bytes);
        c->syncs++;
    } else {
        count_copy(&c->d2d_copies, &c->d2d_bytes, t->bytes);
    }
    return backend_of(t->dev)->download(t->dev.index, dst, t->data, t->bytes);
}

static status from_host(tensor **out, device d, dtype type, shape s, const void *data, const char *who)
{
    if (out) *out = NULL;
    if (!data && out && shape_numel(s) > 0)
        return fail(STATUS_BAD_ARGUMENT, "%s: data is NULL; pass the host values to copy", who);
    status st = tensor_create(out, d, type, s, who);
    if (st != STATUS_OK) return st;
    st = upload(*out, data, false, who);
    if (st != STATUS_OK) {
        tensor_free(*out);
        *out = NULL;
    }
    return st;
}

status tensor_from_host(tensor **out, device d, shape s, const float *data)
{
    return from_host(out, d, DTYPE_F32, s, data, "tensor_from_host");
}

status tensor_from_host_i32(tensor **out, device d, shape s, const int32_t *data)
{
    return from_host(out, d, DTYPE_I32, s, data, "tensor_from_host_i32");
}

/* The call that reads or writes a tensor of this dtype on the host, for the
 * hint of a refusal. C has no 16-bit float type: their bits travel raw. */
static const char *host_call_for(dtype type, bool reading)
{
    switch (type) {
    case DTYPE_F32: return reading ? "tensor_to_host" : "the float variant";
    case DTYPE_I32: return reading ? "tensor_to_host_i32" : "the _i32 variant";
    default:
        return reading
                   ? "tensor_to_host_raw (its 16-bit values as they are), or tensor_convert it to f32 first"
                   : "tensor_from_host_raw for 16-bit values, or tensor_convert from an f32 tensor";
    }
}

static status to_host(const tensor *t, void *dst, int64_t count, dtype type, const char *who)
{
    char what[128];
    if (!t) return fail(STATUS_BAD_ARGUMENT, "%s: t is NULL", who);
    if (!dst)
        return fail(STATUS_BAD_ARGUMENT, "%s: dst is NULL; pass a host buffer of %" PRId64 " elements", who,
                    t->numel);
    if (t->type != type)
        return fail(STATUS_BAD_ARGUMENT, "%s: the tensor is %s; use %s", who, describe(t, what, sizeof what),
                    host_call_for(t->type, true));
    if (count < t->numel)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: the tensor %s has %" PRId64 " elements but dst holds only %" PRId64
                    "; pass a larger buffer",
                    who, describe(t, what, sizeof what), t->numel, count);
    return download(t, dst, who);
}

status tensor_to_host(const tensor *t, float *dst, int64_t count)
{
    return to_host(t, dst, count, DTYPE_F32, "tensor_to_host");
}

status tensor_to_host_i32(const tensor *t, int32_t *dst, int64_t count)
{
    return to_host(t, dst, count, DTYPE_I32, "tensor_to_host_i32");
}

static status from_host_into(tensor *t, const void *src, int64_t count, dtype type, bool queued,
                             const char *who)
{
    char what[128];
    if (!t) return fail(STATUS_BAD_ARGUMENT, "%s: t is NULL", who);
    if (!src)
        return fail(STATUS_BAD_ARGUMENT, "%s: src is NULL; pass %" PRId64 " host values", who, t->numel);
    if (t->type != type)
        return fail(STATUS_BAD_ARGUMENT, "%s: the tensor is %s; use %s", who, describe(t, what, sizeof what),
                    host_call_for(t->type, false));
    if (count != t->numel)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: the tensor %s has %" PRId64 " elements but %" PRId64
                    " values were given; they must match",
                    who, describe(t, what, sizeof what), t->numel, count);
    return upload(t, src, queued, who);
}

status tensor_copy_from_host(tensor *t, const float *src, int64_t count)
{
    return from_host_into(t, src, count, DTYPE_F32, false, "tensor_copy_from_host");
}

status tensor_copy_from_host_i32(tensor *t, const int32_t *src, int64_t count)
{
    return from_host_into(t, src, count, DTYPE_I32, false, "tensor_copy_from_host_i32");
}

status tensor_copy_from_host_async(tensor *t, const float *src, int64_t count)
{
    return from_host_into(t, src, count, DTYPE_F32, true, "tensor_copy_from_host_async");
}

status tensor_copy_from_host_async_i32(tensor *t, const int32_t *src, int64_t count)
{
    return from_host_into(t, src, count, DTYPE_I32, true, "tensor_copy_from_host_async_i32");
}

/* ---- raw bytes: any dtype, 16-bit floats above all ---------------------------- */

static status require_bytes(const tensor *t, size_t bytes, const char *who)
{
    if (bytes == t->bytes) return STATUS_OK;
    char what[128];
    return fail(STATUS_BAD_ARGUMENT,
                "%s: the tensor %s holds %zu bytes (%" PRId64 " elements of %zu bytes) but %zu were given; "
                "they must match (tensor_bytes)",
                who, describe(t, what, sizeof what), t->bytes, t->numel, dtype_size(t->type), bytes);
}

status tensor_from_host_raw(tensor **out, device d, dtype type, shape s, const void *data, size_t bytes)
{
    const char *who = "tensor_from_host_raw";
    if (!out) return fail(STATUS_BAD_ARGUMENT, "%s: out is NULL; pass the address of a tensor pointer", who);
    *out = NULL;
    if (!data) return fail(STATUS_BAD_ARGUMENT, "%s: data is NULL; pass the host bytes to copy", who);
    tensor *t = NULL;
    status st = tensor_create(&t, d, type, s, who);
    if (st == STATUS_OK) st = require_bytes(t, bytes, who);
    if (st == STATUS_OK) st = upload(t, data, false, who);
    if (st != STATUS_OK) {
        tensor_free(t);
        return st;
    }
    *out = t;
    return STATUS_OK;
}

status tensor_to_host_raw(const tensor *t, void *dst, size_t bytes)
{
    const char *who = "tensor_to_host_raw";
    if (!t) return fail(STATUS_BAD_ARGUMENT, "%s: t is NULL", who);
    if (!dst)
        return fail(STATUS_BAD_ARGUMENT, "%s: dst is NULL; pass a host buffer of tensor_bytes(t) = %zu bytes",
                    who, t->bytes);
    status st = require_bytes(t, bytes, who);
    return st == STATUS_OK ? download(t, dst, who) : st;
}

status tensor_item(const tensor *t, float *value)
{
    char what[128];
    if (!t || !value) return fail(STATUS_BAD_ARGUMENT, "tensor_item: t and value must not be NULL");
    if (t->numel != 1 || t->type != DTYPE_F32)
        return fail(STATUS_BAD_ARGUMENT,
                    "tensor_item: %s is not a one-element float tensor; "
                    "use tensor_to_host for more values",
                    describe(t, what, sizeof what));
    return download(t, value, "tensor_item");
}

/* A real and a simulated GPU: the simulated one's memory is host memory, so
 * the real one copies into it or out of it as it would with any host buffer,
 * once the simulated GPU's queue has drained (work queued there may still use
 * that memory). Blocking, like a copy between two GPUs of one kind. */
static status copy_across_backends(tensor *dst, const tensor *src)
{
    const backend *to = backend_of(dst->dev), *from = backend_of(src->dev);
    if (from->host_memory) {
        status s = from->synchronize(src->dev.index);
        return s == STATUS_OK ? to->upload(dst->dev.index, dst->data, src->data, src->bytes) : s;
    }
    status s = to->synchronize(dst->dev.index);
    return s == STATUS_OK ? from->download(src->dev.index, dst->data, src->data, src->bytes) : s;
}

/* A copy within one device, queued there: recorded while it captures a graph. */
static status copy_within(device d, void *dst, const void *src, size_t bytes, const char *who)
{
    if (capturing(d)) {
        const graph_cmd cmd = { .kind = GRAPH_CMD_COPY, .dst = dst, .src = src, .bytes = bytes };
        return capture_record(d, &cmd, who);
    }
    if (copy_queue_is_open(d))
        return copy_queue_refuse(d, who, "copies within the device, on its compute queue");
    device_counters *c = counters_of(d);
    count_copy(&c->d2d_copies, &c->d2d_bytes, bytes);
    return backend_of(d)->copy_within(d.index, dst, src, bytes);
}

/* A copy between two devices waits for both: no graph can hold it. */
static status refuse_across_captures(device a, device b, const char *who)
{
    return capture_refuse(capturing(a) ? a : b, who, "copies between two devices and waits for both",
                          "copy within the device, or between devices before or after the capture");
}

/* Between two tensors: on one device a queued copy, across devices a blocking one. */
static status copy_between(tensor *dst, const tensor *src, const char *who)
{
    if (device_equal(dst->dev, src->dev)) return copy_within(dst->dev, dst->data, src->data, src->bytes, who);
    if (capturing(dst->dev) || capturing(src->dev)) return refuse_across_captures(dst->dev, src->dev, who);
    if (copy_queue_is_open(dst->dev) || copy_queue_is_open(src->dev))
        return copy_queue_refuse(copy_queue_is_open(dst->dev) ? dst->dev : src->dev, who,
                                 "copies between two devices and waits for both");
    const backend *to = backend_of(dst->dev);
    device_counters *cd = counters_of(dst->dev), *cs = counters_of(src->dev);
    if (!device_is_gpu(src->dev)) return upload(dst, src->data, false, who);
    if (!device_is_gpu(dst->dev)) return download(src, dst->data, who);
    count_copy(&cd->d2d_copies, &cd->d2d_bytes, src->bytes);
    count_copy(&cs->d2d_copies, &cs->d2d_bytes, src->bytes);
    const backend *from = backend_of(src->dev);
    if (to == from) return to->copy_peer(dst->dev.index, dst->data, src->dev.index, src->data, src->bytes);
    return copy_across_backends(dst, src);
}

status tensor_copy(tensor *dst, const tensor *src)
{
    char a[128], b[128];
    if (!dst || !src) return fail(STATUS_BAD_ARGUMENT, "tensor_copy: dst and src must not be NULL");
    if (dst->type != src->type || dst->numel != src->numel || dst->shp.ndim != src->shp.ndim ||
        memcmp(dst->shp.dims, src->shp.dims, sizeof dst->shp.dims) != 0)
        return fail(STATUS_BAD_ARGUMENT,
                    "tensor_copy: dst is %s but src is %s; shapes and dtypes must match "
                    "(tensor_reshape views the same data in another shape)",
                    describe(dst, a, sizeof a), describe(src, b, sizeof b));
    if (dst->data == src->data) return STATUS_OK;
    return copy_between(dst, src, "tensor_copy");
}

status tensor_copy_slice(tensor *dst, int64_t dst_offset, const tensor *src, int64_t src_offset,
                         int64_t count)
{
    const char *op = "tensor_copy_slice";
    char a[128], b[128];
    if (!dst || !src) return fail(STATUS_BAD_ARGUMENT, "%s: dst and src must not be NULL", op);
    if (!device_equal(dst->dev, src->dev))
        return fail(STATUS_WRONG_DEVICE,
                    "%s: dst is on %s and src on %s; a slice is copied within one device.\n"
                    "  hint: move one with tensor_to first; nothing is copied implicitly.",
                    op, device_name(dst->dev), device_name(src->dev));
    if (dst->type != src->type)
        return fail(STATUS_BAD_ARGUMENT, "%s: dst is %s but src is %s; the dtypes must match", op,
                    describe(dst, a, sizeof a), describe(src, b, sizeof b));
    if (count < 0 || dst_offset < 0 || src_offset < 0 || count > dst->numel - dst_offset ||
        count > src->numel - src_offset)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: %" PRId64 " elements from element %" PRId64 " of src (%s) to element %" PRId64
                    " of dst (%s) do not fit; offsets and count must be >= 0 and stay inside both tensors",
                    op, count, src_offset, describe(src, b, sizeof b), dst_offset,
                    describe(dst, a, sizeof a));
    if (count == 0) return STATUS_OK;
    const size_t width = dtype_size(dst->type);
    return copy_within(dst->dev, (char *)dst->data + (size_t)dst_offset * width,
                       (const char *)src->data + (size_t)src_offset * width, (size_t)count * width, op);
}

status tensor_to(tensor *t, device d, tensor **out)
{
    if (!out)
        return fail(STATUS_BAD_ARGUMENT, "tensor_to: out is NULL; pass the address of a tensor pointer");
    *out = NULL;
    if (!t) return fail(STATUS_BAD_ARGUMENT, "tensor_to: t is NULL");
    status st = device_check(d);
    if (st != STATUS_OK) return st;
    if (device_equal(t->dev, d)) { /* already there: the same tensor, nothing copied */
        t->refs++;
        *out = t;
        return STATUS_OK;
    }
    st = tensor_create(out, d, t->type, t->shp, "tensor_to"); /* refused if d captures */
    if (st == STATUS_OK) st = copy_between(*out, t, "tensor_to");
    if (st != STATUS_OK) {
        tensor_free(*out);
        *out = NULL;
    }
    return st;
}
