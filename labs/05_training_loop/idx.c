/* idx.c: MNIST's IDX files, read and written with every field checked.
 *
 * An IDX file is a big-endian header, then the data, one byte per value:
 *   images (magic 0x00000803):  magic, count, rows, cols, count*rows*cols pixels
 *   labels (magic 0x00000801):  magic, count, count labels
 * The magic's third byte is the type (0x08: unsigned byte), its fourth the number
 * of dimensions. A file that does not match is refused with what is wrong, since
 * "loss: nan" after loading garbage teaches nothing. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

#define IDX_IMAGES_MAGIC 0x00000803u
#define IDX_LABELS_MAGIC 0x00000801u
#define IDX_MAX_SIDE 4096

static uint32_t big_endian_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void put_big_endian_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
    p[3] = (unsigned char)v;
}

/* The whole file in memory (malloc'd into *bytes, its length in *size). */
static status read_file(const char *path, unsigned char **bytes, size_t *size)
{
    *bytes = NULL, *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(STATUS_IO_FAILED,
                    "%s: cannot open it (%s).\n  hint: --data DIR needs the four MNIST files, "
                    "unzipped (gunzip *.gz)",
                    path, strerror(errno));
    size_t capacity = 1 << 20, used = 0;
    unsigned char *buf = malloc(capacity);
    while (buf) {
        used += fread(buf + used, 1, capacity - used, f);
        if (used < capacity) break;
        unsigned char *bigger = realloc(buf, capacity * 2);
        if (!bigger) free(buf);
        buf = bigger, capacity *= 2;
    }
    const int read_error = ferror(f);
    fclose(f);
    if (!buf) return fail(STATUS_OUT_OF_MEMORY, "%s: no host memory to read it", path);
    if (read_error) {
        free(buf);
        return fail(STATUS_IO_FAILED, "%s: read error", path);
    }
    *bytes = buf, *size = used;
    return STATUS_OK;
}

static const char *magic_meaning(uint32_t magic)
{
    if (magic == IDX_IMAGES_MAGIC) return "an IDX images file";
    if (magic == IDX_LABELS_MAGIC) return "an IDX labels file";
    if ((magic >> 16) == 0x1F8B) return "a gzip file: gunzip it first";
    if ((magic >> 8) == 0x000008) return "IDX bytes with another number of dimensions";
    if ((magic >> 16) == 0) return "IDX with another value type";
    return "not an IDX file";
}

/* Checks the header of an IDX file held in `bytes`: its length, magic number
 * and dimensions, and that the data is exactly as long as they say. */
static status check_idx(const char *path, const unsigned char *bytes, size_t size, uint32_t magic, int ndims,
                        uint32_t dims[3])
{
    const size_t header = 4 + 4 * (size_t)ndims;
    const char *what = magic == IDX_IMAGES_MAGIC ? "images" : "labels";
    if (size < 4)
        return fail(STATUS_IO_FAILED,
                    "%s: truncated: %zu bytes, too short for an IDX header (%zu bytes for %s)", path, size,
                    header, what);
    const uint32_t found = big_endian_u32(bytes);
    if (found != magic)
        return fail(STATUS_IO_FAILED,
                    "%s: wrong magic number 0x%08" PRIX32 " (%s); an IDX %s file starts with "
                    "0x%08" PRIX32,
                    path, found, magic_meaning(found), what, magic);
    if (size < header)
        return fail(STATUS_IO_FAILED, "%s: truncated: %zu bytes, too short for its %zu-byte header", path,
                    size, header);
    uint64_t values = 1;
    for (int i = 0; i < ndims; ++i) {
        dims[i] = big_endian_u32(bytes + 4 + 4 * i);
        if (dims[i] == 0 || (i > 0 && dims[i] > IDX_MAX_SIDE))
            return fail(STATUS_IO_FAILED, "%s: dimension %d is %" PRIu32 "; it must be 1 to %d", path, i,
                        dims[i], i == 0 ? INT32_MAX : IDX_MAX_SIDE);
        values *= dims[i];
    }
    const uint64_t expected = header + values;
    if (size < expected)
        return fail(STATUS_IO_FAILED,
                    "%s: truncated: its header announces %" PRIu64 " bytes of %s data (%zu + %" PRIu64
                    " bytes in all) but the file has %zu",
                    path, values, what, header, expected, size);
    if (size > expected)
        return fail(STATUS_IO_FAILED,
                    "%s: wrong size: %zu bytes, %" PRIu64 " more than its header announces "
                    "(%zu + %" PRIu64 ")",
                    path, size, size - expected, header, values);
    return STATUS_OK;
}

/* Pixels as floats in [0, 1], labels checked against the class count. */
static status fill_dataset(dataset *out, const unsigned char *pixels, const unsigned char *labels,
                           const char *labels_path)
{
    const int64_t n = out->count, p = dataset_pixels(out);
    for (int64_t i = 0; i < n; ++i) {
        if (labels[i] >= DATA_CLASSES)
            return fail(STATUS_IO_FAILED, "%s: label %" PRId64 " is %d; labels must be 0 to %d", labels_path,
                        i, labels[i], DATA_CLASSES - 1);
        out->labels[i] = labels[i];
    }
    for (int64_t i = 0; i < n * p; ++i) out->images[i] = (float)pixels[i] / 255.0f;
    return STATUS_OK;
}

status dataset_load_idx(dataset *out, const char *images_path, const char *labels_path)
{
    if (!out || !images_path || !labels_path)
        return fail(STATUS_BAD_ARGUMENT, "dataset_load_idx: NULL argument");
    memset(out, 0, sizeof *out);
    unsigned char *img = NULL, *lab = NULL;
    size_t img_size = 0, lab_size = 0;
    uint32_t idims[3] = { 0 }, ldims[3] = { 0 };
    status s = read_file(images_path, &img, &img_size);
    if (s == STATUS_OK) s = check_idx(images_path, img, img_size, IDX_IMAGES_MAGIC, 3, idims);
    if (s == STATUS_OK) s = read_file(labels_path, &lab, &lab_size);
    if (s == STATUS_OK) s = check_idx(labels_path, lab, lab_size, IDX_LABELS_MAGIC, 1, ldims);
    if (s == STATUS_OK && idims[0] != ldims[0])
        s = fail(STATUS_IO_FAILED, "%s has %" PRIu32 " images but %s has %" PRIu32 " labels; they must match",
                 images_path, idims[0], labels_path, ldims[0]);
    if (s == STATUS_OK) {
        /* dataset_alloc is data.c's; allocate here the same way. */
        out->count = idims[0], out->rows = idims[1], out->cols = idims[2];
        out->images = malloc((size_t)(out->count * dataset_pixels(out)) * sizeof(float));
        out->labels = malloc((size_t)out->count * sizeof(int32_t));
        s = out->images && out->labels
                ? fill_dataset(out, img + 16, lab + 8, labels_path)
                : fail(STATUS_OUT_OF_MEMORY, "%s: no host memory for the images", images_path);
    }
    free(img);
    free(lab);
    if (s != STATUS_OK) dataset_free(out);
    return s;
}

status dataset_load_mnist_dir(const char *dir, dataset *train, dataset *test)
{
    char images[4096], labels[4096];
    snprintf(images, sizeof images, "%s/train-images-idx3-ubyte", dir);
    snprintf(labels, sizeof labels, "%s/train-labels-idx1-ubyte", dir);
    status s = dataset_load_idx(train, images, labels);
    if (s != STATUS_OK) return s;
    snprintf(images, sizeof images, "%s/t10k-images-idx3-ubyte", dir);
    snprintf(labels, sizeof labels, "%s/t10k-labels-idx1-ubyte", dir);
    s = dataset_load_idx(test, images, labels);
    if (s == STATUS_OK && (test->rows != train->rows || test->cols != train->cols))
        s = fail(STATUS_IO_FAILED,
                 "%s: its images are %" PRId64 "x%" PRId64 " but the training images are %" PRId64
                 "x%" PRId64,
                 images, test->rows, test->cols, train->rows, train->cols);
    if (s != STATUS_OK) {
        dataset_free(train);
        dataset_free(test);
    }
    return s;
}

/* ---- writing ------------------------------------------------------------------ */

static status write_bytes(const char *path, const unsigned char *header, size_t header_size,
                          const unsigned char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return fail(STATUS_IO_FAILED, "%s: cannot create it (%s)", path, strerror(errno));
    const int ok = fwrite(header, 1, header_size, f) == header_size && fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !ok) return fail(STATUS_IO_FAILED, "%s: could not write all of it", path);
    return STATUS_OK;
}

status dataset_write_idx(const dataset *d, const char *images_path, const char *labels_path)
{
    if (!d || !images_path || !labels_path)
        return fail(STATUS_BAD_ARGUMENT, "dataset_write_idx: NULL argument");
    const size_t n = (size_t)d->count, p = (size_t)dataset_pixels(d);
    unsigned char *pixels = malloc(n * p), *labels = malloc(n);
    status s = pixels && labels ? STATUS_OK : fail(STATUS_OUT_OF_MEMORY, "dataset_write_idx: no host memory");
    if (s == STATUS_OK) {
        for (size_t i = 0; i < n * p; ++i) pixels[i] = (unsigned char)(d->images[i] * 255.0f + 0.5f);
        for (size_t i = 0; i < n; ++i) labels[i] = (unsigned char)d->labels[i];
        unsigned char header[16];
        put_big_endian_u32(header, IDX_IMAGES_MAGIC);
        put_big_endian_u32(header + 4, (uint32_t)n);
        put_big_endian_u32(header + 8, (uint32_t)d->rows);
        put_big_endian_u32(header + 12, (uint32_t)d->cols);
        s = write_bytes(images_path, header, 16, pixels, n * p);
        put_big_endian_u32(header, IDX_LABELS_MAGIC);
        if (s == STATUS_OK) s = write_bytes(labels_path, header, 8, labels, n);
    }
    free(pixels);
    free(labels);
    return s;
}
