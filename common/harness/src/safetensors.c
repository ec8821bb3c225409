/* safetensors.c: opening a safetensors file, checking its header before any
 * data, and loading its tensors onto any device.
 *
 * The file is opened with O_NONBLOCK, so that a FIFO left where a file should
 * be is refused at once rather than waited on forever, and fstat must say it
 * is a regular file. Every read is a pread of exactly the bytes wanted: the
 * 8-byte length, then the header it announces (at most the format's 100 MB and
 * never more than the file holds), then, on load, one tensor's bytes. So a
 * header that lies costs nothing to refuse, however large the file. */
#define _POSIX_C_SOURCE 200809L /* open flags, pread, fstat, strdup: POSIX, not C17 */

#include "labkit/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_kind.h"
#include "safetensors_header.h"

struct safetensors_file {
    char *path;
    int fd;
    uint64_t data_start; /* 8 + the header's length: where the data section begins */
    safetensors_header header;
    uint64_t bytes_read;
};

/* ---- reading bytes ------------------------------------------------------------- */

/* Reads exactly n bytes at offset; a file that ends first (it was cut while
 * open) or a failed read is an error naming the file. */
static status read_exact(safetensors_file *f, void *buf, uint64_t n, uint64_t offset, const char *who)
{
    uint64_t done = 0;
    while (done < n) {
        const ssize_t r = pread(f->fd, (char *)buf + done, (size_t)(n - done), (off_t)(offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return fail(STATUS_IO_FAILED, "%s: cannot read %s: %s", who, f->path, strerror(errno));
        if (r == 0)
            return fail(STATUS_IO_FAILED,
                        "%s: %s ended at byte %" PRIu64 " while %" PRIu64
                        " bytes were wanted there: it was cut short after it was opened",
                        who, f->path, offset + done, n);
        done += (uint64_t)r;
        f->bytes_read += (uint64_t)r;
    }
    return STATUS_OK;
}

/* ---- opening -------------------------------------------------------------------- */

static status open_regular(safetensors_file *f, uint64_t *size)
{
    struct stat info;
    f->fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (f->fd < 0)
        return fail(STATUS_IO_FAILED, "safetensors_open: cannot open %s: %s", f->path, strerror(errno));
    if (fstat(f->fd, &info) != 0)
        return fail(STATUS_IO_FAILED, "safetensors_open: cannot look at %s: %s", f->path, strerror(errno));
    if (!S_ISREG(info.st_mode))
        return fail(STATUS_IO_FAILED,
                    "safetensors_open: %s is %s, not a file; give the path of a .safetensors file", f->path,
                    file_kind(info.st_mode));
    *size = (uint64_t)info.st_size;
    return STATUS_OK;
}

static uint64_t little_endian_u64(const unsigned char bytes[8])
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | bytes[i];
    return v;
}

/* The 8-byte length, checked against the file before the header is read. */
static status read_header_length(safetensors_file *f, uint64_t size, uint64_t *length)
{
    unsigned char bytes[8];
    if (size < 8)
        return fail(STATUS_IO_FAILED,
                    "safetensors_open: %s holds %" PRIu64 " bytes; a safetensors file begins with an 8-byte "
                    "header length: it is empty, truncated, or not a safetensors file",
                    f->path, size);
    status s = read_exact(f, bytes, 8, 0, "safetensors_open");
    if (s != STATUS_OK) return s;
    *length = little_endian_u64(bytes);
    if (*length > SAFETENSORS_MAX_HEADER)
        return fail(STATUS_IO_FAILED,
                    "safetensors_open: %s: the header length is %" PRIu64
                    " bytes, above the format's limit of "
                    "%" PRIu64 ": not a safetensors file, or a damaged one",
                    f->path, *length, SAFETENSORS_MAX_HEADER);
    if (*length > size - 8)
        return fail(STATUS_IO_FAILED,
                    "safetensors_open: %s: the header length is %" PRIu64 " bytes but only %" PRIu64
                    " bytes follow it: the file is truncated, or not a safetensors file",
                    f->path, *length, size - 8);
    return STATUS_OK;
}

static status read_header(safetensors_file *f, uint64_t size)
{
    uint64_t length = 0;
    status s = read_header_length(f, size, &length);
    if (s != STATUS_OK) return s;
    char *text = malloc((size_t)length + 1);
    if (!text)
        return fail(STATUS_OUT_OF_MEMORY,
                    "safetensors_open: %s: no host memory for a header of %" PRIu64 " bytes", f->path,
                    length);
    s = read_exact(f, text, length, 8, "safetensors_open");
    if (s == STATUS_OK) {
        text[length] = '\0';
        f->data_start = 8 + length;
        s = safetensors_header_parse(&f->header, f->path, text, (size_t)length, size - f->data_start);
    }
    free(text);
    return s;
}

status safetensors_open(safetensors_file **out, const char *path)
{
    if (!out)
        return fail(STATUS_BAD_ARGUMENT,
                    "safetensors_open: out is NULL; pass the address of a safetensors_file *");
    *out = NULL;
    if (!path || !path[0])
        return fail(STATUS_BAD_ARGUMENT,
                    "safetensors_open: the path is %s; give a file such as \"mlp.safetensors\"",
                    path ? "empty" : "NULL");
    safetensors_file *f = calloc(1, sizeof *f);
    if (f) f->fd = -1;
    if (f) f->path = strdup(path);
    if (!f || !f->path) {
        free(f);
        return fail(STATUS_OUT_OF_MEMORY, "safetensors_open(%s): out of host memory", path);
    }
    uint64_t size = 0;
    status s = open_regular(f, &size);
    if (s == STATUS_OK) s = read_header(f, size);
    if (s != STATUS_OK) {
        safetensors_close(f);
        return s;
    }
    *out = f;
    return STATUS_OK;
}

void safetensors_close(safetensors_file *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    safetensors_header_free(&f->header);
    free(f->path);
    free(f);
}

/* ---- what the header says ------------------------------------------------------ */

static void describe_entry(const safetensors_file *f, const safetensors_tensor *t, safetensors_info *out)
{
    out->name = t->name;
    out->type = t->dtype->type;
    out->shp = t->shp;
    out->numel = t->numel;
    out->bytes = t->end - t->begin;
    out->offset = f->data_start + t->begin;
}

/* The error for a name the file lacks, with the first few names it has. */
static status no_such_tensor(const safetensors_file *f, const char *name, const char *who)
{
    char names[300] = "";
    size_t used = 0;
    const int shown = f->header.count < 5 ? f->header.count : 5;
    for (int i = 0; i < shown && used < sizeof names; ++i)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s\"%.40s\"", i ? ", " : "",
                                 f->header.tensors[i].name);
    return fail(STATUS_BAD_ARGUMENT, "%s: %s has no tensor \"%.80s\"; it holds %d: %s%s", who, f->path, name,
                f->header.count, f->header.count ? names : "none", f->header.count > shown ? ", ..." : "");
}

static status find_entry(const safetensors_file *f, const char *name, const char *who,
                         const safetensors_tensor **out)
{
    if (!f) return fail(STATUS_BAD_ARGUMENT, "%s: the file is NULL; open it with safetensors_open", who);
    if (!name) return fail(STATUS_BAD_ARGUMENT, "%s: the name is NULL (file %s)", who, f->path);
    *out = safetensors_header_find(&f->header, name);
    return *out ? STATUS_OK : no_such_tensor(f, name, who);
}

int safetensors_count(const safetensors_file *f) { return f ? f->header.count : 0; }

status safetensors_info_at(const safetensors_file *f, int index, safetensors_info *out)
{
    if (!f || !out)
        return fail(STATUS_BAD_ARGUMENT, "safetensors_info_at: the file and out must not be NULL");
    if (index < 0 || index >= f->header.count)
        return fail(STATUS_BAD_ARGUMENT,
                    "safetensors_info_at: index %d is outside 0 to %d, the tensors of %s", index,
                    f->header.count - 1, f->path);
    describe_entry(f, &f->header.tensors[index], out);
    return STATUS_OK;
}

status safetensors_find(const safetensors_file *f, const char *name, safetensors_info *out)
{
    const safetensors_tensor *t = NULL;
    if (!out)
        return fail(STATUS_BAD_ARGUMENT, "safetensors_find: out is NULL; pass a safetensors_info to fill");
    status s = find_entry(f, name, "safetensors_find", &t);
    if (s == STATUS_OK) describe_entry(f, t, out);
    return s;
}

const char *safetensors_metadata(const safetensors_file *f, const char *key)
{
    if (!f || !key || !f->header.metadata) return NULL;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(f->header.metadata, key);
    return item ? item->valuestring : NULL;
}

uint64_t safetensors_bytes_read(const safetensors_file *f) { return f ? f->bytes_read : 0; }

/* ---- loading ------------------------------------------------------------------------ */

/* The tensor's bytes into host memory, then one copy to t's device. */
static status load_bytes(safetensors_file *f, const safetensors_tensor *t, tensor *dst, const char *who)
{
    const uint64_t bytes = t->end - t->begin;
    void *host = malloc((size_t)bytes);
    if (!host)
        return fail(STATUS_OUT_OF_MEMORY,
                    "%s: no host memory for the %" PRIu64 " bytes of tensor \"%.80s\" of %s", who, bytes,
                    t->name, f->path);
    status s = read_exact(f, host, bytes, f->data_start + t->begin, who);
    if (s == STATUS_OK) s = t->dtype->from_host(dst, host, t->numel);
    free(host);
    return s;
}

static bool same_shape(shape a, shape b)
{
    if (a.ndim != b.ndim) return false;
    for (int i = 0; i < a.ndim; ++i)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

status safetensors_load_into(safetensors_file *f, const char *name, tensor *t)
{
    const char *who = "safetensors_load_into";
    const safetensors_tensor *entry = NULL;
    char dims[96], what[128];
    if (!t) return fail(STATUS_BAD_ARGUMENT, "%s: the tensor to load into is NULL", who);
    status s = find_entry(f, name, who, &entry);
    if (s != STATUS_OK) return s;
    if (tensor_dtype(t) != entry->dtype->type || !same_shape(tensor_shape(t), entry->shp))
        return fail(
            STATUS_BAD_ARGUMENT,
            "%s: tensor \"%.80s\" of %s is %s %s but the tensor to load it into is %s; dtype and shape "
            "must match (safetensors_load makes a tensor of the file's shape)",
            who, entry->name, f->path, entry->dtype->name, shape_format(entry->shp, dims, sizeof dims),
            tensor_describe(t, what, sizeof what));
    return load_bytes(f, entry, t, who);
}

status safetensors_load(safetensors_file *f, const char *name, device d, tensor **out)
{
    const char *who = "safetensors_load";
    const safetensors_tensor *entry = NULL;
    if (!out) return fail(STATUS_BAD_ARGUMENT, "%s: out is NULL; pass the address of a tensor pointer", who);
    *out = NULL;
    status s = find_entry(f, name, who, &entry);
    if (s == STATUS_OK) s = tensor_empty(out, d, entry->dtype->type, entry->shp);
    if (s == STATUS_OK) s = load_bytes(f, entry, *out, who);
    if (s != STATUS_OK) {
        tensor_free(*out);
        *out = NULL;
    }
    return s;
}
