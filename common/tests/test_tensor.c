/* test_tensor.c: creating, shaping, moving and freeing tensors (tensor.h), and
 * what the device counters say about it (counters.h), on the GPU given as
 * argv[1], beside the CPU and a second GPU.
 *
 *   test_tensor sim:0 | cuda:0      (exits 77 when the device is absent)
 *
 * Runs with LABKIT_SIM_GPUS=2 LABKIT_SIM_MEMORY=64M (set by CTest): the second
 * GPU is another of the same kind where there is one (sim:1 beside sim:0), else
 * sim:0 beside cuda:0 (harness.h, test_second_gpu), and copies between a real
 * and a simulated GPU are tested wherever a real one is. Each simulated GPU
 * holds 64 MiB, so that running out of its memory is quick to test; a real GPU
 * runs out on an absurd size instead. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/device.h"
#include "labkit/ops.h"
#include "labkit/counters.h"
#include "labkit/tensor.h"

#define SIM_CAPACITY ((size_t)64 << 20) /* LABKIT_SIM_MEMORY=64M */

/* the GPU under test (argv[1]); a second GPU, of the same kind where there is
 * one; a simulated GPU other than dev (sim:0 beside cuda:N, else peer) */
static device cpu, dev, peer, sim_peer;

/* ============================================================================
 * helpers
 * ========================================================================== */

/* A distinctive non-NULL value to preset *out with, to see a failure reset it. */
static char sentinel_storage;
#define SENTINEL ((tensor *)(void *)&sentinel_storage)

static float *random_floats(int64_t n, uint64_t seed)
{
    float *h = test_malloc((size_t)n * sizeof(float));
    if (h == NULL) return NULL;
    test_rng rng = test_rng_seeded(seed);
    test_fill_nonzero(&rng, h, n, 0.1f, 1.0f);
    return h;
}

static float *download(const tensor *t)
{
    const int64_t n = tensor_numel(t);
    float *h = test_malloc((size_t)n * sizeof(float));
    if (h == NULL) return NULL;
    status s = tensor_to_host(t, h, n);
    if (s != STATUS_OK) {
        harness_fail(__FILE__, __LINE__, "tensor_to_host: %s: %s", status_name(s), last_error());
        free(h);
        return NULL;
    }
    return h;
}

/* t holds exactly the n values of `want`, bit for bit. */
static void expect_tensor_bits(const char *what, const tensor *t, const float *want, int64_t n)
{
    EXPECT_EQ_I64(tensor_numel(t), n);
    float *got = download(t);
    if (got != NULL) EXPECT_BITWISE_EQUAL(what, got, want, n);
    free(got);
}

static device_counters counters_of(device d)
{
    device_counters c;
    memset(&c, 0, sizeof c);
    status s = counters_read(d, &c);
    if (s != STATUS_OK)
        harness_fail(__FILE__, __LINE__, "counters_read(%s): %s: %s", device_name(d), status_name(s),
                     last_error());
    return c;
}

static size_t memory_in_use(device d) { return counters_of(d).memory_current; }

/* The copy counts of d since its last reset are exactly these. */
static void expect_copies(device d, uint64_t h2d, uint64_t h2d_bytes, uint64_t d2h, uint64_t d2h_bytes,
                          uint64_t d2d, uint64_t d2d_bytes, int line)
{
    device_counters c = counters_of(d);
    if (c.h2d_copies != h2d || c.h2d_bytes != h2d_bytes || c.d2h_copies != d2h || c.d2h_bytes != d2h_bytes ||
        c.d2d_copies != d2d || c.d2d_bytes != d2d_bytes)
        harness_fail(__FILE__, line,
                     "copies counted on %s: h2d %llu (%llu B), d2h %llu (%llu B), d2d %llu "
                     "(%llu B); want h2d %llu (%llu B), d2h %llu (%llu B), d2d %llu (%llu B)",
                     device_name(d), (unsigned long long)c.h2d_copies, (unsigned long long)c.h2d_bytes,
                     (unsigned long long)c.d2h_copies, (unsigned long long)c.d2h_bytes,
                     (unsigned long long)c.d2d_copies, (unsigned long long)c.d2d_bytes,
                     (unsigned long long)h2d, (unsigned long long)h2d_bytes, (unsigned long long)d2h,
                     (unsigned long long)d2h_bytes, (unsigned long long)d2d, (unsigned long long)d2d_bytes);
}

#define EXPECT_COPIES(d, h2d, h2d_bytes, d2h, d2h_bytes, d2d, d2d_bytes) \
    expect_copies((d), (h2d), (h2d_bytes), (d2h), (d2h_bytes), (d2d), (d2d_bytes), __LINE__)
#define EXPECT_NO_COPIES(d) EXPECT_COPIES((d), 0, 0, 0, 0, 0, 0)

static bool reset_all_counters(void)
{
    return counters_reset(cpu) == STATUS_OK && counters_reset(dev) == STATUS_OK &&
           counters_reset(peer) == STATUS_OK && counters_reset(sim_peer) == STATUS_OK;
}

/* ============================================================================
 * shapes and creation
 * ========================================================================== */

static void test_shape_helpers_count_and_format(void)
{
    char buf[64];
    shape s1 = shape1(37), s2 = shape2(37, 53), s3 = shape3(3, 5, 7), s4 = shape4(2, 3, 5, 7);
    EXPECT_EQ_I64(s1.ndim, 1);
    EXPECT_EQ_I64(s1.dims[0], 37);
    EXPECT_EQ_I64(s2.ndim, 2);
    EXPECT_EQ_I64(s2.dims[0], 37);
    EXPECT_EQ_I64(s2.dims[1], 53);
    EXPECT_EQ_I64(s3.ndim, 3);
    EXPECT_EQ_I64(s3.dims[2], 7);
    EXPECT_EQ_I64(s4.ndim, 4);
    EXPECT_EQ_I64(s4.dims[3], 7);
    EXPECT_EQ_I64(shape_numel(s1), 37);
    EXPECT_EQ_I64(shape_numel(s2), 37 * 53);
    EXPECT_EQ_I64(shape_numel(s3), 3 * 5 * 7);
    EXPECT_EQ_I64(shape_numel(s4), 2 * 3 * 5 * 7);
    EXPECT_STREQ(shape_format(s1, buf, sizeof buf), "[37]");
    EXPECT_STREQ(shape_format(s2, buf, sizeof buf), "[37, 53]");
    EXPECT_STREQ(shape_format(s4, buf, sizeof buf), "[2, 3, 5, 7]");
    EXPECT(shape_format(s2, buf, sizeof buf) == buf);

    /* a short buffer gets a terminated prefix, never an overflow */
    memset(buf, 'x', sizeof buf);
    shape_format(s4, buf, 5);
    EXPECT(memchr(buf, '\0', 5) != NULL);
    EXPECT(buf[5] == 'x');
}

static void test_creators_write_exact_values_on_every_device(void)
{
    const device devices[] = { cpu, dev, peer };
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    float *data = random_floats(n, 1001), *want = test_malloc((size_t)n * sizeof(float));
    REQUIRE(data != NULL && want != NULL);
    for (size_t k = 0; k < 3; k++) {
        const device d = devices[k];
        char what[64];
        tensor *z = NULL, *o = NULL, *f = NULL, *h = NULL;
        EXPECT_OK(tensor_zeros(&z, d, s));
        EXPECT_OK(tensor_ones(&o, d, s));
        EXPECT_OK(tensor_full(&f, d, s, -3.25f));
        EXPECT_OK(tensor_from_host(&h, d, s, data));
        if (z && o && f && h) {
            for (int64_t i = 0; i < n; i++) want[i] = 0.0f;
            snprintf(what, sizeof what, "zeros on %s", device_name(d));
            expect_tensor_bits(what, z, want, n);
            for (int64_t i = 0; i < n; i++) want[i] = 1.0f;
            snprintf(what, sizeof what, "ones on %s", device_name(d));
            expect_tensor_bits(what, o, want, n);
            for (int64_t i = 0; i < n; i++) want[i] = -3.25f;
            snprintf(what, sizeof what, "full on %s", device_name(d));
            expect_tensor_bits(what, f, want, n);
            snprintf(what, sizeof what, "from_host on %s", device_name(d));
            expect_tensor_bits(what, h, data, n);
            EXPECT(device_equal(tensor_device(h), d));
            EXPECT(tensor_dtype(h) == DTYPE_F32);
        }
        tensor_free(z);
        tensor_free(o);
        tensor_free(f);
        tensor_free(h);
    }
cleanup:
    free(data);
    free(want);
}

static void test_int32_tensors_keep_their_values(void)
{
    const int32_t values[7] = { 0, 1, -1, 12345, -98765, INT32_MAX, INT32_MIN };
    const device devices[] = { cpu, dev };
    for (size_t k = 0; k < 2; k++) {
        int32_t got[7] = { 0 };
        tensor *t = NULL;
        EXPECT_OK(tensor_from_host_i32(&t, devices[k], shape1(7), values));
        if (t == NULL) continue;
        EXPECT(tensor_dtype(t) == DTYPE_I32);
        EXPECT_EQ_I64(tensor_bytes(t), 7 * 4);
        EXPECT_OK(tensor_to_host_i32(t, got, 7));
        EXPECT_BITWISE_EQUAL("int32 round trip", got, values, 7);
        tensor_free(t);
    }
}

static void test_empty_has_the_asked_shape_dtype_and_size(void)
{
    tensor *t = NULL, *i = NULL;
    REQUIRE_OK(tensor_empty(&t, dev, DTYPE_F32, shape4(2, 3, 5, 7)));
    REQUIRE_OK(tensor_empty(&i, cpu, DTYPE_I32, shape2(37, 53)));
    EXPECT(device_equal(tensor_device(t), dev));
    EXPECT(tensor_dtype(t) == DTYPE_F32);
    EXPECT_EQ_I64(tensor_shape(t).ndim, 4);
    EXPECT_EQ_I64(tensor_dim(t, 0), 2);
    EXPECT_EQ_I64(tensor_dim(t, 1), 3);
    EXPECT_EQ_I64(tensor_dim(t, 2), 5);
    EXPECT_EQ_I64(tensor_dim(t, 3), 7);
    EXPECT_EQ_I64(tensor_dim(t, 4), 0);
    EXPECT_EQ_I64(tensor_dim(t, -1), 0);
    EXPECT_EQ_I64(tensor_numel(t), 210);
    EXPECT_EQ_I64(tensor_bytes(t), 210 * 4);
    EXPECT(tensor_dtype(i) == DTYPE_I32);
    EXPECT_EQ_I64(tensor_bytes(i), 37 * 53 * 4);
    EXPECT_EQ_I64(tensor_dim(i, 2), 0);
cleanup:
    tensor_free(t);
    tensor_free(i);
}

static void test_describe_names_dtype_shape_and_device(void)
{
    char buf[96];
    tensor *a = NULL, *b = NULL, *l = NULL;
    REQUIRE_OK(tensor_zeros(&a, dev, shape2(37, 53)));
    REQUIRE_OK(tensor_zeros(&b, cpu, shape1(5)));
    REQUIRE_OK(tensor_empty(&l, peer, DTYPE_I32, shape1(37)));
    char want[64];
    snprintf(want, sizeof want, "f32[37, 53] on %s", device_name(dev));
    EXPECT_STREQ(tensor_describe(a, buf, sizeof buf), want);
    EXPECT_STREQ(tensor_describe(b, buf, sizeof buf), "f32[5] on cpu");
    EXPECT(tensor_describe(b, buf, sizeof buf) == buf);
    /* a short buffer gets a terminated prefix, never an overflow */
    memset(buf, 'x', sizeof buf);
    tensor_describe(a, buf, 6);
    EXPECT(memchr(buf, '\0', 6) != NULL);
    EXPECT(buf[6] == 'x');
    tensor_describe(l, buf, sizeof buf);
    EXPECT_CONTAINS(buf, "i32");
    EXPECT_CONTAINS(buf, "[37]");
    EXPECT_CONTAINS(buf, device_name(peer));
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(l);
}

static void test_creators_refuse_bad_shapes_devices_and_nulls(void)
{
    const device absent = { DEVICE_SIM, 5 };
    const float one = 1.0f;
    shape five_dims = shape4(1, 2, 3, 4);
    shape no_dims = shape1(3);
    tensor *t = SENTINEL;
    five_dims.ndim = 5;
    no_dims.ndim = 0;

    EXPECT_REFUSED(tensor_zeros(&t, cpu, shape2(-1, 3)), STATUS_BAD_ARGUMENT);
    EXPECT(t == NULL);
    t = SENTINEL;
    EXPECT_REFUSED(tensor_empty(&t, dev, DTYPE_F32, shape2(37, -53)), STATUS_BAD_ARGUMENT);
    EXPECT(t == NULL);
    t = SENTINEL;
    EXPECT_REFUSED(tensor_empty(&t, dev, DTYPE_F32, five_dims), STATUS_BAD_ARGUMENT);
    EXPECT(t == NULL);
    t = SENTINEL;
    EXPECT_REFUSED(tensor_ones(&t, cpu, no_dims), STATUS_BAD_ARGUMENT);
    EXPECT(t == NULL);
    t = SENTINEL;
    EXPECT_REFUSED(tensor_full(&t, absent, shape1(3), 2.0f), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), "sim:5");
    EXPECT(t == NULL);
    t = SENTINEL;
    EXPECT_REFUSED(tensor_from_host(&t, dev, shape1(1), NULL), STATUS_BAD_ARGUMENT);
    EXPECT(t == NULL);
    t = SENTINEL;
    EXPECT_REFUSED(tensor_from_host_i32(&t, dev, shape1(1), NULL), STATUS_BAD_ARGUMENT);
    EXPECT(t == NULL);
    EXPECT_REFUSED(tensor_from_host(NULL, dev, shape1(1), &one), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_zeros(NULL, cpu, shape1(1)), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_uniform(NULL, cpu, shape1(1), 0.0f, 1.0f, 1), STATUS_BAD_ARGUMENT);
    if (t != NULL && t != SENTINEL) tensor_free(t);
}

static void test_free_of_null_is_harmless(void)
{
    size_t before = memory_in_use(dev);
    tensor_free(NULL);
    EXPECT_EQ_I64(memory_in_use(dev), before);
}

static void test_host_alloc_gives_writable_memory(void)
{
    const size_t n = 1 << 18;
    for (int pinned = 0; pinned < 2; pinned++) {
        float *p = host_alloc(n * sizeof(float), pinned);
        EXPECT(p != NULL);
        if (p == NULL) continue;
        for (size_t i = 0; i < n; i++) p[i] = (float)i;
        EXPECT(p[n - 1] == (float)(n - 1));
        host_free(p, pinned);
    }
    host_free(NULL, 0);
}

/* ============================================================================
 * reshape, to(), copies and what they count
 * ========================================================================== */

static void test_reshape_shares_memory_and_adds_no_bytes(void)
{
    const int64_t n = 37 * 53;
    float *data = random_floats(n, 1101), *sevens = NULL;
    tensor *t = NULL, *v = NULL, *bad = SENTINEL;
    REQUIRE(data != NULL);
    const size_t before = memory_in_use(dev);
    REQUIRE_OK(tensor_from_host(&t, dev, shape2(37, 53), data));
    EXPECT_EQ_I64(memory_in_use(dev), before + (size_t)n * 4);
    REQUIRE_OK(tensor_reshape(t, shape3(53, 37, 1), &v));
    EXPECT_EQ_I64(memory_in_use(dev), before + (size_t)n * 4);
    EXPECT_EQ_I64(tensor_dim(v, 0), 53);
    EXPECT_EQ_I64(tensor_dim(v, 1), 37);
    EXPECT_EQ_I64(tensor_dim(v, 2), 1);
    EXPECT(device_equal(tensor_device(v), dev));
    expect_tensor_bits("reshaped values", v, data, n);

    /* a write through the view shows in the original */
    REQUIRE_OK(op_fill(v, 7.0f));
    REQUIRE((sevens = test_malloc((size_t)n * sizeof(float))));
    for (int64_t i = 0; i < n; i++) sevens[i] = 7.0f;
    expect_tensor_bits("original after filling the view", t, sevens, n);

    /* the view outlives the original; the bytes go when both are gone */
    tensor_free(t);
    t = NULL;
    EXPECT_EQ_I64(memory_in_use(dev), before + (size_t)n * 4);
    expect_tensor_bits("view after freeing the original", v, sevens, n);
    tensor_free(v);
    v = NULL;
    EXPECT_EQ_I64(memory_in_use(dev), before);

    /* another element count is refused, naming both shapes */
    REQUIRE_OK(tensor_from_host(&t, dev, shape2(37, 53), data));
    EXPECT_REFUSED(tensor_reshape(t, shape2(37, 52), &bad), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[37, 52]");
    EXPECT_CONTAINS(last_error(), "[37, 53]");
    EXPECT(bad == NULL);
cleanup:
    tensor_free(t);
    tensor_free(v);
    if (bad != NULL && bad != SENTINEL) tensor_free(bad);
    free(data);
    free(sevens);
}

static void test_to_same_device_returns_the_same_tensor_and_copies_nothing(void)
{
    const device devices[] = { cpu, dev };
    const int64_t n = 37 * 53;
    float *data = random_floats(n, 1201);
    REQUIRE(data != NULL);
    for (size_t k = 0; k < 2; k++) {
        const device d = devices[k];
        tensor *t = NULL, *u = NULL;
        const size_t before = memory_in_use(d);
        EXPECT_OK(tensor_from_host(&t, d, shape2(37, 53), data));
        if (t == NULL) continue;
        EXPECT_OK(device_synchronize(d));
        EXPECT_OK(counters_reset(d));
        EXPECT_OK(tensor_to(t, d, &u));
        EXPECT_MSG(u == t, "tensor_to(t, %s) of a tensor on %s is not t itself", device_name(d),
                   device_name(d));
        EXPECT_NO_COPIES(d);
        EXPECT_EQ_I64(memory_in_use(d), before + (size_t)n * 4);
        /* each reference is released on its own: t lives on after freeing u */
        tensor_free(u);
        expect_tensor_bits("t after freeing to()'s reference", t, data, n);
        EXPECT_EQ_I64(memory_in_use(d), before + (size_t)n * 4);
        tensor_free(t);
        EXPECT_EQ_I64(memory_in_use(d), before);
    }
cleanup:
    free(data);
}

static void test_transfers_count_exactly_one_copy_with_its_bytes(void)
{
    const int64_t n = 37 * 53;
    const uint64_t bytes = (uint64_t)n * 4;
    float *data = random_floats(n, 1301), *back = NULL;
    tensor *on_cpu = NULL, *on_dev = NULL, *on_peer = NULL, *again_cpu = NULL;
    REQUIRE(data != NULL);
    REQUIRE((back = test_malloc((size_t)n * sizeof(float))));

    /* host memory -> the GPU: one host-to-device copy there, which first waited
     * for its queue (one synchronisation) */
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_from_host(&on_dev, dev, shape2(37, 53), data));
    EXPECT_COPIES(dev, 1, bytes, 0, 0, 0, 0);
    EXPECT_EQ_I64(counters_of(dev).syncs, 1);
    EXPECT_NO_COPIES(peer);
    /* the GPU -> host memory: one device-to-host copy there, and its wait */
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_to_host(on_dev, back, n));
    EXPECT_COPIES(dev, 0, 0, 1, bytes, 0, 0);
    EXPECT_EQ_I64(counters_of(dev).syncs, 1);
    EXPECT_BITWISE_EQUAL("to_host from the GPU", back, data, n);
    tensor_free(on_dev);
    on_dev = NULL;

    /* host memory <-> the CPU device: device-to-device on the CPU (counters.h),
     * which never waits */
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_from_host(&on_cpu, cpu, shape2(37, 53), data));
    EXPECT_COPIES(cpu, 0, 0, 0, 0, 1, bytes);
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_to_host(on_cpu, back, n));
    EXPECT_COPIES(cpu, 0, 0, 0, 0, 1, bytes);
    EXPECT_EQ_I64(counters_of(cpu).syncs, 0);

    /* cpu -> the GPU: one host-to-device copy there */
    REQUIRE(reset_all_counters());
    const size_t dev_before = memory_in_use(dev);
    REQUIRE_OK(tensor_to(on_cpu, dev, &on_dev));
    EXPECT(on_dev != on_cpu);
    EXPECT(device_equal(tensor_device(on_dev), dev));
    EXPECT_EQ_I64(memory_in_use(dev), dev_before + bytes);
    EXPECT_COPIES(dev, 1, bytes, 0, 0, 0, 0);
    EXPECT_NO_COPIES(peer);

    /* the GPU -> the second one: device-to-device on both */
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_to(on_dev, peer, &on_peer));
    EXPECT(device_equal(tensor_device(on_peer), peer));
    REQUIRE_OK(device_synchronize(peer));
    EXPECT_COPIES(dev, 0, 0, 0, 0, 1, bytes);
    EXPECT_COPIES(peer, 0, 0, 0, 0, 1, bytes);

    /* the second GPU -> cpu: one device-to-host copy there */
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_to(on_peer, cpu, &again_cpu));
    EXPECT(device_equal(tensor_device(again_cpu), cpu));
    EXPECT_COPIES(peer, 0, 0, 1, bytes, 0, 0);
    EXPECT_NO_COPIES(dev);
    expect_tensor_bits("cpu -> dev -> peer -> cpu", again_cpu, data, n);
cleanup:
    tensor_free(on_cpu);
    tensor_free(on_dev);
    tensor_free(on_peer);
    tensor_free(again_cpu);
    free(data);
    free(back);
}

/* n values of random bit patterns, led by NaNs with payloads, infinities,
 * signed zeros and subnormals: what a copy must give back bit for bit. */
static float *every_kind_of_float(int64_t n, uint64_t seed)
{
    const uint32_t special[] = { 0x7fc00001u, 0xffc12345u, 0x7fa00000u /* signalling */,
                                 0x7f800000u, 0xff800000u, 0x80000000u,
                                 0x00000001u, 0x807fffffu, 0x7f7fffffu,
                                 0x00800000u };
    const int64_t n_special = (int64_t)(sizeof special / sizeof special[0]);
    float *values = test_malloc((size_t)n * sizeof(float));
    if (values == NULL) return NULL;
    test_rng rng = test_rng_seeded(seed);
    for (int64_t i = 0; i < n; i++) {
        const uint32_t bits = i < n_special ? special[i] : (uint32_t)test_rng_next(&rng);
        memcpy(&values[i], &bits, sizeof bits);
    }
    return values;
}

/* cpu -> the GPU -> cpu, and the GPU -> the second GPU, give back every bit. */
static void test_round_trip_cpu_gpu_cpu_is_bit_exact(void)
{
    const int64_t n = 4099;
    float *values = every_kind_of_float(n, 1401);
    tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    REQUIRE(values != NULL);
    REQUIRE_OK(tensor_from_host(&a, cpu, shape1(n), values));
    REQUIRE_OK(tensor_to(a, dev, &b));
    REQUIRE_OK(tensor_to(b, cpu, &c));
    expect_tensor_bits("cpu -> dev -> cpu", c, values, n);
    /* and through tensor_copy, dev -> peer */
    REQUIRE_OK(tensor_empty(&d, peer, DTYPE_F32, shape1(n)));
    REQUIRE_OK(tensor_copy(d, b));
    expect_tensor_bits("tensor_copy dev -> peer", d, values, n);
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
    tensor_free(d);
    free(values);
}

/* The GPU -> a simulated GPU -> the GPU gives back every bit, and each copy is
 * one device-to-device copy counted on both GPUs (counters.h), none on the
 * host's side. On sim:0 the other is sim:1; on cuda:0 it is sim:0, and the copy
 * crosses from one backend to the other through the simulated GPU's host
 * memory (tensor_copy.c). */
static void test_a_round_trip_through_a_simulated_gpu_is_bit_exact_and_counted_on_both(void)
{
    const int64_t n = 4099;
    const uint64_t bytes = (uint64_t)n * 4;
    float *values = every_kind_of_float(n, 1451);
    tensor *a = NULL, *b = NULL, *c = NULL;
    char what[64];
    REQUIRE(values != NULL);
    REQUIRE(!device_equal(dev, sim_peer));
    REQUIRE_OK(tensor_from_host(&a, dev, shape1(n), values));
    REQUIRE_OK(tensor_empty(&c, dev, DTYPE_F32, shape1(n)));
    REQUIRE(reset_all_counters());
    /* there, by tensor_to */
    REQUIRE_OK(tensor_to(a, sim_peer, &b));
    EXPECT(device_equal(tensor_device(b), sim_peer));
    EXPECT_COPIES(dev, 0, 0, 0, 0, 1, bytes);
    EXPECT_COPIES(sim_peer, 0, 0, 0, 0, 1, bytes);
    EXPECT_NO_COPIES(cpu);
    /* and back, by tensor_copy into a tensor that waits for it */
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_copy(c, b));
    EXPECT_COPIES(dev, 0, 0, 0, 0, 1, bytes);
    EXPECT_COPIES(sim_peer, 0, 0, 0, 0, 1, bytes);
    EXPECT_NO_COPIES(cpu);
    snprintf(what, sizeof what, "%s -> %s", device_name(dev), device_name(sim_peer));
    expect_tensor_bits(what, b, values, n);
    snprintf(what, sizeof what, "%s -> %s -> %s", device_name(dev), device_name(sim_peer), device_name(dev));
    expect_tensor_bits(what, c, values, n);
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
    free(values);
}

/* A copy between two GPUs takes its source after the work queued on the source
 * GPU before it, and overwrites its destination after the work queued on the
 * destination GPU before it (which still reads the old values). Products
 * queued first on both keep them busy while the copy is asked for. */
static void check_copy_follows_both_queues(device from, device to)
{
    const int64_t n = 37 * 53;
    float *data = random_floats(n, 1471);
    tensor *x = NULL, *y = NULL, *z = NULL, *busy[2][3] = { { NULL } };
    const device both[2] = { from, to };
    char what[96];
    REQUIRE(data != NULL);
    for (int k = 0; k < 2; k++) {
        REQUIRE_OK(tensor_full(&busy[k][0], both[k], shape2(512, 512), 0.5f));
        REQUIRE_OK(tensor_full(&busy[k][1], both[k], shape2(512, 512), 0.25f));
        REQUIRE_OK(tensor_empty(&busy[k][2], both[k], DTYPE_F32, shape2(512, 512)));
    }
    REQUIRE_OK(tensor_from_host(&x, from, shape2(37, 53), data));
    REQUIRE_OK(tensor_full(&y, to, shape2(37, 53), 3.0f));
    REQUIRE_OK(tensor_empty(&z, to, DTYPE_F32, shape2(37, 53)));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++)
            REQUIRE_OK(op_matmul(busy[k][0], false, busy[k][1], false, NULL, busy[k][2]));
    REQUIRE_OK(op_scale(x, 2.0f, x)); /* x = 2 data, queued on from */
    REQUIRE_OK(op_scale(y, 1.0f, z)); /* z = y = 3, queued on to */
    REQUIRE_OK(tensor_copy(y, x));
    for (int64_t i = 0; i < n; i++) data[i] *= 2.0f; /* exact */
    snprintf(what, sizeof what, "%s -> %s after 2x queued on %s", device_name(from), device_name(to),
             device_name(from));
    expect_tensor_bits(what, y, data, n);
    for (int64_t i = 0; i < n; i++) data[i] = 3.0f;
    snprintf(what, sizeof what, "what %s read before the copy overwrote it", device_name(to));
    expect_tensor_bits(what, z, data, n);
cleanup:
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++) tensor_free(busy[k][i]);
    tensor_free(x);
    tensor_free(y);
    tensor_free(z);
    free(data);
}

static void test_a_copy_between_two_gpus_follows_the_work_queued_on_both(void)
{
    check_copy_follows_both_queues(dev, peer);
    check_copy_follows_both_queues(peer, dev);
    if (!device_equal(peer, sim_peer)) {
        check_copy_follows_both_queues(dev, sim_peer);
        check_copy_follows_both_queues(sim_peer, dev);
    }
}

static void test_copy_works_between_any_two_devices_and_checks_its_operands(void)
{
    const device devices[] = { cpu, dev, peer };
    const int64_t n = 29 * 31;
    float *data = random_floats(n, 1501);
    tensor *src = NULL, *dst = NULL, *wrong_shape = NULL, *wrong_dtype = NULL;
    REQUIRE(data != NULL);
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 3; j++) {
            char what[64];
            snprintf(what, sizeof what, "tensor_copy %s -> %s", device_name(devices[i]),
                     device_name(devices[j]));
            REQUIRE_OK(tensor_from_host(&src, devices[i], shape2(29, 31), data));
            REQUIRE_OK(tensor_full(&dst, devices[j], shape2(29, 31), NAN));
            EXPECT_OK(tensor_copy(dst, src));
            expect_tensor_bits(what, dst, data, n);
            tensor_free(src);
            tensor_free(dst);
            src = dst = NULL;
        }
    }
    /* a copy from cpu into the GPU is one host-to-device copy there */
    REQUIRE_OK(tensor_from_host(&src, cpu, shape2(29, 31), data));
    REQUIRE_OK(tensor_empty(&dst, dev, DTYPE_F32, shape2(29, 31)));
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_copy(dst, src));
    EXPECT_COPIES(dev, 1, (uint64_t)n * 4, 0, 0, 0, 0);

    /* same count, other shape; other dtype; NULLs */
    REQUIRE_OK(tensor_empty(&wrong_shape, dev, DTYPE_F32, shape2(31, 29)));
    REQUIRE_OK(tensor_empty(&wrong_dtype, dev, DTYPE_I32, shape2(29, 31)));
    EXPECT_REFUSED(tensor_copy(wrong_shape, src), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[31, 29]");
    EXPECT_CONTAINS(last_error(), "[29, 31]");
    EXPECT_REFUSED(tensor_copy(wrong_dtype, src), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy(NULL, src), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy(dst, NULL), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(src);
    tensor_free(dst);
    tensor_free(wrong_shape);
    tensor_free(wrong_dtype);
    free(data);
}

static void test_copy_slice_moves_a_run_of_elements_within_a_device(void)
{
    const device devices[] = { cpu, dev };
    const int64_t n = 37 * 53;
    float *data = random_floats(n, 1551), want[100];
    REQUIRE(data != NULL);
    for (size_t k = 0; k < 2; k++) {
        const device d = devices[k];
        tensor *src = NULL, *dst = NULL;
        char what[64];
        snprintf(what, sizeof what, "copy_slice on %s", device_name(d));
        if (tensor_from_host(&src, d, shape2(37, 53), data) == STATUS_OK &&
            tensor_full(&dst, d, shape1(100), -1.0f) == STATUS_OK) {
            REQUIRE(reset_all_counters());
            /* src elements [500, 510) into dst [90, 100), then [0, 3) into [0, 3) */
            EXPECT_OK(tensor_copy_slice(dst, 90, src, 500, 10));
            EXPECT_OK(tensor_copy_slice(dst, 0, src, 0, 3));
            EXPECT_OK(tensor_copy_slice(dst, 50, src, 7, 0)); /* nothing */
            for (int i = 0; i < 100; i++) want[i] = -1.0f;
            for (int i = 0; i < 10; i++) want[90 + i] = data[500 + i];
            for (int i = 0; i < 3; i++) want[i] = data[i];
            expect_tensor_bits(what, dst, want, 100);
            device_counters c = counters_of(d);
            EXPECT_EQ_I64(c.h2d_copies + c.d2h_copies, d.kind == DEVICE_CPU ? 0 : 1); /* the read */
        } else {
            harness_fail(__FILE__, __LINE__, "setting up on %s: %s", device_name(d), last_error());
        }
        tensor_free(src);
        tensor_free(dst);
    }
cleanup:
    free(data);
}

static void test_copy_slice_refuses_ranges_outside_and_other_devices(void)
{
    tensor *src = NULL, *dst = NULL, *elsewhere = NULL, *ints = NULL;
    REQUIRE_OK(tensor_zeros(&src, dev, shape2(3, 5)));
    REQUIRE_OK(tensor_zeros(&dst, dev, shape1(10)));
    REQUIRE_OK(tensor_zeros(&elsewhere, cpu, shape1(10)));
    REQUIRE_OK(tensor_empty(&ints, dev, DTYPE_I32, shape1(10)));
    EXPECT_REFUSED(tensor_copy_slice(dst, 0, src, 10, 6), STATUS_BAD_ARGUMENT); /* past src */
    EXPECT_REFUSED(tensor_copy_slice(dst, 5, src, 0, 6), STATUS_BAD_ARGUMENT);  /* past dst */
    EXPECT_REFUSED(tensor_copy_slice(dst, -1, src, 0, 2), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy_slice(dst, 0, src, -1, 2), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy_slice(dst, 0, src, 0, -2), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy_slice(dst, INT64_MAX, src, 0, 2), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy_slice(dst, 0, src, 2, INT64_MAX), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy_slice(ints, 0, src, 0, 2), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy_slice(elsewhere, 0, src, 0, 2), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), "cpu");
    EXPECT_CONTAINS(last_error(), device_name(dev));
    EXPECT_REFUSED(tensor_copy_slice(NULL, 0, src, 0, 2), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy_slice(dst, 0, NULL, 0, 2), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(src);
    tensor_free(dst);
    tensor_free(elsewhere);
    tensor_free(ints);
}

static void test_to_an_absent_device_is_refused_naming_those_present(void)
{
    const device absent = { DEVICE_SIM, 5 };
    tensor *t = NULL, *u = SENTINEL;
    REQUIRE_OK(tensor_zeros(&t, cpu, shape1(3)));
    EXPECT_REFUSED(tensor_to(t, absent, &u), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), "sim:5");
    /* the devices present: the cpu and every GPU, real and simulated */
    EXPECT_CONTAINS(last_error(), "cpu");
    EXPECT_CONTAINS(last_error(), device_name(dev));
    EXPECT_CONTAINS(last_error(), device_name(peer));
    EXPECT_CONTAINS(last_error(), device_name(sim_peer));
    EXPECT_CONTAINS(last_error(), "sim:1");
    EXPECT(u == NULL);
    EXPECT_REFUSED(tensor_to(NULL, dev, &u), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_to(t, dev, NULL), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(t);
    if (u != NULL && u != SENTINEL) tensor_free(u);
}

/* ============================================================================
 * reading on the host
 * ========================================================================== */

static void test_item_reads_one_element_and_refuses_more(void)
{
    const int32_t one_int = 4;
    float value = NAN;
    tensor *one = NULL, *one4 = NULL, *six = NULL, *ints = NULL;
    REQUIRE_OK(tensor_full(&one, dev, shape1(1), 3.5f));
    REQUIRE_OK(tensor_full(&one4, cpu, shape4(1, 1, 1, 1), -0.75f));
    REQUIRE_OK(tensor_zeros(&six, dev, shape2(2, 3)));
    REQUIRE_OK(tensor_from_host_i32(&ints, dev, shape1(1), &one_int));
    EXPECT_OK(tensor_item(one, &value));
    EXPECT(value == 3.5f);
    EXPECT_OK(tensor_item(one4, &value));
    EXPECT(value == -0.75f);
    EXPECT_REFUSED(tensor_item(six, &value), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "[2, 3]");
    EXPECT_REFUSED(tensor_item(ints, &value), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_item(NULL, &value), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_item(one, NULL), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(one);
    tensor_free(one4);
    tensor_free(six);
    tensor_free(ints);
}

static void test_to_host_refuses_a_buffer_too_small_and_writes_nothing(void)
{
    const int64_t n = 37 * 53;
    float *data = random_floats(n, 1601), *dst = NULL;
    int32_t *idst = NULL;
    tensor *t = NULL, *ints = NULL;
    REQUIRE(data != NULL);
    REQUIRE((dst = test_malloc((size_t)(n + 8) * sizeof(float))));
    REQUIRE((idst = test_malloc((size_t)n * sizeof(int32_t))));
    REQUIRE_OK(tensor_from_host(&t, dev, shape2(37, 53), data));
    REQUIRE_OK(tensor_empty(&ints, dev, DTYPE_I32, shape2(37, 53)));

    for (int64_t i = 0; i < n + 8; i++) dst[i] = -123.0f;
    EXPECT_REFUSED(tensor_to_host(t, dst, n - 1), STATUS_BAD_ARGUMENT);
    int64_t touched = 0;
    for (int64_t i = 0; i < n + 8; i++) touched += dst[i] != -123.0f;
    EXPECT_EQ_I64(touched, 0);

    /* a larger buffer is fine: exactly numel elements written */
    EXPECT_OK(tensor_to_host(t, dst, n + 8));
    EXPECT_BITWISE_EQUAL("to_host into a larger buffer", dst, data, n);
    for (int64_t i = n; i < n + 8; i++) EXPECT(dst[i] == -123.0f);

    EXPECT_REFUSED(tensor_to_host(ints, dst, n), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_to_host_i32(t, idst, n), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_to_host(t, NULL, n), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_to_host(NULL, dst, n), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(t);
    tensor_free(ints);
    free(data);
    free(dst);
    free(idst);
}

/* ============================================================================
 * seeded random tensors
 * ========================================================================== */

static void test_seeded_random_tensors_are_equal_on_every_device(void)
{
    const device devices[] = { cpu, dev, peer };
    const shape s = shape2(37, 53);
    const int64_t n = shape_numel(s);
    float *u[3] = { NULL, NULL, NULL }, *g[3] = { NULL, NULL, NULL };
    float *u_other = NULL, *g_other = NULL;
    tensor *t = NULL;
    for (int k = 0; k < 3; k++) {
        REQUIRE_OK(tensor_uniform(&t, devices[k], s, -2.0f, 3.0f, 42));
        REQUIRE((u[k] = download(t)));
        tensor_free(t);
        t = NULL;
        REQUIRE_OK(tensor_normal(&t, devices[k], s, 1.0f, 0.5f, 42));
        REQUIRE((g[k] = download(t)));
        tensor_free(t);
        t = NULL;
    }
    EXPECT_BITWISE_EQUAL("uniform seed 42: dev vs cpu", u[1], u[0], n);
    EXPECT_BITWISE_EQUAL("uniform seed 42: peer vs cpu", u[2], u[0], n);
    EXPECT_BITWISE_EQUAL("normal seed 42: dev vs cpu", g[1], g[0], n);
    EXPECT_BITWISE_EQUAL("normal seed 42: peer vs cpu", g[2], g[0], n);

    /* within [low, high], and not all the same */
    int64_t outside = 0, equal_neighbours = 0;
    for (int64_t i = 0; i < n; i++) {
        outside += !(u[0][i] >= -2.0f && u[0][i] <= 3.0f);
        if (i > 0) equal_neighbours += u[0][i] == u[0][i - 1];
    }
    EXPECT_EQ_I64(outside, 0);
    EXPECT_MSG(equal_neighbours < n / 100, "%lld equal neighbours in a uniform draw",
               (long long)equal_neighbours);

    /* another seed, other values */
    REQUIRE_OK(tensor_uniform(&t, dev, s, -2.0f, 3.0f, 43));
    REQUIRE((u_other = download(t)));
    tensor_free(t);
    t = NULL;
    REQUIRE_OK(tensor_normal(&t, dev, s, 1.0f, 0.5f, 43));
    REQUIRE((g_other = download(t)));
    int64_t same_u = 0, same_g = 0;
    for (int64_t i = 0; i < n; i++) {
        same_u += u_other[i] == u[0][i];
        same_g += g_other[i] == g[0][i];
    }
    EXPECT_MSG(same_u < n / 100, "seeds 42 and 43 give %lld equal uniform values of %lld", (long long)same_u,
               (long long)n);
    EXPECT_MSG(same_g < n / 100, "seeds 42 and 43 give %lld equal normal values of %lld", (long long)same_g,
               (long long)n);
cleanup:
    tensor_free(t);
    for (int k = 0; k < 3; k++) {
        free(u[k]);
        free(g[k]);
    }
    free(u_other);
    free(g_other);
}

/* 100,200 draws: the sample mean and standard deviation are within 5 standard
 * errors of what was asked. */
static void test_random_tensors_have_the_asked_distribution(void)
{
    const shape s = shape2(200, 501);
    const int64_t n = shape_numel(s);
    float *x = NULL;
    tensor *t = NULL;

    REQUIRE_OK(tensor_normal(&t, dev, s, 2.0f, 3.0f, 7));
    REQUIRE((x = download(t)));
    double sum = 0.0, squares = 0.0;
    for (int64_t i = 0; i < n; i++) sum += x[i];
    double mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++) squares += (x[i] - mean) * (x[i] - mean);
    double stddev = sqrt(squares / (double)(n - 1));
    EXPECT_NEAR(mean, 2.0, 5.0 * 3.0 / sqrt((double)n), 0.0);
    EXPECT_NEAR(stddev, 3.0, 5.0 * 3.0 / sqrt(2.0 * (double)n), 0.0);
    tensor_free(t);
    t = NULL;
    free(x);
    x = NULL;

    REQUIRE_OK(tensor_uniform(&t, cpu, s, -1.0f, 5.0f, 8));
    REQUIRE((x = download(t)));
    sum = squares = 0.0;
    for (int64_t i = 0; i < n; i++) sum += x[i];
    mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++) squares += (x[i] - mean) * (x[i] - mean);
    stddev = sqrt(squares / (double)(n - 1));
    const double want_std = 6.0 / sqrt(12.0);
    EXPECT_NEAR(mean, 2.0, 5.0 * want_std / sqrt((double)n), 0.0);
    EXPECT_NEAR(stddev, want_std, 0.01 * want_std, 0.0);
cleanup:
    tensor_free(t);
    free(x);
}

static void test_random_tensor_on_a_gpu_is_one_host_to_device_copy(void)
{
    const shape s = shape2(37, 53);
    tensor *t = NULL;
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_uniform(&t, dev, s, 0.0f, 1.0f, 5));
    REQUIRE_OK(device_synchronize(dev));
    EXPECT_COPIES(dev, 1, (uint64_t)shape_numel(s) * 4, 0, 0, 0, 0);
    tensor_free(t);
    t = NULL;
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_normal(&t, peer, s, 0.0f, 1.0f, 5));
    REQUIRE_OK(device_synchronize(peer));
    EXPECT_COPIES(peer, 1, (uint64_t)shape_numel(s) * 4, 0, 0, 0, 0);
cleanup:
    tensor_free(t);
}

/* ============================================================================
 * the same-device rule
 * ========================================================================== */

static void test_operands_on_two_devices_are_refused_and_nothing_is_copied(void)
{
    tensor *a = NULL, *b = NULL, *c = NULL, *out = NULL, *b_on_cpu = NULL;
    float *sum = NULL;
    REQUIRE_OK(tensor_ones(&a, cpu, shape2(37, 53)));
    REQUIRE_OK(tensor_ones(&b, dev, shape2(37, 53)));
    REQUIRE_OK(tensor_ones(&c, peer, shape2(37, 53)));
    REQUIRE_OK(tensor_zeros(&out, cpu, shape2(37, 53)));
    REQUIRE_OK(device_synchronize(dev));
    REQUIRE_OK(device_synchronize(peer));
    REQUIRE(reset_all_counters());

    EXPECT_REFUSED(op_add(a, b, out), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), "cpu");
    EXPECT_CONTAINS(last_error(), device_name(dev));
    /* says how to fix it: move one operand with tensor_to */
    EXPECT_CONTAINS(last_error(), "to(");

    EXPECT_REFUSED(op_mul(b, c, b), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), device_name(dev));
    EXPECT_CONTAINS(last_error(), device_name(peer));

    EXPECT_NO_COPIES(cpu);
    EXPECT_NO_COPIES(dev);
    EXPECT_NO_COPIES(peer);

    /* the fix the message suggests works */
    REQUIRE_OK(tensor_to(b, cpu, &b_on_cpu));
    REQUIRE_OK(op_add(a, b_on_cpu, out));
    REQUIRE((sum = download(out)));
    int64_t wrong = 0;
    for (int64_t i = 0; i < 37 * 53; i++) wrong += sum[i] != 2.0f;
    EXPECT_EQ_I64(wrong, 0);
cleanup:
    free(sum);
    tensor_free(b_on_cpu);
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
    tensor_free(out);
}

/* ============================================================================
 * memory: peak and capacity
 * ========================================================================== */

static void check_peak_is_exact(device d)
{
    tensor *a = NULL, *b = NULL, *c = NULL;
    char where[32];
    snprintf(where, sizeof where, "%s", device_name(d));
    REQUIRE_OK(device_synchronize(d));
    const size_t base = memory_in_use(d);
    REQUIRE_OK(counters_reset(d));
    EXPECT_EQ_I64(counters_of(d).memory_peak, base);

    REQUIRE_OK(tensor_empty(&a, d, DTYPE_F32, shape1(4000))); /* base + 16000 */
    REQUIRE_OK(tensor_zeros(&b, d, shape2(37, 81)));          /* + 11988 = 27988 */
    EXPECT_EQ_I64(counters_of(d).memory_current, base + 27988);
    tensor_free(a); /* 11988 */
    a = NULL;
    EXPECT_EQ_I64(counters_of(d).memory_current, base + 11988);
    REQUIRE_OK(tensor_empty(&c, d, DTYPE_I32, shape1(1000))); /* 15988 */
    device_counters now = counters_of(d);
    EXPECT_EQ_I64(now.memory_current, base + 15988);
    EXPECT_MSG(now.memory_peak == base + 27988, "peak on %s is %zu bytes, want %zu", where, now.memory_peak,
               base + 27988);
    tensor_free(b);
    tensor_free(c);
    b = c = NULL;
    now = counters_of(d);
    EXPECT_EQ_I64(now.memory_current, base);
    EXPECT_EQ_I64(now.memory_peak, base + 27988);

    /* a reset restarts the peak from what is in use now */
    REQUIRE_OK(tensor_ones(&a, d, shape1(10)));
    REQUIRE_OK(counters_reset(d));
    now = counters_of(d);
    EXPECT_EQ_I64(now.memory_peak, base + 40);
    EXPECT_EQ_I64(now.memory_current, base + 40);
    EXPECT_EQ_I64(now.h2d_copies + now.d2h_copies + now.d2d_copies + now.syncs + now.launches, 0);
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
}

static void test_peak_memory_is_exact_after_a_reset(void)
{
    check_peak_is_exact(dev);
    check_peak_is_exact(cpu);
}

static void test_out_of_memory_on_a_simulated_gpu_fails_cleanly(void)
{
    if (dev.kind != DEVICE_SIM) {
        harness_skip("LABKIT_SIM_MEMORY sets the memory of simulated GPUs only");
        return;
    }
    size_t free_bytes = 0, total_bytes = 0, free_after = 0;
    tensor *big = SENTINEL, *first = NULL, *second = SENTINEL, *host_side = NULL, *moved = SENTINEL,
           *small = NULL;
    const int64_t forty_mib = (int64_t)(40 << 20) / 4; /* elements */
    const int64_t thirty_mib = (int64_t)(30 << 20) / 4;

    REQUIRE_OK(device_synchronize(dev));
    REQUIRE_OK(device_memory_info(dev, &free_bytes, &total_bytes));
    EXPECT_EQ_I64(total_bytes, SIM_CAPACITY);
    const size_t base = memory_in_use(dev);
    EXPECT_EQ_I64(free_bytes, SIM_CAPACITY - base);

    /* one tensor larger than the whole device */
    EXPECT_REFUSED(tensor_empty(&big, dev, DTYPE_F32, shape1((int64_t)(SIM_CAPACITY / 4) + 1)),
                   STATUS_OUT_OF_MEMORY);
    EXPECT_MSG(strstr(last_error(), "LABKIT_SIM_MEMORY") != NULL ||
                   strstr(last_error(), "67108864") != NULL || strstr(last_error(), "64") != NULL,
               "the message names neither the capacity nor LABKIT_SIM_MEMORY: \"%s\"", last_error());
    EXPECT(big == NULL);
    EXPECT_EQ_I64(memory_in_use(dev), base);

    /* two that fit alone but not together */
    REQUIRE_OK(tensor_zeros(&first, dev, shape1(forty_mib)));
    EXPECT_OK(device_memory_info(dev, &free_after, &total_bytes));
    EXPECT_EQ_I64(free_after, SIM_CAPACITY - base - (size_t)(40 << 20));
    EXPECT_REFUSED(tensor_zeros(&second, dev, shape1(forty_mib)), STATUS_OUT_OF_MEMORY);
    EXPECT(second == NULL);
    EXPECT_EQ_I64(memory_in_use(dev), base + (size_t)(40 << 20));
    EXPECT_REFUSED(tensor_uniform(&big, dev, shape1(forty_mib), 0.0f, 1.0f, 3), STATUS_OUT_OF_MEMORY);
    EXPECT(big == NULL);

    /* a copy that does not fit: refused before anything is copied */
    REQUIRE_OK(tensor_zeros(&host_side, cpu, shape1(thirty_mib)));
    REQUIRE(reset_all_counters());
    EXPECT_REFUSED(tensor_to(host_side, dev, &moved), STATUS_OUT_OF_MEMORY);
    EXPECT(moved == NULL);
    EXPECT_NO_COPIES(dev);
    EXPECT_EQ_I64(memory_in_use(dev), base + (size_t)(40 << 20));

    /* smaller allocations still work, and the room comes back on free */
    EXPECT_OK(tensor_ones(&small, dev, shape2(37, 53)));
    tensor_free(small);
    small = NULL;
    tensor_free(first);
    first = NULL;
    EXPECT_EQ_I64(memory_in_use(dev), base);
    REQUIRE(second == NULL);
    EXPECT_OK(tensor_zeros(&second, dev, shape1(forty_mib)));
cleanup:
    if (big != SENTINEL) tensor_free(big); /* NULL unless a refusal failed */
    if (second != SENTINEL) tensor_free(second);
    if (moved != SENTINEL) tensor_free(moved);
    tensor_free(first);
    tensor_free(host_side);
    tensor_free(small);
}

/* A real GPU's memory is what it is: an absurd size (4 TiB, the most a tensor
 * may hold) is refused as out of memory, with a hint, nothing is counted, and
 * the device works on: a program that catches the error and asks for less
 * carries on. */
static void test_out_of_memory_on_a_real_gpu_fails_cleanly_and_the_device_works_on(void)
{
    if (dev.kind != DEVICE_CUDA) {
        harness_skip("a real GPU's own memory: tested where there is one");
        return;
    }
    const int64_t n = 37 * 53;
    tensor *big = SENTINEL, *small = NULL;
    float *got = NULL;
    REQUIRE_OK(device_synchronize(dev));
    const size_t base = memory_in_use(dev);
    EXPECT_REFUSED(tensor_empty(&big, dev, DTYPE_F32, shape1((int64_t)1 << 40)), STATUS_OUT_OF_MEMORY);
    EXPECT_CONTAINS(last_error(), "out of memory");
    EXPECT_CONTAINS(last_error(), "tensor_free");
    EXPECT(big == NULL);
    EXPECT_EQ_I64(memory_in_use(dev), base);
    /* what comes next is not refused for it */
    EXPECT_OK(tensor_full(&small, dev, shape2(37, 53), 2.5f));
    REQUIRE(small != NULL);
    EXPECT_OK(op_scale(small, 2.0f, small));
    REQUIRE((got = download(small)));
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++) wrong += got[i] != 5.0f;
    EXPECT_EQ_I64(wrong, 0);
cleanup:
    if (big != SENTINEL) tensor_free(big); /* NULL unless the refusal failed */
    tensor_free(small);
    free(got);
}

/* ============================================================================
 * 16-bit tensors (bf16, f16): half the bytes, moved as raw bits
 * ========================================================================== */

static void test_dtype_sizes_and_names(void)
{
    EXPECT_EQ_I64(dtype_size(DTYPE_F32), 4);
    EXPECT_EQ_I64(dtype_size(DTYPE_I32), 4);
    EXPECT_EQ_I64(dtype_size(DTYPE_BF16), 2);
    EXPECT_EQ_I64(dtype_size(DTYPE_F16), 2);
    EXPECT_EQ_I64(dtype_size((dtype)17), 0);
    EXPECT_STREQ(dtype_name(DTYPE_F32), "f32");
    EXPECT_STREQ(dtype_name(DTYPE_I32), "i32");
    EXPECT_STREQ(dtype_name(DTYPE_BF16), "bf16");
    EXPECT_STREQ(dtype_name(DTYPE_F16), "f16");
    EXPECT_STREQ(dtype_name((dtype)-1), "invalid dtype");
    tensor *t = SENTINEL;
    EXPECT_REFUSED(tensor_empty(&t, cpu, (dtype)17, shape1(3)), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "DTYPE_BF16");
    EXPECT(t == NULL);
}

static void test_16_bit_tensors_take_half_the_bytes_and_say_their_dtype(void)
{
    char buf[96];
    tensor *b = NULL, *h = NULL, *view = NULL;
    const size_t before = memory_in_use(dev);
    REQUIRE_OK(tensor_empty(&b, dev, DTYPE_BF16, shape2(37, 53)));
    REQUIRE_OK(tensor_empty(&h, peer, DTYPE_F16, shape3(3, 5, 7)));
    EXPECT(tensor_dtype(b) == DTYPE_BF16);
    EXPECT(tensor_dtype(h) == DTYPE_F16);
    EXPECT_EQ_I64(tensor_bytes(b), 37 * 53 * 2);
    EXPECT_EQ_I64(tensor_bytes(h), 105 * 2);
    EXPECT_EQ_I64(memory_in_use(dev), before + 37 * 53 * 2);
    char want[96];
    snprintf(want, sizeof want, "bf16[37, 53] on %s", device_name(dev));
    EXPECT_STREQ(tensor_describe(b, buf, sizeof buf), want);
    snprintf(want, sizeof want, "f16[3, 5, 7] on %s", device_name(peer));
    EXPECT_STREQ(tensor_describe(h, buf, sizeof buf), want);
    REQUIRE_OK(tensor_reshape(b, shape1(37 * 53), &view));
    EXPECT(tensor_dtype(view) == DTYPE_BF16);
    EXPECT_EQ_I64(tensor_bytes(view), 37 * 53 * 2);
    EXPECT_EQ_I64(memory_in_use(dev), before + 37 * 53 * 2);
cleanup:
    tensor_free(view);
    tensor_free(b);
    tensor_free(h);
}

/* n 16-bit patterns, every one of them different in both bytes. */
static uint16_t *bit_patterns(int64_t n, uint64_t seed)
{
    uint16_t *bits = test_malloc((size_t)n * sizeof(uint16_t));
    if (bits == NULL) return NULL;
    test_rng rng = test_rng_seeded(seed);
    for (int64_t i = 0; i < n; i++) bits[i] = (uint16_t)test_rng_next(&rng);
    return bits;
}

/* Raw bits in, across every pair of devices, raw bits out: every copy counted
 * with 2 bytes an element, every bit kept (NaN payloads included). */
static void test_16_bit_transfers_keep_every_bit_and_count_two_bytes_an_element(void)
{
    const int64_t n = 37 * 53;
    const uint64_t bytes = (uint64_t)n * 2;
    uint16_t *bits = bit_patterns(n, 1701), *back = NULL;
    tensor *on_sim0 = NULL, *on_sim1 = NULL, *on_cpu = NULL;
    REQUIRE(bits != NULL);
    REQUIRE((back = test_malloc((size_t)bytes)));
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_from_host_raw(&on_sim0, dev, DTYPE_BF16, shape2(37, 53), bits, (size_t)bytes));
    EXPECT_COPIES(dev, 1, bytes, 0, 0, 0, 0);
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_to(on_sim0, peer, &on_sim1));
    REQUIRE_OK(device_synchronize(peer));
    EXPECT_COPIES(dev, 0, 0, 0, 0, 1, bytes);
    EXPECT_COPIES(peer, 0, 0, 0, 0, 1, bytes);
    REQUIRE(reset_all_counters());
    REQUIRE_OK(tensor_to(on_sim1, cpu, &on_cpu));
    EXPECT_COPIES(peer, 0, 0, 1, bytes, 0, 0);
    REQUIRE(reset_all_counters());
    memset(back, 0, (size_t)bytes);
    REQUIRE_OK(tensor_to_host_raw(on_cpu, back, (size_t)bytes));
    EXPECT_COPIES(cpu, 0, 0, 0, 0, 1, bytes);
    EXPECT(memcmp(back, bits, (size_t)bytes) == 0);
cleanup:
    tensor_free(on_sim0);
    tensor_free(on_sim1);
    tensor_free(on_cpu);
    free(bits);
    free(back);
}

static void test_16_bit_slices_copy_two_bytes_an_element(void)
{
    const int64_t n = 101;
    uint16_t *bits = bit_patterns(n, 1711), want[10], got[10];
    tensor *src = NULL, *dst = NULL;
    REQUIRE(bits != NULL);
    REQUIRE_OK(tensor_from_host_raw(&src, dev, DTYPE_F16, shape1(n), bits, (size_t)n * 2));
    for (int i = 0; i < 10; i++) want[i] = (uint16_t)(0x3c00 + i); /* 1.0, then its neighbours */
    REQUIRE_OK(tensor_from_host_raw(&dst, dev, DTYPE_F16, shape1(10), want, sizeof want));
    REQUIRE(reset_all_counters());
    /* src elements [90, 94) into dst [3, 7) */
    REQUIRE_OK(tensor_copy_slice(dst, 3, src, 90, 4));
    EXPECT_COPIES(dev, 0, 0, 0, 0, 1, 4 * 2);
    for (int i = 0; i < 4; i++) want[3 + i] = bits[90 + i];
    REQUIRE_OK(tensor_to_host_raw(dst, got, sizeof got));
    EXPECT(memcmp(got, want, sizeof want) == 0);
    EXPECT_REFUSED(tensor_copy_slice(dst, 0, src, 95, 7), STATUS_BAD_ARGUMENT); /* past src's end */
cleanup:
    tensor_free(src);
    tensor_free(dst);
    free(bits);
}

/* The typed calls refuse 16-bit tensors and name the raw ones; the raw ones want
 * the exact byte count. */
static void test_16_bit_host_transfers_refuse_wrong_dtypes_and_byte_counts(void)
{
    uint16_t bits[6] = { 0x3f80, 0x4000, 0xbf80, 0x0000, 0x8000, 0x7f80 };
    float floats[6] = { 0 };
    int32_t ints[6] = { 0 };
    tensor *b = NULL, *f = SENTINEL;
    REQUIRE_OK(tensor_from_host_raw(&b, dev, DTYPE_BF16, shape2(2, 3), bits, sizeof bits));
    EXPECT_REFUSED(tensor_to_host(b, floats, 6), STATUS_BAD_ARGUMENT);
    char want[64];
    snprintf(want, sizeof want, "bf16[2, 3] on %s", device_name(dev));
    EXPECT_CONTAINS(last_error(), want);
    EXPECT_CONTAINS(last_error(), "tensor_to_host_raw");
    EXPECT_CONTAINS(last_error(), "tensor_convert");
    EXPECT_REFUSED(tensor_to_host_i32(b, ints, 6), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_copy_from_host(b, floats, 6), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "tensor_from_host_raw");
    EXPECT_REFUSED(tensor_copy_from_host_async(b, floats, 6), STATUS_BAD_ARGUMENT);
    float value;
    EXPECT_REFUSED(tensor_item(b, &value), STATUS_BAD_ARGUMENT);
    /* byte counts: 12 and nothing else */
    EXPECT_REFUSED(tensor_to_host_raw(b, bits, 11), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "12 bytes");
    EXPECT_REFUSED(tensor_to_host_raw(b, floats, sizeof floats), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_to_host_raw(b, NULL, 12), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_to_host_raw(NULL, bits, 12), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_from_host_raw(&f, dev, DTYPE_F16, shape2(2, 3), bits, 24), STATUS_BAD_ARGUMENT);
    EXPECT(f == NULL);
    EXPECT_REFUSED(tensor_from_host_raw(&f, dev, DTYPE_F16, shape2(2, 3), NULL, 12), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_from_host_raw(NULL, dev, DTYPE_F16, shape2(2, 3), bits, 12), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(tensor_from_host_raw(&f, dev, (dtype)9, shape2(2, 3), bits, 12), STATUS_BAD_ARGUMENT);
    /* raw works for the 4-byte dtypes too: 6 floats are 24 bytes */
    REQUIRE_OK(tensor_from_host_raw(&f, cpu, DTYPE_F32, shape2(2, 3), floats, sizeof floats));
    EXPECT_EQ_I64(tensor_bytes(f), 24);
    /* copies between tensors need one dtype */
    EXPECT_REFUSED(tensor_copy(f, b), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(b);
    if (f != SENTINEL) tensor_free(f);
}

static void test_counters_refuse_absent_devices_and_null(void)
{
    const device absent = { DEVICE_SIM, 5 };
    device_counters c;
    EXPECT_REFUSED(counters_read(absent, &c), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(counters_reset(absent), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(counters_read(dev, NULL), STATUS_BAD_ARGUMENT);
}

/* ============================================================================ */

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "GPU   (sim:0, cuda:0, ...)", &dev);
    if (rc != 0) return rc;
    cpu = device_cpu();
    if (!device_is_gpu(dev)) {
        fprintf(stderr, "test_tensor tests a GPU beside the cpu, not %s\n", device_name(dev));
        return 2;
    }
    if (!test_second_gpu(dev, &peer)) {
        fprintf(stderr, "test_tensor needs a second GPU beside %s: run it with LABKIT_SIM_GPUS=2\n",
                device_name(dev));
        return 1;
    }
    sim_peer = dev.kind == DEVICE_SIM ? peer : (device){ DEVICE_SIM, 0 };
    printf("testing tensors on %s, beside cpu, %s and %s\n", device_name(dev), device_name(peer),
           device_name(sim_peer));

    RUN_TEST(test_shape_helpers_count_and_format);
    RUN_TEST(test_creators_write_exact_values_on_every_device);
    RUN_TEST(test_int32_tensors_keep_their_values);
    RUN_TEST(test_empty_has_the_asked_shape_dtype_and_size);
    RUN_TEST(test_describe_names_dtype_shape_and_device);
    RUN_TEST(test_creators_refuse_bad_shapes_devices_and_nulls);
    RUN_TEST(test_free_of_null_is_harmless);
    RUN_TEST(test_host_alloc_gives_writable_memory);
    RUN_TEST(test_reshape_shares_memory_and_adds_no_bytes);
    RUN_TEST(test_to_same_device_returns_the_same_tensor_and_copies_nothing);
    RUN_TEST(test_transfers_count_exactly_one_copy_with_its_bytes);
    RUN_TEST(test_round_trip_cpu_gpu_cpu_is_bit_exact);
    RUN_TEST(test_a_round_trip_through_a_simulated_gpu_is_bit_exact_and_counted_on_both);
    RUN_TEST(test_a_copy_between_two_gpus_follows_the_work_queued_on_both);
    RUN_TEST(test_copy_works_between_any_two_devices_and_checks_its_operands);
    RUN_TEST(test_copy_slice_moves_a_run_of_elements_within_a_device);
    RUN_TEST(test_copy_slice_refuses_ranges_outside_and_other_devices);
    RUN_TEST(test_to_an_absent_device_is_refused_naming_those_present);
    RUN_TEST(test_item_reads_one_element_and_refuses_more);
    RUN_TEST(test_to_host_refuses_a_buffer_too_small_and_writes_nothing);
    RUN_TEST(test_seeded_random_tensors_are_equal_on_every_device);
    RUN_TEST(test_random_tensors_have_the_asked_distribution);
    RUN_TEST(test_random_tensor_on_a_gpu_is_one_host_to_device_copy);
    RUN_TEST(test_operands_on_two_devices_are_refused_and_nothing_is_copied);
    RUN_TEST(test_peak_memory_is_exact_after_a_reset);
    RUN_TEST(test_out_of_memory_on_a_simulated_gpu_fails_cleanly);
    RUN_TEST(test_out_of_memory_on_a_real_gpu_fails_cleanly_and_the_device_works_on);
    RUN_TEST(test_counters_refuse_absent_devices_and_null);
    RUN_TEST(test_dtype_sizes_and_names);
    RUN_TEST(test_16_bit_tensors_take_half_the_bytes_and_say_their_dtype);
    RUN_TEST(test_16_bit_transfers_keep_every_bit_and_count_two_bytes_an_element);
    RUN_TEST(test_16_bit_slices_copy_two_bytes_an_element);
    RUN_TEST(test_16_bit_host_transfers_refuse_wrong_dtypes_and_byte_counts);
    return harness_finish();
}
