/* safetensors_dtype.h: the safetensors dtypes the kit reads and writes, each
 * with the kit's dtype, its size and the two host copies that move it. */
#ifndef LABKIT_SAFETENSORS_DTYPE_H
#define LABKIT_SAFETENSORS_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "labkit/tensor.h"

typedef struct safetensors_dtype {
    const char *name; /* the format's: "F32" */
    dtype type;       /* the kit's: DTYPE_F32 */
    size_t size;      /* bytes per element */
    /* The whole tensor to host memory, and back: one copy each way. */
    status (*to_host)(const tensor *t, void *dst, int64_t count);
    status (*from_host)(tensor *t, const void *src, int64_t count);
} safetensors_dtype;

/* The entry of a format name ("F32"), or NULL when the kit does not know it. */
const safetensors_dtype *safetensors_dtype_named(const char *name);

/* The entry of a kit dtype, or NULL when the format table lacks it. */
const safetensors_dtype *safetensors_dtype_of(dtype type);

/* "F32, I32": every name the kit knows, for messages, into buf; returns buf. */
const char *safetensors_dtype_list(char *buf, size_t size);

#endif
