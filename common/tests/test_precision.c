/* test_precision.c: the single-value roundings of labkit/precision.h against
 * references built here another way: the f16 values decoded with ldexp and
 * searched for the nearest, bf16 and TF32 by comparing the two neighbours in
 * float64. Every halfway case between two neighbouring bf16 or f16 values is
 * tried, with the floats just above and below it, and every 16-bit pattern is
 * widened and rounded back.
 *
 *   test_precision          (no device: these are host functions) */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/precision.h"

/* ============================================================================
 * references
 * ========================================================================== */

/* An f16 pattern's value from its definition: (-1)^s x 2^(e-15) x 1.m, or
 * 2^-14 x 0.m for e = 0. NaN and infinity are left to the caller. */
static double f16_value(uint16_t h)
{
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const double magnitude = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -magnitude : magnitude;
}

/* The finite non-negative f16 values, 0x0000 to 0x7bff in order. */
#define F16_FINITE 0x7c00
static double f16_table[F16_FINITE];

static void build_f16_table(void)
{
    for (int h = 0; h < F16_FINITE; h++) f16_table[h] = f16_value((uint16_t)h);
}

/* The f16 nearest to x (finite), ties to the even pattern; infinity from
 * 65504 + 16 on (half of the last step, 32). */
static uint16_t f16_reference(float x)
{
    const double a = fabs((double)x);
    const uint16_t sign = signbit(x) ? 0x8000 : 0;
    if (a >= 65520.0) return sign | 0x7c00;
    int lo = 0, hi = F16_FINITE - 1; /* the last value <= a */
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (f16_table[mid] <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == F16_FINITE - 1) return sign | (uint16_t)lo;
    const double below = a - f16_table[lo], above = f16_table[lo + 1] - a;
    const int pick = below < above ? lo : above < below ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
    return sign | (uint16_t)pick;
}

/* A float pattern's value, with infinity's pattern standing for 2^128: the next
 * step after the largest finite value, where rounding to it means overflow. */
static double pattern_value(uint32_t u)
{
    const float x = float_from(u);
    if (!isinf(x)) return x;
    return signbit(x) ? -ldexp(1.0, 128) : ldexp(1.0, 128);
}

/* The nearest of the two values that keep only the top bits of x's pattern,
 * `dropped` bits fewer (x rounded toward zero, and one unit further), ties to
 * the even one. */
static uint32_t nearest_keeping_top_bits(float x, unsigned dropped)
{
    const uint32_t u = bits_of(x), unit = 1u << dropped;
    const uint32_t toward_zero = u & ~(unit - 1u), away = toward_zero + unit;
    const double below = fabs((double)x - pattern_value(toward_zero));
    const double above = fabs(pattern_value(away) - (double)x);
    if (below < above) return toward_zero;
    if (above < below) return away;
    return (toward_zero & unit) ? away : toward_zero;
}

static uint16_t bf16_reference(float x) { return (uint16_t)(nearest_keeping_top_bits(x, 16) >> 16); }
static float tf32_reference(float x) { return float_from(nearest_keeping_top_bits(x, 13)); }

/* ============================================================================
 * checks, counting mismatches and printing the first few
 * ========================================================================== */

typedef struct tally {
    const char *what;
    long tried, wrong;
} tally;

static void expect_bits16(tally *t, float x, uint16_t got, uint16_t want)
{
    t->tried++;
    if (got == want) return;
    if (t->wrong++ < HARNESS_MISMATCHES_SHOWN)
        fprintf(stderr, "    %s(%.9g = 0x%08x): got 0x%04x, want 0x%04x\n", t->what, (double)x,
                (unsigned)bits_of(x), (unsigned)got, (unsigned)want);
}

static void finish(const tally *t)
{
    EXPECT_MSG(t->wrong == 0, "%s: %ld of %ld values rounded wrong", t->what, t->wrong, t->tried);
}

/* x, and the floats just below and above it. */
static void try_around(float x, void (*check)(tally *, float), tally *t)
{
    check(t, x);
    check(t, nextafterf(x, -INFINITY));
    check(t, nextafterf(x, INFINITY));
}

static void check_f16(tally *t, float x)
{
    if (isnan(x)) return;
    expect_bits16(t, x, float_to_f16(x), f16_reference(x));
    expect_bits16(t, -x, float_to_f16(-x), f16_reference(-x));
}

static void check_bf16(tally *t, float x)
{
    if (isnan(x) || isinf(x)) return;
    /* past the largest finite bf16, the reference's "one unit further" is the
     * infinity's pattern itself, which is right */
    expect_bits16(t, x, float_to_bf16(x), bf16_reference(x));
    expect_bits16(t, -x, float_to_bf16(-x), bf16_reference(-x));
}

/* n random floats of every magnitude (random bit patterns, NaN skipped). */
static void try_random(void (*check)(tally *, float), tally *t, long n, uint64_t seed)
{
    test_rng rng = test_rng_seeded(seed);
    for (long i = 0; i < n; i++) check(t, float_from((uint32_t)test_rng_next(&rng)));
}

/* ============================================================================
 * f16
 * ========================================================================== */

static void test_f16_rounds_every_halfway_case_to_even(void)
{
    tally t = { "float_to_f16", 0, 0 };
    /* between each two neighbours (subnormals included), and at 65504 + 16 */
    for (int h = 0; h + 1 < F16_FINITE; h++) {
        const float mid = (float)((f16_table[h] + f16_table[h + 1]) / 2); /* exact: 12 bits */
        try_around(mid, check_f16, &t);
    }
    try_around(65520.0f, check_f16, &t);
    finish(&t);
    /* the classic ones, by hand */
    EXPECT_EQ_I64(float_to_f16(1.0f + 0x1p-11f), 0x3c00);     /* halfway, 1.0 is even: down */
    EXPECT_EQ_I64(float_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02); /* halfway, 1+2^-10 is odd: up */
    EXPECT_EQ_I64(float_to_f16(nextafterf(1.0f + 0x1p-11f, 2.0f)), 0x3c01);
    EXPECT_EQ_I64(float_to_f16(2047.0f / 1024.0f + 0x1p-11f), 0x4000); /* carries into the exponent */
}

static void test_f16_is_exact_on_every_f16_value_and_random_floats(void)
{
    tally t = { "float_to_f16", 0, 0 };
    for (int h = 0; h < F16_FINITE; h++) try_around((float)f16_table[h], check_f16, &t);
    try_random(check_f16, &t, 1000000, 41);
    finish(&t);
}

static void test_f16_subnormals_overflow_zeros_and_nan(void)
{
    EXPECT_EQ_I64(float_to_f16(0x1p-24f), 0x0001); /* the smallest subnormal */
    EXPECT_EQ_I64(float_to_f16(0x1p-25f), 0x0000); /* half of it: ties to even, 0 */
    EXPECT_EQ_I64(float_to_f16(nextafterf(0x1p-25f, 1)), 0x0001);
    EXPECT_EQ_I64(float_to_f16(3 * 0x1p-25f), 0x0002);        /* 1.5 units: to even, 2 */
    EXPECT_EQ_I64(float_to_f16(0x1p-14f - 0x1p-25f), 0x0400); /* rounds up into the normals */
    EXPECT_EQ_I64(float_to_f16(1023 * 0x1p-24f), 0x03ff);     /* the largest subnormal */
    EXPECT_EQ_I64(float_to_f16(-0x1p-24f), 0x8001);
    EXPECT_EQ_I64(float_to_f16(FLT_MIN), 0x0000);    /* float32's smallest normal */
    EXPECT_EQ_I64(float_to_f16(-0x1p-149f), 0x8000); /* a float32 subnormal: -0 */
    EXPECT_EQ_I64(float_to_f16(0.0f), 0x0000);
    EXPECT_EQ_I64(float_to_f16(-0.0f), 0x8000);
    EXPECT_EQ_I64(float_to_f16(65504.0f), 0x7bff); /* the largest finite */
    EXPECT_EQ_I64(float_to_f16(nextafterf(65520.0f, 0)), 0x7bff);
    EXPECT_EQ_I64(float_to_f16(65520.0f), 0x7c00); /* halfway to 65536: overflows */
    EXPECT_EQ_I64(float_to_f16(-1e6f), 0xfc00);
    EXPECT_EQ_I64(float_to_f16(FLT_MAX), 0x7c00);
    EXPECT_EQ_I64(float_to_f16(INFINITY), 0x7c00);
    EXPECT_EQ_I64(float_to_f16(-INFINITY), 0xfc00);
    const float nans[] = { NAN, -NAN, float_from(0x7f800001u), float_from(0xffbfffffu) };
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        const uint16_t h = float_to_f16(nans[i]);
        EXPECT_MSG((h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0,
                   "float_to_f16(NaN 0x%08x) = 0x%04x: not a NaN", (unsigned)bits_of(nans[i]), (unsigned)h);
        EXPECT_MSG(h & 0x0200, "float_to_f16(NaN 0x%08x) = 0x%04x: not a quiet NaN",
                   (unsigned)bits_of(nans[i]), (unsigned)h);
    }
}

static void test_f16_widens_every_pattern_exactly_and_rounds_back_to_it(void)
{
    long wrong = 0;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        const float x = f16_to_float((uint16_t)h);
        const bool special = (h & 0x7c00) == 0x7c00;
        const bool nan = special && (h & 0x03ff);
        bool ok;
        if (nan)
            ok = isnan(x);
        else if (special)
            ok = isinf(x) && (signbit(x) != 0) == ((h & 0x8000) != 0);
        else
            ok = (double)x == f16_value((uint16_t)h) && (signbit(x) != 0) == ((h & 0x8000) != 0);
        if (ok && !nan) ok = float_to_f16(x) == h;
        if (!ok && wrong++ < HARNESS_MISMATCHES_SHOWN)
            fprintf(stderr, "    f16 0x%04x: widened to %.9g, rounded back to 0x%04x\n", (unsigned)h,
                    (double)x, (unsigned)float_to_f16(x));
    }
    EXPECT_MSG(wrong == 0, "%ld of 65536 f16 patterns do not widen exactly and round back", wrong);
    EXPECT(f16_to_float(0x0001) == 0x1p-24f);
    EXPECT(f16_to_float(0x7bff) == 65504.0f);
    EXPECT(signbit(f16_to_float(0x8000)) && f16_to_float(0x8000) == 0.0f);
}

/* ============================================================================
 * bf16
 * ========================================================================== */

static void test_bf16_rounds_every_halfway_case_to_even(void)
{
    tally t = { "float_to_bf16", 0, 0 };
    /* the midpoint above each non-negative finite bf16: its pattern with bit 15 set */
    for (uint32_t h = 0; h < 0x7f80; h++) try_around(float_from((h << 16) | 0x8000u), check_bf16, &t);
    try_random(check_bf16, &t, 1000000, 43);
    finish(&t);
    EXPECT_EQ_I64(float_to_bf16(1.0f + 0x1p-8f), 0x3f80);     /* halfway, 1.0 is even: down */
    EXPECT_EQ_I64(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82); /* halfway from odd: up */
    EXPECT_EQ_I64(float_to_bf16(nextafterf(1.0f + 0x1p-8f, 2.0f)), 0x3f81);
    EXPECT_EQ_I64(float_to_bf16(3.14159265f), 0x4049); /* pi: 3.140625 */
}

static void test_bf16_subnormals_overflow_zeros_and_nan(void)
{
    EXPECT_EQ_I64(float_to_bf16(0x1p-133f), 0x0001); /* bf16's smallest subnormal */
    EXPECT_EQ_I64(float_to_bf16(0x1p-134f), 0x0000); /* half of it: ties to even */
    EXPECT_EQ_I64(float_to_bf16(3 * 0x1p-134f), 0x0002);
    EXPECT_EQ_I64(float_to_bf16(-0x1p-149f), 0x8000); /* float32's smallest: -0 */
    EXPECT_EQ_I64(float_to_bf16(0.0f), 0x0000);
    EXPECT_EQ_I64(float_to_bf16(-0.0f), 0x8000);
    EXPECT_EQ_I64(float_to_bf16(float_from(0x7f7f0000u)), 0x7f7f); /* the largest finite */
    EXPECT_EQ_I64(float_to_bf16(float_from(0x7f7f7fffu)), 0x7f7f);
    EXPECT_EQ_I64(float_to_bf16(float_from(0x7f7f8000u)), 0x7f80); /* halfway past it: overflows */
    EXPECT_EQ_I64(float_to_bf16(FLT_MAX), 0x7f80);
    EXPECT_EQ_I64(float_to_bf16(-FLT_MAX), 0xff80);
    EXPECT_EQ_I64(float_to_bf16(INFINITY), 0x7f80);
    EXPECT_EQ_I64(float_to_bf16(-INFINITY), 0xff80);
    const float nans[] = { NAN, -NAN, float_from(0x7f800001u), float_from(0xffbfffffu),
                           float_from(0x7fff8000u) };
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        const uint16_t h = float_to_bf16(nans[i]);
        EXPECT_MSG((h & 0x7f80) == 0x7f80 && (h & 0x007f) != 0,
                   "float_to_bf16(NaN 0x%08x) = 0x%04x: not a NaN", (unsigned)bits_of(nans[i]), (unsigned)h);
        EXPECT_MSG(h & 0x0040, "float_to_bf16(NaN 0x%08x) = 0x%04x: not a quiet NaN",
                   (unsigned)bits_of(nans[i]), (unsigned)h);
    }
}

static void test_bf16_widens_every_pattern_exactly_and_rounds_back_to_it(void)
{
    long wrong = 0;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        const float x = bf16_to_float((uint16_t)h);
        const bool nan = (h & 0x7f80) == 0x7f80 && (h & 0x007f);
        bool ok = bits_of(x) == h << 16; /* exactly the top half of a float32 */
        if (ok && !nan) ok = float_to_bf16(x) == h;
        if (!ok && wrong++ < HARNESS_MISMATCHES_SHOWN)
            fprintf(stderr, "    bf16 0x%04x: widened to 0x%08x, rounded back to 0x%04x\n", (unsigned)h,
                    (unsigned)bits_of(x), (unsigned)float_to_bf16(x));
    }
    EXPECT_MSG(wrong == 0, "%ld of 65536 bf16 patterns do not widen exactly and round back", wrong);
}

/* ============================================================================
 * TF32
 * ========================================================================== */

static void check_tf32(tally *t, float x)
{
    if (isnan(x) || isinf(x)) return;
    const float got = float_to_tf32(x), want = tf32_reference(x);
    t->tried++;
    if (bits_of(got) == bits_of(want)) return;
    if (t->wrong++ < HARNESS_MISMATCHES_SHOWN)
        fprintf(stderr, "    float_to_tf32(%.9g = 0x%08x): got 0x%08x, want 0x%08x\n", (double)x,
                (unsigned)bits_of(x), (unsigned)bits_of(got), (unsigned)bits_of(want));
}

static void test_tf32_keeps_ten_mantissa_bits_rounded_to_even(void)
{
    tally t = { "float_to_tf32", 0, 0 };
    /* halfway cases over the whole range: a TF32 pattern with bit 12 set */
    test_rng rng = test_rng_seeded(47);
    for (int i = 0; i < 200000; i++) {
        const uint32_t kept = (uint32_t)test_rng_next(&rng) & 0x7f7fe000u;
        try_around(float_from(kept | 0x1000u), check_tf32, &t);
    }
    try_random(check_tf32, &t, 1000000, 49);
    finish(&t);
    EXPECT(float_to_tf32(1.0f + 0x1p-11f) == 1.0f);
    EXPECT(float_to_tf32(1.0f + 3 * 0x1p-11f) == 1.0f + 0x1p-9f);
    EXPECT(float_to_tf32(nextafterf(1.0f + 0x1p-11f, 2.0f)) == 1.0f + 0x1p-10f);
    EXPECT(float_to_tf32(0.1f) == 0.0999755859375f); /* 0x3dcc c000 */
    EXPECT(bits_of(float_to_tf32(-0.0f)) == 0x80000000u);
    EXPECT(float_to_tf32(FLT_MAX) == INFINITY);
    EXPECT(float_to_tf32(-INFINITY) == -INFINITY);
    EXPECT(isnan(float_to_tf32(NAN)));
    /* every result has its low 13 bits zero */
    EXPECT((bits_of(float_to_tf32(3.14159265f)) & 0x1fffu) == 0);
}

/* ============================================================================ */

int main(void)
{
    build_f16_table();
    RUN_TEST(test_f16_rounds_every_halfway_case_to_even);
    RUN_TEST(test_f16_is_exact_on_every_f16_value_and_random_floats);
    RUN_TEST(test_f16_subnormals_overflow_zeros_and_nan);
    RUN_TEST(test_f16_widens_every_pattern_exactly_and_rounds_back_to_it);
    RUN_TEST(test_bf16_rounds_every_halfway_case_to_even);
    RUN_TEST(test_bf16_subnormals_overflow_zeros_and_nan);
    RUN_TEST(test_bf16_widens_every_pattern_exactly_and_rounds_back_to_it);
    RUN_TEST(test_tf32_keeps_ten_mantissa_bits_rounded_to_even);
    return harness_finish();
}
