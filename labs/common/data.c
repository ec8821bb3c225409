/* data.c: the synthetic digits and the IDX (MNIST) reader and writer. */
#include "data.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== a small seeded generator (splitmix64) ================================== */

static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *state, double low, double high)
{
    return low + (high - low) * (double)(next_u64(state) >> 11) * 0x1.0p-53;
}

static double gaussian(uint64_t *state)
{
    const double u = uniform(state, 1e-12, 1.0), v = uniform(state, 0.0, 1.0);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ==== synthetic digits ========================================================= */

/* A seven-segment digit: the strokes of each digit, as bits a..g of
 *      a
 *    f   b
 *      g
 *    e   c
 *      d                                                                       */
static const unsigned digit_segments[DATA_CLASSES] = {
    0x3F, 0x06, 0x5B, 0x4F, 0x66, 0x6D, 0x7D, 0x07, 0x7F, 0x6F, /* bit 0 = a ... bit 6 = g */
};

/* Each segment's two ends in a unit box: x to the right, y downwards. */
static const double segment_ends[7][4] = {
    { 0, 0, 1, 0 },   { 1, 0, 1, 0.5 }, { 1, 0.5, 1, 1 },   { 0, 1, 1, 1 },
    { 0, 0.5, 0, 1 }, { 0, 0, 0, 0.5 }, { 0, 0.5, 1, 0.5 },
};

typedef struct stroke {
    double x0, y0, x1, y1, half_width, ink;
} stroke;

static double distance_to_segment(const stroke *s, double px, double py)
{
    const double dx = s->x1 - s->x0, dy = s->y1 - s->y0, length2 = dx * dx + dy * dy;
    double t = length2 > 0 ? ((px - s->x0) * dx + (py - s->y0) * dy) / length2 : 0.0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    const double ex = s->x0 + t * dx - px, ey = s->y0 + t * dy - py;
    return sqrt(ex * ex + ey * ey);
}

/* Anti-aliased ink: full inside the stroke, fading over one pixel at its edge.
 * Only the pixels of the stroke's bounding box are visited. */
static void draw_stroke(float *image, const stroke *s)
{
    const double reach = s->half_width + 1.0;
    const int x_lo = (int)fmax(0, floor(fmin(s->x0, s->x1) - reach));
    const int x_hi = (int)fmin(SYNTHETIC_SIDE - 1, ceil(fmax(s->x0, s->x1) + reach));
    const int y_lo = (int)fmax(0, floor(fmin(s->y0, s->y1) - reach));
    const int y_hi = (int)fmin(SYNTHETIC_SIDE - 1, ceil(fmax(s->y0, s->y1) + reach));
    for (int y = y_lo; y <= y_hi; ++y)
        for (int x = x_lo; x <= x_hi; ++x) {
            double cover = s->half_width + 0.5 - distance_to_segment(s, x + 0.5, y + 0.5);
            cover = (cover < 0 ? 0 : cover > 1 ? 1 : cover) * s->ink;
            float *p = &image[y * SYNTHETIC_SIDE + x];
            if (cover > *p) *p = (float)cover;
        }
}

/* One digit: a random box (size, place, slant), strokes with jittered ends and
 * their own thickness, sometimes a stray stroke, then Gaussian pixel noise. */
static void draw_digit(float *image, int digit, uint64_t *rng)
{
    const double width = uniform(rng, 8, 13), height = uniform(rng, 14, 20);
    const double left = uniform(rng, 3, 25 - width), top = uniform(rng, 3, 25 - height);
    const double slant = uniform(rng, -0.35, 0.35), thickness = uniform(rng, 1.0, 2.6);
    const double ink = uniform(rng, 0.6, 1.0), noise = uniform(rng, 0.05, 0.3);
    memset(image, 0, sizeof(float) * SYNTHETIC_SIDE * SYNTHETIC_SIDE);
    for (int seg = 0; seg < 7; ++seg) {
        if (!(digit_segments[digit] >> seg & 1)) continue;
        const double *e = segment_ends[seg];
        stroke s;
        s.y0 = top + e[1] * height + uniform(rng, -1, 1);
        s.y1 = top + e[3] * height + uniform(rng, -1, 1);
        s.x0 = left + e[0] * width + slant * (top + height - s.y0) + uniform(rng, -1, 1);
        s.x1 = left + e[2] * width + slant * (top + height - s.y1) + uniform(rng, -1, 1);
        s.half_width = 0.5 * thickness * uniform(rng, 0.8, 1.2);
        s.ink = ink;
        draw_stroke(image, &s);
    }
    if (uniform(rng, 0, 1) < 0.4) { /* a stray short stroke anywhere: clutter */
        stroke s = { uniform(rng, 0, 28), uniform(rng, 0, 28), 0, 0, 0.6, uniform(rng, 0.3, 0.8) };
        s.x1 = s.x0 + uniform(rng, -6, 6), s.y1 = s.y0 + uniform(rng, -6, 6);
        draw_stroke(image, &s);
    }
    for (int i = 0; i < SYNTHETIC_SIDE * SYNTHETIC_SIDE; ++i) {
        const double v = image[i] + noise * gaussian(rng);
        image[i] = (float)(v < 0 ? 0 : v > 1 ? 1 : v);
    }
}

static status dataset_alloc(dataset *out, int64_t count, int64_t rows, int64_t cols, const char *who)
{
    memset(out, 0, sizeof *out);
    out->count = count, out->rows = rows, out->cols = cols;
    out->images = malloc((size_t)(count * rows * cols) * sizeof(float));
    out->labels = malloc((size_t)count * sizeof(int32_t));
    if (out->images && out->labels) return STATUS_OK;
    dataset_free(out);
    return fail(STATUS_OUT_OF_MEMORY, "%s: no host memory for %" PRId64 " images of %" PRId64 "x%" PRId64,
                who, count, rows, cols);
}

status dataset_synthetic(dataset *out, int64_t count, uint64_t seed)
{
    if (!out || count < 1)
        return fail(STATUS_BAD_ARGUMENT, "dataset_synthetic: out must not be NULL and count >= 1");
    status s = dataset_alloc(out, count, SYNTHETIC_SIDE, SYNTHETIC_SIDE, "dataset_synthetic");
    if (s != STATUS_OK) return s;
    uint64_t rng = seed * 0x2545F4914F6CDD1Dull + 1;
    for (int64_t i = 0; i < count; ++i) {
        out->labels[i] = (int32_t)(next_u64(&rng) % DATA_CLASSES);
        draw_digit(out->images + i * dataset_pixels(out), out->labels[i], &rng);
    }
    return STATUS_OK;
}

status dataset_for_run(const char *dir, int64_t samples, uint64_t seed, dataset *train, dataset *test)
{
    if (!train || !test || samples < 0 || (!dir && samples < 1))
        return fail(STATUS_BAD_ARGUMENT,
                    "dataset_for_run: give the datasets and, without a directory, samples >= 1");
    memset(train, 0, sizeof *train), memset(test, 0, sizeof *test);
    if (!dir) {
        status s = dataset_synthetic(train, samples, seed);
        if (s == STATUS_OK) s = dataset_synthetic(test, samples / 4 > 500 ? samples / 4 : 500, seed + 1000);
        if (s != STATUS_OK) dataset_free(train);
        return s;
    }
    dataset all;
    status s = dataset_load_mnist_dir(dir, &all, test);
    if (s != STATUS_OK) return s;
    if (all.rows != SYNTHETIC_SIDE || all.cols != SYNTHETIC_SIDE)
        s = fail(STATUS_IO_FAILED,
                 "%s: its images are %" PRId64 "x%" PRId64 "; the lab's networks take %dx%d", dir, all.rows,
                 all.cols, SYNTHETIC_SIDE, SYNTHETIC_SIDE);
    if (s == STATUS_OK)
        s = dataset_head(&all, samples > 0 && samples < all.count ? samples : all.count, train);
    dataset_free(&all);
    if (s != STATUS_OK) dataset_free(test);
    return s;
}

status dataset_head(const dataset *src, int64_t count, dataset *out)
{
    if (!src || !out || count < 1 || count > src->count)
        return fail(STATUS_BAD_ARGUMENT, "dataset_head: asked for %" PRId64 " of %" PRId64 " images", count,
                    src ? src->count : 0);
    status s = dataset_alloc(out, count, src->rows, src->cols, "dataset_head");
    if (s != STATUS_OK) return s;
    memcpy(out->images, src->images, (size_t)(count * dataset_pixels(src)) * sizeof(float));
    memcpy(out->labels, src->labels, (size_t)count * sizeof(int32_t));
    return STATUS_OK;
}

void data_permutation(int64_t *order, int64_t n, uint64_t seed)
{
    uint64_t rng = seed ^ 0x5DEECE66Dull;
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    for (int64_t i = n - 1; i > 0; --i) { /* Fisher-Yates */
        const int64_t j = (int64_t)(next_u64(&rng) % (uint64_t)(i + 1)), keep = order[i];
        order[i] = order[j], order[j] = keep;
    }
}

void dataset_free(dataset *d)
{
    if (!d) return;
    free(d->images);
    free(d->labels);
    memset(d, 0, sizeof *d);
}
