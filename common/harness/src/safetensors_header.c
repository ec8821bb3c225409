/* safetensors_header.c: parsing a safetensors header with cJSON and checking
 * it before any data is read.
 *
 * The format (https://github.com/huggingface/safetensors) requires what the
 * reference implementation checks: a header that begins with '{' and is one
 * JSON object, maybe padded with spaces; for each tensor a dtype, a shape and
 * data_offsets [begin, end) relative to the data section, whose length is the
 * shape's element count times the dtype's size; and tensors that, in the
 * order of their offsets, cover the data section exactly, with no gap, no
 * overlap and nothing after the last one. The kit adds its own limits: dtypes
 * it can hold (safetensors_dtype.c), 1 to 4 dimensions of at least 1.
 *
 * cJSON keeps every key of an object, a repeated one too (most JSON readers
 * keep only the last): a name given twice is found here and refused, as a
 * file that says two things about one tensor cannot be trusted. */
#include "safetensors_header.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers in JSON are doubles for cJSON: exact up to 2^53. */
#define JSON_MAX_EXACT 9007199254740992.0
/* The kit's largest tensor (tensor.c), in elements. */
#define MAX_ELEMENTS ((uint64_t)1 << 40)

/* "safetensors_open: <path>: <what>": the message of every refusal. */
static status bad_header(const char *path, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static status bad_header(const char *path, const char *format, ...)
{
    char what[900];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    return fail(STATUS_IO_FAILED, "safetensors_open: %s: %s", path, what);
}

/* ---- names ------------------------------------------------------------------ */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *safetensors_first_duplicate(const char **names, int n)
{
    if (!names || n < 2) return NULL;
    qsort(names, (size_t)n, sizeof *names, compare_names);
    for (int i = 1; i < n; ++i)
        if (strcmp(names[i - 1], names[i]) == 0) return names[i];
    return NULL;
}

static int compare_tensor_names(const void *a, const void *b)
{
    const safetensors_tensor *x = *(const safetensors_tensor *const *)a;
    const safetensors_tensor *y = *(const safetensors_tensor *const *)b;
    return strcmp(x->name, y->name);
}

/* ---- text -------------------------------------------------------------------- */

/* The length of the UTF-8 sequence that starts with byte c (0: not a start). */
static int utf8_length(unsigned char c)
{
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) return 2;
    if (c >= 0xe0 && c <= 0xef) return 3;
    if (c >= 0xf0 && c <= 0xf4) return 4;
    return 0;
}

bool safetensors_utf8_valid(const char *text, size_t length)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + length;
    while (p < end) {
        const int n = utf8_length(*p);
        if (n == 0 || end - p < n) return false;
        for (int i = 1; i < n; ++i)
            if ((p[i] & 0xc0) != 0x80) return false;
        /* no overlong forms, no UTF-16 surrogates, nothing above U+10FFFF */
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) || (p[0] == 0xf0 && p[1] < 0x90) ||
            (p[0] == 0xf4 && p[1] > 0x8f))
            return false;
        p += n;
    }
    return true;
}

/* ---- metadata ---------------------------------------------------------------- */

status safetensors_check_metadata(const cJSON *metadata, status bad, const char *who, const char *path)
{
    if (!cJSON_IsObject(metadata))
        return fail(bad, "%s: %s: \"%s\" must be a JSON object of strings, like {\"epochs\": \"5\"}", who,
                    path, SAFETENSORS_METADATA_KEY);
    int n = cJSON_GetArraySize(metadata);
    const char **keys = malloc(sizeof *keys * (size_t)(n > 0 ? n : 1));
    if (!keys) return fail(STATUS_OUT_OF_MEMORY, "%s: %s: out of host memory", who, path);
    int i = 0;
    for (const cJSON *item = metadata->child; item; item = item->next) {
        if (!cJSON_IsString(item)) {
            free(keys);
            return fail(bad,
                        "%s: %s: the value of \"%.80s\" in \"%s\" is not a string; metadata maps strings to "
                        "strings (write numbers as \"5\")",
                        who, path, item->string, SAFETENSORS_METADATA_KEY);
        }
        keys[i++] = item->string;
    }
    const char *twice = safetensors_first_duplicate(keys, i);
    status s = twice ? fail(bad, "%s: %s: the key \"%.80s\" appears twice in \"%s\"", who, path, twice,
                            SAFETENSORS_METADATA_KEY)
                     : STATUS_OK;
    free(keys);
    return s;
}

/* ---- one tensor ------------------------------------------------------------ */

/* A JSON number that is a whole number from 0 to max. */
static bool json_whole(const cJSON *item, double max, uint64_t *out)
{
    if (!cJSON_IsNumber(item)) return false;
    const double v = item->valuedouble;
    if (!(v >= 0.0 && v <= max) || (double)(uint64_t)v != v) return false;
    *out = (uint64_t)v;
    return true;
}

static status parse_dtype(const cJSON *entry, const char *path, safetensors_tensor *t)
{
    char known[64];
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
    if (!cJSON_IsString(item)) return bad_header(path, "tensor \"%.80s\" has no \"dtype\" string", t->name);
    t->dtype = safetensors_dtype_named(item->valuestring);
    if (!t->dtype)
        return bad_header(path,
                          "tensor \"%.80s\" has dtype \"%.16s\", which the kit does not read (it reads %s).\n"
                          "  hint: save float32 or int32 tensors (in PyTorch, t.float() or t.int())",
                          t->name, item->valuestring, safetensors_dtype_list(known, sizeof known));
    return STATUS_OK;
}

static status parse_shape(const cJSON *entry, const char *path, safetensors_tensor *t)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(entry, "shape");
    const int ndim = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : -1;
    if (ndim < 0) return bad_header(path, "tensor \"%.80s\" has no \"shape\" array", t->name);
    if (ndim < 1 || ndim > TENSOR_MAX_DIMS)
        return bad_header(path, "tensor \"%.80s\" has %d dimensions; the kit's tensors have 1 to %d", t->name,
                          ndim, TENSOR_MAX_DIMS);
    uint64_t numel = 1;
    t->shp.ndim = ndim;
    for (int i = 0; i < ndim; ++i) {
        const cJSON *dim = cJSON_GetArrayItem(item, i);
        uint64_t d = 0;
        if (!json_whole(dim, (double)MAX_ELEMENTS, &d) || d < 1) {
            if (!cJSON_IsNumber(dim))
                return bad_header(path, "tensor \"%.80s\": dimension %d of its shape is not a number",
                                  t->name, i);
            return bad_header(
                path,
                "tensor \"%.80s\": dimension %d of its shape is %g; the kit's dimensions are whole "
                "numbers from 1 to 2^40",
                t->name, i, dim->valuedouble);
        }
        if (numel > MAX_ELEMENTS / d)
            return bad_header(
                path, "tensor \"%.80s\" has more than 2^40 elements, the most a kit tensor holds", t->name);
        t->shp.dims[i] = (int64_t)d;
        numel *= d;
    }
    t->numel = (int64_t)numel;
    return STATUS_OK;
}

static status parse_offsets(const cJSON *entry, const char *path, uint64_t data_bytes, safetensors_tensor *t)
{
    char dims[96];
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(entry, "data_offsets");
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 ||
        !json_whole(cJSON_GetArrayItem(item, 0), JSON_MAX_EXACT, &t->begin) ||
        !json_whole(cJSON_GetArrayItem(item, 1), JSON_MAX_EXACT, &t->end))
        return bad_header(path, "tensor \"%.80s\" has no \"data_offsets\" [begin, end] of two whole numbers",
                          t->name);
    if (t->begin > t->end)
        return bad_header(
            path, "tensor \"%.80s\" has data_offsets [%" PRIu64 ", %" PRIu64 "], which begin after they end",
            t->name, t->begin, t->end);
    if (t->end > data_bytes)
        return bad_header(path,
                          "tensor \"%.80s\" has data_offsets [%" PRIu64 ", %" PRIu64 "], outside the %" PRIu64
                          " bytes of data the file holds: the file is truncated or its header is wrong",
                          t->name, t->begin, t->end, data_bytes);
    const uint64_t want = (uint64_t)t->numel * t->dtype->size;
    if (t->end - t->begin != want)
        return bad_header(path,
                          "tensor \"%.80s\" is %s %s, %" PRIu64 " bytes, but its data_offsets [%" PRIu64
                          ", %" PRIu64 "] span %" PRIu64 " bytes",
                          t->name, t->dtype->name, shape_format(t->shp, dims, sizeof dims), want, t->begin,
                          t->end, t->end - t->begin);
    return STATUS_OK;
}

static status parse_tensor(const cJSON *entry, const char *path, uint64_t data_bytes, safetensors_tensor *t)
{
    t->name = entry->string;
    if (!cJSON_IsObject(entry))
        return bad_header(path, "tensor \"%.80s\" is not a JSON object with dtype, shape and data_offsets",
                          t->name);
    TRY(parse_dtype(entry, path, t));
    TRY(parse_shape(entry, path, t));
    TRY(parse_offsets(entry, path, data_bytes, t));
    return STATUS_OK;
}

/* ---- the whole header -------------------------------------------------------- */

/* Where cJSON stopped, as a byte offset and the text there, for the message. */
static status not_json(const char *path, const char *text, size_t length, const char *stop)
{
    char near[24];
    size_t at = stop && stop >= text && stop <= text + length ? (size_t)(stop - text) : 0;
    size_t n = 0;
    for (; n + 1 < sizeof near && at + n < length; ++n) {
        const char c = text[at + n];
        near[n] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    near[n] = '\0';
    if (at >= length)
        return bad_header(path,
                          "the header's JSON stops before its end (byte %zu): the header is cut short, or "
                          "this is not a safetensors file",
                          length);
    return bad_header(
        path, "the header is not valid JSON (at byte %zu of %zu, near \"%s\"): not a safetensors file", at,
        length, near);
}

static status parse_json(safetensors_header *h, const char *path, const char *text, size_t length)
{
    if (length == 0 || text[0] != '{')
        return bad_header(path, "the header does not begin with '{' as a safetensors header must: not a "
                                "safetensors file, or a damaged one");
    if (!safetensors_utf8_valid(text, length))
        return bad_header(path, "the header is not valid UTF-8 text, as the format requires: a damaged file");
    const char *end = NULL;
    h->json = cJSON_ParseWithOpts(text, &end, 0);
    if (!h->json || !cJSON_IsObject(h->json)) return not_json(path, text, length, end);
    /* After the object: the padding of spaces, and nothing else (a NUL inside
     * the header also stops cJSON, and lands here). */
    for (const char *p = end; p < text + length; ++p)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') return not_json(path, text, length, p);
    return STATUS_OK;
}

static status parse_entries(safetensors_header *h, const char *path, uint64_t data_bytes)
{
    int n = 0;
    for (const cJSON *item = h->json->child; item; item = item->next) {
        if (strcmp(item->string, SAFETENSORS_METADATA_KEY) != 0) {
            ++n;
        } else if (h->metadata) {
            return bad_header(path, "\"%s\" appears twice in the header", SAFETENSORS_METADATA_KEY);
        } else {
            h->metadata = item;
        }
    }
    h->tensors = calloc((size_t)(n > 0 ? n : 1), sizeof *h->tensors);
    h->by_name = calloc((size_t)(n > 0 ? n : 1), sizeof *h->by_name);
    if (!h->tensors || !h->by_name)
        return fail(STATUS_OUT_OF_MEMORY, "safetensors_open: %s: out of host memory", path);
    for (const cJSON *item = h->json->child; item; item = item->next) {
        if (item == h->metadata) continue;
        status s = parse_tensor(item, path, data_bytes, &h->tensors[h->count]);
        if (s != STATUS_OK) return s;
        h->by_name[h->count] = &h->tensors[h->count];
        h->count++;
    }
    return h->metadata ? safetensors_check_metadata(h->metadata, STATUS_IO_FAILED, "safetensors_open", path)
                       : STATUS_OK;
}

static status check_names(const safetensors_header *h, const char *path)
{
    qsort(h->by_name, (size_t)h->count, sizeof *h->by_name, compare_tensor_names);
    for (int i = 1; i < h->count; ++i)
        if (strcmp(h->by_name[i - 1]->name, h->by_name[i]->name) == 0)
            return bad_header(path, "the tensor \"%.80s\" appears twice in the header", h->by_name[i]->name);
    return STATUS_OK;
}

static int compare_begins(const void *a, const void *b)
{
    const safetensors_tensor *x = *(const safetensors_tensor *const *)a;
    const safetensors_tensor *y = *(const safetensors_tensor *const *)b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

/* In the order of their offsets, each tensor begins where the previous ended,
 * and the last ends where the file does. */
static status check_layout(const safetensors_header *h, const char *path, uint64_t data_bytes)
{
    const safetensors_tensor **order = malloc(sizeof *order * (size_t)(h->count > 0 ? h->count : 1));
    if (!order) return fail(STATUS_OUT_OF_MEMORY, "safetensors_open: %s: out of host memory", path);
    memcpy(order, h->by_name, sizeof *order * (size_t)h->count);
    qsort(order, (size_t)h->count, sizeof *order, compare_begins);
    status s = STATUS_OK;
    uint64_t at = 0;
    for (int i = 0; i < h->count && s == STATUS_OK; ++i) {
        const safetensors_tensor *t = order[i], *prev = i > 0 ? order[i - 1] : NULL;
        if (t->begin < at)
            s = bad_header(path,
                           "tensors \"%.80s\" [%" PRIu64 ", %" PRIu64 "] and \"%.80s\" [%" PRIu64 ", %" PRIu64
                           "] overlap",
                           prev->name, prev->begin, prev->end, t->name, t->begin, t->end);
        else if (t->begin > at)
            s = bad_header(path,
                           "bytes [%" PRIu64 ", %" PRIu64
                           ") of the data, before tensor \"%.80s\", belong to no "
                           "tensor; the format allows no gap",
                           at, t->begin, t->name);
        at = t->end;
    }
    if (s == STATUS_OK && at != data_bytes)
        s = bad_header(path,
                       "the tensors end at byte %" PRIu64 " of the data but the file holds %" PRIu64
                       " bytes of data; the format allows nothing after the last tensor",
                       at, data_bytes);
    free(order);
    return s;
}

status safetensors_header_parse(safetensors_header *out, const char *path, const char *text, size_t length,
                                uint64_t data_bytes)
{
    memset(out, 0, sizeof *out);
    status s = parse_json(out, path, text, length);
    if (s == STATUS_OK) s = parse_entries(out, path, data_bytes);
    if (s == STATUS_OK) s = check_names(out, path);
    if (s == STATUS_OK) s = check_layout(out, path, data_bytes);
    if (s != STATUS_OK) safetensors_header_free(out);
    return s;
}

const safetensors_tensor *safetensors_header_find(const safetensors_header *h, const char *name)
{
    const safetensors_tensor key = { .name = name }, *pkey = &key;
    const safetensors_tensor **found =
        bsearch(&pkey, h->by_name, (size_t)h->count, sizeof *h->by_name, compare_tensor_names);
    return found ? *found : NULL;
}

void safetensors_header_free(safetensors_header *h)
{
    if (!h) return;
    cJSON_Delete(h->json);
    free(h->tensors);
    free(h->by_name);
    memset(h, 0, sizeof *h);
}
