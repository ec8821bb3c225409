/* safetensors_dtype.c: the table of dtypes. A new one (BF16, F16) is one line
 * here once the core can copy its raw bytes (tensor_to_host_raw and a raw copy
 * from the host into an existing tensor). */
#include "safetensors_dtype.h"

#include <stdio.h>
#include <string.h>

/* The format stores every value little-endian and the kit copies tensors
 * byte for byte: a big-endian host would need a swap on each copy. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors files are little-endian; this host is not, and the kit does not swap bytes"
#endif

static status f32_to_host(const tensor *t, void *dst, int64_t count) { return tensor_to_host(t, dst, count); }
static status f32_from_host(tensor *t, const void *src, int64_t count)
{
    return tensor_copy_from_host(t, src, count);
}
static status i32_to_host(const tensor *t, void *dst, int64_t count)
{
    return tensor_to_host_i32(t, dst, count);
}
static status i32_from_host(tensor *t, const void *src, int64_t count)
{
    return tensor_copy_from_host_i32(t, src, count);
}

static const safetensors_dtype dtypes[] = {
    { "F32", DTYPE_F32, 4, f32_to_host, f32_from_host },
    { "I32", DTYPE_I32, 4, i32_to_host, i32_from_host },
};

#define DTYPE_COUNT (sizeof dtypes / sizeof dtypes[0])

const safetensors_dtype *safetensors_dtype_named(const char *name)
{
    for (size_t i = 0; name && i < DTYPE_COUNT; ++i)
        if (strcmp(dtypes[i].name, name) == 0) return &dtypes[i];
    return NULL;
}

const safetensors_dtype *safetensors_dtype_of(dtype type)
{
    for (size_t i = 0; i < DTYPE_COUNT; ++i)
        if (dtypes[i].type == type) return &dtypes[i];
    return NULL;
}

const char *safetensors_dtype_list(char *buf, size_t size)
{
    size_t used = 0;
    if (!buf || size == 0) return "";
    buf[0] = '\0';
    for (size_t i = 0; i < DTYPE_COUNT && used < size; ++i)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", dtypes[i].name);
    return buf;
}
