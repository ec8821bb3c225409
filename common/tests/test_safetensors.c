/* test_safetensors.c: parameters saved from a device into a safetensors file
 * and loaded back (labkit/safetensors.h), on the device given as argv[1]:
 * round trips that are bit-identical and cost one copy per tensor each way,
 * the exact bytes the format prescribes, a file assembled by hand as another
 * writer would, and every malformed file refused with a message that names the
 * file and the problem, before any of its data is read.
 *
 *   test_safetensors cpu | sim:0 | cuda:0   (77 when cuda:0 is absent)
 *   test_safetensors cpu pytorch            safetensors' own Python loader reads a
 *                                           file the kit wrote, and the kit reads one
 *                                           its writer wrote (77 when no python3 here
 *                                           has safetensors with torch or numpy)
 *
 * CTest runs it with LABKIT_SIM_GPUS=2. The files go to a directory made with
 * mkdtemp in the working directory (the build tree), removed at the end. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, mkfifo, symlink, truncate, setrlimit: POSIX */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/counters.h"
#include "labkit/environment.h"
#include "labkit/ops.h"
#include "labkit/safetensors.h"
#include "labkit/tensor.h"
#include "test_files.h"

/* The device under test, and another one to load onto (the cpu beside a GPU,
 * sim:0 beside the cpu). */
static device dev, other;

/* The directory every test works in: made by main, removed at the end. */
static char dir[] = "test_safetensors_XXXXXX";

/* ============================================================================
 * helpers
 * ========================================================================== */

static const char *in_dir(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", dir, name);
    return path;
}

/* A network's worth of parameters: odd shapes, both dtypes, every rank. */
#define NPARAMS 6
static const struct param_spec {
    const char *name;
    dtype type;
    shape shp;
} specs[NPARAMS] = {
    { "layers.0.weight", DTYPE_F32, { 2, { 37, 53 } } },
    { "layers.0.bias", DTYPE_F32, { 1, { 53 } } },
    { "conv.weight", DTYPE_F32, { 4, { 2, 3, 5, 7 } } },
    { "scale", DTYPE_F32, { 1, { 1 } } },
    { "labels", DTYPE_I32, { 1, { 11 } } },
    { "counts", DTYPE_I32, { 3, { 2, 1, 3 } } },
};

typedef struct params {
    uint32_t *host[NPARAMS]; /* the values saved, as 32-bit words */
    tensor *t[NPARAMS];
    safetensors_entry entries[NPARAMS];
    int64_t bytes; /* of all the tensors */
} params;

/* Random words; with `specials`, the first floats are the ones a conversion
 * would change: a NaN with a payload, -0, infinity, the smallest subnormal. */
static void fill_words(uint32_t *w, int64_t n, dtype type, bool specials, uint64_t seed)
{
    test_rng rng = test_rng_seeded(seed);
    const uint32_t special[] = { 0x7fc12345u, 0x80000000u, 0x7f800000u, 0x00000001u };
    for (int64_t i = 0; i < n; i++) {
        float x = test_rng_uniform(&rng, -2.0f, 2.0f);
        if (type == DTYPE_F32)
            memcpy(&w[i], &x, 4);
        else
            w[i] = (uint32_t)(int32_t)(test_rng_next(&rng) % 2001) - 1000u;
        if (specials && type == DTYPE_F32 && i < 4) w[i] = special[i];
    }
    if (specials && type == DTYPE_I32) w[0] = 0x80000000u; /* INT32_MIN */
}

static status upload(tensor **out, device d, dtype type, shape s, const uint32_t *words)
{
    return type == DTYPE_F32 ? tensor_from_host(out, d, s, (const float *)(const void *)words)
                             : tensor_from_host_i32(out, d, s, (const int32_t *)(const void *)words);
}

static status download(const tensor *t, uint32_t *words)
{
    return tensor_dtype(t) == DTYPE_F32 ? tensor_to_host(t, (float *)(void *)words, tensor_numel(t))
                                        : tensor_to_host_i32(t, (int32_t *)(void *)words, tensor_numel(t));
}

static bool make_params(params *p, device d, bool specials)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < NPARAMS; i++) {
        const int64_t n = shape_numel(specs[i].shp);
        p->host[i] = test_malloc((size_t)n * 4);
        if (!p->host[i]) return false;
        fill_words(p->host[i], n, specs[i].type, specials, 100 + (uint64_t)i);
        status s = upload(&p->t[i], d, specs[i].type, specs[i].shp, p->host[i]);
        if (s != STATUS_OK) {
            harness_fail(__FILE__, __LINE__, "uploading %s: %s", specs[i].name, last_error());
            return false;
        }
        p->entries[i] = (safetensors_entry){ specs[i].name, p->t[i] };
        p->bytes += n * 4;
    }
    return true;
}

static void free_params(params *p)
{
    for (int i = 0; i < NPARAMS; i++) {
        tensor_free(p->t[i]);
        free(p->host[i]);
    }
}

/* Whether tensor t holds exactly the words of parameter i. */
static void expect_holds(const char *file, int line, const tensor *t, const params *p, int i)
{
    const int64_t n = shape_numel(specs[i].shp);
    uint32_t *got = test_malloc((size_t)n * 4);
    if (!got) return;
    status s = download(t, got);
    if (s != STATUS_OK)
        harness_fail(file, line, "reading back %s: %s", specs[i].name, last_error());
    else
        harness_expect_bitwise_equal(file, line, specs[i].name, got, p->host[i], n);
    free(got);
}
#define EXPECT_HOLDS(t, p, i) expect_holds(__FILE__, __LINE__, (t), (p), (i))

/* The copies a save (to the host) or a load (from it) made on d: across the
 * bus on a GPU, within the CPU's memory on the cpu (counters.h). */
static void expect_copies(const char *file, int line, device d, int64_t to_host, int64_t from_host,
                          int64_t bytes)
{
    device_counters c;
    if (counters_read(d, &c) != STATUS_OK) {
        harness_fail(file, line, "counters_read: %s", last_error());
        return;
    }
    const uint64_t h2d = device_is_gpu(d) ? c.h2d_copies : 0, d2h = device_is_gpu(d) ? c.d2h_copies : 0;
    const uint64_t d2d = device_is_gpu(d) ? c.d2d_copies : c.d2d_copies - (uint64_t)(to_host + from_host);
    const uint64_t moved = device_is_gpu(d) ? c.d2h_bytes + c.h2d_bytes : c.d2d_bytes;
    if (device_is_gpu(d) && (d2h != (uint64_t)to_host || h2d != (uint64_t)from_host || d2d != 0))
        harness_fail(
            file, line,
            "on %s: %llu device-to-host, %llu host-to-device and %llu device-to-device copies; want %lld, "
            "%lld and 0",
            device_name(d), (unsigned long long)d2h, (unsigned long long)h2d, (unsigned long long)d2d,
            (long long)to_host, (long long)from_host);
    if (!device_is_gpu(d) &&
        (c.d2d_copies != (uint64_t)(to_host + from_host) || c.h2d_copies || c.d2h_copies))
        harness_fail(file, line, "on the cpu: %llu copies; want %lld", (unsigned long long)c.d2d_copies,
                     (long long)(to_host + from_host));
    if (moved != (uint64_t)bytes)
        harness_fail(file, line, "on %s: %llu bytes copied; want %lld", device_name(d),
                     (unsigned long long)moved, (long long)bytes);
}
#define EXPECT_COPIES(d, to_host, from_host, bytes) \
    expect_copies(__FILE__, __LINE__, (d), (to_host), (from_host), (bytes))

/* Writes a file as any other writer would: the 8-byte little-endian length of
 * the header padded with spaces to a multiple of 8, the header, then `data`
 * (zeros when NULL). */
static bool write_by_hand(const char *path, const char *header, const void *data, size_t data_bytes)
{
    const size_t length = strlen(header), padded = (length + 7) / 8 * 8;
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(le, 1, 8, f) == 8 && fwrite(header, 1, length, f) == length;
    for (size_t i = length; ok && i < padded; i++) ok = fputc(' ', f) != EOF;
    for (size_t i = 0; ok && i < data_bytes; i++) ok = fputc(data ? ((const char *)data)[i] : 0, f) != EOF;
    return fclose(f) == 0 && ok;
}

static bool write_raw(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    const bool ok = fwrite(bytes, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* safetensors_open refuses `path` with STATUS_IO_FAILED, a NULL file and a
 * message naming the path and containing `needle`. */
static void expect_open_refused(const char *file, int line, const char *path, const char *needle)
{
    safetensors_file *f = (safetensors_file *)(void *)&f; /* any non-NULL value: open must reset it */
    clear_error();
    const status s = safetensors_open(&f, path);
    if (s != STATUS_IO_FAILED)
        harness_fail(file, line, "opening %s returned %s, want STATUS_IO_FAILED (\"%s\")", path,
                     status_name(s), last_error());
    if (s == STATUS_OK) safetensors_close(f);
    if (s != STATUS_OK && f != NULL) harness_fail(file, line, "a refused open left *out non-NULL");
    if (!strstr(last_error(), path))
        harness_fail(file, line, "the message does not name %s: \"%s\"", path, last_error());
    if (!strstr(last_error(), needle))
        harness_fail(file, line, "the message does not say \"%s\": \"%s\"", needle, last_error());
}
#define EXPECT_OPEN_REFUSED(path, needle) expect_open_refused(__FILE__, __LINE__, (path), (needle))

/* Bytes this process has read through read() and pread() so far (Linux's
 * /proc/self/io, "rchar"), or -1 where it cannot be read. */
static long long chars_read(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long long n = -1;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %lld", &n) == 1) break;
    if (f) fclose(f);
    return n;
}

/* ============================================================================
 * round trips
 * ========================================================================== */

static void test_a_round_trip_is_bit_identical_with_one_copy_per_tensor(void)
{
    char path[512];
    params p;
    tensor *loaded[NPARAMS] = { NULL }, *into[NPARAMS] = { NULL };
    safetensors_file *f = NULL;
    REQUIRE(make_params(&p, dev, true));
    in_dir(path, sizeof path, "round_trip.safetensors");

    REQUIRE_OK(counters_reset(dev));
    REQUIRE_OK(safetensors_save(path, p.entries, NPARAMS, "{\"epochs\": \"5\", \"note\": \"odd shapes\"}"));
    EXPECT_COPIES(dev, NPARAMS, 0, p.bytes); /* one copy to the host per tensor, and nothing else */
    EXPECT_EQ_I64(count_entries(dir), 1);    /* the file, and no temporary beside it */

    REQUIRE_OK(safetensors_open(&f, path));
    EXPECT_EQ_I64(safetensors_count(f), NPARAMS);
    EXPECT_STREQ(safetensors_metadata(f, "epochs"), "5");
    EXPECT_STREQ(safetensors_metadata(f, "note"), "odd shapes");
    EXPECT(safetensors_metadata(f, "missing") == NULL);
    safetensors_info info;
    uint64_t next = 0;
    for (int i = 0; i < NPARAMS; i++) {
        REQUIRE_OK(safetensors_info_at(f, i, &info));
        EXPECT_STREQ(info.name, specs[i].name); /* the order they were given in */
        EXPECT(info.type == specs[i].type);
        EXPECT(info.shp.ndim == specs[i].shp.ndim && memcmp(info.shp.dims, specs[i].shp.dims, 8 * 4) == 0);
        EXPECT_EQ_I64(info.bytes, shape_numel(specs[i].shp) * 4);
        if (i == 0) {
            EXPECT_EQ_I64(info.offset % 8, 0);                     /* the data begins 8-aligned */
            EXPECT_EQ_I64(safetensors_bytes_read(f), info.offset); /* opening read the header only */
        } else {
            EXPECT_EQ_I64(info.offset, next); /* back to back */
        }
        next = info.offset + info.bytes;
    }
    EXPECT_EQ_I64(file_size(path), next);

    REQUIRE_OK(counters_reset(dev));
    for (int i = 0; i < NPARAMS; i++) REQUIRE_OK(safetensors_load(f, specs[i].name, dev, &loaded[i]));
    EXPECT_COPIES(dev, 0, NPARAMS, p.bytes); /* one copy from the host per tensor */
    for (int i = 0; i < NPARAMS; i++) {
        EXPECT(device_equal(tensor_device(loaded[i]), dev));
        EXPECT_HOLDS(loaded[i], &p, i);
    }

    for (int i = 0; i < NPARAMS; i++) REQUIRE_OK(tensor_empty(&into[i], dev, specs[i].type, specs[i].shp));
    REQUIRE_OK(counters_reset(dev));
    for (int i = 0; i < NPARAMS; i++) REQUIRE_OK(safetensors_load_into(f, specs[i].name, into[i]));
    EXPECT_COPIES(dev, 0, NPARAMS, p.bytes);
    for (int i = 0; i < NPARAMS; i++) EXPECT_HOLDS(into[i], &p, i);
    EXPECT_EQ_I64(safetensors_bytes_read(f), file_size(path) + p.bytes); /* the header once, the data twice */
cleanup:
    safetensors_close(f);
    for (int i = 0; i < NPARAMS; i++) {
        tensor_free(loaded[i]);
        tensor_free(into[i]);
    }
    free_params(&p);
    remove(path);
}

static void test_parameters_saved_on_one_device_load_on_another(void)
{
    char path[512];
    params p;
    tensor *t = NULL;
    safetensors_file *f = NULL;
    in_dir(path, sizeof path, "across.safetensors");
    REQUIRE(make_params(&p, other, true));
    REQUIRE_OK(safetensors_save(path, p.entries, NPARAMS, NULL));
    REQUIRE_OK(safetensors_open(&f, path));
    EXPECT(safetensors_metadata(f, "epochs") == NULL);
    for (int i = 0; i < NPARAMS; i++) {
        REQUIRE_OK(safetensors_load(f, specs[i].name, dev, &t));
        EXPECT_HOLDS(t, &p, i);
        tensor_free(t);
        t = NULL;
    }
cleanup:
    tensor_free(t);
    safetensors_close(f);
    free_params(&p);
    remove(path);
}

/* The lesson's promise: the loaded network predicts exactly what the saved one
 * did, on the same device. */
static void test_loaded_parameters_predict_bit_identically(void)
{
    char path[512];
    tensor *x = NULL, *w = NULL, *b = NULL, *w2 = NULL, *b2 = NULL, *y = NULL, *y2 = NULL;
    uint32_t *before = NULL, *after = NULL;
    safetensors_file *f = NULL;
    in_dir(path, sizeof path, "linear.safetensors");
    REQUIRE_OK(tensor_uniform(&x, dev, shape2(8, 37), -1.0f, 1.0f, 1));
    REQUIRE_OK(tensor_normal(&w, dev, shape2(37, 53), 0.0f, 0.2f, 2));
    REQUIRE_OK(tensor_normal(&b, dev, shape1(53), 0.0f, 0.1f, 3));
    REQUIRE_OK(tensor_empty(&y, dev, DTYPE_F32, shape2(8, 53)));
    REQUIRE_OK(tensor_empty(&y2, dev, DTYPE_F32, shape2(8, 53)));
    REQUIRE_OK(op_matmul(x, false, w, false, b, y));
    const safetensors_entry entries[] = { { "fc.weight", w }, { "fc.bias", b } };
    REQUIRE_OK(safetensors_save(path, entries, 2, NULL));

    REQUIRE_OK(tensor_zeros(&w2, dev, shape2(37, 53)));
    REQUIRE_OK(tensor_zeros(&b2, dev, shape1(53)));
    REQUIRE_OK(safetensors_open(&f, path));
    REQUIRE_OK(safetensors_load_into(f, "fc.weight", w2));
    REQUIRE_OK(safetensors_load_into(f, "fc.bias", b2));
    REQUIRE_OK(op_matmul(x, false, w2, false, b2, y2));
    REQUIRE((before = test_malloc(8 * 53 * 4)) && (after = test_malloc(8 * 53 * 4)));
    REQUIRE_OK(download(y, before));
    REQUIRE_OK(download(y2, after));
    EXPECT_BITWISE_EQUAL("predictions after loading", after, before, 8 * 53);
cleanup:
    safetensors_close(f);
    tensor_free(x), tensor_free(w), tensor_free(b), tensor_free(w2), tensor_free(b2);
    tensor_free(y), tensor_free(y2);
    free(before);
    free(after);
    remove(path);
}

/* ============================================================================
 * the format itself
 * ========================================================================== */

static void test_the_file_holds_exactly_the_bytes_of_the_format(void)
{
    char path[512], got[512];
    tensor *w = NULL, *n = NULL;
    in_dir(path, sizeof path, "exact.safetensors");
    REQUIRE_OK(tensor_from_host(&w, dev, shape1(2), (const float[]){ 1.0f, -2.0f }));
    REQUIRE_OK(tensor_from_host_i32(&n, dev, shape1(1), (const int32_t[]){ 7 }));
    const safetensors_entry entries[] = { { "w", w }, { "n", n } };
    REQUIRE_OK(safetensors_save(path, entries, 2, "{\"k\": \"v\"}"));

    /* 120 bytes of JSON, padded to 120; then 1.0f, -2.0f and 7, little-endian */
    const char header[] = "{\"__metadata__\":{\"k\":\"v\"},"
                          "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                          "\"n\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[8,12]}}";
    char want[512];
    const size_t length = sizeof header - 1, padded = (length + 7) / 8 * 8;
    memset(want, ' ', sizeof want);
    for (int i = 0; i < 8; i++) want[i] = (char)((uint64_t)padded >> (8 * i));
    memcpy(want + 8, header, length);
    const unsigned char data[12] = { 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 7, 0, 0, 0 };
    memcpy(want + 8 + padded, data, sizeof data);
    const long total = (long)(8 + padded + sizeof data);

    REQUIRE(read_file(path, got, sizeof got) == total);
    EXPECT_MSG(memcmp(got, want, (size_t)total) == 0,
               "the file is not byte for byte what the format says:\n%.*s", (int)padded, got + 8);
cleanup:
    tensor_free(w);
    tensor_free(n);
    remove(path);
}

/* As PyTorch's safetensors might write it: keys in another order than the
 * data, the metadata last, spaces and newlines in the JSON. */
static void test_a_file_from_another_writer_loads(void)
{
    char path[512];
    tensor *a = NULL, *b = NULL;
    safetensors_file *f = NULL;
    const float a_values[6] = { 0.5f, -1.25f, 3.0f, 1e-3f, -0.0f, 65504.0f };
    const int32_t b_values[3] = { -1, 0, 2147483647 };
    unsigned char data[36];
    memcpy(data, a_values, 24);
    memcpy(data + 24, b_values, 12);
    in_dir(path, sizeof path, "by_hand.safetensors");
    REQUIRE(write_by_hand(path,
                          "{\n  \"b\": {\"dtype\": \"I32\", \"shape\": [3], \"data_offsets\": [24, 36]},\n"
                          "  \"a\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 24]},\n"
                          "  \"__metadata__\": {\"format\": \"pt\"}\n}",
                          data, sizeof data));
    REQUIRE_OK(safetensors_open(&f, path));
    EXPECT_EQ_I64(safetensors_count(f), 2);
    EXPECT_STREQ(safetensors_metadata(f, "format"), "pt");
    safetensors_info info;
    REQUIRE_OK(safetensors_info_at(f, 0, &info));
    EXPECT_STREQ(info.name, "b");
    REQUIRE_OK(safetensors_find(f, "a", &info));
    EXPECT(info.type == DTYPE_F32 && info.shp.ndim == 2 && info.shp.dims[0] == 2 && info.shp.dims[1] == 3);
    REQUIRE_OK(safetensors_load(f, "a", dev, &a));
    REQUIRE_OK(safetensors_load(f, "b", dev, &b));
    uint32_t got_a[6], got_b[3];
    REQUIRE_OK(download(a, got_a));
    REQUIRE_OK(download(b, got_b));
    EXPECT_BITWISE_EQUAL("a", got_a, a_values, 6);
    EXPECT_BITWISE_EQUAL("b", got_b, b_values, 3);
cleanup:
    tensor_free(a);
    tensor_free(b);
    safetensors_close(f);
    remove(path);
}

/* ============================================================================
 * malformed files
 * ========================================================================== */

static void test_malformed_headers_are_refused_naming_the_file_and_the_problem(void)
{
    static const struct {
        const char *header;
        size_t data_bytes;
        const char *needle;
    } cases[] = {
        /* not JSON, or not one object */
        { "{\"a\": {\"dtype\": \"F32\", ", 0, "stops before its end" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}} trailing", 4,
          "not valid JSON" },
        { "[1, 2]", 0, "does not begin with '{'" },
        { " {}", 0, "does not begin with '{'" },
        { "{\"a\": 3}", 0, "not a JSON object" },
        /* offsets out of range, reversed, overlapping, with a gap or bytes after */
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}", 8,
          "outside the 8 bytes" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [16, 0]}}", 16,
          "begin after they end" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [-4, 12]}}", 16, "data_offsets" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0]}}", 16, "data_offsets" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
          " \"b\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [8, 24]}}",
          24, "overlap" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
          " \"b\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [20, 36]}}",
          36, "belong to no tensor" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}", 20,
          "nothing after the last" },
        /* a size that does not match the shape */
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 20]}}", 20,
          "F32 [2, 3], 24 bytes, but its data_offsets [0, 20] span 20" },
        /* dtypes and shapes the kit cannot hold */
        { "{\"w\": {\"dtype\": \"F64\", \"shape\": [2], \"data_offsets\": [0, 16]}}", 16, "\"F64\"" },
        { "{\"w\": {\"shape\": [2], \"data_offsets\": [0, 8]}}", 8, "no \"dtype\"" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [0], \"data_offsets\": [0, 0]}}", 0,
          "dimension 0 of its shape is 0" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2.5], \"data_offsets\": [0, 8]}}", 8, "is 2.5" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [], \"data_offsets\": [0, 4]}}", 4, "0 dimensions" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [1, 1, 1, 1, 2], \"data_offsets\": [0, 8]}}", 8,
          "5 dimensions" },
        /* names given twice; metadata that is not a map of strings */
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
          " \"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [16, 32]}}",
          32, "\"a\" appears twice" },
        { "{\"__metadata__\": {\"epochs\": 5}}", 0, "not a string" },
        { "{\"__metadata__\": {\"a\": \"1\", \"a\": \"2\"}}", 0, "appears twice" },
        { "{\"__metadata__\": {}, \"__metadata__\": {}}", 0, "appears twice" },
        { "{\"__metadata__\": [\"x\"]}", 0, "must be a JSON object" },
        /* names in another encoding than UTF-8 (here Latin-1) */
        { "{\"caf\xe9\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4,
          "not valid UTF-8" },
    };
    char path[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/malformed_%zu.safetensors", dir, i);
        REQUIRE(write_by_hand(path, cases[i].header, NULL, cases[i].data_bytes));
        EXPECT_OPEN_REFUSED(path, cases[i].needle);
        remove(path);
    }
cleanup:
    remove(path);
}

static void test_truncated_files_are_refused(void)
{
    char path[512], bad[512], *bytes = NULL;
    params p;
    REQUIRE(make_params(&p, dev, false));
    in_dir(path, sizeof path, "whole.safetensors");
    in_dir(bad, sizeof bad, "cut.safetensors");
    REQUIRE_OK(safetensors_save(path, p.entries, NPARAMS, NULL));
    const long size = file_size(path);
    bytes = test_malloc((size_t)size + 1);
    REQUIRE(bytes && read_file(path, bytes, (size_t)size + 1) == size);

    REQUIRE(write_raw(bad, bytes, (size_t)size - 4)); /* the last tensor is cut short */
    EXPECT_OPEN_REFUSED(bad, "the file is truncated");
    REQUIRE(write_raw(bad, bytes, 8 + 40)); /* cut inside the header */
    EXPECT_OPEN_REFUSED(bad, "bytes follow it: the file is truncated");
    REQUIRE(write_raw(bad, bytes, 5)); /* cut inside the length */
    EXPECT_OPEN_REFUSED(bad, "8-byte header length");
    REQUIRE(write_raw(bad, bytes, 0));
    EXPECT_OPEN_REFUSED(bad, "holds 0 bytes");

    const unsigned char too_long[10] = { 0xe8, 0x03, 0, 0, 0, 0, 0, 0, '{', '}' }; /* 1000 */
    REQUIRE(write_raw(bad, too_long, sizeof too_long));
    EXPECT_OPEN_REFUSED(bad, "the header length is 1000 bytes but only 2 bytes follow it");
    const unsigned char huge[10] = { 0, 0, 0, 0, 0, 1, 0, 0, '{', '}' }; /* 2^40 */
    REQUIRE(write_raw(bad, huge, sizeof huge));
    EXPECT_OPEN_REFUSED(bad, "above the format's limit");
    REQUIRE(write_raw(bad, "not a safetensors file at all", 29)); /* a length made of letters */
    EXPECT_OPEN_REFUSED(bad, "not a safetensors file");
cleanup:
    free(bytes);
    free_params(&p);
    remove(path);
    remove(bad);
}

static void test_a_fifo_a_directory_and_a_missing_file_are_refused_at_once(void)
{
    char fifo[512], sub[512], missing[512];
    in_dir(fifo, sizeof fifo, "pipe.safetensors");
    in_dir(sub, sizeof sub, "dir.safetensors");
    in_dir(missing, sizeof missing, "missing.safetensors");
    REQUIRE(mkfifo(fifo, 0600) == 0);
    REQUIRE(mkdir(sub, 0700) == 0);
    /* A FIFO with no writer would block an ordinary open forever: should the
     * library wait on it, the alarm ends this program (a failure, not a hang). */
    alarm(20);
    const double start = harness_seconds();
    EXPECT_OPEN_REFUSED(fifo, "is a FIFO");
    EXPECT_MSG(harness_seconds() - start < 5.0, "refusing a FIFO took %.1f s", harness_seconds() - start);
    alarm(0);
    EXPECT_OPEN_REFUSED(sub, "is a directory");
    EXPECT_OPEN_REFUSED(missing, "No such file or directory");
cleanup:
    remove(fifo);
    rmdir(sub);
}

/* 1 GiB of data (a sparse file: no disk used) behind a header that covers 16
 * bytes of it: refused from the header alone. */
static void test_a_lying_header_is_refused_before_any_data_is_read(void)
{
    char path[512];
    in_dir(path, sizeof path, "lies.safetensors");
    const char *header = "{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}";
    REQUIRE(write_by_hand(path, header, NULL, 0));
    REQUIRE(truncate(path, file_size(path) + ((off_t)1 << 30)) == 0);
    const long long before = chars_read();
    const double start = harness_seconds();
    EXPECT_OPEN_REFUSED(path, "nothing after the last tensor");
    const double seconds = harness_seconds() - start;
    const long long read = chars_read() - before;
    if (before >= 0) EXPECT_MSG(read < 65536, "refusing the header read %lld bytes", read);
    /* the proof is the count above; the time only guards where /proc/self/io
     * is missing, with room for a loaded machine (reading the GiB took 9 s
     * on the kit's development machine) */
    EXPECT_MSG(seconds < 2.0, "refusing the header took %.3f s", seconds);
cleanup:
    remove(path);
}

static void test_a_large_file_opens_by_reading_its_header_only(void)
{
    char path[512];
    safetensors_file *f = NULL;
    in_dir(path, sizeof path, "large.safetensors");
    const char *header =
        "{\"big\": {\"dtype\": \"F32\", \"shape\": [268435456], \"data_offsets\": [0, 1073741824]}}";
    REQUIRE(write_by_hand(path, header, NULL, 0));
    const long header_bytes = file_size(path);
    REQUIRE(truncate(path, header_bytes + ((off_t)1 << 30)) == 0);
    const long long before = chars_read();
    REQUIRE_OK(safetensors_open(&f, path));
    const long long read = chars_read() - before;
    EXPECT_EQ_I64(safetensors_bytes_read(f), header_bytes);
    if (before >= 0) EXPECT_MSG(read < 65536, "opening read %lld bytes", read);
    safetensors_info info;
    REQUIRE_OK(safetensors_find(f, "big", &info));
    EXPECT_EQ_I64(info.bytes, (int64_t)1 << 30);
    EXPECT_EQ_I64(info.offset, header_bytes);
cleanup:
    safetensors_close(f);
    remove(path);
}

/* ============================================================================
 * loading what is not there, or into the wrong tensor
 * ========================================================================== */

static void test_load_refuses_a_shape_or_dtype_mismatch_naming_both(void)
{
    char path[512];
    params p;
    tensor *wrong = NULL, *ints = NULL;
    safetensors_file *f = NULL;
    REQUIRE(make_params(&p, dev, false));
    in_dir(path, sizeof path, "mismatch.safetensors");
    REQUIRE_OK(safetensors_save(path, p.entries, NPARAMS, NULL));
    REQUIRE_OK(safetensors_open(&f, path));
    REQUIRE_OK(tensor_zeros(&wrong, dev, shape2(53, 37)));
    EXPECT_REFUSED(safetensors_load_into(f, "layers.0.weight", wrong), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "F32 [37, 53]");
    EXPECT_CONTAINS(last_error(), "f32[53, 37]");
    EXPECT_CONTAINS(last_error(), path);
    REQUIRE_OK(tensor_empty(&ints, dev, DTYPE_I32, shape2(37, 53)));
    EXPECT_REFUSED(safetensors_load_into(f, "layers.0.weight", ints), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "i32[37, 53]");
    EXPECT_REFUSED(safetensors_load_into(f, "layers.0.weight", NULL), STATUS_BAD_ARGUMENT);
cleanup:
    tensor_free(wrong);
    tensor_free(ints);
    safetensors_close(f);
    free_params(&p);
    remove(path);
}

static void test_a_missing_name_is_refused_naming_the_file_and_what_it_holds(void)
{
    char path[512];
    params p;
    tensor *t = (tensor *)(void *)&t;
    safetensors_file *f = NULL;
    safetensors_info info;
    REQUIRE(make_params(&p, dev, false));
    in_dir(path, sizeof path, "names.safetensors");
    REQUIRE_OK(safetensors_save(path, p.entries, NPARAMS, NULL));
    REQUIRE_OK(safetensors_open(&f, path));
    EXPECT_REFUSED(safetensors_find(f, "layers.1.weight", &info), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "no tensor \"layers.1.weight\"");
    EXPECT_CONTAINS(last_error(), path);
    EXPECT_CONTAINS(last_error(), "it holds 6: \"layers.0.weight\", \"layers.0.bias\"");
    EXPECT_REFUSED(safetensors_load(f, "layers.1.weight", dev, &t), STATUS_BAD_ARGUMENT);
    EXPECT(t == NULL);
    EXPECT_REFUSED(safetensors_load_into(f, "layers.1.weight", p.t[0]), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_info_at(f, NPARAMS, &info), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_info_at(f, -1, &info), STATUS_BAD_ARGUMENT);
cleanup:
    safetensors_close(f);
    free_params(&p);
    remove(path);
}

static void test_reading_refuses_null_arguments(void)
{
    safetensors_file *f = NULL;
    safetensors_info info;
    tensor *t = NULL;
    EXPECT_REFUSED(safetensors_open(NULL, "x"), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_open(&f, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_open(&f, ""), STATUS_BAD_ARGUMENT);
    EXPECT(f == NULL);
    EXPECT_REFUSED(safetensors_find(NULL, "a", &info), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_info_at(NULL, 0, &info), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_load(NULL, "a", dev, &t), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_load(NULL, "a", dev, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_EQ_I64(safetensors_count(NULL), 0);
    EXPECT_EQ_I64(safetensors_bytes_read(NULL), 0);
    EXPECT(safetensors_metadata(NULL, "a") == NULL);
    safetensors_close(NULL);
}

/* ============================================================================
 * saving: refusals, and files written whole or not at all
 * ========================================================================== */

static void test_save_refuses_bad_entries_and_metadata_and_writes_nothing(void)
{
    char path[512];
    tensor *t = NULL;
    in_dir(path, sizeof path, "refused.safetensors");
    REQUIRE_OK(tensor_zeros(&t, dev, shape1(3)));
    const safetensors_entry twice[] = { { "a", t }, { "b", t }, { "a", t } };
    EXPECT_REFUSED(safetensors_save(path, twice, 3, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "\"a\" is given to two tensors");
    EXPECT_CONTAINS(last_error(), path);
    const safetensors_entry reserved[] = { { "__metadata__", t } };
    EXPECT_REFUSED(safetensors_save(path, reserved, 1, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "choose another name");
    const safetensors_entry no_tensor[] = { { "a", NULL } };
    EXPECT_REFUSED(safetensors_save(path, no_tensor, 1, NULL), STATUS_BAD_ARGUMENT);
    const safetensors_entry no_name[] = { { NULL, t } }, empty_name[] = { { "", t } };
    EXPECT_REFUSED(safetensors_save(path, no_name, 1, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_save(path, empty_name, 1, NULL), STATUS_BAD_ARGUMENT);
    const safetensors_entry one[] = { { "a", t } };
    EXPECT_REFUSED(safetensors_save(path, NULL, 1, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_save(path, one, -1, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_save(NULL, one, 1, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_save("", one, 1, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_save(path, one, 1, "{\"epochs\": 5}"), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "not a string");
    EXPECT_REFUSED(safetensors_save(path, one, 1, "{\"epochs\": "), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "not valid JSON");
    EXPECT_REFUSED(safetensors_save(path, one, 1, "[\"x\"]"), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_save(path, one, 1, "{\"a\": \"1\"} and more"), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(safetensors_save(path, one, 1, "{\"a\": \"caf\xe9\"}"), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "UTF-8");
    const safetensors_entry latin1[] = { { "caf\xe9", t } };
    EXPECT_REFUSED(safetensors_save(path, latin1, 1, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "UTF-8");
    EXPECT_REFUSED(safetensors_save(path, one, 1, "{\"a\": \"1\", \"a\": \"2\"}"), STATUS_BAD_ARGUMENT);
    EXPECT_EQ_I64(count_entries(dir), 0);            /* nothing was created on the way */
    EXPECT_OK(safetensors_save(path, one, 1, NULL)); /* and the same call, corrected, writes the file */
    EXPECT_EQ_I64(count_entries(dir), 1);
cleanup:
    tensor_free(t);
    remove(path);
}

static void test_save_replaces_only_a_regular_file(void)
{
    char sub[512], fifo[512], link[512], target[512], content[64] = "";
    tensor *t = NULL;
    in_dir(sub, sizeof sub, "taken.safetensors");
    in_dir(fifo, sizeof fifo, "pipe.safetensors");
    in_dir(link, sizeof link, "link.safetensors");
    in_dir(target, sizeof target, "target.txt");
    REQUIRE_OK(tensor_zeros(&t, dev, shape1(3)));
    const safetensors_entry one[] = { { "a", t } };
    REQUIRE(mkdir(sub, 0700) == 0 && mkfifo(fifo, 0600) == 0);
    REQUIRE(write_raw(target, "keep", 4) && symlink("target.txt", link) == 0);

    EXPECT_REFUSED(safetensors_save(sub, one, 1, NULL), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "is a directory");
    EXPECT_CONTAINS(last_error(), sub);
    alarm(20); /* a save that opened the FIFO would block: fail rather than hang */
    EXPECT_REFUSED(safetensors_save(fifo, one, 1, NULL), STATUS_IO_FAILED);
    alarm(0);
    EXPECT_CONTAINS(last_error(), "is a FIFO");
    EXPECT_REFUSED(safetensors_save(link, one, 1, NULL), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "is a symbolic link");
    EXPECT_REFUSED(safetensors_save("/dev/null", one, 1, NULL), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "is a character device");

    struct stat info;
    EXPECT(lstat(sub, &info) == 0 && S_ISDIR(info.st_mode));
    EXPECT(lstat(fifo, &info) == 0 && S_ISFIFO(info.st_mode));
    EXPECT(lstat(link, &info) == 0 && S_ISLNK(info.st_mode));
    EXPECT(read_file(target, content, sizeof content) == 4 && strcmp(content, "keep") == 0);
    EXPECT_EQ_I64(count_entries(dir), 4); /* and no temporary file */

    char missing[512];
    in_dir(missing, sizeof missing, "no/such/dir/x.safetensors");
    EXPECT_REFUSED(safetensors_save(missing, one, 1, NULL), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "does its directory exist");
cleanup:
    alarm(0);
    tensor_free(t);
    rmdir(sub);
    remove(fifo);
    remove(link);
    remove(target);
}

/* A save replaces a file whole; one that fails halfway (here: the file size
 * limit, as a full disk would) leaves the old file as it was and nothing else. */
static void test_save_replaces_a_file_whole_or_not_at_all(void)
{
    char path[512];
    tensor *small = NULL, *big = NULL;
    safetensors_file *f = NULL;
    struct rlimit saved, limit;
    bool limited = false;
    in_dir(path, sizeof path, "replaced.safetensors");
    REQUIRE(write_raw(path, "stale contents", 14));
    REQUIRE_OK(tensor_ones(&small, dev, shape1(5)));
    REQUIRE_OK(tensor_zeros(&big, dev, shape2(128, 128))); /* 64 KiB */
    const safetensors_entry first[] = { { "small", small } }, second[] = { { "big", big } };
    REQUIRE_OK(safetensors_save(path, first, 1, NULL));
    const long size = file_size(path);
    EXPECT_EQ_I64(count_entries(dir), 1);

    REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    limit = saved;
    limit.rlim_cur = 4096;
    fflush(stdout);
    fflush(stderr);
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit then fails with EFBIG */
    REQUIRE(setrlimit(RLIMIT_FSIZE, &limit) == 0);
    limited = true;
    const status s = safetensors_save(path, second, 1, NULL);
    setrlimit(RLIMIT_FSIZE, &saved);
    limited = false;
    signal(SIGXFSZ, SIG_DFL);
    EXPECT_STATUS(s, STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "cannot write");
    EXPECT_EQ_I64(file_size(path), size);
    EXPECT_EQ_I64(count_entries(dir), 1); /* the temporary file is gone */
    REQUIRE_OK(safetensors_open(&f, path));
    EXPECT_EQ_I64(safetensors_count(f), 1);
    safetensors_info info;
    EXPECT_OK(safetensors_find(f, "small", &info));
cleanup:
    if (limited) setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, SIG_DFL);
    safetensors_close(f);
    tensor_free(small);
    tensor_free(big);
    remove(path);
}

static void test_an_empty_set_of_tensors_is_a_valid_file(void)
{
    char path[512], got[64];
    safetensors_file *f = NULL;
    in_dir(path, sizeof path, "empty.safetensors");
    REQUIRE_OK(safetensors_save(path, NULL, 0, NULL));
    REQUIRE(read_file(path, got, sizeof got) == 16);
    EXPECT(memcmp(got, "\x08\0\0\0\0\0\0\0{}      ", 16) == 0);
    REQUIRE_OK(safetensors_open(&f, path));
    EXPECT_EQ_I64(safetensors_count(f), 0);
cleanup:
    safetensors_close(f);
    remove(path);
}

/* ============================================================================
 * safetensors' own loader (Python), where it is installed
 * ========================================================================== */

/* Runs bench/safetensors_check.py with `python` and `args` and reads what it
 * printed into out; its exit status (3: safetensors, or both torch and numpy,
 * absent; 127: no such python). */
static int run_checker(const char *python, const char *args, char *out, size_t size)
{
    char command[2048];
    snprintf(command, sizeof command, "%s %sbench/safetensors_check.py %s 2>&1", python, LABKIT_SOURCE_ROOT,
             args);
    FILE *p = popen(command, "r");
    if (!p) return -1;
    const size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    const int rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* The sum of the values in float64, and the sum of their 32-bit patterns as
 * signed integers: what safetensors_check.py prints, the second exactly. */
static void sums(const uint32_t *w, int64_t n, dtype type, double *sum, long long *bits)
{
    *sum = 0.0;
    *bits = 0;
    for (int64_t i = 0; i < n; i++) {
        float x;
        memcpy(&x, &w[i], 4);
        *sum += type == DTYPE_F32 ? (double)x : (double)(int32_t)w[i];
        *bits += (int32_t)w[i];
    }
}

/* LABKIT_PYTHON when it is set, whatever it says (a python chosen on purpose
 * that lacks safetensors fails the test, never skips it); else Debian's
 * python3, else the first on PATH (a virtual environment's, as on a machine set
 * up for PyTorch), that runs safetensors_check.py with `args`; NULL when none
 * has what it needs. */
static const char *find_python(const char *args, char *out, size_t size, int *rc)
{
    const char *chosen = getenv("LABKIT_PYTHON");
    if (chosen && *chosen) {
        *rc = run_checker(chosen, args, out, size);
        return chosen;
    }
    const char *candidates[] = { "/usr/bin/python3", "python3" };
    for (size_t i = 0; i < 2 && candidates[i]; i++) {
        *rc = run_checker(candidates[i], args, out, size);
        if (*rc != 3 && *rc != 127) return candidates[i]; /* it ran, well or not */
    }
    return NULL;
}

static void test_safetensors_own_loader_reads_the_file_the_kit_wrote(void)
{
    char path[512], out[8192] = "";
    int rc = 0;
    params p;
    REQUIRE(make_params(&p, dev, false));
    in_dir(path, sizeof path, "for_python.safetensors");
    REQUIRE_OK(safetensors_save(path, p.entries, NPARAMS, "{\"epochs\": \"5\"}"));
    if (!find_python(path, out, sizeof out, &rc)) {
        harness_skip("no python3 here imports safetensors with torch or numpy (LABKIT_PYTHON picks one)");
        goto cleanup;
    }
    printf("%s", out);
    EXPECT_MSG(rc == 0, "safetensors_check.py exited with %d:\n%s", rc, out);
    EXPECT_CONTAINS(out, "metadata epochs=5\n");
    for (int i = 0; i < NPARAMS; i++) {
        char line[256], dims[64] = "";
        const shape s = specs[i].shp;
        for (int k = 0; k < s.ndim; k++)
            snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", k ? "x" : "",
                     (long long)s.dims[k]);
        snprintf(line, sizeof line, "tensor %s %s %s ", specs[i].name,
                 specs[i].type == DTYPE_F32 ? "F32" : "I32", dims);
        const char *at = strstr(out, line);
        EXPECT_MSG(at != NULL, "safetensors_check.py did not print \"%s\"", line);
        if (!at) continue;
        double want_sum, got_sum = 0.0;
        long long want_bits, got_bits = 0;
        sums(p.host[i], shape_numel(s), specs[i].type, &want_sum, &want_bits);
        EXPECT(sscanf(at + strlen(line), "sum=%lf bits=%lld", &got_sum, &got_bits) == 2);
        EXPECT_EQ_I64(got_bits, want_bits); /* the very same bits */
        EXPECT_NEAR(got_sum, want_sum, 1e-9, 1e-9);
    }
cleanup:
    free_params(&p);
    remove(path);
}

static void test_a_file_written_by_safetensors_own_writer_loads(void)
{
    char path[512], args[600], out[4096] = "";
    int rc = 0;
    tensor *t = NULL;
    safetensors_file *f = NULL;
    in_dir(path, sizeof path, "from_python.safetensors");
    snprintf(args, sizeof args, "--write %s", path);
    if (!find_python(args, out, sizeof out, &rc)) {
        harness_skip("no python3 here imports safetensors with torch or numpy (LABKIT_PYTHON picks one)");
        goto cleanup;
    }
    printf("%s", out);
    REQUIRE(rc == 0);
    float w[12];
    for (int i = 0; i < 12; i++) w[i] = (float)(i - 5) / 8.0f;
    const int32_t n[5] = { -2, -1, 0, 1, 2000000000 };
    const float b[4] = { 0.5f, -0.25f, 0.125f, 3.0f };
    const struct {
        const char *name;
        dtype type;
        shape shp;
        const void *values;
    } want[3] = { { "w", DTYPE_F32, { 2, { 3, 4 } }, w },
                  { "n", DTYPE_I32, { 1, { 5 } }, n },
                  { "b", DTYPE_F32, { 1, { 4 } }, b } };
    REQUIRE_OK(safetensors_open(&f, path));
    EXPECT_EQ_I64(safetensors_count(f), 3);
    EXPECT_STREQ(safetensors_metadata(f, "writer"), "safetensors_check.py");
    for (int i = 0; i < 3; i++) {
        uint32_t got[12];
        safetensors_info info;
        REQUIRE_OK(safetensors_find(f, want[i].name, &info));
        EXPECT(info.type == want[i].type && info.shp.ndim == want[i].shp.ndim);
        REQUIRE_OK(safetensors_load(f, want[i].name, dev, &t));
        REQUIRE_OK(download(t, got));
        EXPECT_BITWISE_EQUAL(want[i].name, got, want[i].values, shape_numel(want[i].shp));
        tensor_free(t);
        t = NULL;
    }
cleanup:
    tensor_free(t);
    safetensors_close(f);
    remove(path);
}

/* ============================================================================ */

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "pytorch") != 0)) {
        fprintf(stderr, "usage: test_safetensors cpu|sim:N|cuda:N [pytorch]\n");
        return 2;
    }
    const int rc = test_device_or_skip(argv[1], &dev);
    if (rc != 0) return rc;
    if (environment_check_program("LABKIT_PYTHON") != STATUS_OK) {
        fprintf(stderr, "test_safetensors: %s\n", last_error());
        return 2;
    }
    other = device_cpu();
    if (!device_is_gpu(dev) && device_parse("sim:0", &other) != STATUS_OK) other = device_cpu();
    if (mkdtemp(dir) == NULL) {
        perror("test_safetensors: mkdtemp");
        return 1;
    }
    printf("device under test: %s; the other device: %s\n", device_name(dev), device_name(other));
    if (argc == 3) {
        RUN_TEST(test_safetensors_own_loader_reads_the_file_the_kit_wrote);
        RUN_TEST(test_a_file_written_by_safetensors_own_writer_loads);
    } else {
        RUN_TEST(test_a_round_trip_is_bit_identical_with_one_copy_per_tensor);
        RUN_TEST(test_parameters_saved_on_one_device_load_on_another);
        RUN_TEST(test_loaded_parameters_predict_bit_identically);
        RUN_TEST(test_the_file_holds_exactly_the_bytes_of_the_format);
        RUN_TEST(test_a_file_from_another_writer_loads);
        RUN_TEST(test_an_empty_set_of_tensors_is_a_valid_file);
        RUN_TEST(test_malformed_headers_are_refused_naming_the_file_and_the_problem);
        RUN_TEST(test_truncated_files_are_refused);
        RUN_TEST(test_a_fifo_a_directory_and_a_missing_file_are_refused_at_once);
        RUN_TEST(test_a_lying_header_is_refused_before_any_data_is_read);
        RUN_TEST(test_a_large_file_opens_by_reading_its_header_only);
        RUN_TEST(test_load_refuses_a_shape_or_dtype_mismatch_naming_both);
        RUN_TEST(test_a_missing_name_is_refused_naming_the_file_and_what_it_holds);
        RUN_TEST(test_reading_refuses_null_arguments);
        RUN_TEST(test_save_refuses_bad_entries_and_metadata_and_writes_nothing);
        RUN_TEST(test_save_replaces_only_a_regular_file);
        RUN_TEST(test_save_replaces_a_file_whole_or_not_at_all);
    }
    remove_tree(dir);
    return harness_finish();
}
