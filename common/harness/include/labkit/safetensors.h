/* safetensors.h: a network's parameters saved to a file from any device, and
 * loaded onto any device, in the safetensors format that PyTorch, NumPy and
 * Hugging Face read (the lesson's exercise: "how should we read and write model
 * parameters on the GPU?").
 *
 * The file is an 8-byte little-endian length N, N bytes of JSON that say where
 * each tensor is, then the tensors' raw little-endian bytes, one after the
 * other:
 *
 *   {"__metadata__": {"epochs": "5"},
 *    "layers.0.weight": {"dtype": "F32", "shape": [784, 256], "data_offsets": [0, 802816]}, ...}
 *
 * Saving copies each tensor to the host once (one device-to-host copy per
 * tensor on a GPU, counted as always, counters.h) and writes the file under a
 * temporary name beside its destination, renamed into place only when whole.
 * Loading copies each tensor from the host once (one host-to-device copy on a
 * GPU), so parameters saved on one device load bit for bit on any other.
 *
 *   safetensors_entry params[] = { { "layers.0.weight", W1 }, { "layers.0.bias", b1 } };
 *   CHECK(safetensors_save("mlp.safetensors", params, 2, "{\"epochs\": \"5\"}"));
 *
 *   safetensors_file *f;
 *   CHECK(safetensors_open(&f, "mlp.safetensors"));       // reads and checks the header only
 *   CHECK(safetensors_load_into(f, "layers.0.weight", W1)); // into a tensor of the same shape
 *   tensor *b;
 *   CHECK(safetensors_load(f, "layers.0.bias", try_gpu(0), &b)); // or as a new tensor
 *   safetensors_close(f);
 *
 * safetensors_open checks the whole header before it reads a byte of data: the
 * file is a regular file (a FIFO is refused at once, never waited on), the
 * header fits in the file, its JSON parses, every tensor has a dtype the kit
 * knows, a shape of 1 to 4 positive dimensions and data_offsets whose length
 * matches dtype and shape, the tensors cover the data section exactly with no
 * gap and no overlap (as the format requires), no name appears twice, and
 * "__metadata__" maps strings to strings. Anything else is an error that names
 * the file and what is wrong in it.
 *
 * Dtypes: F32 (float32) and I32 (int32), the kit's. */
#ifndef LABKIT_SAFETENSORS_H
#define LABKIT_SAFETENSORS_H

#include <stdint.h>

#include "labkit/device.h"
#include "labkit/status.h"
#include "labkit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One tensor to save, under its name in the file ("layers.0.weight"). */
typedef struct safetensors_entry {
    const char *name;
    const tensor *t;
} safetensors_entry;

/* Writes `count` tensors, from any devices, to `path`, in the order given, and
 * replaces what was there (a regular file only: a directory, a device, a FIFO
 * or a symbolic link at `path` is refused). Names must be unique, not empty
 * and not "__metadata__". `metadata_json` is NULL or a JSON object whose values
 * are strings ("{\"lr\": \"0.05\"}"), stored as the file's "__metadata__".
 * On failure nothing is left behind and an existing file is untouched. */
status safetensors_save(const char *path, const safetensors_entry *entries, int count,
                        const char *metadata_json);

/* An opened file whose header has been read and checked. */
typedef struct safetensors_file safetensors_file;

/* What the header says of one tensor. `name` stays valid until the file is
 * closed. */
typedef struct safetensors_info {
    const char *name;
    dtype type;
    shape shp;
    int64_t numel;
    uint64_t bytes;  /* numel x the dtype's size */
    uint64_t offset; /* where its bytes begin in the file */
} safetensors_info;

/* Opens `path`, reads its header (and nothing more) and checks it. */
status safetensors_open(safetensors_file **out, const char *path);

/* How many tensors the file holds. */
int safetensors_count(const safetensors_file *f);

/* Tensor `index` (0 to count - 1) in the order of the header. */
status safetensors_info_at(const safetensors_file *f, int index, safetensors_info *out);

/* The tensor called `name`; an error naming the file and a few of the names
 * it holds when there is none. */
status safetensors_find(const safetensors_file *f, const char *name, safetensors_info *out);

/* The metadata value of `key`, or NULL when the file has none. Valid until the
 * file is closed. */
const char *safetensors_metadata(const safetensors_file *f, const char *key);

/* Reads tensor `name` and copies it into `t`, whose dtype and shape must be the
 * file's (a mismatch names both): one copy from the host, after the work queued
 * on t's device, as tensor_copy_from_host. */
status safetensors_load_into(safetensors_file *f, const char *name, tensor *t);

/* Reads tensor `name` into a new tensor on device `d` (NULL in *out on failure). */
status safetensors_load(safetensors_file *f, const char *name, device d, tensor **out);

/* Bytes read from the file so far: the header's 8 + N after opening, then the
 * bytes of each tensor loaded. */
uint64_t safetensors_bytes_read(const safetensors_file *f);

/* Closes the file (NULL is fine). */
void safetensors_close(safetensors_file *f);

#ifdef __cplusplus
}
#endif
#endif
