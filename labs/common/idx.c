/* idx.c: MNIST's IDX files, read and written with every field checked.
 *
 * An IDX file is a big-endian header, then the data, one byte per value:
 *   images (magic 0x00000803):  magic, count, rows, cols, count*rows*cols pixels
 *   labels (magic 0x00000801):  magic, count, count labels
 * The magic's third byte is the type (0x08: unsigned byte), its fourth the number
 * of dimensions. A file that does not match is refused with what is wrong, since
 * "loss: nan" after loading garbage teaches nothing; and it is refused before
 * its data is read: only a regular file is opened (never waiting on a FIFO),
 * and the header is checked against the file's size first, so a huge file
 * that claims to be small costs a stat and 16 bytes, not its length. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "labkit/files.h"

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

static const char *magic_meaning(uint32_t magic)
{
    if (magic == IDX_IMAGES_MAGIC) return "an IDX images file";
    if (magic == IDX_LABELS_MAGIC) return "an IDX labels file";
    if ((magic >> 16) == 0x1F8B) return "a gzip file: gunzip it first";
    if ((magic >> 8) == 0x000008) return "IDX bytes with another number of dimensions";
    if ((magic >> 16) == 0) return "IDX with another value type";
    return "not an IDX file";
}

/* One IDX file, opened and its header checked against the file's size. */
typedef struct idx_file {
    const char *path;
    FILE *f;          /* positioned at the data */
    uint32_t dims[3]; /* count, then rows and cols for images */
    uint64_t values;  /* the data's bytes, as the header announces them */
} idx_file;

/* Opens `path` without blocking (a regular file only: files.h), reads its
 * header alone and checks its magic number and dimensions, and that the file
 * is exactly as long as they say, before a byte of data is read. */
static status idx_open(idx_file *x, const char *path, uint32_t magic, int ndims)
{
    memset(x, 0, sizeof *x);
    x->path = path;
    const char *what = magic == IDX_IMAGES_MAGIC ? "images" : "labels";
    int64_t size = 0;
    if (input_open(path, &x->f, &size) != STATUS_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", last_error());
        if (!strstr(why, "cannot open")) return fail(STATUS_IO_FAILED, "%s", why); /* not a regular file */
        return fail(STATUS_IO_FAILED,
                    "%s\n  hint: --data DIR needs the four MNIST files, unzipped (gunzip *.gz)", why);
    }
    unsigned char header[16];
    const size_t header_size = 4 + 4 * (size_t)ndims;
    const size_t got = fread(header, 1, size < (int64_t)header_size ? (size_t)size : header_size, x->f);
    if (got < 4)
        return fail(STATUS_IO_FAILED,
                    "%s: truncated: %zu bytes, too short for an IDX header (%zu bytes for %s)", path, got,
                    header_size, what);
    const uint32_t found = big_endian_u32(header);
    if (found != magic)
        return fail(STATUS_IO_FAILED,
                    "%s: wrong magic number 0x%08" PRIX32 " (%s); an IDX %s file starts with 0x%08" PRIX32,
                    path, found, magic_meaning(found), what, magic);
    if (got < header_size)
        return fail(STATUS_IO_FAILED, "%s: truncated: %zu bytes, too short for its %zu-byte header", path,
                    got, header_size);
    x->values = 1;
    for (int i = 0; i < ndims; ++i) {
        x->dims[i] = big_endian_u32(header + 4 + 4 * i);
        if (x->dims[i] == 0 || (i > 0 && x->dims[i] > IDX_MAX_SIDE))
            return fail(STATUS_IO_FAILED, "%s: dimension %d is %" PRIu32 "; it must be 1 to %d", path, i,
                        x->dims[i], i == 0 ? INT32_MAX : IDX_MAX_SIDE);
        x->values *= x->dims[i];
    }
    const uint64_t expected = header_size + x->values, actual = (uint64_t)size;
    if (actual < expected)
        return fail(STATUS_IO_FAILED,
                    "%s: truncated: its header announces %" PRIu64 " bytes of %s data (%zu + %" PRIu64
                    " bytes in all) but the file has %" PRIu64,
                    path, x->values, what, header_size, expected, actual);
    if (actual > expected)
        return fail(STATUS_IO_FAILED,
                    "%s: wrong size: %" PRIu64 " bytes, %" PRIu64
                    " more than its header announces (%zu + %" PRIu64 ")",
                    path, actual, actual - expected, header_size, x->values);
    return STATUS_OK;
}

/* The data the header announced, and not a byte more, into a new buffer. */
static status idx_read_data(idx_file *x, unsigned char **out)
{
    *out = malloc(x->values ? (size_t)x->values : 1);
    if (!*out)
        return fail(STATUS_OUT_OF_MEMORY, "%s: no host memory for its %" PRIu64 " bytes of data", x->path,
                    x->values);
    const size_t got = fread(*out, 1, (size_t)x->values, x->f);
    if (got == x->values) return STATUS_OK;
    free(*out);
    *out = NULL;
    return fail(STATUS_IO_FAILED,
                "%s: %s after %zu of its %" PRIu64 " bytes of data (did it change while read?)", x->path,
                ferror(x->f) ? "read error" : "ended", got, x->values);
}

static void idx_close(idx_file *x)
{
    if (x->f) fclose(x->f);
    x->f = NULL;
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

/* Both headers are checked, and their counts compared, before either file's
 * data is read. */
status dataset_load_idx(dataset *out, const char *images_path, const char *labels_path)
{
    if (!out || !images_path || !labels_path)
        return fail(STATUS_BAD_ARGUMENT, "dataset_load_idx: NULL argument");
    memset(out, 0, sizeof *out);
    idx_file img = { 0 }, lab = { 0 };
    unsigned char *pixels = NULL, *labels = NULL;
    status s = idx_open(&img, images_path, IDX_IMAGES_MAGIC, 3);
    if (s == STATUS_OK) s = idx_open(&lab, labels_path, IDX_LABELS_MAGIC, 1);
    if (s == STATUS_OK && img.dims[0] != lab.dims[0])
        s = fail(STATUS_IO_FAILED, "%s has %" PRIu32 " images but %s has %" PRIu32 " labels; they must match",
                 images_path, img.dims[0], labels_path, lab.dims[0]);
    if (s == STATUS_OK) s = idx_read_data(&img, &pixels);
    if (s == STATUS_OK) s = idx_read_data(&lab, &labels);
    if (s == STATUS_OK) {
        out->count = img.dims[0], out->rows = img.dims[1], out->cols = img.dims[2];
        out->images = malloc((size_t)(out->count * dataset_pixels(out)) * sizeof(float));
        out->labels = malloc((size_t)out->count * sizeof(int32_t));
        s = out->images && out->labels
                ? fill_dataset(out, pixels, labels, labels_path)
                : fail(STATUS_OUT_OF_MEMORY, "%s: no host memory for the images as floats", images_path);
    }
    idx_close(&img);
    idx_close(&lab);
    free(pixels);
    free(labels);
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
