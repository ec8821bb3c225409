/* given.c: lab 09's given code (given.h says what each function is for). */
#include "given.h"

#include <math.h>
#include <stdlib.h>

/* ---- arrays -------------------------------------------------------------------------- */

status device_array(device d, const float *values, int64_t count, int64_t slack, float slack_value,
                    tensor **out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "device_array: out is NULL");
    *out = NULL;
    if (count < 1 || slack < 0)
        return fail(STATUS_BAD_ARGUMENT, "device_array: count %lld, slack %lld; need count >= 1, slack >= 0",
                    (long long)count, (long long)slack);
    float *host = malloc((size_t)(count + slack) * sizeof *host);
    if (!host)
        return fail(STATUS_OUT_OF_MEMORY, "device_array: no host memory for %lld floats",
                    (long long)(count + slack));
    for (int64_t i = 0; i < count + slack; ++i) host[i] = i >= count ? slack_value : values ? values[i] : NAN;
    const status s = tensor_from_host(out, d, shape1(count + slack), host);
    free(host);
    return s;
}

/* splitmix64: a small generator whose numbers are the same everywhere. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void uniform_values(float *x, int64_t n, float low, float high, uint64_t seed)
{
    uint64_t state = seed;
    for (int64_t i = 0; i < n; ++i) {
        const double u = (double)(next_random(&state) >> 11) * 0x1.0p-53; /* [0, 1) */
        x[i] = (float)(low + (high - low) * u);
        if (x[i] >= high) x[i] = low; /* rounding to float can reach high */
    }
}

void exact_values(float *x, int64_t n, uint64_t seed)
{
    uint64_t state = seed;
    for (int64_t i = 0; i < n; ++i) x[i] = (float)((int)(next_random(&state) % 255) - 127) / 256.0f;
}

/* ---- float64 references --------------------------------------------------------------- */

double product_reference(const float *a, const float *b, int64_t n, int64_t k, int64_t row, int64_t col,
                         double *scale)
{
    double sum = 0.0, size = 0.0;
    for (int64_t p = 0; p < k; ++p) {
        const double term = (double)a[row * k + p] * (double)b[p * n + col];
        sum += term;
        size += fabs(term);
    }
    if (scale) *scale = size;
    return sum;
}

double product_error(const float *a, const float *b, const float *c, int64_t m, int64_t n, int64_t k,
                     int64_t *worst)
{
    double largest = 0.0;
    if (worst) *worst = 0;
    for (int64_t row = 0; row < m; ++row)
        for (int64_t col = 0; col < n; ++col) {
            double scale;
            const double want = product_reference(a, b, n, k, row, col, &scale);
            const double got = c[row * n + col];
            const double e = isfinite(got) ? fabs(got - want) / (scale > 0.0 ? scale : 1.0) : INFINITY;
            if (e > largest) {
                largest = e;
                if (worst) *worst = row * n + col;
            }
        }
    return largest;
}

void sum_reference(const float *x, int64_t n, double *sum, double *sum_abs)
{
    double s = 0.0, a = 0.0;
    for (int64_t i = 0; i < n; ++i) s += x[i], a += fabs(x[i]);
    *sum = s, *sum_abs = a;
}

/* ---- the library's softmax -------------------------------------------------------------- */

void softmax_cost(int64_t rows, int64_t cols, double *flop, double *bytes)
{
    const double elements = (double)rows * (double)cols;
    *flop = 4.0 * elements;
    *bytes = 8.0 * elements + 4.0 * (double)rows;
}
