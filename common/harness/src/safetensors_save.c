/* safetensors_save.c: writing tensors from any device into one safetensors
 * file, whole or not at all.
 *
 * Everything that can be checked is checked before the first byte is written:
 * the names, the tensors, the metadata, and what is at the destination. The
 * header is built and printed by cJSON (which escapes the names), padded with
 * spaces to a multiple of 8 bytes as the format's own writer does, so that the
 * data begins 8-aligned. Each tensor is then copied to the host once and
 * written after the previous one. The bytes go to "<path>.tmp.<pid>" beside the
 * destination, are flushed to the disk, and the file is renamed into place: a
 * rename within a directory is atomic, so a reader sees the old file or the new
 * one, never half of one, even if the program dies halfway. */
#define _POSIX_C_SOURCE 200809L /* open flags, lstat, fsync, getpid: POSIX, not C17 */

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

static const char *const who = "safetensors_save";

/* ---- checking before writing ------------------------------------------------------ */

static status check_entry(const safetensors_entry *e, int i, const char *path)
{
    char what[128], known[64];
    if (!e->name || !e->name[0])
        return fail(STATUS_BAD_ARGUMENT, "%s: %s: entry %d has %s name; give each tensor a name", who, path,
                    i, e->name ? "an empty" : "a NULL");
    if (strcmp(e->name, SAFETENSORS_METADATA_KEY) == 0)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: %s: entry %d is named \"%s\", the format's name for the metadata; "
                    "choose another name",
                    who, path, i, SAFETENSORS_METADATA_KEY);
    if (!e->t)
        return fail(STATUS_BAD_ARGUMENT, "%s: %s: the tensor of entry %d (\"%.80s\") is NULL", who, path, i,
                    e->name);
    if (!safetensors_utf8_valid(e->name, strlen(e->name)))
        return fail(
            STATUS_BAD_ARGUMENT,
            "%s: %s: the name of entry %d is not valid UTF-8, which the format requires; use ASCII names "
            "such as \"layers.0.weight\"",
            who, path, i);
    if (!safetensors_dtype_of(tensor_dtype(e->t)))
        return fail(STATUS_BAD_ARGUMENT, "%s: %s: tensor \"%.80s\" is %s; the kit saves only %s tensors", who,
                    path, e->name, tensor_describe(e->t, what, sizeof what),
                    safetensors_dtype_list(known, sizeof known));
    return STATUS_OK;
}

static status check_entries(const safetensors_entry *entries, int count, const char *path)
{
    if (count < 0)
        return fail(STATUS_BAD_ARGUMENT, "%s: %s: count is %d; give the number of entries (0 or more)", who,
                    path, count);
    if (!entries && count > 0)
        return fail(STATUS_BAD_ARGUMENT, "%s: %s: entries is NULL but count is %d; pass the array of entries",
                    who, path, count);
    const char **names = malloc(sizeof *names * (size_t)(count > 0 ? count : 1));
    if (!names) return fail(STATUS_OUT_OF_MEMORY, "%s: %s: out of host memory", who, path);
    status s = STATUS_OK;
    for (int i = 0; i < count && s == STATUS_OK; ++i) {
        s = check_entry(&entries[i], i, path);
        names[i] = entries[i].name;
    }
    const char *twice = s == STATUS_OK ? safetensors_first_duplicate(names, count) : NULL;
    if (twice)
        s = fail(STATUS_BAD_ARGUMENT,
                 "%s: %s: the name \"%.80s\" is given to two tensors; names must be unique", who, path,
                 twice);
    free(names);
    return s;
}

/* The metadata as a cJSON object (NULL in *out when there is none). */
static status parse_metadata(const char *text, const char *path, cJSON **out)
{
    *out = NULL;
    if (!text) return STATUS_OK;
    const char *end = NULL;
    cJSON *metadata = cJSON_ParseWithOpts(text, &end, 1); /* 1: nothing may follow the object */
    if (!metadata)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: %s: metadata_json is not valid JSON: %.80s; give an object of strings like "
                    "{\"epochs\": \"5\"}, or NULL",
                    who, path, text);
    status s = safetensors_utf8_valid(text, strlen(text))
                   ? safetensors_check_metadata(metadata, STATUS_BAD_ARGUMENT, who, path)
                   : fail(STATUS_BAD_ARGUMENT,
                          "%s: %s: metadata_json is not valid UTF-8, which the format requires", who, path);
    if (s != STATUS_OK) {
        cJSON_Delete(metadata);
        return s;
    }
    *out = metadata;
    return STATUS_OK;
}

/* The destination is absent or a regular file: anything else is not ours to
 * replace (and rename would replace a symbolic link, not what it points to). */
static status check_destination(const char *path)
{
    struct stat info;
    if (lstat(path, &info) != 0) {
        if (errno == ENOENT) return STATUS_OK;
        return fail(STATUS_IO_FAILED, "%s: cannot look at %s: %s", who, path, strerror(errno));
    }
    if (!S_ISREG(info.st_mode))
        return fail(STATUS_IO_FAILED,
                    "%s: %s is %s; a file is written only where there is none or a regular file, which it "
                    "replaces. Choose another path",
                    who, path, file_kind(info.st_mode));
    return STATUS_OK;
}

/* ---- the header ----------------------------------------------------------------- */

static bool add_numbers(cJSON *array, const double *values, int n)
{
    for (int i = 0; i < n; ++i)
        if (!cJSON_AddItemToArray(array, cJSON_CreateNumber(values[i]))) return false;
    return true;
}

/* {"dtype": "F32", "shape": [3, 4], "data_offsets": [begin, end]} */
static cJSON *entry_json(const tensor *t, uint64_t begin)
{
    const shape s = tensor_shape(t);
    double dims[TENSOR_MAX_DIMS];
    for (int i = 0; i < s.ndim; ++i) dims[i] = (double)s.dims[i];
    const double offsets[2] = { (double)begin, (double)(begin + tensor_bytes(t)) };
    cJSON *e = cJSON_CreateObject(), *shape_array = NULL, *range = NULL;
    if (!e) return NULL;
    if (cJSON_AddStringToObject(e, "dtype", safetensors_dtype_of(tensor_dtype(t))->name))
        shape_array = cJSON_AddArrayToObject(e, "shape");
    if (shape_array && add_numbers(shape_array, dims, s.ndim))
        range = cJSON_AddArrayToObject(e, "data_offsets");
    if (range && add_numbers(range, offsets, 2)) return e;
    cJSON_Delete(e);
    return NULL;
}

/* The header's text, unpadded: the metadata first, then the tensors in order,
 * their data back to back from offset 0. Takes `metadata` over. */
static char *header_text(const safetensors_entry *entries, int count, cJSON *metadata)
{
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL;
    if (ok && metadata) ok = cJSON_AddItemToObject(root, SAFETENSORS_METADATA_KEY, metadata);
    if (!ok) cJSON_Delete(metadata);
    uint64_t at = 0;
    for (int i = 0; ok && i < count; ++i) {
        cJSON *e = entry_json(entries[i].t, at);
        ok = e && cJSON_AddItemToObject(root, entries[i].name, e);
        if (!ok) cJSON_Delete(e);
        at += tensor_bytes(entries[i].t);
    }
    char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return text;
}

/* ---- writing ----------------------------------------------------------------------- */

/* A file being written under a temporary name beside its destination. */
typedef struct output {
    const char *path;
    char temp[4096];
    int fd;
} output;

/* "<path>.tmp.<pid>", or ".<n>" after it when that name is taken (another
 * thread of this program saving to the same path): created, never reused. */
static status create_temp(output *o)
{
    for (int attempt = 0; attempt < 100; ++attempt) {
        const int n =
            attempt ? snprintf(o->temp, sizeof o->temp, "%s.tmp.%ld.%d", o->path, (long)getpid(), attempt)
                    : snprintf(o->temp, sizeof o->temp, "%s.tmp.%ld", o->path, (long)getpid());
        if (n < 0 || (size_t)n >= sizeof o->temp)
            return fail(STATUS_BAD_ARGUMENT, "%s: the path %.200s... is too long", who, o->path);
        o->fd = open(o->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o->fd >= 0) return STATUS_OK;
        if (errno != EEXIST) break;
    }
    return fail(STATUS_IO_FAILED,
                "%s: cannot create %s (for %s): %s; does its directory exist, and can you write there?", who,
                o->temp, o->path, strerror(errno));
}

static status write_all(output *o, const void *bytes, uint64_t n)
{
    const char *p = bytes;
    while (n > 0) {
        const ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return fail(STATUS_IO_FAILED, "%s: cannot write %s: %s (is the disk full?)", who, o->temp,
                        w < 0 ? strerror(errno) : "nothing was written");
        p += w;
        n -= (uint64_t)w;
    }
    return STATUS_OK;
}

/* The 8-byte little-endian length, the header, and spaces up to a multiple of 8. */
static status write_header(output *o, const char *text)
{
    const uint64_t length = strlen(text), padded = (length + 7) / 8 * 8;
    unsigned char size[8];
    for (int i = 0; i < 8; ++i) size[i] = (unsigned char)(padded >> (8 * i));
    const char spaces[8] = "        ";
    TRY(write_all(o, size, 8));
    TRY(write_all(o, text, length));
    TRY(write_all(o, spaces, padded - length));
    return STATUS_OK;
}

/* Each tensor to the host once, then to the file, through one buffer as large
 * as the largest. */
static status write_data(output *o, const safetensors_entry *entries, int count)
{
    size_t largest = 0;
    for (int i = 0; i < count; ++i)
        if (tensor_bytes(entries[i].t) > largest) largest = tensor_bytes(entries[i].t);
    void *host = malloc(largest ? largest : 1);
    if (!host)
        return fail(STATUS_OUT_OF_MEMORY, "%s: %s: no host memory for %zu bytes", who, o->path, largest);
    status s = STATUS_OK;
    for (int i = 0; i < count && s == STATUS_OK; ++i) {
        const tensor *t = entries[i].t;
        s = safetensors_dtype_of(tensor_dtype(t))->to_host(t, host, tensor_numel(t));
        if (s != STATUS_OK) {
            char why[512]; /* fail() below writes where last_error() points */
            snprintf(why, sizeof why, "%s", last_error());
            s = fail(s, "%s: %s: tensor \"%.80s\" could not be copied to the host: %s", who, o->path,
                     entries[i].name, why);
        }
        if (s == STATUS_OK) s = write_all(o, host, tensor_bytes(t));
    }
    free(host);
    return s;
}

/* Flushed to the disk, closed, renamed into place; on failure, removed. */
static status finish(output *o, status s)
{
    if (s == STATUS_OK && fsync(o->fd) != 0)
        s = fail(STATUS_IO_FAILED, "%s: cannot flush %s to the disk: %s", who, o->temp, strerror(errno));
    if (close(o->fd) != 0 && s == STATUS_OK)
        s = fail(STATUS_IO_FAILED, "%s: cannot write %s: %s (is the disk full?)", who, o->temp,
                 strerror(errno));
    if (s == STATUS_OK && rename(o->temp, o->path) != 0)
        s = fail(STATUS_IO_FAILED, "%s: cannot rename %s to %s: %s", who, o->temp, o->path, strerror(errno));
    if (s != STATUS_OK) unlink(o->temp);
    return s;
}

status safetensors_save(const char *path, const safetensors_entry *entries, int count,
                        const char *metadata_json)
{
    if (!path || !path[0])
        return fail(STATUS_BAD_ARGUMENT, "%s: the path is %s; give a file name such as \"mlp.safetensors\"",
                    who, path ? "empty" : "NULL");
    cJSON *metadata = NULL;
    status s = check_entries(entries, count, path);
    if (s == STATUS_OK) s = parse_metadata(metadata_json, path, &metadata);
    if (s == STATUS_OK) s = check_destination(path);
    if (s != STATUS_OK) {
        cJSON_Delete(metadata);
        return s;
    }
    char *text = header_text(entries, count, metadata);
    if (!text) return fail(STATUS_OUT_OF_MEMORY, "%s: %s: out of host memory for the header", who, path);
    output o = { .path = path, .fd = -1 };
    s = create_temp(&o);
    if (s == STATUS_OK) {
        s = write_header(&o, text);
        if (s == STATUS_OK) s = write_data(&o, entries, count);
        s = finish(&o, s);
    }
    cJSON_free(text);
    return s;
}
