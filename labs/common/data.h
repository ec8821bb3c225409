/* data.h: the images the MLP learns from, kept in host memory (the labs'
 * shared code, labs/common/: labs 05, 06 and 08 learn from them).
 *
 * Two sources, one shape: `count` grey images of rows x cols pixels in [0, 1]
 * (row-major, one image after another) and one int32 label in 0..9 per image.
 *   - a built-in synthetic set: digits drawn with seven strokes, jittered,
 *     slanted and noisy, from a seed (the same seed gives the same images);
 *   - MNIST-format IDX files (train-images-idx3-ubyte and friends), checked
 *     byte by byte: a bad file is refused with what is wrong with it.
 * Not student work: lab.c only moves batches of these to a device. */
#ifndef LABS_COMMON_DATA_H
#define LABS_COMMON_DATA_H

#include <stdint.h>

#include "labkit/status.h"

#define DATA_CLASSES 10
#define SYNTHETIC_SIDE 28

typedef struct dataset {
    int64_t count; /* images */
    int64_t rows, cols;
    float *images;   /* [count, rows * cols], values in [0, 1] */
    int32_t *labels; /* [count], values in 0..DATA_CLASSES-1 */
} dataset;

static inline int64_t dataset_pixels(const dataset *d) { return d->rows * d->cols; }

/* `count` synthetic 28x28 digits drawn from `seed`. */
status dataset_synthetic(dataset *out, int64_t count, uint64_t seed);

/* A run's training and held-out images: with `dir`, the MNIST files there
 * (the first `samples` training images, or all when samples is 0; 28x28
 * images only, what the lab's networks take); else
 * `samples` synthetic digits drawn from `seed` and a quarter as many (at
 * least 500) held out, drawn from seed + 1000. */
status dataset_for_run(const char *dir, int64_t samples, uint64_t seed, dataset *train, dataset *test);

/* One images file (IDX magic 0x00000803) and its labels file (0x00000801).
 * Fails with STATUS_IO_FAILED and a message naming the file and what is wrong:
 * missing, not a regular file (a directory, a FIFO, a device: refused without
 * waiting or reading), truncated, wrong magic number, longer than its header
 * says, counts that disagree, bad labels. Both headers are checked against
 * their files' sizes before any data is read, and no more data is read than
 * the headers announce. */
status dataset_load_idx(dataset *out, const char *images_path, const char *labels_path);

/* The four MNIST files in `dir`: train-{images-idx3,labels-idx1}-ubyte for
 * `train`, t10k-... for `test`. */
status dataset_load_mnist_dir(const char *dir, dataset *train, dataset *test);

/* Writes `d` as an IDX pair (pixels rounded to bytes): a test's or a bench's
 * way to hand the same images to another program. */
status dataset_write_idx(const dataset *d, const char *images_path, const char *labels_path);

/* The first `count` images of `src` as a new dataset (copied). */
status dataset_head(const dataset *src, int64_t count, dataset *out);

void dataset_free(dataset *d);

/* order[0..n-1] = a permutation of 0..n-1 drawn from `seed` (an epoch's
 * shuffle: the same seed gives the same order on every device). */
void data_permutation(int64_t *order, int64_t n, uint64_t seed);

#endif
