/* tensor_convert.c: float32 to and from the 16-bit floats, a whole tensor at a
 * time. The front end only checks and describes; the backends convert (the
 * kernels of kernels/convert.cuh on a GPU, a loop on the CPU). */
#include <string.h>

#include "backend.h"
#include "launch.h"
#include "tensor_internal.h"

static bool is_16_bit_float(dtype type) { return type == DTYPE_BF16 || type == DTYPE_F16; }

/* f32 -> bf16/f16 and back; nothing else. */
static status require_supported_pair(const tensor *src, const tensor *dst, const char *who)
{
    const dtype from = src->type, to = dst->type;
    if ((from == DTYPE_F32 && is_16_bit_float(to)) || (is_16_bit_float(from) && to == DTYPE_F32))
        return STATUS_OK;
    char a[128], b[128];
    describe(src, a, sizeof a);
    describe(dst, b, sizeof b);
    const char *hint = from == to ? "they have one dtype already: tensor_copy copies"
                       : is_16_bit_float(from) && is_16_bit_float(to)
                           ? "go through f32: convert src to an f32 tensor, then that one to dst"
                           : "it converts f32 to bf16 or f16 and back; int32 tensors are not converted";
    return fail(STATUS_BAD_ARGUMENT, "%s: src is %s and dst is %s; %s", who, a, b, hint);
}

status tensor_convert(const tensor *src, tensor *dst)
{
    const char *who = "tensor_convert";
    char a[128], b[128];
    if (!src || !dst)
        return fail(STATUS_BAD_ARGUMENT, "%s: src and dst must not be NULL; create dst first (tensor_empty)",
                    who);
    if (!device_equal(src->dev, dst->dev))
        return fail(STATUS_WRONG_DEVICE,
                    "%s: src is on %s and dst on %s; a conversion happens on one device.\n"
                    "  hint: move one with tensor_to first; nothing is copied implicitly.",
                    who, device_name(src->dev), device_name(dst->dev));
    if (src->shp.ndim != dst->shp.ndim || memcmp(src->shp.dims, dst->shp.dims, sizeof src->shp.dims) != 0)
        return fail(STATUS_BAD_ARGUMENT, "%s: src is %s but dst is %s; the shapes must be equal", who,
                    describe(src, a, sizeof a), describe(dst, b, sizeof b));
    status s = require_supported_pair(src, dst, who);
    if (s != STATUS_OK) return s;
    op_call c;
    memset(&c, 0, sizeof c);
    c.kind = OP_CONVERT;
    c.n = src->numel;
    c.in_type = src->type, c.out_type = dst->type;
    if (src->type == DTYPE_F32) {
        c.a = (const float *)src->data;
        c.out16 = (uint16_t *)dst->data;
    } else {
        c.a16 = (const uint16_t *)src->data;
        c.out = (float *)dst->data;
    }
    return launch_op(dst, &c);
}
