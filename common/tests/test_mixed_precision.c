/* test_mixed_precision.c: bf16, f16 and TF32 on one device: tensor_convert
 * against the single-value functions of labkit/precision.h, bit for bit, and
 * the low-precision matrix products against float64 references, within the
 * error bounds their formats predict.
 *
 *   test_mixed_precision cpu | sim:0 | cuda:0      (exits 77 when it is absent)
 *
 * The refusals and the cpu/sim comparison need a second device: the CPU when
 * testing a GPU, else GPU 0 (CTest sets LABKIT_SIM_GPUS=1 for the cpu run). */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/counters.h"
#include "labkit/device.h"
#include "labkit/ops.h"
#include "labkit/precision.h"
#include "labkit/tensor.h"

static device dev;   /* the device under test (argv[1]) */
static device other; /* a second device; == dev when there is none */

/* ============================================================================
 * helpers
 * ========================================================================== */

static uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float float_from(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The values a conversion must get right, then random ones of every
 * magnitude: n >= 64. */
static void conversion_inputs(float *x, int64_t n, uint64_t seed)
{
    const float special[] = {
        0.0f,
        -0.0f,
        1.0f,
        -1.0f,
        INFINITY,
        -INFINITY,
        NAN,
        -NAN,
        float_from(0x7f800001u),
        FLT_MAX,
        -FLT_MAX,
        FLT_MIN,
        0x1p-149f, /* float32's extremes */
        65504.0f,
        65520.0f,
        nextafterf(65520.0f, 0),
        -65520.0f,
        1e6f, /* f16's largest finite, overflow */
        0x1p-14f,
        0x1p-24f,
        0x1p-25f,
        nextafterf(0x1p-25f, 1),
        3 * 0x1p-25f,
        1023 * 0x1p-24f, /* f16 subnormals */
        1.0f + 0x1p-11f,
        1.0f + 3 * 0x1p-11f,
        1.0f + 0x1p-8f,
        1.0f + 3 * 0x1p-8f, /* ties to even */
        float_from(0x7f7f8000u),
        float_from(0x7f7f7fffu),
        0x1p-133f,
        0x1p-134f, /* bf16's edges */
        3.14159265f,
        -2.71828183f,
        0.1f,
        1.0f / 3.0f,
    };
    const int64_t k = (int64_t)(sizeof special / sizeof special[0]);
    test_rng rng = test_rng_seeded(seed);
    for (int64_t i = 0; i < n; i++) x[i] = i < k ? special[i] : float_from((uint32_t)test_rng_next(&rng));
}

/* A tensor of `type` and shape s on d, NULL on failure (recorded). */
static tensor *empty_on(device d, dtype type, shape s)
{
    tensor *t = NULL;
    status st = tensor_empty(&t, d, type, s);
    if (st != STATUS_OK)
        harness_fail(__FILE__, __LINE__, "tensor_empty %s on %s: %s: %s", dtype_name(type), device_name(d),
                     status_name(st), last_error());
    return t;
}

static uint64_t launches_on(device d)
{
    device_counters c;
    return counters_read(d, &c) == STATUS_OK ? c.launches : UINT64_MAX;
}

static uint64_t copies_on(device d)
{
    device_counters c;
    if (counters_read(d, &c) != STATUS_OK) return UINT64_MAX;
    return c.h2d_copies + c.d2h_copies + c.d2d_copies;
}

/* ============================================================================
 * tensor_convert
 * ========================================================================== */

/* f32 -> `type` on dev equals the host function on every element; and back. */
static void check_convert_round_trip(dtype type, uint16_t (*narrow)(float), float (*widen)(uint16_t))
{
    /* x is f32 [37, 53]; h its conversion, y h widened again */
    const int64_t n = 37 * 53;
    float *hx = NULL, *hy = NULL;
    uint16_t *got = NULL, *want = NULL;
    uint32_t *widened = NULL;
    tensor *x = NULL, *h = NULL, *y = NULL;
    char what[64];
    REQUIRE((hx = test_malloc((size_t)n * sizeof(float))));
    REQUIRE((hy = test_malloc((size_t)n * sizeof(float))));
    REQUIRE((got = test_malloc((size_t)n * sizeof(uint16_t))));
    REQUIRE((want = test_malloc((size_t)n * sizeof(uint16_t))));
    REQUIRE((widened = test_malloc((size_t)n * sizeof(uint32_t))));
    conversion_inputs(hx, n, 601 + (uint64_t)type);
    REQUIRE_OK(tensor_from_host(&x, dev, shape2(37, 53), hx));
    REQUIRE((h = empty_on(dev, type, shape2(37, 53))));
    REQUIRE((y = empty_on(dev, DTYPE_F32, shape2(37, 53))));
    REQUIRE_OK(tensor_convert(x, h));
    REQUIRE_OK(tensor_convert(h, y));
    REQUIRE_OK(tensor_to_host_raw(h, got, (size_t)n * sizeof(uint16_t)));
    REQUIRE_OK(tensor_to_host(y, hy, n));
    long wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        want[i] = narrow(hx[i]);
        widened[i] = bits_of(widen(want[i]));
        if (got[i] != want[i] && wrong++ < HARNESS_MISMATCHES_SHOWN)
            fprintf(stderr, "    %s(%.9g = 0x%08x) on %s: 0x%04x, the host function says 0x%04x\n",
                    dtype_name(type), (double)hx[i], (unsigned)bits_of(hx[i]), device_name(dev),
                    (unsigned)got[i], (unsigned)want[i]);
    }
    EXPECT_MSG(wrong == 0, "f32 -> %s on %s: %ld of %lld elements differ from the host's rounding",
               dtype_name(type), device_name(dev), wrong, (long long)n);
    snprintf(what, sizeof what, "%s -> f32 on %s", dtype_name(type), device_name(dev));
    EXPECT_BITWISE_EQUAL(what, hy, widened, n);
cleanup:
    tensor_free(x);
    tensor_free(h);
    tensor_free(y);
    free(hx);
    free(hy);
    free(got);
    free(want);
    free(widened);
}

static void test_convert_rounds_exactly_as_the_host_functions(void)
{
    check_convert_round_trip(DTYPE_BF16, float_to_bf16, bf16_to_float);
    check_convert_round_trip(DTYPE_F16, float_to_f16, f16_to_float);
}

/* One launch each way, no copy; on a GPU it is queued like any operation. */
static void test_convert_is_one_launch_and_no_copy(void)
{
    tensor *x = NULL, *h = NULL, *y = NULL;
    REQUIRE_OK(tensor_full(&x, dev, shape1(1000), 1.5f));
    REQUIRE((h = empty_on(dev, DTYPE_BF16, shape1(1000))));
    REQUIRE((y = empty_on(dev, DTYPE_F32, shape1(1000))));
    REQUIRE_OK(device_synchronize(dev));
    REQUIRE_OK(counters_reset(dev));
    REQUIRE_OK(tensor_convert(x, h));
    REQUIRE_OK(tensor_convert(h, y));
    EXPECT_EQ_I64(launches_on(dev), 2);
    EXPECT_EQ_I64(copies_on(dev), 0);
cleanup:
    tensor_free(x);
    tensor_free(h);
    tensor_free(y);
}

static void test_convert_refuses_other_pairs_shapes_and_devices(void)
{
    tensor *f = NULL, *f2 = NULL, *b = NULL, *h = NULL, *i = NULL, *wrong_shape = NULL, *elsewhere = NULL;
    REQUIRE_OK(tensor_zeros(&f, dev, shape2(4, 6)));
    REQUIRE_OK(tensor_zeros(&f2, dev, shape2(4, 6)));
    REQUIRE((b = empty_on(dev, DTYPE_BF16, shape2(4, 6))));
    REQUIRE((h = empty_on(dev, DTYPE_F16, shape2(4, 6))));
    REQUIRE((i = empty_on(dev, DTYPE_I32, shape2(4, 6))));
    REQUIRE((wrong_shape = empty_on(dev, DTYPE_BF16, shape2(6, 4))));
    EXPECT_REFUSED(tensor_convert(f, f2), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "tensor_copy");
    EXPECT_REFUSED(tensor_convert(b, h), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "through f32");
    EXPECT_REFUSED(tensor_convert(h, b), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_convert(i, b), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_convert(f, i), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_convert(f, wrong_shape), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[6, 4]");
    EXPECT_REFUSED(tensor_convert(NULL, b), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_convert(f, NULL), STATUS_BAD_ARGUMENT);
    if (!device_equal(dev, other)) {
        REQUIRE((elsewhere = empty_on(other, DTYPE_BF16, shape2(4, 6))));
        EXPECT_REFUSED(tensor_convert(f, elsewhere), STATUS_WRONG_DEVICE);
        EXPECT_CONTAINS(last_error(), device_name(dev));
        EXPECT_CONTAINS(last_error(), device_name(other));
    }
cleanup:
    tensor_free(f);
    tensor_free(f2);
    tensor_free(b);
    tensor_free(h);
    tensor_free(i);
    tensor_free(wrong_shape);
    tensor_free(elsewhere);
}

/* ============================================================================ */

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DEVICE   (cpu, sim:0, cuda:0, ...)\n", argv[0]);
        return 2;
    }
    int rc = test_device_or_skip(argv[1], &dev);
    if (rc != 0) return rc;
    other = device_is_gpu(dev) ? device_cpu() : try_gpu(0);
    printf("testing low precision on %s (second device: %s)\n", device_name(dev), device_name(other));

    RUN_TEST(test_convert_rounds_exactly_as_the_host_functions);
    RUN_TEST(test_convert_is_one_launch_and_no_copy);
    RUN_TEST(test_convert_refuses_other_pairs_shapes_and_devices);
    return harness_finish();
}
