/* tensor_internal.h: the tensor struct, for the library's own files. */
#ifndef LABKIT_TENSOR_INTERNAL_H
#define LABKIT_TENSOR_INTERNAL_H

#include "labkit/tensor.h"

struct tensor {
    device dev;
    dtype type;
    shape shp;
    int64_t numel;
    size_t bytes;
    void *data; /* device memory (host memory for the CPU) */
    int refs;
    struct tensor *base; /* a reshape's owner, which holds the memory; else NULL */
};

/* A tensor whose memory is uninitialised; the caller fills it. */
status tensor_create(tensor **out, device d, dtype type, shape s, const char *who);

/* "f32[37, 53] on sim:0" */
const char *describe(const tensor *t, char *buf, size_t size);

#endif
