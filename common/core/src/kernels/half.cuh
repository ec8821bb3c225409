/* half.cuh: float32 rounded to the low-precision formats of tensor cores (bf16,
 * f16, TF32) and widened back, one value at a time: one definition for the host
 * and for every GPU.
 *
 * Written in the C subset of CUDA, like the kernels: nvcc compiles it into the
 * real GPU's conversion kernels (convert.cuh), the C compiler into the simulated
 * GPU's and into the host's functions (precision.c, through
 * labkit/cuda_emulation.h). So a tensor converted on cpu, sim:0 or cuda:0 holds
 * the very same bits.
 *
 *   format    sign  exponent  mantissa   largest finite   smallest normal
 *   float32     1       8        23      3.4e38           2^-126
 *   bf16        1       8         7      3.4e38           2^-126
 *   f16         1       5        10      65504            2^-14 (subnormals to 2^-24)
 *   TF32        1       8        10      3.4e38           2^-126 (stored in a float32)
 *
 * Rounding is to nearest, ties to even, as the GPU's cvt.rn does: a value at or
 * beyond half a unit above the largest finite one becomes an infinity of its
 * sign; infinities and signed zeros stay what they are; a NaN becomes the
 * canonical quiet NaN 0x7fff, as CUDA's __float2bfloat16_rn and __float2half_rn
 * give. Widening back to float32 is exact: every bf16 and f16 value is a float32. */
#ifndef LABKIT_KERNELS_HALF_CUH
#define LABKIT_KERNELS_HALF_CUH

#include <stdint.h>
#include <string.h>

/* A float's bits and back; memcpy is how C and CUDA both say it without
 * undefined behaviour, and compilers turn it into a plain move. */
static __host__ __device__ inline uint32_t bits_of_float(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static __host__ __device__ inline float float_of_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#define HALF_CANONICAL_NAN 0x7fffu

static __host__ __device__ inline int is_nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

/* Keeps the top bits of u and rounds off its low `dropped` bits to nearest,
 * ties to even: adding just under half (2^(dropped-1) - 1), plus one more when
 * the kept part is odd, carries into the kept part exactly when the dropped
 * part is above half, or half with an odd kept part. A carry may ripple into
 * the exponent (1.1111111 rounds up to 10.000000) and, past the largest finite
 * value, into the pattern of infinity: both are what rounding means. */
static __host__ __device__ inline uint32_t round_off_low_bits(uint32_t u, unsigned dropped)
{
    const uint32_t odd = (u >> dropped) & 1u;
    return (u + ((1u << (dropped - 1u)) - 1u) + odd) >> dropped;
}

/* ---- bf16: float32's top 16 bits ----------------------------------------------- */

static __host__ __device__ inline uint16_t bf16_bits_from_float(float x)
{
    const uint32_t u = bits_of_float(x);
    if (is_nan_bits(u)) return (uint16_t)HALF_CANONICAL_NAN;
    return (uint16_t)round_off_low_bits(u, 16);
}

static __host__ __device__ inline float float_from_bf16_bits(uint16_t h)
{
    return float_of_bits((uint32_t)h << 16);
}

/* ---- f16: 5 exponent bits, so a smaller range and subnormals ---------------------- */

/* |x| below f16's smallest normal, 2^-14: a multiple of 2^-24 (a subnormal), to
 * nearest, ties to even. a is |x|'s bits. */
static __host__ __device__ inline uint32_t f16_subnormal_bits(uint32_t a)
{
    const uint32_t exponent = a >> 23;
    /* |x| < 2^-25 (float32 subnormals and zeros too) is below half of 2^-24: zero */
    if (exponent < 102u) return 0u;
    /* |x| = m x 2^(exponent - 150) with m the 24-bit mantissa, implicit 1 included;
     * in units of 2^-24 that is m / 2^(126 - exponent), rounded */
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const unsigned shift = 126u - exponent; /* 14 to 24 */
    const uint32_t kept = m >> shift, rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    /* a carry out of 0x3ff gives 0x400, f16's smallest normal: right again */
    return kept + (rest > half || (rest == half && (kept & 1u)));
}

static __host__ __device__ inline uint16_t f16_bits_from_float(float x)
{
    const uint32_t u = bits_of_float(x);
    if (is_nan_bits(u)) return (uint16_t)HALF_CANONICAL_NAN;
    const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a < 0x38800000u) return (uint16_t)(sign | f16_subnormal_bits(a)); /* |x| < 2^-14 */
    /* A normal f16 (before rounding): the exponent's bias goes from 127 to 15
     * (subtract 112 << 23), then 13 mantissa bits are rounded off. Anything
     * that lands on or past the infinity's pattern, 0x7c00 (|x| >= 65520),
     * overflows to infinity. */
    const uint32_t r = round_off_low_bits(a - (112u << 23), 13);
    return (uint16_t)(sign | (r < 0x7c00u ? r : 0x7c00u));
}

static __host__ __device__ inline float float_from_f16_bits(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0x1fu) return float_of_bits(sign | 0x7f800000u | (mantissa << 13)); /* inf, NaN */
    if (exponent != 0u) return float_of_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
    /* zero or a subnormal, mantissa x 2^-24: exact in float32, a normal number there */
    const float magnitude = (float)mantissa * 5.9604644775390625e-08f;
    return sign ? -magnitude : magnitude;
}

/* ---- TF32: float32 with 10 mantissa bits ------------------------------------------- */

/* The nearest TF32 value, ties to even, still stored as a float32 (its low 13
 * bits zero). Infinities and NaN stay as they are; FLT_MAX rounds to infinity. */
static __host__ __device__ inline float tf32_rounded(float x)
{
    const uint32_t u = bits_of_float(x);
    if ((u & 0x7fffffffu) >= 0x7f800000u) return x;
    return float_of_bits(round_off_low_bits(u, 13) << 13);
}

#endif
