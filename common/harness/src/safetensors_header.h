/* safetensors_header.h: the JSON header of a safetensors file, parsed by cJSON
 * and checked against the data section that follows it. No input or output:
 * safetensors.c reads the bytes, this file says whether they make sense. */
#ifndef LABKIT_SAFETENSORS_HEADER_H
#define LABKIT_SAFETENSORS_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labkit/status.h"
#include "labkit/tensor.h"
#include "safetensors_dtype.h"

struct cJSON;

/* The format's own limit on the header (the reference implementation's). */
#define SAFETENSORS_MAX_HEADER ((uint64_t)100000000)

/* The name of the metadata entry, which is not a tensor. */
#define SAFETENSORS_METADATA_KEY "__metadata__"

/* One tensor of the header. */
typedef struct safetensors_tensor {
    const char *name; /* a key of the parsed JSON */
    const safetensors_dtype *dtype;
    shape shp;
    int64_t numel;
    uint64_t begin, end; /* data_offsets: bytes [begin, end) of the data section */
} safetensors_tensor;

typedef struct safetensors_header {
    struct cJSON *json;
    const struct cJSON *metadata; /* the "__metadata__" object, or NULL */
    safetensors_tensor *tensors;  /* in the header's order */
    int count;
    const safetensors_tensor **by_name; /* sorted by name, for lookups */
} safetensors_header;

/* Parses `text`, the `length` bytes of the header of `path` (followed by a NUL
 * that is not part of it), and checks every tensor against `data_bytes`, the
 * size of the data section. STATUS_IO_FAILED names the file and what is wrong. */
status safetensors_header_parse(safetensors_header *out, const char *path, const char *text, size_t length,
                                uint64_t data_bytes);

/* The tensor called `name`, or NULL. */
const safetensors_tensor *safetensors_header_find(const safetensors_header *h, const char *name);

void safetensors_header_free(safetensors_header *h);

/* Checks that `metadata` is an object of strings with no key twice; `who` and
 * `path` begin the message. STATUS_BAD_ARGUMENT, or `bad` for a file. */
status safetensors_check_metadata(const struct cJSON *metadata, status bad, const char *who,
                                  const char *path);

/* Whether `length` bytes of text are valid UTF-8, which the format requires of
 * its header (so of every name and metadata string). */
bool safetensors_utf8_valid(const char *text, size_t length);

/* Sorts `names` (n of them) and returns the first that appears twice, or NULL. */
const char *safetensors_first_duplicate(const char **names, int n);

#endif
