/* given.c: lab 07's given code (given.h says what each function is for). */
#include "given.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

/* ---- operands ------------------------------------------------------------------ */

/* Every tensor of `t` is float32 and lives on t[0]'s device. */
static status same_device_f32(const char *who, const char *names, const tensor *const *t, int count)
{
    for (int i = 0; i < count; ++i) {
        if (!t[i]) return fail(STATUS_BAD_ARGUMENT, "%s: a tensor of %s is NULL", who, names);
        if (tensor_dtype(t[i]) != DTYPE_F32)
            return fail(STATUS_BAD_ARGUMENT, "%s: %s must be float32; tensor %d of them is %s", who, names,
                        i + 1, dtype_name(tensor_dtype(t[i])));
        if (!device_equal(tensor_device(t[i]), tensor_device(t[0])))
            return fail(STATUS_WRONG_DEVICE,
                        "%s: %s must live on one device; they are on %s and %s.\n"
                        "  hint: move them with tensor_to first; nothing is copied for you",
                        who, names, device_name(tensor_device(t[0])), device_name(tensor_device(t[i])));
    }
    return STATUS_OK;
}

static bool same_shape(shape a, shape b)
{
    if (a.ndim != b.ndim) return false;
    for (int i = 0; i < a.ndim; ++i)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

static status wrong_shape(const char *who, const char *name, shape got, shape want)
{
    char g[64], w[64];
    return fail(STATUS_BAD_ARGUMENT, "%s: %s is %s; it must be %s", who, name, shape_format(got, g, sizeof g),
                shape_format(want, w, sizeof w));
}

/* d from x [N, C, H, W], the filter's r x s, pad and the output's [.., .., H_out, W_out]. */
static conv_dims dims_of(shape x, int64_t k, int64_t r, int64_t s, int64_t pad, shape y)
{
    const conv_dims d = { .n = x.dims[0],
                          .c = x.dims[1],
                          .h = x.dims[2],
                          .w = x.dims[3],
                          .k = k,
                          .r = r,
                          .s = s,
                          .pad = pad,
                          .h_out = y.dims[2],
                          .w_out = y.dims[3] };
    return d;
}

status conv_prepare(const char *who, const tensor *x, const tensor *w, int64_t pad, const tensor *y,
                    conv_dims *d)
{
    if (!who) who = "conv_prepare";
    if (!d) return fail(STATUS_BAD_ARGUMENT, "%s: d is NULL", who);
    const tensor *all[] = { x, w, y };
    status s = same_device_f32(who, "x, w and y", all, 3);
    if (s != STATUS_OK) return s;
    shape want;
    s = lab_conv_output_shape(tensor_shape(x), tensor_shape(w), pad, &want); /* your step 1 */
    if (s != STATUS_OK) return s;
    if (!same_shape(tensor_shape(y), want)) return wrong_shape(who, "y", tensor_shape(y), want);
    *d = dims_of(tensor_shape(x), tensor_dim(w, 0), tensor_dim(w, 2), tensor_dim(w, 3), pad, want);
    return STATUS_OK;
}

status im2col_prepare(const char *who, const tensor *x, int64_t r, int64_t s, int64_t pad, const tensor *cols,
                      conv_dims *d)
{
    if (!who) who = "im2col_prepare";
    if (!d) return fail(STATUS_BAD_ARGUMENT, "%s: d is NULL", who);
    const tensor *all[] = { x, cols };
    status st = same_device_f32(who, "x and cols", all, 2);
    if (st != STATUS_OK) return st;
    if (r < 1 || s < 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: the filter is %lld x %lld; it needs at least one row and column", who, (long long)r,
                    (long long)s);
    shape out; /* the output of one filter of this size: its H_out and W_out */
    st = lab_conv_output_shape(tensor_shape(x), shape4(1, tensor_dim(x, 1), r, s), pad, &out);
    if (st != STATUS_OK) return st;
    const shape want = shape2(tensor_dim(x, 1) * r * s, tensor_dim(x, 0) * out.dims[2] * out.dims[3]);
    if (!same_shape(tensor_shape(cols), want)) return wrong_shape(who, "cols", tensor_shape(cols), want);
    *d = dims_of(tensor_shape(x), 0, r, s, pad, out);
    return STATUS_OK;
}

status softmax_prepare(const char *who, const tensor *scores, float scale)
{
    if (!who) who = "softmax_prepare";
    const tensor *all[] = { scores };
    status s = same_device_f32(who, "scores", all, 1);
    if (s != STATUS_OK) return s;
    if (tensor_shape(scores).ndim != 2) {
        char text[64];
        return fail(STATUS_BAD_ARGUMENT, "%s: scores is %s; it must be a matrix [rows, cols]", who,
                    shape_format(tensor_shape(scores), text, sizeof text));
    }
    if (!(scale > 0.0f) || !isfinite(scale))
        return fail(STATUS_BAD_ARGUMENT, "%s: scale is %g; it must be finite and above 0 (1 / sqrt(d))", who,
                    (double)scale);
    return STATUS_OK;
}

status attention_prepare(const char *who, const tensor *q, const tensor *k, const tensor *v,
                         const tensor *out)
{
    if (!who) who = "attention_prepare";
    const tensor *all[] = { q, k, v, out };
    status s = same_device_f32(who, "q, k, v and out", all, 4);
    if (s != STATUS_OK) return s;
    const shape want = shape2(tensor_dim(q, 0), tensor_dim(q, 1));
    const char *names[] = { "q", "k", "v", "out" };
    for (int i = 0; i < 4; ++i)
        if (!same_shape(tensor_shape(all[i]), want))
            return wrong_shape(who, names[i], tensor_shape(all[i]), want);
    return STATUS_OK;
}

status flash_prepare(const char *who, const tensor *q, const tensor *k, const tensor *v, const tensor *out)
{
    if (!who) who = "flash_prepare";
    const status s = attention_prepare(who, q, k, v, out);
    if (s != STATUS_OK) return s;
    if (tensor_dim(q, 1) > FLASH_MAX_HEAD)
        return fail(
            STATUS_BAD_ARGUMENT,
            "%s: the head size d is %lld; attention in one pass keeps a row of q and of the output "
            "in each thread's registers, at most FLASH_MAX_HEAD = %d floats (launch.h): use lab_attention "
            "for a larger head",
            who, (long long)tensor_dim(q, 1), FLASH_MAX_HEAD);
    return STATUS_OK;
}

/* ---- the reorder ---------------------------------------------------------------- */

status conv_reorder(const tensor *product, tensor *y)
{
    const tensor *all[] = { product, y };
    status s = same_device_f32("conv_reorder", "product and y", all, 2);
    if (s != STATUS_OK) return s;
    const shape ys = tensor_shape(y);
    if (ys.ndim != 4) {
        char text[64];
        return fail(STATUS_BAD_ARGUMENT, "conv_reorder: y is %s; it must be [N, K, H_out, W_out]",
                    shape_format(ys, text, sizeof text));
    }
    const reorder_args args = { .product = tensor_data_const(product),
                                .y = tensor_data(y),
                                .n = ys.dims[0],
                                .k = ys.dims[1],
                                .pixels = ys.dims[2] * ys.dims[3] };
    const shape want = shape2(args.k, args.n * args.pixels);
    if (!same_shape(tensor_shape(product), want))
        return wrong_shape("conv_reorder", "product", tensor_shape(product), want);
    return device_launch(tensor_device(y), &reorder_launchers, &args, sizeof args);
}

/* ---- float64 references ---------------------------------------------------------- */

double conv_reference(const float *x, const float *w, const conv_dims *d, int64_t index, double *scale)
{
    const int64_t ow = index % d->w_out, oh = index / d->w_out % d->h_out;
    const int64_t k = index / (d->w_out * d->h_out) % d->k, n = index / (d->w_out * d->h_out * d->k);
    double sum = 0.0, size = 0.0;
    for (int64_t c = 0; c < d->c; ++c)
        for (int64_t r = 0; r < d->r; ++r)
            for (int64_t s = 0; s < d->s; ++s) {
                const int64_t ih = oh + r - d->pad, iw = ow + s - d->pad;
                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) continue; /* a zero of the padding */
                const double term = (double)x[((n * d->c + c) * d->h + ih) * d->w + iw] *
                                    w[((k * d->c + c) * d->r + r) * d->s + s];
                sum += term, size += fabs(term);
            }
    if (scale) *scale = size;
    return sum;
}

float im2col_reference(const float *x, const conv_dims *d, int64_t row, int64_t col)
{
    const int64_t c = row / (d->r * d->s), r = row / d->s % d->r, s = row % d->s;
    const int64_t ow = col % d->w_out, oh = col / d->w_out % d->h_out, n = col / (d->w_out * d->h_out);
    const int64_t ih = oh + r - d->pad, iw = ow + s - d->pad;
    if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) return 0.0f;
    return x[((n * d->c + c) * d->h + ih) * d->w + iw];
}

void softmax_reference(const float *row, int64_t cols, int64_t seen, double scale, double *p)
{
    double max = -INFINITY, total = 0.0;
    for (int64_t j = 0; j < seen; ++j) max = fmax(max, scale * row[j]);
    for (int64_t j = 0; j < seen; ++j) total += p[j] = exp(scale * row[j] - max);
    for (int64_t j = 0; j < cols; ++j) p[j] = j < seen ? p[j] / total : 0.0;
}

void attention_reference(const float *q, const float *k, const float *v, int64_t n, int64_t d, bool causal,
                         int64_t row, double *out, double *scale)
{
    double *p = malloc((size_t)n * sizeof *p); /* the row's scores, then its probabilities */
    if (!p) {
        for (int64_t c = 0; c < d; ++c) out[c] = NAN;
        return;
    }
    const int64_t seen = causal ? row + 1 : n;
    double max = -INFINITY, total = 0.0;
    for (int64_t j = 0; j < seen; ++j) {
        double dot = 0.0;
        for (int64_t c = 0; c < d; ++c) dot += (double)q[row * d + c] * k[j * d + c];
        p[j] = dot / sqrt((double)d);
        max = fmax(max, p[j]);
    }
    for (int64_t j = 0; j < seen; ++j) total += p[j] = exp(p[j] - max);
    for (int64_t j = 0; j < seen; ++j) p[j] /= total;
    for (int64_t c = 0; c < d; ++c) {
        double sum = 0.0, size = 0.0;
        for (int64_t j = 0; j < seen; ++j) sum += p[j] * v[j * d + c], size += p[j] * fabs(v[j * d + c]);
        out[c] = sum;
        if (scale) scale[c] = size;
    }
    free(p);
}

/* ---- errors ------------------------------------------------------------------------ */

/* The i-th of `samples` indices spread over [0, count): all of them in order
 * when there are enough samples, else a fixed pseudo-random choice (evenly
 * spaced ones could fall on the same pixel of every image). */
static int64_t sample_index(int64_t i, int64_t samples, int64_t count)
{
    if (samples >= count) return i;
    return (int64_t)(((uint64_t)i * 0x9E3779B97F4A7C15ull + 12345u) % (uint64_t)count);
}

/* |got - want| relative to `size`; NaN and infinities are infinitely wrong. */
static double relative_error(double got, double want, double size)
{
    if (!isfinite(got)) return INFINITY;
    const double e = fabs(got - want);
    return e == 0.0 ? 0.0 : e / (size > 0.0 ? size : 1e-30);
}

double conv_error(const float *x, const float *w, const conv_dims *d, const float *y, int64_t samples,
                  int64_t *worst)
{
    const int64_t count = d->n * d->k * d->h_out * d->w_out;
    double largest = 0.0;
    if (worst) *worst = 0;
    for (int64_t i = 0; i < (samples < count ? samples : count); ++i) {
        const int64_t at = sample_index(i, samples, count);
        double size;
        const double want = conv_reference(x, w, d, at, &size), e = relative_error(y[at], want, size);
        if (e > largest) {
            largest = e;
            if (worst) *worst = at;
        }
    }
    return largest;
}

double attention_error(const float *q, const float *k, const float *v, int64_t n, int64_t d, bool causal,
                       const float *out, int64_t samples, int64_t *worst)
{
    double *want = malloc((size_t)d * sizeof *want), *size = malloc((size_t)d * sizeof *size);
    double largest = want && size ? 0.0 : INFINITY;
    if (worst) *worst = 0;
    for (int64_t i = 0; want && size && i < (samples < n ? samples : n); ++i) {
        const int64_t row = sample_index(i, samples, n);
        attention_reference(q, k, v, n, d, causal, row, want, size);
        for (int64_t c = 0; c < d; ++c) {
            const double e = relative_error(out[row * d + c], want[c], size[c]);
            if (e > largest) {
                largest = e;
                if (worst) *worst = row * d + c;
            }
        }
    }
    free(want), free(size);
    return largest;
}

/* ---- measuring a call -------------------------------------------------------------- */

size_t usage_begin(device d)
{
    device_counters c = { 0 };
    if (counters_reset(d) != STATUS_OK || counters_read(d, &c) != STATUS_OK) return 0;
    return c.memory_current;
}

call_usage usage_end(device d, size_t before)
{
    device_counters c = { 0 };
    call_usage u = { 0, 0, 0, 0 };
    if (counters_read(d, &c) != STATUS_OK) return u;
    u.launches = c.launches, u.syncs = c.syncs;
    u.peak_bytes = (long long)c.memory_peak - (long long)before;
    if (device_synchronize(d) != STATUS_OK || counters_read(d, &c) != STATUS_OK) return u;
    u.left_bytes = (long long)c.memory_current - (long long)before;
    return u;
}
