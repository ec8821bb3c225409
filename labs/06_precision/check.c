/* check.c: does lab 06 hold on a device?
 *
 *   check06 --device D
 *
 * 1. your rounding to bf16 gives the library's bits on every kind of edge
 *    case: halfway values, carries, subnormals, the largest floats,
 *    infinities and NaNs, and on a million patterns of every exponent,
 *    without calling the library's conversions (counted through wrappers);
 * 2. a BF16 or F16 operand is x rounded, on x's device (on a second device
 *    too), made without crossing the bus, in half the bytes; FP32 and TF32
 *    operands are x itself, with a reference of their own; an x that is not
 *    float32 is refused, out set to NULL; a conversion that fails (refused
 *    through a wrapper) is returned, out NULL, its tensor freed; on a GPU a
 *    bf16 matrix copies in about half the time;
 * 3. each product stays within the error bound its inputs' bits predict
 *    (the layouts named where not), FP32's errs by a few float32 roundings,
 *    the others at least 100 times more than FP32's (their inputs were
 *    rounded), every precision adds the bias (exactly, on small integers),
 *    and operands of the wrong dtype are refused; on a GPU with
 *    tensor cores the low precisions are several times faster than FP32;
 * 4. the unit roundoff and the relative error are right on exact inputs
 *    (small values too: only a reference of zeros is refused), and a bf16 or
 *    f16 product errs by about its unit roundoff, whatever k;
 * 5. the peak that applies is the tensor cores' where they handle the format;
 * 6. a mixed product keeps its float32 operands, adds the bias at every
 *    precision (exactly, on small integers) and leaves nothing behind,
 *    also when it fails half way, returning that failure (out of memory on a
 *    full simulated GPU), and an MLP trained with bf16 products learns like
 *    one trained in FP32;
 * and at the end the bytes in use on the device and the cpu are those of the
 * start.
 *
 * Speed is claimed only as ratios with wide margins, on work sized to
 * dominate noise; everything else is exact or bounded. A call of yours that
 * fails breaks the claim it was called for; only an unwritten step (todo)
 * stops the check, at its TODO. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/check_full_device.h"
#include "labkit/precision.h"
#include "measure.h"
#include "mixed_mlp.h"

static float float_of(uint32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* "a" or "an", as the name of p is read: "an F16 operand", "a BF16 operand". */
static const char *article(lab_precision p) { return p == LAB_F16 || p == LAB_FP32 ? "an" : "a"; }

/* ==== 1. rounding to bf16 ================================================= */

/* The library's conversions are the answer to step 1 (lab.h: "do not call
 * it"), and they give the right bits, so no value can tell them from the
 * student's own rounding. The check is linked with -Wl,--wrap for each
 * (LAB_CHECK_LINK_OPTIONS in lab.cmake): every call goes through a wrapper
 * below, which counts those made while lab_float_to_bf16 runs. */
uint16_t __real_float_to_bf16(float x);
uint16_t __real_float_to_f16(float x);
float __real_float_to_tf32(float x);
status __real_tensor_convert(const tensor *src, tensor *dst);
uint16_t __wrap_float_to_bf16(float x);
uint16_t __wrap_float_to_f16(float x);
float __wrap_float_to_tf32(float x);
status __wrap_tensor_convert(const tensor *src, tensor *dst);

static struct {
    bool counting;     /* lab_float_to_bf16 is running */
    long calls;        /* of the library's conversions while it ran */
    const char *first; /* the first one called */
    long roundings;    /* calls of lab_float_to_bf16 */
} library;

static void library_called(const char *name)
{
    if (library.counting && library.calls++ == 0) library.first = name;
}

uint16_t __wrap_float_to_bf16(float x)
{
    library_called("float_to_bf16");
    return __real_float_to_bf16(x);
}

uint16_t __wrap_float_to_f16(float x)
{
    library_called("float_to_f16");
    return __real_float_to_f16(x);
}

float __wrap_float_to_tf32(float x)
{
    library_called("float_to_tf32");
    return __real_float_to_tf32(x);
}

/* While set, every tensor_convert fails, as a conversion whose launch the
 * device refuses would (check_conversion_failures). */
static bool refuse_conversions;

status __wrap_tensor_convert(const tensor *src, tensor *dst)
{
    library_called("tensor_convert");
    if (refuse_conversions)
        return fail(STATUS_BACKEND_FAILED, "tensor_convert: the conversion failed (the check refused it)");
    return __real_tensor_convert(src, dst);
}

/* lab_float_to_bf16, with the library's conversions counted while it runs. */
static status your_rounding(float x, uint16_t *bits)
{
    library.counting = true;
    const status s = lab_float_to_bf16(x, bits);
    library.counting = false;
    ++library.roundings;
    return s;
}

static bool bf16_is_nan(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0; }

/* Your bits for the float32 pattern `bits`, against the library's; for a NaN,
 * any bf16 NaN. */
static bool rounds_right(uint32_t bits, uint16_t mine)
{
    const float x = float_of(bits);
    return isnan(x) ? bf16_is_nan(mine) : mine == float_to_bf16(x);
}

static void check_rounding_cases(const char *claim, const uint32_t *cases, size_t n)
{
    char wrong[320] = "", seen[160] = "";
    int bad = 0;
    for (size_t i = 0; i < n; ++i) {
        uint16_t mine = 0xDEAD;
        if (!CHECK_CALL(your_rounding(float_of(cases[i]), &mine), claim)) return;
        if (i < 3)
            check_append(seen, sizeof seen, "%s0x%08X -> 0x%04X", i ? ", " : "", (unsigned)cases[i], mine);
        if (!rounds_right(cases[i], mine) && bad++ < 3)
            check_append(wrong, sizeof wrong, " 0x%08X (%.9g) -> 0x%04X, want 0x%04X%s;", (unsigned)cases[i],
                         (double)float_of(cases[i]), mine, float_to_bf16(float_of(cases[i])),
                         isnan(float_of(cases[i])) ? " (any NaN)" : "");
    }
    if (bad)
        check_that(false, claim, "%d of %zu wrong:%s", bad, n, wrong);
    else
        check_that(true, claim, "%zu values, e.g. %s", n, seen);
}

static void check_rounding(void)
{
    static const uint32_t ties[] = {
        0x3F808000, /* 1 + 2^-8, halfway between 0x3F80 and 0x3F81: to 0x3F80 */
        0x3F818000, /* halfway between 0x3F81 and 0x3F82: to 0x3F82 */
        0xBF808000, 0xBF818000, 0x40498000, 0x3FFF8000, /* the last carries into the exponent */
        0x00008000, 0x00018000,                         /* halfway between subnormals */
    };
    static const uint32_t nearest[] = {
        0x00000000, 0x80000000, 0x3F800000, 0x3F808001, 0x3F807FFF, 0x3F80C000, 0x3F804000,
        0x40490FDB, 0xC0490FDB, 0x3F7FFFFF, 0x3FFFFFFF, 0x477FFFFF, 0x3DCCCCCD, 0xC2F6E979,
    };
    static const uint32_t subnormals[] = {
        0x00000001, 0x00010000, 0x0001FFFF, 0x007FFFFF, 0x80010000, 0x00400000, 0x80000001, 0x807FC000,
    };
    static const uint32_t largest[] = {
        0x7F7F0000, 0x7F7F7FFF, 0x7F7FFFFF, 0x7F7F8000, 0x7F7F8001, 0xFF7FFFFF, 0xFF7F7FFF, 0x7F7EFFFF,
    };
    static const uint32_t specials[] = {
        0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0xFFC00000, 0xFF800001, 0x7FBFFFFF,
    };
    check_rounding_cases("halfway cases round to the even neighbour", ties, sizeof ties / sizeof *ties);
    check_rounding_cases("values between two bf16 numbers round to the nearest, carrying into the exponent",
                         nearest, sizeof nearest / sizeof *nearest);
    check_rounding_cases("subnormals round like any other value", subnormals,
                         sizeof subnormals / sizeof *subnormals);
    check_rounding_cases("the largest floats round to the largest bf16 or to infinity, never to a NaN",
                         largest, sizeof largest / sizeof *largest);
    check_rounding_cases("infinities stay infinities and NaNs stay NaNs", specials,
                         sizeof specials / sizeof *specials);

    /* A million patterns spread over every exponent, sign and mantissa. */
    const char *claim = "the rounding matches the library's on 2^20 float32 patterns of every exponent";
    uint64_t state = 0x9E3779B97F4A7C15ull;
    long bad = 0;
    uint32_t first = 0;
    uint16_t first_mine = 0;
    for (int i = 0; i < 1 << 20; ++i) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17; /* xorshift64 */
        const uint32_t bits = (uint32_t)(state >> 32);
        uint16_t mine = 0;
        if (!CHECK_CALL(your_rounding(float_of(bits), &mine), claim)) return;
        if (!rounds_right(bits, mine) && bad++ == 0) first = bits, first_mine = mine;
    }
    if (bad)
        check_that(false, claim, "%ld differ, the first 0x%08X (%.9g): yours 0x%04X, the library's 0x%04X",
                   bad, (unsigned)first, (double)float_of(first), first_mine, float_to_bf16(float_of(first)));
    else
        check_that(true, claim, "all %d agree", 1 << 20);

    check_that(library.calls == 0,
               "the rounding is your own: lab_float_to_bf16 calls none of the library's conversions",
               library.calls
                   ? "%ld calls during your %ld roundings, the first of %s: it is the answer, which "
                     "lab.h asks you not to call; round the bits yourself"
                   : "%ld calls of float_to_bf16, float_to_f16, float_to_tf32 or tensor_convert "
                     "during your %ld roundings%s",
               library.calls, library.roundings, library.calls ? library.first : "");
}

/* ==== 2. operands: bytes and bits ============================================ */

/* x [64, 64]: values that test each format, then uniform ones in [-2, 2). */
static float *operand_values(int64_t count)
{
    float *x = NULL;
    CHECK(random_host(&x, count, -2.0f, 2.0f, 61));
    const float special[] = {
        1.0f + 0x1p-8f, 70000.0f, 1e-6f, -3.14159265f, 65504.0f, 65520.0f, -1e30f, 0.1f
    };
    memcpy(x, special, sizeof special);
    return x;
}

/* What lab_operand(x, p) did on x's device: its bytes, copies and result. */
typedef struct operand_made {
    tensor *out;
    size_t bytes_added; /* device memory in use afterwards, less before */
    uint64_t copies;    /* copies the device counted during the call */
} operand_made;

static bool make_operand(tensor *x, lab_precision p, const char *claim, operand_made *m)
{
    const device d = tensor_device(x);
    device_counters before, after;
    memset(m, 0, sizeof *m);
    CHECK(device_synchronize(d));
    CHECK(counters_reset(d));
    CHECK(counters_read(d, &before));
    if (!CHECK_CALL(lab_operand(x, p, &m->out), claim)) return false;
    CHECK(counters_read(d, &after));
    m->bytes_added = after.memory_current - before.memory_current;
    m->copies = after.h2d_copies + after.d2h_copies + after.d2d_copies;
    if (!m->out)
        check_that(false, claim, "lab_operand(x, LAB_%s, &out) succeeded, but out is NULL",
                   precision_name(p));
    return m->out != NULL;
}

/* The operand holds x rounded by `round`, as `type`, with x's shape, on x's device. */
static void check_rounded_operand(tensor *x, const float *values, lab_precision p, dtype type,
                                  uint16_t (*round)(float), const char *also, operand_made *m)
{
    char claim[160];
    snprintf(claim, sizeof claim, "%s %s operand is x rounded to %s, with x's shape, on x's device%s",
             article(p), precision_name(p), dtype_name(type), also ? also : "");
    if (!make_operand(x, p, claim, m)) return;
    const int64_t n = tensor_numel(x);
    char where[64];
    tensor_describe(m->out, where, sizeof where);
    if (tensor_dtype(m->out) != type || tensor_numel(m->out) != n ||
        tensor_dim(m->out, 0) != tensor_dim(x, 0) || !device_equal(tensor_device(m->out), tensor_device(x))) {
        char of_x[64];
        check_that(false, claim, "%s, for x %s", where, tensor_describe(x, of_x, sizeof of_x));
        return;
    }
    uint16_t *bits = malloc((size_t)n * sizeof *bits);
    if (!bits) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
    CHECK(tensor_to_host_raw(m->out, bits, (size_t)n * sizeof *bits));
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; ++i)
        if (bits[i] != round(values[i]) && bad++ == 0) first = i;
    if (bad)
        check_that(false, claim, "%lld of %lld elements differ; x[%lld] = %.9g gave 0x%04X, want 0x%04X",
                   (long long)bad, (long long)n, (long long)first, (double)values[first], bits[first],
                   round(values[first]));
    else
        check_that(true, claim, "%s, every element's bits (70000 -> 0x%04X)", where, round(70000.0f));
    free(bits);
}

static size_t memory_in_use(device d);

/* The device beside d of its kind (sim:1 for sim:0), else the cpu for a GPU:
 * where an operand made on try_gpu(0), or on d, instead of on x's own device
 * shows. The cpu has none. */
static bool neighbour(device d, device *e)
{
    if (!device_is_gpu(d)) return false;
    *e = d;
    e->index = d.index + 1 < device_count(d.kind) ? d.index + 1 : d.index - 1;
    if (e->index < 0 || e->index == d.index) *e = device_cpu();
    return true;
}

#define FP32_REFERENCE "FP32 and TF32 operands are x with one more reference: freeing them leaves x alive"

static void check_operands(device d)
{
    enum { SIDE = 64 };
    const int64_t n = SIDE * SIDE;
    float *values = operand_values(n);
    tensor *x = NULL;
    CHECK(tensor_from_host(&x, d, shape2(SIDE, SIDE), values));
    operand_made bf16 = { 0 }, f16 = { 0 }, same[2] = { { 0 } };
    check_rounded_operand(x, values, LAB_BF16, DTYPE_BF16, float_to_bf16, NULL, &bf16);
    check_rounded_operand(x, values, LAB_F16, DTYPE_F16, float_to_f16, NULL, &f16);
    device e;
    if (neighbour(d, &e)) { /* x on another device than d: the operand is made there */
        tensor *x_e = NULL;
        operand_made there = { 0 };
        char also[64];
        snprintf(also, sizeof also, ": x on %s, beside %s", device_name(e), device_name(d));
        CHECK(tensor_from_host(&x_e, e, shape2(SIDE, SIDE), values));
        check_rounded_operand(x_e, values, LAB_BF16, DTYPE_BF16, float_to_bf16, also, &there);
        tensor_free(there.out), tensor_free(x_e);
    }

    const char *claim = "FP32 and TF32 operands are x itself, nothing allocated: TF32 is float32 in memory";
    if (make_operand(x, LAB_FP32, claim, &same[0]) && make_operand(x, LAB_TF32, claim, &same[1]))
        check_that(same[0].out == x && same[1].out == x && same[0].bytes_added + same[1].bytes_added == 0,
                   claim, "FP32: %s, TF32: %s, %zu bytes allocated",
                   same[0].out == x ? "x" : "another tensor", same[1].out == x ? "x" : "another tensor",
                   same[0].bytes_added + same[1].bytes_added);
    /* The caller frees the operand, as it frees a rounded one: an FP32 operand
     * handed back without a reference of its own (*out = x) frees x with it,
     * and every product would then free x twice. */
    for (int i = 0; i < 2; ++i) {
        if (!same[i].out) continue;
        const size_t before = memory_in_use(d);
        tensor_free(same[i].out);
        const size_t after = memory_in_use(d);
        if (after != before && same[i].out == x) {
            check_that(
                false, FP32_REFERENCE,
                "lab_operand(x, LAB_%s, &out) gave out == x with no reference of its own: tensor_free(out) "
                "freed x (%zu bytes in use on %s, then %zu); hand x back with tensor_to(x, "
                "tensor_device(x), &out)",
                precision_name(i == 0 ? LAB_FP32 : LAB_TF32), before, device_name(d), after);
            exit(check_finish("06_precision")); /* x is gone: what follows would free it again */
        }
    }
    if (same[0].out && same[1].out)
        check_that(true, FP32_REFERENCE, "x still in use on %s after both operands were freed",
                   device_name(d));

    if (bf16.out && f16.out) {
        check_that(bf16.copies + f16.copies == 0, "the conversion runs on x's device: nothing is copied",
                   "%llu copies counted on %s while making the BF16 and F16 operands",
                   (unsigned long long)(bf16.copies + f16.copies), device_name(d));
        const size_t half = tensor_bytes(x) / 2;
        check_that(tensor_bytes(bf16.out) == half && bf16.bytes_added == half && f16.bytes_added == half,
                   "a 16-bit operand takes half the bytes of its float32 twin",
                   "x %zu bytes; BF16 %zu bytes (%zu more in use on %s), F16 %zu more", tensor_bytes(x),
                   tensor_bytes(bf16.out), bf16.bytes_added, device_name(d), f16.bytes_added);
    }
    tensor_free(bf16.out), tensor_free(f16.out);
    tensor_free(x);
    free(values);
}

#define OPERAND_REFUSES "lab_operand refuses an x that is not float32, making nothing, and sets out to NULL"

/* lab.h: "x must be f32". An operand made of a bf16 or int32 x would hand
 * a product operands of the wrong dtype, or, for FP32, x itself. And "*out
 * is NULL on failure": out starts at another tensor (`unset`), so that a
 * refusal that never sets it shows; a caller that frees *out after a
 * failure would free whatever it held. */
static void check_operand_refusals(device d)
{
    tensor *x16 = NULL, *xi = NULL, *x = NULL, *unset = NULL;
    CHECK(tensor_empty(&unset, d, DTYPE_F32, shape1(1)));
    CHECK(tensor_uniform(&x, d, shape2(8, 8), -1.0f, 1.0f, 3));
    CHECK(tensor_empty(&x16, d, DTYPE_BF16, shape2(8, 8)));
    CHECK(tensor_convert(x, x16));
    CHECK(tensor_empty(&xi, d, DTYPE_I32, shape2(8, 8)));
    CHECK(op_fill(xi, 0.0f));
    tensor *const xs[2] = { x16, xi };
    char wrong[320] = "";
    int bad = 0;
    for (int k = 0; k < 2; ++k)
        for (int i = 0; i < LAB_PRECISIONS; ++i) {
            const size_t before = memory_in_use(d);
            tensor *out = unset;
            const status s = CHECK_YOURS(lab_operand(xs[k], (lab_precision)i, &out));
            /* out == x: handed back, maybe without a reference of its own; left alone */
            if (out != xs[k] && out != unset) tensor_free(out);
            const size_t after = memory_in_use(d);
            if ((s != STATUS_BAD_ARGUMENT || out || after != before) && bad++ < 3)
                check_append(wrong, sizeof wrong, " %s x at %s: %s, out %s, %lld bytes left;",
                             dtype_name(tensor_dtype(xs[k])), precision_name(i), status_name(s),
                             out == xs[k]   ? "= x"
                             : out == unset ? "as it was before the call (not set to NULL)"
                             : out          ? "a tensor"
                                            : "NULL",
                             (long long)after - (long long)before);
        }
    check_that(
        bad == 0, OPERAND_REFUSES, "%s",
        bad ? wrong
            : "bf16 and int32 x at every precision: STATUS_BAD_ARGUMENT, out set to NULL, no byte left");
    tensor_free(x), tensor_free(x16), tensor_free(xi), tensor_free(unset);
}

#define CONVERSION_FAILS \
    "a conversion that fails: lab_operand returns its failure, out NULL, nothing left behind"

/* tensor_convert refused (a refused launch, a device gone): the BF16 and F16
 * operands must pass the failure on, free the tensor made for them and leave
 * out NULL, as lab.h asks of every failure. */
static void check_conversion_failures(device d)
{
    tensor *x = NULL, *unset = NULL;
    CHECK(tensor_empty(&unset, d, DTYPE_F32, shape1(1)));
    CHECK(tensor_uniform(&x, d, shape2(8, 8), -1.0f, 1.0f, 4));
    char figures[320] = "";
    int bad = 0;
    const lab_precision rounded[2] = { LAB_BF16, LAB_F16 };
    for (int i = 0; i < 2; ++i) {
        const size_t before = memory_in_use(d);
        tensor *out = unset;
        refuse_conversions = true;
        const status s = CHECK_YOURS(lab_operand(x, rounded[i], &out));
        refuse_conversions = false;
        CHECK(device_synchronize(d));
        const size_t after = memory_in_use(d); /* an operand handed back counts as left behind */
        if (out != unset && out != x) tensor_free(out);
        const bool right = s != STATUS_OK && !out && after == before;
        bad += !right;
        check_append(figures, sizeof figures, "%s%s: %s%s, out %s, %lld bytes left", i ? "; " : "",
                     precision_name(rounded[i]), status_name(s),
                     s == STATUS_OK ? " (the conversion's failure was lost)" : "",
                     out == unset ? "as it was before the call (not set to NULL)"
                     : out        ? "a tensor"
                                  : "NULL",
                     (long long)after - (long long)before);
    }
    check_that(bad == 0, CONVERSION_FAILS, "tensor_convert refused: %s", figures);
    tensor_free(x), tensor_free(unset);
}

#define COPY_TIME "a BF16 matrix copies to the GPU in about half the time of its FP32 twin"
#define NOTHING_LEFT "nothing is left behind: the bytes in use are back where they were at the start"

/* On a GPU: a 64 MiB float32 matrix and its bf16 operand, made on the CPU,
 * copied to the device in turn, the fastest of five each (a second of a
 * simulated GPU's time: left out of the tests of other claims). */
static void check_copy_time(device d)
{
    if (!device_is_gpu(d) || check_leaves_out(COPY_TIME, NOTHING_LEFT, NULL)) return;
    enum { REPS = 5 };
    const int64_t side = 4096;
    tensor *x = NULL, *x16 = NULL, *there = NULL, *there16 = NULL;
    CHECK(tensor_uniform(&x, device_cpu(), shape2(side, side), -1.0f, 1.0f, 5));
    const bool made = CHECK_CALL(lab_operand(x, LAB_BF16, &x16), COPY_TIME);
    if (made && !x16)
        check_that(false, COPY_TIME, "lab_operand(x, LAB_BF16, &out) succeeded, but out is NULL");
    if (!x16) {
        tensor_free(x);
        return;
    }
    CHECK(tensor_empty(&there, d, DTYPE_F32, shape2(side, side)));
    CHECK(tensor_empty(&there16, d, tensor_dtype(x16), shape2(side, side)));
    double fastest = INFINITY, fastest16 = INFINITY, t = 0, bytes = 0, bytes16 = 0;
    for (int r = 0; r < REPS; ++r) { /* in turn, so that both see the same disturbances */
        CHECK(time_copy(there, x, 1, &t, &bytes));
        fastest = fmin(fastest, t);
        CHECK(time_copy(there16, x16, 1, &t, &bytes16));
        fastest16 = fmin(fastest16, t);
    }
    check_that(2 * bytes16 == bytes && fastest16 <= 0.7 * fastest, COPY_TIME,
               "%.0f MiB in %.2f ms, %.0f MiB in %.2f ms: %.2fx (at most 0.7x)%s", bytes / (1 << 20),
               fastest * 1e3, bytes16 / (1 << 20), fastest16 * 1e3, fastest16 / fastest,
               d.kind == DEVICE_SIM ? "; a simulated GPU's copy is a memcpy, timed by the CPU time of the "
                                      "thread that makes it"
                                    : "");
    tensor_free(x), tensor_free(x16), tensor_free(there), tensor_free(there16);
}

/* ==== 3. products at each precision ========================================== */

/* The relative error of one input as device d reads it for precision p:
 * cuBLAS's TF32 kernels may drop the 13 low bits rather than round them
 * (labkit/precision.h), twice the error. */
static double input_unit(lab_precision p, device d)
{
    switch (p) {
    case LAB_FP32: return 0.0;
    case LAB_TF32: return d.kind == DEVICE_CUDA ? 0x1p-10 : 0x1p-11;
    case LAB_BF16: return 0x1p-8;
    case LAB_F16: return 0x1p-11;
    }
    return 0.0;
}

/* Float32 sums of k + 1 terms (the bias too) may err by gamma = n u / (1 - n u)
 * of sum |terms|; a tensor core may truncate its sums, twice float32's u. */
static double sum_gamma(int64_t k, device d)
{
    const double u = d.kind == DEVICE_CUDA ? 0x1p-23 : 0x1p-24, n = (double)(k + 1);
    return n * u / (1 - n * u);
}

static double rms_error(const float *got, const double *ref, int64_t n)
{
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i) total += (got[i] - ref[i]) * (got[i] - ref[i]);
    return sqrt(total / (double)n);
}

/* ||got - ref|| / ||ref||, in double: the check's own, not yours. */
static double relative_rms(const float *got, const double *ref, int64_t n)
{
    double norm = 0.0;
    for (int64_t i = 0; i < n; ++i) norm += ref[i] * ref[i];
    return rms_error(got, ref, n) / sqrt(norm / (double)n);
}

/* The layouts check_products_with tries, by number: bit 0 transposes a, bit 1
 * b; the first and the last add a bias. */
static const char *const layout_names[4] = { "a b + bias", "a^T b", "a b^T", "a^T b^T + bias" };

/* An FP32 product errs by a few float32 roundings (u = 2^-24) of its result:
 * each product and each of the k sums rounds once, to nearest, and the
 * roundings, of random signs, mostly cancel: 6 u here at k = 1000 (OpenBLAS's
 * blocked sums), about 13 u where the k terms are added one after the other
 * (a GPU's thread). Inputs read as TF32 (10 mantissa bits) err by up to 2^-11
 * each: thousands of u. FP32_UNITS lies between, 10x from either. */
#define FP32_UNITS 128

/* How many elements of got lie outside the bound of precision p on d: each
 * input read with relative error u, each sum with gamma, so
 *     |got - ref| <= ((1 + u)^2 (1 + gamma) - 1) sum |a||b|. */
static int64_t outside_bound(const product_case *c, const float *got, lab_precision p, device d,
                             double *worst)
{
    const double u = input_unit(p, d), factor = (1 + u) * (1 + u) * (1 + sum_gamma(c->k, d)) - 1;
    int64_t outside = 0;
    *worst = 0;
    for (int64_t i = 0; i < c->m * c->n; ++i) {
        const double ratio = fabs(got[i] - c->ref[i]) / (factor * c->mag[i]);
        *worst = isnan(ratio) ? INFINITY : fmax(*worst, ratio);
        outside += !(ratio <= 1.0);
    }
    return outside;
}

typedef status (*product_runner)(const product_case *c, device d, lab_precision p, float *got);

/* What a runner calls of yours, for the message of a call that fails. */
static const char *runner_calls(product_runner run)
{
    return run == product_case_run ? "lab_operand and lab_matmul_at (measure.c, product_case_run)"
                                   : "lab_mixed_product";
}

/* Every layout (a and b transposed or not, with a bias on two of them) at
 * every precision: within the bound, and, below FP32, far from FP32. */
static void check_products_with(device d, product_runner run, const char *how)
{
    enum { M = 48, N = 40, K = 1000 };
    static float got[LAB_PRECISIONS][M * N];
    int64_t outside[LAB_PRECISIONS] = { 0 };
    unsigned outside_layouts[LAB_PRECISIONS] = { 0 }; /* bit l: layout l had elements outside */
    double worst[LAB_PRECISIONS] = { 0 }, low_ratio[LAB_PRECISIONS], fp32_error = 0.0;
    bool ran[LAB_PRECISIONS] = { 0 };
    for (int i = 0; i < LAB_PRECISIONS; ++i) low_ratio[i] = INFINITY, ran[i] = true;
    for (int layout = 0; layout < 4; ++layout) {
        product_case c;
        CHECK(product_case_make(&c, M, N, K, layout & 1, layout & 2, layout == 0 || layout == 3,
                                700 + (uint64_t)layout));
        for (int i = 0; i < LAB_PRECISIONS; ++i) {
            char claim[128];
            snprintf(claim, sizeof claim, "%s %s products stay within the bound", how, precision_name(i));
            if (!ran[i]) continue;
            ran[i] = check_call(run(&c, d, (lab_precision)i, got[i]), runner_calls(run), claim, __FILE__,
                                __LINE__);
            double w = 0;
            const int64_t out = ran[i] ? outside_bound(&c, got[i], (lab_precision)i, d, &w) : 0;
            outside[i] += out;
            if (out) outside_layouts[i] |= 1u << layout;
            worst[i] = fmax(worst[i], w);
        }
        if (ran[LAB_FP32]) { /* NaN stays NaN: fmax would drop it */
            const double e = relative_rms(got[LAB_FP32], c.ref, M * N) / 0x1p-24;
            fp32_error = isnan(e) || isnan(fp32_error) ? NAN : fmax(fp32_error, e);
        }
        const double fp32 = ran[LAB_FP32] ? rms_error(got[LAB_FP32], c.ref, M * N) : NAN;
        for (int i = LAB_TF32; i < LAB_PRECISIONS; ++i)
            if (ran[i]) low_ratio[i] = fmin(low_ratio[i], rms_error(got[i], c.ref, M * N) / fp32);
        product_case_free(&c);
    }
    for (int i = 0; i < LAB_PRECISIONS; ++i) {
        if (!ran[i]) continue;
        char claim[128];
        snprintf(claim, sizeof claim, "%s %s products stay within the bound %s predict", how,
                 precision_name(i), i == LAB_FP32 ? "float32's sums" : "their inputs' bits");
        char layouts[96] = "";
        for (int l = 0; l < 4; ++l)
            if (outside_layouts[i] & 1u << l)
                check_append(layouts, sizeof layouts, "%s%s", layouts[0] ? ", " : " (in ", layout_names[l]);
        check_that(outside[i] == 0, claim,
                   "[%dx%d]x[%dx%d], 4 layouts: %lld elements outside%s%s, the worst at %.2g of it", M, K, K,
                   N, (long long)outside[i], layouts, layouts[0] ? ")" : "", worst[i]);
    }
    if (ran[LAB_FP32]) {
        char claim[160];
        snprintf(claim, sizeof claim,
                 "%s FP32 products read every bit of their inputs: they err by at most %d u (u = 2^-24)", how,
                 FP32_UNITS);
        check_that(fp32_error <= FP32_UNITS, claim, "relative error %.1f u, the worst of 4 layouts%s",
                   fp32_error,
                   fp32_error <= FP32_UNITS || fp32_error > 0x1p16
                       ? ""
                       : " (inputs read with fewer bits, as TF32 reads them, give thousands of u: FP32 reads "
                         "float32 whole)");
    }
    for (int i = LAB_TF32; i < LAB_PRECISIONS; ++i) {
        if (!ran[i] || !ran[LAB_FP32]) continue;
        char claim[128];
        snprintf(claim, sizeof claim,
                 "%s %s products err at least 100x more than FP32's: the inputs were rounded", how,
                 precision_name(i));
        check_that(low_ratio[i] >= 100, claim, "rms error %.0fx FP32's (the least of 4 layouts)%s",
                   low_ratio[i],
                   fp32_error <= FP32_UNITS ? "" : "; FP32's own error is too large: see its claim above");
    }
}

/* a [M, K] and b [K, N] of small integers and a bias of halves: every input
 * is exact in bf16, f16 and TF32, and every sum exact in float32, so each
 * precision's product must give exactly the float64 result, bias included.
 * The bounds of check_products_with scale with the inputs' bits: at BF16 a
 * missing bias can hide within them. Operands made by the library's own
 * conversion, so that only lab_matmul_at is tried. */
#define BIAS_ADDED "every precision adds the bias to every row: small integers give exact sums"
#define MIXED_BIAS_ADDED \
    "every precision of a mixed product adds the bias to every row: small integers give exact sums"

/* mixed: through lab_mixed_product, of the float32 a and b, instead. */
static void check_bias_every_precision(device d, bool mixed)
{
    enum { M = 4, K = 8, N = 5 };
    float ha[M * K], hb[K * N], hbias[N], got[M * N];
    for (int i = 0; i < M * K; ++i) ha[i] = (float)((i * 5 + 3) % 7 - 3);
    for (int i = 0; i < K * N; ++i) hb[i] = (float)((i * 3 + 1) % 9 - 4);
    for (int j = 0; j < N; ++j) hbias[j] = 100.5f + (float)j;
    tensor *a = NULL, *b = NULL, *bias = NULL, *out = NULL;
    CHECK(tensor_from_host(&a, d, shape2(M, K), ha));
    CHECK(tensor_from_host(&b, d, shape2(K, N), hb));
    CHECK(tensor_from_host(&bias, d, shape1(N), hbias));
    CHECK(tensor_empty(&out, d, DTYPE_F32, shape2(M, N)));
    char figures[320] = "";
    bool all = true;
    for (int i = 0; i < LAB_PRECISIONS; ++i) {
        const lab_precision p = (lab_precision)i;
        const dtype type = p == LAB_BF16 ? DTYPE_BF16 : p == LAB_F16 ? DTYPE_F16 : DTYPE_F32;
        tensor *a_p = a, *b_p = b;
        if (type != DTYPE_F32 && !mixed) {
            CHECK(tensor_empty(&a_p, d, type, shape2(M, K)));
            CHECK(tensor_empty(&b_p, d, type, shape2(K, N)));
            CHECK(__real_tensor_convert(a, a_p));
            CHECK(__real_tensor_convert(b, b_p));
        }
        CHECK(op_fill(out, NAN));
        const status st = mixed ? CHECK_YOURS(lab_mixed_product(a, false, b, false, bias, out, p))
                                : CHECK_YOURS(lab_matmul_at(a_p, false, b_p, false, bias, out, p));
        if (a_p != a) tensor_free(a_p), tensor_free(b_p);
        int wrong = 0;
        double first_got = 0, first_want = 0, first_bias = 0;
        if (st == STATUS_OK) {
            CHECK(tensor_to_host(out, got, M * N));
            for (int r = 0; r < M; ++r)
                for (int c = 0; c < N; ++c) {
                    double want = hbias[c];
                    for (int k = 0; k < K; ++k) want += (double)ha[r * K + k] * hb[k * N + c];
                    if (got[r * N + c] != want && wrong++ == 0)
                        first_got = got[r * N + c], first_want = want, first_bias = hbias[c];
                }
        }
        all = all && st == STATUS_OK && wrong == 0;
        check_append(figures, sizeof figures, "%s%s: ", i ? "; " : "", precision_name(p));
        if (st != STATUS_OK)
            check_append(figures, sizeof figures, "%s", status_name(st));
        else if (wrong)
            check_append(figures, sizeof figures, "%d of %d wrong, e.g. %g for %g%s", wrong, M * N, first_got,
                         first_want, first_got == first_want - first_bias ? " (the bias left out)" : "");
        else
            check_append(figures, sizeof figures, "exact");
    }
    check_that(all, mixed ? MIXED_BIAS_ADDED : BIAS_ADDED,
               "[%d, %d] x [%d, %d] + a bias of 100.5 to 104.5: %s", M, K, K, N, figures);
    tensor_free(a), tensor_free(b), tensor_free(bias), tensor_free(out);
}

static void check_wrong_dtypes_refused(device d)
{
    const char *claim = "a product whose operands are not of its precision's dtype is refused";
    tensor *x = NULL, *x16 = NULL, *out = NULL;
    CHECK(tensor_uniform(&x, d, shape2(8, 8), -1.0f, 1.0f, 9));
    CHECK(tensor_empty(&x16, d, DTYPE_BF16, shape2(8, 8)));
    CHECK(tensor_convert(x, x16));
    CHECK(tensor_empty(&out, d, DTYPE_F32, shape2(8, 8)));
    const status as_bf16 = lab_matmul_at(x, false, x, false, NULL, out, LAB_BF16);
    const status as_fp32 = lab_matmul_at(x16, false, x16, false, NULL, out, LAB_FP32);
    const status as_f16 = lab_matmul_at(x16, false, x16, false, NULL, out, LAB_F16);
    if (as_bf16 == STATUS_TODO) CHECK(as_bf16);
    check_that(as_bf16 == STATUS_BAD_ARGUMENT && as_fp32 == STATUS_BAD_ARGUMENT &&
                   as_f16 == STATUS_BAD_ARGUMENT,
               claim, "BF16 of f32 operands: %s; FP32 of bf16: %s; F16 of bf16: %s", status_name(as_bf16),
               status_name(as_fp32), status_name(as_f16));
    tensor_free(x), tensor_free(x16), tensor_free(out);
}

/* On a GPU with tensor cores: at N = 4096 each low precision is faster than
 * FP32 by at least the smaller of 4x (2x for TF32) and half its peaks' ratio;
 * none is claimed where the peaks promise less than 1.5x. */
static void check_speed(device d, const device_properties *props)
{
    if (!props->tensor_cores || props->peak_gflops <= 0) {
        printf(
            "  (no tensor cores on %s: BF16, F16 and TF32 run no faster there; the speed claims need a GPU "
            "with them)\n",
            device_name(d));
        return;
    }
    const int64_t n = 4096;
    tensor *a = NULL, *b = NULL, *out = NULL;
    CHECK(tensor_uniform(&a, d, shape2(n, n), -1.0f, 1.0f, 1));
    CHECK(tensor_uniform(&b, d, shape2(n, n), -1.0f, 1.0f, 2));
    CHECK(tensor_empty(&out, d, DTYPE_F32, shape2(n, n)));
    double seconds[LAB_PRECISIONS] = { 0 };
    const double peaks[LAB_PRECISIONS] = { props->peak_gflops, props->peak_tf32_gflops,
                                           props->peak_bf16_gflops, props->peak_fp16_gflops };
    if (!CHECK_CALL(time_product(a, b, out, LAB_FP32, 5, &seconds[LAB_FP32]), "FP32 products can be timed"))
        return;
    for (int i = LAB_TF32; i < LAB_PRECISIONS; ++i) {
        const double promised = peaks[i] / peaks[LAB_FP32], want = fmin(i == LAB_TF32 ? 2 : 4, promised / 2);
        char claim[128];
        snprintf(claim, sizeof claim, "%s at N = %lld is at least %.1fx FP32's speed on %s's tensor cores",
                 precision_name(i), (long long)n, want, device_name(d));
        if (promised < 1.5) continue;
        if (!CHECK_CALL(time_product(a, b, out, (lab_precision)i, 5, &seconds[i]), claim)) continue;
        const double speedup = seconds[LAB_FP32] / seconds[i], flop = 2.0 * n * (double)n * n;
        check_that(speedup >= want, claim, "%.1f TFLOP/s against FP32's %.1f: %.1fx (the peaks: %.1fx)",
                   flop / seconds[i] / 1e12, flop / seconds[LAB_FP32] / 1e12, speedup, promised);
    }
    tensor_free(a), tensor_free(b), tensor_free(out);
}

/* ==== 4. accuracy ============================================================ */

static void check_unit_roundoff(void)
{
    const char *claim = "the unit roundoff is half the gap after 1: 2^-24, 2^-11, 2^-8, 2^-11";
    const double want[LAB_PRECISIONS] = { 0x1p-24, 0x1p-11, 0x1p-8, 0x1p-11 };
    char got[160] = "";
    bool right = true;
    for (int i = 0; i < LAB_PRECISIONS; ++i) {
        double u = -1;
        if (!CHECK_CALL(lab_unit_roundoff((lab_precision)i, &u), claim)) return;
        right = right && u == want[i];
        check_append(got, sizeof got, "%s%s 2^%.3g", i ? ", " : "", precision_name(i), u > 0 ? log2(u) : NAN);
    }
    check_that(right, claim, "%s", got);
}

static bool close_to(double got, double want) { return fabs(got - want) <= 1e-12 * fabs(want); }

/* lab_relative_error on copies of got and ref in arrays of exactly n values
 * that end at a guard page (host_alloc): a loop that reads one past the end
 * stops at its line. */
static status relative_error_of(const float *got, const double *ref, int64_t n, double *error)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    float *g = host_alloc((count ? count : 1) * sizeof *g, 0);
    double *r = host_alloc((count ? count : 1) * sizeof *r, 0);
    if (!g || !r) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
    if (count) memcpy(g, got, count * sizeof *g), memcpy(r, ref, count * sizeof *r);
    const status s = lab_relative_error(g, r, n, error);
    host_free(g, 0), host_free(r, 0);
    return s;
}

static void check_relative_error(void)
{
    const char *claim = "the relative error is ||got - ref|| / ||ref||, and NaN when got holds a NaN";
    const float got1[] = { 0.0f, 4.0f }, got2[] = { 1, 1, 1, 3 }, got3[] = { 3 }, got_nan[] = { NAN, 4 };
    const double ref1[] = { 3, 4 }, ref2[] = { 1, 1, 1, 1 }, ref3[] = { 2 }, zeros[] = { 0, 0 };
    double e1 = -1, e2 = -1, e3 = -1, e_nan = -1, e_zero = -1, e_none = -1;
    if (!CHECK_CALL(relative_error_of(got1, ref1, 2, &e1), claim) ||
        !CHECK_CALL(relative_error_of(got2, ref2, 4, &e2), claim) ||
        !CHECK_CALL(relative_error_of(got3, ref3, 1, &e3), claim) ||
        !CHECK_CALL(relative_error_of(got_nan, ref1, 2, &e_nan), claim))
        return;
    const status refused = CHECK_YOURS(relative_error_of(got1, zeros, 2, &e_zero));
    const status none =
        CHECK_YOURS(relative_error_of(got1, ref1, 0, &e_none)); /* lab.h: refused when n < 1 */
    check_that(close_to(e1, 0.6) && close_to(e2, 1.0) && close_to(e3, 0.5) && isnan(e_nan) &&
                   refused == STATUS_BAD_ARGUMENT && none == STATUS_BAD_ARGUMENT,
               claim,
               "(0, 4) vs (3, 4): %g (want 0.6); (1, 1, 1, 3) vs 1s: %g (want 1); 3 vs 2: %g (want 0.5); "
               "with a NaN: %g; against zeros: %s; of no values: %s",
               e1, e2, e3, e_nan, status_name(refused), status_name(none));

    /* 2^22 equal errors: float32 sums of their squares drift by percents, and
     * a difference or a square taken in float32 is rounded to 24 bits, off by
     * more than the 1e-9 allowed. */
    claim = "the relative error works in double, each difference, its square and the sums: 2^22 values all "
            "off by 1e-3 give 1e-3";
    const int64_t n = 1 << 22;
    float *got = host_alloc((size_t)n * sizeof *got, 0);
    double *ref = host_alloc((size_t)n * sizeof *ref, 0), e = -1;
    if (!got || !ref) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
    for (int64_t i = 0; i < n; ++i) got[i] = 1.001f, ref[i] = 1.0;
    const double want = (double)1.001f - 1.0;
    if (CHECK_CALL(lab_relative_error(got, ref, n, &e), claim))
        check_that(fabs(e - want) <= 1e-9 * want, claim, "%.9g (want %.9g, off by %.2g%%)", e, want,
                   100 * (e / want - 1));
    host_free(got, 0), host_free(ref, 0);

    /* Values of 2^-100: norms of 2^-200, far from 0 in double. Only a ref of
     * zeros is refused (lab.h); a threshold on the norm refuses the errors of
     * small gradients, whose ratio of norms is well defined. */
    claim = "a reference of small values is no reference of zeros: its relative error is given";
    const float got_small[] = { 0.0f, 0x1p-98f };
    const double ref_small[] = { 0x3p-100, 0x1p-98 };
    double e_small = -1;
    if (CHECK_CALL(relative_error_of(got_small, ref_small, 2, &e_small), claim))
        check_that(close_to(e_small, 0.6), claim, "(0, 2^-98) vs (3 x 2^-100, 2^-98): %g (want 0.6)",
                   e_small);
}

/* A bf16 or f16 product errs by about its unit roundoff whatever k: the
 * float32 sums add almost nothing, and the inputs' rounding errors, of random
 * signs, do not pile up. */
static void check_error_against_k(device d)
{
    enum { M = 64, N = 64 };
    static float got[M * N];
    const lab_precision tried[] = { LAB_BF16, LAB_F16 };
    for (int t = 0; t < 2; ++t) {
        const lab_precision p = tried[t];
        const double u = input_unit(p, d);
        char claim[128], figures[256] = "";
        snprintf(claim, sizeof claim,
                 "%s %s product errs by u/10 to u (u = 2^%.0f) whatever k, from 16 to 4096", article(p),
                 precision_name(p), log2(u));
        bool within = true;
        for (int64_t k = 16; k <= 4096; k *= 4) {
            product_case c;
            double e = NAN;
            CHECK(product_case_make(&c, M, N, k, false, false, false, 100 + (uint64_t)k));
            const bool ran = CHECK_CALL(product_case_run(&c, d, p, got), claim) &&
                             CHECK_CALL(relative_error_of(got, c.ref, M * N, &e), claim);
            product_case_free(&c);
            if (!ran) return;
            within = within && e >= u / 10 && e <= u;
            check_append(figures, sizeof figures, "%sk=%lld: %.2fu", k > 16 ? ", " : "", (long long)k, e / u);
        }
        check_that(within, claim, "%s", figures);
    }
}

/* ==== 5. the peak that applies =============================================== */

static void check_peaks(device d, const device_properties *here)
{
    const char *claim =
        "the peak that applies: the tensor cores' for the format where they have one, else FP32's";
    enum { CARDS = 5 };
    device_properties cards[CARDS];
    const char *names[CARDS] = { device_name(d), "H100 SXM", "T4 (no bf16 or TF32 tensor cores)",
                                 "GTX 1660 SUPER (no tensor cores)",
                                 "a GPU of compute capability 13.0 (unknown: 0)" };
    cards[0] = *here;
    CHECK(h100_properties(&cards[1]));
    CHECK(card_properties("Tesla T4", 7, 5, 40, 64, 1.59, &cards[2]));
    CHECK(card_properties("NVIDIA GeForce GTX 1660 SUPER", 7, 5, 22, 64, 1.785, &cards[3]));
    /* An architecture the kit does not know: no FP32 cores per SM, so no
     * peak at all (lab.h: "0 where that is unknown too"). */
    CHECK(card_properties("NVIDIA future GPU", 13, 0, 100, fp32_cores_per_multiprocessor(13, 0), 2.0,
                          &cards[4]));
    char wrong[320] = "", seen[400] = "";
    for (int c = 0; c < CARDS; ++c) {
        const device_properties *p = &cards[c];
        const double tensor[LAB_PRECISIONS] = { 0, p->peak_tf32_gflops, p->peak_bf16_gflops,
                                                p->peak_fp16_gflops };
        check_append(seen, sizeof seen, "%s%s:", c ? "; " : "", names[c]);
        for (int i = 0; i < LAB_PRECISIONS; ++i) {
            double got = -1;
            if (!CHECK_CALL(lab_peak_gflops(p, (lab_precision)i, &got), claim)) return;
            const double want = tensor[i] > 0 ? tensor[i] : p->peak_gflops;
            check_append(seen, sizeof seen, " %s %.3g", precision_name(i), got / 1000);
            if (fabs(got - want) > 1e-9 * want)
                check_append(wrong, sizeof wrong, " %s %s: %.4g TFLOP/s, want %.4g;", names[c],
                             precision_name(i), got / 1000, want / 1000);
        }
    }
    if (wrong[0])
        check_that(false, claim, "%s", wrong);
    else
        check_that(true, claim, "TFLOP/s %s", seen);
}

/* ==== 6. mixed-precision training ============================================ */

/* The product of c through lab_mixed_product: float32 operands uploaded, the
 * product read back. */
static status mixed_case_run(const product_case *c, device d, lab_precision p, float *got)
{
    const shape a_shape = c->trans_a ? shape2(c->k, c->m) : shape2(c->m, c->k);
    const shape b_shape = c->trans_b ? shape2(c->n, c->k) : shape2(c->k, c->n);
    tensor *a = NULL, *b = NULL, *bias = NULL, *out = NULL;
    CHECK(tensor_from_host(&a, d, a_shape, c->a));
    CHECK(tensor_from_host(&b, d, b_shape, c->b));
    if (c->bias) CHECK(tensor_from_host(&bias, d, shape1(c->n), c->bias));
    CHECK(tensor_full(&out, d, shape2(c->m, c->n), NAN));
    status s = lab_mixed_product(a, c->trans_a, b, c->trans_b, bias, out, p);
    if (s == STATUS_OK) CHECK(tensor_to_host(out, got, c->m * c->n));
    tensor_free(a), tensor_free(b), tensor_free(bias), tensor_free(out);
    return s;
}

static size_t memory_in_use(device d)
{
    device_counters c;
    CHECK(device_synchronize(d));
    CHECK(counters_read(d, &c));
    return c.memory_current;
}

static void check_mixed_product(device d)
{
    const char *claim = "a mixed product leaves its float32 operands exactly as they were";
    enum { M = 32, K = 48, N = 24 };
    float *a_host = NULL, *b_host = NULL, a_after[M * K], b_after[K * N];
    CHECK(random_host(&a_host, M * K, -1.0f, 1.0f, 81));
    CHECK(random_host(&b_host, K * N, -1.0f, 1.0f, 82));
    const size_t before = memory_in_use(d);
    tensor *a = NULL, *b = NULL, *out = NULL;
    CHECK(tensor_from_host(&a, d, shape2(M, K), a_host));
    CHECK(tensor_from_host(&b, d, shape2(K, N), b_host));
    CHECK(tensor_empty(&out, d, DTYPE_F32, shape2(M, N)));
    if (CHECK_CALL(lab_mixed_product(a, false, b, false, NULL, out, LAB_BF16), claim)) {
        CHECK(tensor_to_host(a, a_after, M * K));
        CHECK(tensor_to_host(b, b_after, K * N));
        const bool a_same = memcmp(a_after, a_host, sizeof a_after) == 0,
                   b_same = memcmp(b_after, b_host, sizeof b_after) == 0;
        check_that(a_same && b_same, claim, "a %s, b %s after a BF16 product",
                   a_same ? "unchanged" : "CHANGED", b_same ? "unchanged" : "CHANGED");
    }
    tensor_free(a), tensor_free(b), tensor_free(out);

    check_products_with(d, mixed_case_run, "mixed");
    /* Every operand, result and bias made here is freed: what is in use now,
     * more than before, was left behind by the products. */
    const size_t after = memory_in_use(d);
    check_that(after == before, "mixed products leave nothing behind on the device",
               "%s: %zu bytes in use before 17 mixed products, %zu after", device_name(d), before, after);
    free(a_host), free(b_host);
}

#define MIXED_FAILS                                                                                \
    "a mixed product that fails returns its failure and leaves nothing behind (on a full device, " \
    "STATUS_OUT_OF_MEMORY)"

/* One failing mixed product on a's device: its status, which must be `want`
 * (STATUS_OK: any failure), and the bytes it left there. */
static void mixed_failure(tensor *a, tensor *b, tensor *out, const char *what, status want, int *bad,
                          char *figures, size_t size)
{
    const device d = tensor_device(a);
    const size_t before = memory_in_use(d);
    const status s = CHECK_YOURS(lab_mixed_product(a, false, b, false, NULL, out, LAB_BF16));
    const size_t after = memory_in_use(d);
    const bool right = want == STATUS_OK ? s != STATUS_OK : s == want;
    *bad += !right || after != before;
    check_append(figures, size, "%s%s: %s", figures[0] ? "; " : "", what, status_name(s));
    if (!right && want == STATUS_OK)
        check_append(figures, size, " (a failure expected)");
    else if (!right)
        check_append(figures, size, " (want %s: the failure that happened, passed on as it came)",
                     status_name(want));
    check_append(figures, size, ", %lld bytes left", (long long)after - (long long)before);
}

/* The paths a correct training never takes: b that lab_operand refuses, a
 * product that lab_matmul_at refuses, and, on a simulated GPU (whose memory
 * the kit counts to the byte: sim:0 where the device checked is another), a
 * device with room for a's operand and not for b's. Each time a's operand
 * has been made: it must be freed all the same. On the full device the
 * failure is the want of memory, and nothing else: a product that goes on
 * without b's operand fails later, for another reason (a NULL operand), and
 * hides it. */
static void check_mixed_failures(device d)
{
    enum { M = 8, K = 16, N = 4096 };
    tensor *a = NULL, *b = NULL, *b16 = NULL, *out = NULL, *wrong_out = NULL;
    CHECK(tensor_uniform(&a, d, shape2(M, K), -1.0f, 1.0f, 91));
    CHECK(tensor_uniform(&b, d, shape2(K, N), -1.0f, 1.0f, 92));
    CHECK(tensor_empty(&b16, d, DTYPE_BF16, shape2(K, N)));
    CHECK(tensor_convert(b, b16));
    CHECK(tensor_empty(&out, d, DTYPE_F32, shape2(M, N)));
    CHECK(tensor_empty(&wrong_out, d, DTYPE_F32, shape2(M, N + 1)));
    char figures[480] = "";
    int bad = 0;
    mixed_failure(a, b16, out, "b bf16, not float32", STATUS_OK, &bad, figures, sizeof figures);
    mixed_failure(a, b, wrong_out, "out [8, 4097] for [8, 16] x [16, 4096]", STATUS_OK, &bad, figures,
                  sizeof figures);
    device full;
    if (full_device_target(d, &full)) {
        /* Room for a's bf16 operand (256 bytes) and 1 KiB more, not for b's (128 KiB). */
        tensor *a_full = NULL, *b_full = NULL, *out_full = NULL, *filler = NULL;
        CHECK(tensor_uniform(&a_full, full, shape2(M, K), -1.0f, 1.0f, 91));
        CHECK(tensor_uniform(&b_full, full, shape2(K, N), -1.0f, 1.0f, 92));
        CHECK(tensor_empty(&out_full, full, DTYPE_F32, shape2(M, N)));
        const size_t room = (size_t)M * K * 2 + 1024;
        if (fill_device(full, room, &filler)) {
            char what[96];
            snprintf(what, sizeof what, "%s full but for %zu bytes", device_name(full), room);
            mixed_failure(a_full, b_full, out_full, what, STATUS_OUT_OF_MEMORY, &bad, figures,
                          sizeof figures);
        }
        tensor_free(filler), tensor_free(a_full), tensor_free(b_full), tensor_free(out_full);
    } else {
        printf("  (no simulated GPU here: a mixed product on a full device is not tried)\n");
    }
    tensor *c = NULL;
    float value = 0.0f;
    const bool usable = tensor_full(&c, d, shape1(1), 2.0f) == STATUS_OK &&
                        tensor_item(c, &value) == STATUS_OK && value == 2.0f;
    tensor_free(c);
    check_that(bad == 0 && usable, MIXED_FAILS, "%s%s", figures,
               usable ? "" : "; the device NOT USABLE afterwards");
    tensor_free(a), tensor_free(b), tensor_free(b16), tensor_free(out), tensor_free(wrong_out);
}

/* One MLP per precision from the same seed, trained on the same data. */
static void check_training(device d)
{
    enum { EPOCHS = 3 };
    const int64_t sizes[] = { 28 * 28, 64, 10 };
    dataset train, test;
    CHECK(dataset_synthetic(&train, 4096, 1));
    CHECK(dataset_synthetic(&test, 512, 2));
    const lab_precision trained[2] = { LAB_FP32, LAB_BF16 };
    double loss[2][EPOCHS] = { { 0 } }, accuracy[2] = { 0 };
    const char *claim =
        "an MLP trained with BF16 products learns like FP32's: it halves its loss, as FP32 does";
    for (int i = 0; i < 2; ++i) {
        mixed_mlp net;
        CHECK(mixed_mlp_create(&net, d, sizes, 3, 64, trained[i], 7));
        bool ran = true;
        for (int e = 0; e < EPOCHS && ran; ++e)
            ran = CHECK_CALL(mixed_mlp_train_epoch(&net, &train, e + 1, 0.3f, &loss[i][e]), claim);
        if (ran) ran = CHECK_CALL(mixed_mlp_accuracy(&net, &test, &accuracy[i]), claim);
        mixed_mlp_free(&net);
        if (!ran) {
            dataset_free(&train), dataset_free(&test);
            return;
        }
    }
    dataset_free(&train), dataset_free(&test);
    check_that(loss[1][0] != loss[0][0],
               "BF16 training is not FP32 in disguise: its first epoch's loss differs",
               "first epoch's mean loss: FP32 %.9f, BF16 %.9f", loss[0][0], loss[1][0]);
    /* The loss, not the accuracy on 512 images, which jumps by points from
     * one epoch to the next whatever the precision. */
    const double start = log(10.0); /* an untrained 10-way classifier */
    const double fp32 = loss[0][EPOCHS - 1], bf16 = loss[1][EPOCHS - 1];
    check_that(
        bf16 < 0.5 * start && fabs(bf16 - fp32) <= 0.1 * fp32, claim,
        "mean loss of epoch %d: BF16 %.3f, FP32 %.3f (below half of ln 10 = %.3f, within 10%% of FP32's); "
        "held-out accuracy BF16 %.1f%%, FP32 %.1f%%",
        EPOCHS, bf16, fp32, start, 100 * accuracy[1], 100 * accuracy[0]);
}

int main(int argc, char **argv)
{
    const device d = check_device(argc, argv);
    device_properties props;
    CHECK(device_get_properties(d, &props));
    const device cpu = device_cpu();
    const size_t start = memory_in_use(d), start_cpu = memory_in_use(cpu);

    check_rounding();

    check_operands(d);
    check_operand_refusals(d);
    check_conversion_failures(d);
    check_copy_time(d);

    check_products_with(d, product_case_run, "your");
    check_bias_every_precision(d, false);
    check_wrong_dtypes_refused(d);
    check_speed(d, &props);

    check_unit_roundoff();
    check_relative_error();
    check_error_against_k(d);

    check_peaks(d, &props);

    check_mixed_product(d);
    check_bias_every_precision(d, true);
    check_mixed_failures(d);
    check_training(d);

    /* An operand never freed, or a reference to x kept, outlives every claim. */
    const size_t end = memory_in_use(d), end_cpu = memory_in_use(cpu);
    if (device_equal(d, cpu))
        check_that(end == start, NOTHING_LEFT, "%zu bytes in use on the cpu at the start, %zu at the end",
                   start, end);
    else
        check_that(end == start && end_cpu == start_cpu, NOTHING_LEFT,
                   "%zu bytes in use on %s at the start, %zu at the end; on the cpu %zu, then %zu", start,
                   device_name(d), end, start_cpu, end_cpu);
    return check_finish("06_precision");
}
