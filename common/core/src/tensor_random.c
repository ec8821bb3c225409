/* random.c: seeded random tensors that hold the same values on every device.
 *
 * The values are drawn on the host with a counter-based generator (element i
 * depends only on the seed and i) and then copied to the device, so a sim:0 or
 * cuda:0 tensor is bit-for-bit the CPU one. */
#include <math.h>
#include <stdlib.h>

#include "capture.h"
#include "queues.h"
#include "labkit/tensor.h"

/* SplitMix64's finaliser: a good 64-bit mix of (seed, counter). */
static uint64_t mix(uint64_t seed, uint64_t counter)
{
    uint64_t z = seed + (counter + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static double unit_uniform(uint64_t seed, uint64_t counter)
{
    return (double)(mix(seed, counter) >> 11) * (1.0 / 9007199254740992.0);
}

typedef float (*draw_fn)(uint64_t seed, int64_t i, float p, float q);

static float draw_uniform(uint64_t seed, int64_t i, float low, float high)
{
    return (float)(low + (high - low) * unit_uniform(seed, (uint64_t)i));
}

/* Box-Muller on the pair of uniforms that belongs to element i. */
static float draw_normal(uint64_t seed, int64_t i, float mean, float stddev)
{
    const double two_pi = 6.283185307179586;
    double u1 = 1.0 - unit_uniform(seed, 2 * (uint64_t)i); /* in (0, 1]: log is finite */
    double u2 = unit_uniform(seed, 2 * (uint64_t)i + 1);
    return (float)(mean + stddev * sqrt(-2.0 * log(u1)) * cos(two_pi * u2));
}

static status random_tensor(tensor **out, device d, shape s, float p, float q, uint64_t seed, draw_fn draw,
                            const char *who)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "%s: out is NULL; pass the address of a tensor pointer", who);
    *out = NULL;
    if (capturing(d)) return capture_refuse_tensor(d, who); /* before drawing the values */
    if (copy_queue_is_open(d)) return copy_queue_refuse(d, who, "creates a tensor there");
    int64_t n = shape_numel(s);
    if (n < 1) return tensor_from_host(out, d, s, NULL); /* reports the bad shape */
    float *values = malloc((size_t)n * sizeof *values);
    if (!values) return fail(STATUS_OUT_OF_MEMORY, "%s: no host memory for %lld values", who, (long long)n);
    for (int64_t i = 0; i < n; ++i) values[i] = draw(seed, i, p, q);
    status st = tensor_from_host(out, d, s, values);
    free(values);
    return st;
}

status tensor_uniform(tensor **out, device d, shape s, float low, float high, uint64_t seed)
{
    if (!(low < high) || !isfinite(low) || !isfinite(high))
        return fail(STATUS_BAD_ARGUMENT, "tensor_uniform: need finite low < high, got low=%g high=%g",
                    (double)low, (double)high);
    return random_tensor(out, d, s, low, high, seed, draw_uniform, "tensor_uniform");
}

status tensor_normal(tensor **out, device d, shape s, float mean, float stddev, uint64_t seed)
{
    if (!(stddev >= 0) || !isfinite(mean) || !isfinite(stddev))
        return fail(STATUS_BAD_ARGUMENT,
                    "tensor_normal: need a finite mean and stddev >= 0, got mean=%g stddev=%g", (double)mean,
                    (double)stddev);
    return random_tensor(out, d, s, mean, stddev, seed, draw_normal, "tensor_normal");
}
