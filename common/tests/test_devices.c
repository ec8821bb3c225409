/* test_devices.c: the device registry, the strict parser, the lessons' helpers
 * (try_gpu, try_all_gpus) and device properties, on whatever machine it runs.
 *
 *   test_devices expect S [BYTES]   the environment asks for S simulated GPUs,
 *                                   each of BYTES bytes
 *   test_devices bad-env VARIABLE   VARIABLE holds a bad value: devices_init()
 *                                   fails naming it and the kit runs without
 *                                   simulated GPUs
 *
 * The machine has R real GPUs, R = device_count(DEVICE_CUDA): 0 in a build
 * without CUDA (LABKIT_TEST_BUILT_WITH_CUDA unset), whatever cudart counts in
 * one with it. Every expectation follows from S and R: the lessons' helpers see
 * the real GPUs where R > 0 and the simulated ones otherwise; device_list() is
 * cpu, cuda:0..R-1, sim:0..S-1; sim:i exists whatever R is.
 *
 * CTest runs it once per environment (LABKIT_SIM_GPUS unset, 0, 2, 8, bad ...). */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/device.h"
#include "labkit/ops.h"
#include "labkit/properties.h"
#include "labkit/tensor.h"

static int sim_gpus;              /* S: from argv, what LABKIT_SIM_GPUS asks for */
static int real_gpus;             /* R: device_count(DEVICE_CUDA), checked against the build */
static size_t expected_sim_bytes; /* 0: not checked */
static const char *bad_variable;  /* bad-env mode: the variable with a bad value */

static device sim(int i)
{
    device d = { DEVICE_SIM, i };
    return d;
}

static device cuda(int i)
{
    device d = { DEVICE_CUDA, i };
    return d;
}

/* What the lessons' helpers see: the real GPUs where there is one, else the
 * simulated ones. */
static int lesson_gpus(void) { return real_gpus > 0 ? real_gpus : sim_gpus; }

static device lesson_gpu(int i) { return real_gpus > 0 ? cuda(i) : sim(i); }

#define EXPECT_DEVICE(got, want)                                                                           \
    do {                                                                                                   \
        device got_d_ = (got), want_d_ = (want);                                                           \
        if (got_d_.kind != want_d_.kind || got_d_.index != want_d_.index)                                  \
            harness_fail(__FILE__, __LINE__, "%s is {kind %d, index %d}, want %s", #got, (int)got_d_.kind, \
                         got_d_.index, device_name(want_d_));                                              \
    } while (0)

/* The message names the CPU and every GPU present, real and simulated. */
static void expect_names_every_present_device(const char *what, const char *msg, int line)
{
    if (strstr(msg, "cpu") == NULL)
        harness_fail(__FILE__, line, "%s: the message does not name cpu: \"%s\"", what, msg);
    for (int i = 0; i < real_gpus; i++)
        if (strstr(msg, device_name(cuda(i))) == NULL)
            harness_fail(__FILE__, line, "%s: the message does not name %s: \"%s\"", what,
                         device_name(cuda(i)), msg);
    for (int i = 0; i < sim_gpus; i++)
        if (strstr(msg, device_name(sim(i))) == NULL)
            harness_fail(__FILE__, line, "%s: the message does not name %s: \"%s\"", what,
                         device_name(sim(i)), msg);
}

#define EXPECT_NAMES_PRESENT(what, msg) expect_names_every_present_device((what), (msg), __LINE__)

/* ============================================================================
 * the registry and the lessons' helpers
 * ========================================================================== */

static void test_devices_init_succeeds_every_time(void)
{
    EXPECT_OK(devices_init());
    EXPECT_OK(devices_init());
}

/* Real GPUs come from cudart, so a build without CUDA never has one. */
static void test_real_gpus_exist_only_in_a_build_with_cuda(void)
{
#ifdef LABKIT_TEST_BUILT_WITH_CUDA
    EXPECT_MSG(real_gpus >= 0 && real_gpus <= LABKIT_MAX_CUDA_DEVICES, "%d real GPUs counted", real_gpus);
#else
    EXPECT_EQ_I64(real_gpus, 0);
#endif
}

static void test_device_count_gives_each_kind(void)
{
    EXPECT_EQ_I64(device_count(DEVICE_CPU), 1);
    EXPECT_EQ_I64(device_count(DEVICE_SIM), sim_gpus);
    EXPECT_EQ_I64(device_count(DEVICE_CUDA), real_gpus);
    EXPECT_EQ_I64(device_count((device_kind)42), 0);
}

static void test_gpu_count_is_the_real_gpus_or_else_the_simulated_ones(void)
{
    EXPECT_EQ_I64(gpu_count(), lesson_gpus());
}

static void test_try_gpu_gives_gpu_i_or_else_the_cpu(void)
{
    const int n = lesson_gpus();
    for (int i = 0; i < n; i++) EXPECT_DEVICE(try_gpu(i), lesson_gpu(i));
    EXPECT_DEVICE(try_gpu(n), device_cpu());
    EXPECT_DEVICE(try_gpu(n + 1), device_cpu());
    EXPECT_DEVICE(try_gpu(-1), device_cpu());
    EXPECT_DEVICE(try_gpu(INT_MAX), device_cpu());
}

static void test_try_all_gpus_lists_every_gpu_or_just_the_cpu(void)
{
    const int gpus = lesson_gpus();
    device out[LABKIT_MAX_DEVICES + 1];
    const device guard = { DEVICE_CUDA, 12345 };
    for (int i = 0; i <= LABKIT_MAX_DEVICES; i++) out[i] = guard;
    int n = try_all_gpus(out, LABKIT_MAX_DEVICES);
    if (gpus == 0) {
        EXPECT_EQ_I64(n, 1);
        EXPECT_DEVICE(out[0], device_cpu());
    } else {
        EXPECT_EQ_I64(n, gpus);
        for (int i = 0; i < gpus && i < n; i++) EXPECT_DEVICE(out[i], lesson_gpu(i));
    }
    EXPECT_DEVICE(out[n > 0 ? n : 0], guard);

    /* at most `capacity` written */
    for (int i = 0; i <= LABKIT_MAX_DEVICES; i++) out[i] = guard;
    n = try_all_gpus(out, 1);
    EXPECT_EQ_I64(n, 1);
    EXPECT_DEVICE(out[0], gpus > 0 ? lesson_gpu(0) : device_cpu());
    EXPECT_DEVICE(out[1], guard);
    out[0] = guard;
    n = try_all_gpus(out, 0);
    EXPECT_EQ_I64(n, 0);
    EXPECT_DEVICE(out[0], guard);
}

static void test_device_list_is_the_cpu_then_the_real_then_the_simulated_gpus(void)
{
    device out[LABKIT_MAX_DEVICES + 1];
    const device guard = { DEVICE_CUDA, 12345 };
    for (int i = 0; i <= LABKIT_MAX_DEVICES; i++) out[i] = guard;
    int n = device_list(out, LABKIT_MAX_DEVICES);
    EXPECT_EQ_I64(n, 1 + real_gpus + sim_gpus);
    if (n < 1) return;
    EXPECT_DEVICE(out[0], device_cpu());
    for (int i = 0; i < real_gpus && 1 + i < n; i++) EXPECT_DEVICE(out[1 + i], cuda(i));
    for (int i = 0; i < sim_gpus && 1 + real_gpus + i < n; i++) EXPECT_DEVICE(out[1 + real_gpus + i], sim(i));
    EXPECT_DEVICE(out[n], guard);

    /* at most `capacity` written: the CPU first, then the real GPUs */
    for (int i = 0; i <= LABKIT_MAX_DEVICES; i++) out[i] = guard;
    EXPECT_EQ_I64(device_list(out, 1), 1);
    EXPECT_DEVICE(out[0], device_cpu());
    EXPECT_DEVICE(out[1], guard);
    if (real_gpus > 0) {
        EXPECT_EQ_I64(device_list(out, 1 + real_gpus), 1 + real_gpus);
        EXPECT_DEVICE(out[real_gpus], cuda(real_gpus - 1));
        EXPECT_DEVICE(out[1 + real_gpus], guard);
    }
    EXPECT_EQ_I64(device_list(out, 0), 0);
}

static void test_device_predicates_agree_with_the_registry(void)
{
    const device c = device_cpu();
    EXPECT(c.kind == DEVICE_CPU && c.index == 0);
    EXPECT(device_exists(c));
    EXPECT(!device_is_gpu(c));
    EXPECT(device_is_gpu(sim(0)));
    EXPECT(device_is_gpu(cuda(0)));
    EXPECT(device_equal(sim(1), sim(1)));
    EXPECT(!device_equal(sim(1), sim(0)));
    EXPECT(!device_equal(sim(0), cuda(0)));
    EXPECT(!device_equal(c, sim(0)));
    /* simulated GPUs exist as asked, beside real ones or not */
    for (int i = 0; i < sim_gpus; i++) {
        EXPECT(device_exists(sim(i)));
        EXPECT_OK(device_check(sim(i)));
    }
    for (int i = 0; i < real_gpus; i++) {
        EXPECT(device_exists(cuda(i)));
        EXPECT_OK(device_check(cuda(i)));
    }
    EXPECT(!device_exists(sim(sim_gpus)));
    EXPECT(!device_exists(sim(-1)));
    EXPECT(!device_exists(cuda(real_gpus)));
    EXPECT(!device_exists(cuda(-1)));
    EXPECT_OK(device_check(c));
    EXPECT_REFUSED(device_check(sim(sim_gpus)), STATUS_WRONG_DEVICE);
    EXPECT_NAMES_PRESENT("device_check(absent sim)", last_error());
    EXPECT_REFUSED(device_check(cuda(real_gpus)), STATUS_WRONG_DEVICE);
    EXPECT_NAMES_PRESENT("device_check(absent cuda)", last_error());
}

static void test_synchronize_is_fine_on_present_devices_only(void)
{
    EXPECT_OK(device_synchronize(device_cpu()));
    for (int i = 0; i < real_gpus; i++) EXPECT_OK(device_synchronize(cuda(i)));
    for (int i = 0; i < sim_gpus; i++) EXPECT_OK(device_synchronize(sim(i)));
    EXPECT_REFUSED(device_synchronize(sim(sim_gpus)), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(device_synchronize(cuda(real_gpus)), STATUS_WRONG_DEVICE);
}

static void test_memory_info_reports_the_capacity(void)
{
    size_t free_bytes = 0, total_bytes = 0;
    EXPECT_OK(device_memory_info(device_cpu(), &free_bytes, &total_bytes));
    EXPECT(total_bytes > 0);
    EXPECT(free_bytes <= total_bytes);
    for (int i = 0; i < sim_gpus; i++) {
        free_bytes = total_bytes = 0;
        EXPECT_OK(device_memory_info(sim(i), &free_bytes, &total_bytes));
        EXPECT(total_bytes > 0);
        EXPECT(free_bytes <= total_bytes);
        if (expected_sim_bytes > 0) EXPECT_EQ_I64(total_bytes, expected_sim_bytes);
    }
    for (int i = 0; i < real_gpus; i++) {
        free_bytes = total_bytes = 0;
        EXPECT_OK(device_memory_info(cuda(i), &free_bytes, &total_bytes));
        EXPECT(total_bytes > 0);
        EXPECT(free_bytes <= total_bytes);
    }
    EXPECT_REFUSED(device_memory_info(sim(sim_gpus), &free_bytes, &total_bytes), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(device_memory_info(cuda(real_gpus), &free_bytes, &total_bytes), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(device_memory_info(device_cpu(), NULL, &total_bytes), STATUS_BAD_ARGUMENT);
}

/* The bandwidth of a device that is not there is refused, and left at 0. */
static void test_memory_bandwidth_refuses_what_is_not_there(void)
{
    double gbs = 1.0;
    EXPECT_REFUSED(device_memory_bandwidth(sim(sim_gpus), &gbs), STATUS_WRONG_DEVICE);
    EXPECT_NEAR(gbs, 0.0, 0.0, 0.0);
    EXPECT_REFUSED(device_memory_bandwidth(cuda(real_gpus), &gbs), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(device_memory_bandwidth(device_cpu(), NULL), STATUS_BAD_ARGUMENT);
}

/* ============================================================================
 * the parser
 * ========================================================================== */

/* Malformed: refused as such whatever devices exist. */
static const char *const malformed[] = {
    "CPU",    "Cpu",    " cpu",   "cpu ",    "\tcpu",   "cpu\n",   "cpu:0",    "cpu0",
    "gpu",    "",       "sim",    "sim:",    "cuda:",   "sim:0x",  "sim:0 ",   " sim:0",
    "sim: 0", "sim:+1", "sim:-1", "cuda:-1", "sim:1.0", "sim:1e0", "cuda:0:0", "sim::0",
    "SIM:0",  "Cuda:0", "cuda0",  "sim0",    "cuda:x",  "sim:0\n", "sim:1 ",
};

/* Too large for any index: refused (as malformed or as absent), and never read
 * modulo 2^32 or 2^64 as a device that exists. */
static const char *const out_of_range[] = {
    "cuda:99999999999999999999", "sim:18446744073709551616", "sim:4294967296", "sim:2147483648",
    "cuda:2147483648",
};

static void test_parser_accepts_the_documented_forms_of_present_devices(void)
{
    device d = { DEVICE_CUDA, 99 };
    EXPECT_OK(device_parse("cpu", &d));
    EXPECT_DEVICE(d, device_cpu());
    for (int i = 0; i < sim_gpus; i++) {
        char text[16];
        snprintf(text, sizeof text, "sim:%d", i);
        d = cuda(99);
        EXPECT_OK(device_parse(text, &d));
        EXPECT_DEVICE(d, sim(i));
    }
    for (int i = 0; i < real_gpus; i++) {
        char text[16];
        snprintf(text, sizeof text, "cuda:%d", i);
        d = sim(99);
        EXPECT_OK(device_parse(text, &d));
        EXPECT_DEVICE(d, cuda(i));
    }
    if (real_gpus > 0) { /* "cuda" is cuda:0 */
        d = sim(99);
        EXPECT_OK(device_parse("cuda", &d));
        EXPECT_DEVICE(d, cuda(0));
    }
}

static void test_parser_refuses_malformed_text_listing_the_accepted_forms(void)
{
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        device d = device_cpu();
        clear_error();
        status s = device_parse(malformed[i], &d);
        EXPECT_MSG(s == STATUS_BAD_ARGUMENT,
                   "device_parse(\"%s\") returned %s, want "
                   "STATUS_BAD_ARGUMENT (message: \"%s\")",
                   malformed[i], status_name(s), last_error());
        const char *msg = last_error();
        EXPECT_MSG(strstr(msg, "cpu") && strstr(msg, "cuda") && strstr(msg, "sim"),
                   "device_parse(\"%s\"): the message does not list the accepted forms: \"%s\"", malformed[i],
                   msg);
    }
    device d;
    EXPECT_REFUSED(device_parse(NULL, &d), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(device_parse("cpu", NULL), STATUS_BAD_ARGUMENT);
}

static void test_parser_refuses_indices_too_large_for_any_device(void)
{
    for (size_t i = 0; i < sizeof out_of_range / sizeof out_of_range[0]; i++) {
        device d = device_cpu();
        clear_error();
        status s = device_parse(out_of_range[i], &d);
        EXPECT_MSG(s == STATUS_BAD_ARGUMENT || s == STATUS_WRONG_DEVICE,
                   "device_parse(\"%s\") returned %s, want a refusal (message: \"%s\")", out_of_range[i],
                   status_name(s), last_error());
        EXPECT_MSG(last_error()[0] != '\0', "device_parse(\"%s\") left no message", out_of_range[i]);
    }
}

static void test_parser_refuses_absent_devices_naming_those_present(void)
{
    char absent_sim[24], far_sim[24], absent_cuda[24], far_cuda[24];
    snprintf(absent_sim, sizeof absent_sim, "sim:%d", sim_gpus);
    snprintf(far_sim, sizeof far_sim, "sim:%d",
             sim_gpus < LABKIT_MAX_SIM_DEVICES ? LABKIT_MAX_SIM_DEVICES - 1 : LABKIT_MAX_SIM_DEVICES);
    snprintf(absent_cuda, sizeof absent_cuda, "cuda:%d", real_gpus);
    snprintf(far_cuda, sizeof far_cuda, "cuda:%d", real_gpus + 3);
    /* "cuda" is cuda:0: absent only where there is no real GPU */
    const char *absent[] = { absent_cuda, far_cuda, absent_sim, far_sim,
                             real_gpus == 0 ? "cuda" : absent_sim };
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
        device d = device_cpu();
        clear_error();
        status s = device_parse(absent[i], &d);
        EXPECT_MSG(s == STATUS_WRONG_DEVICE,
                   "device_parse(\"%s\") returned %s, want "
                   "STATUS_WRONG_DEVICE (message: \"%s\")",
                   absent[i], status_name(s), last_error());
        const char *msg = last_error();
        EXPECT_NAMES_PRESENT(absent[i], msg);
        /* and, where a kind has no device at all, why */
        if (strncmp(absent[i], "sim", 3) == 0 && sim_gpus == 0) EXPECT_CONTAINS(msg, "LABKIT_SIM_GPUS");
        if (strncmp(absent[i], "cuda", 4) == 0 && real_gpus == 0) EXPECT_CONTAINS(msg, "no NVIDIA GPU");
        EXPECT_DEVICE(d, device_cpu()); /* untouched */
    }
}

static void test_device_names_round_trip_through_the_parser(void)
{
    device all[LABKIT_MAX_DEVICES];
    int n = device_list(all, LABKIT_MAX_DEVICES);
    for (int i = 0; i < n; i++) {
        device back = { DEVICE_CUDA, 77 };
        EXPECT_OK(device_parse(device_name(all[i]), &back));
        EXPECT_DEVICE(back, all[i]);
    }
    EXPECT_STREQ(device_name(device_cpu()), "cpu");
    EXPECT_STREQ(device_name(sim(1)), "sim:1");
    EXPECT_STREQ(device_name(cuda(3)), "cuda:3"); /* could exist elsewhere */
    EXPECT_STREQ(device_name(sim(-1)), "invalid");
    EXPECT_STREQ(device_name(cuda(-2)), "invalid");
    const device nonsense = { (device_kind)42, 0 };
    EXPECT_STREQ(device_name(nonsense), "invalid");
}

/* ============================================================================
 * properties
 * ========================================================================== */

static void expect_string_terminated(const char *field, const char *s, size_t size)
{
    EXPECT_MSG(memchr(s, '\0', size) != NULL, "%s is not terminated", field);
}

static void test_cpu_properties_are_plausible_and_consistent(void)
{
    device_properties p;
    memset(&p, 0x5a, sizeof p);
    REQUIRE_OK(device_get_properties(device_cpu(), &p));
    expect_string_terminated("name", p.name, sizeof p.name);
    expect_string_terminated("notes", p.notes, sizeof p.notes);
    EXPECT(p.name[0] != '\0');
    EXPECT(p.memory_bytes > 0);
    EXPECT(p.multiprocessors > 0);
    EXPECT(p.cores_per_mp > 0);
    EXPECT(p.clock_ghz > 0.0 && p.clock_ghz < 10.0);
    EXPECT_EQ_I64(p.cc_major, 0);
    EXPECT_EQ_I64(p.cc_minor, 0);
    EXPECT(p.peak_gflops > 0.0);
    /* the CPU's peak is cores x (lanes x FMA units) x clock x 2 */
    EXPECT_NEAR(p.peak_gflops, p.multiprocessors * (double)p.cores_per_mp * p.clock_ghz * 2.0, 0.0, 1e-6);
    /* the bandwidth is measured apart, not a property read */
    EXPECT_NEAR(p.memory_bandwidth_gbs, 0.0, 0.0, 0.0);
    double gbs = 0.0;
    EXPECT_OK(device_memory_bandwidth(device_cpu(), &gbs));
    /* a copy on any machine the kit runs on moves between 1 GB/s and 10 TB/s */
    EXPECT_MSG(gbs > 1.0 && gbs < 1e4, "%g GB/s", gbs);
cleanup:
    return;
}

/* A simulated GPU describes a modelled card of its own, never the host's
 * figures: a utilisation computed with the wrong device's peak then shows. */
static void test_sim_properties_are_a_modelled_card_not_the_host(void)
{
    if (sim_gpus == 0) {
        harness_skip("no simulated GPU in this environment");
        return;
    }
    device_properties p;
    size_t free_bytes = 0, total_bytes = 0;
    memset(&p, 0x5a, sizeof p);
    REQUIRE_OK(device_get_properties(sim(0), &p));
    REQUIRE_OK(device_memory_info(sim(0), &free_bytes, &total_bytes));
    expect_string_terminated("name", p.name, sizeof p.name);
    expect_string_terminated("notes", p.notes, sizeof p.notes);
    EXPECT(p.name[0] != '\0');
    EXPECT_EQ_I64(p.memory_bytes, total_bytes);
    /* the documented card: 20 SMs of compute capability 8.6 at 1.5 GHz, 320 GB/s */
    EXPECT_EQ_I64(p.multiprocessors, 20);
    EXPECT_EQ_I64(p.cc_major, 8);
    EXPECT_EQ_I64(p.cc_minor, 6);
    EXPECT_EQ_I64(p.cores_per_mp, fp32_cores_per_multiprocessor(8, 6));
    EXPECT_NEAR(p.clock_ghz, 1.5, 0.0, 1e-12);
    EXPECT_NEAR(p.peak_gflops, 7680.0, 0.0, 1e-9);
    EXPECT_NEAR(p.memory_bandwidth_gbs, 320.0, 0.0, 1e-12);
    EXPECT(!p.tensor_cores);
    double gbs = 0.0, host_gbs = 0.0;
    EXPECT_OK(device_memory_bandwidth(sim(0), &gbs));
    EXPECT_NEAR(gbs, 320.0, 0.0, 1e-12); /* the modelled card's, not measured */
    device_properties host;
    REQUIRE_OK(device_get_properties(device_cpu(), &host));
    REQUIRE_OK(device_memory_bandwidth(device_cpu(), &host_gbs));
    EXPECT_MSG(p.peak_gflops != host.peak_gflops && p.memory_bandwidth_gbs != host_gbs,
               "sim:0 reports the host's figures (%g GFLOP/s, %g GB/s)", host.peak_gflops, host_gbs);
    /* every simulated GPU is the same card, under its own name */
    if (sim_gpus > 1) {
        device_properties q;
        REQUIRE_OK(device_get_properties(sim(1), &q));
        EXPECT(q.peak_gflops == p.peak_gflops && strcmp(q.name, p.name) != 0);
    }
cleanup:
    return;
}

/* A real GPU reports what cudart says of it; the kit's table gives its cores. */
static void test_real_gpu_properties_are_plausible_and_consistent(void)
{
    if (real_gpus == 0) {
        harness_skip("no real GPU on this machine");
        return;
    }
    for (int i = 0; i < real_gpus; i++) {
        device_properties p;
        size_t free_bytes = 0, total_bytes = 0;
        memset(&p, 0x5a, sizeof p);
        REQUIRE_OK(device_get_properties(cuda(i), &p));
        REQUIRE_OK(device_memory_info(cuda(i), &free_bytes, &total_bytes));
        expect_string_terminated("name", p.name, sizeof p.name);
        expect_string_terminated("notes", p.notes, sizeof p.notes);
        EXPECT(p.name[0] != '\0');
        EXPECT(p.memory_bytes > 0);
        EXPECT(total_bytes > 0 && free_bytes <= total_bytes);
        EXPECT(p.multiprocessors > 0);
        EXPECT_MSG(p.cc_major >= 1, "cuda:%d: compute capability %d.%d", i, p.cc_major, p.cc_minor);
        EXPECT_EQ_I64(p.cores_per_mp, fp32_cores_per_multiprocessor(p.cc_major, p.cc_minor));
        EXPECT(p.clock_ghz > 0.0 && p.clock_ghz < 10.0);
        EXPECT_NEAR(p.peak_gflops, peak_fp32_gflops(p.multiprocessors, p.cores_per_mp, p.clock_ghz), 0.0,
                    1e-12);
        /* from the memory clock and bus width: 100 GB/s (a small card) to 10 TB/s */
        EXPECT_MSG(p.memory_bandwidth_gbs > 100.0 && p.memory_bandwidth_gbs < 1e4, "cuda:%d: %g GB/s", i,
                   p.memory_bandwidth_gbs);
    }
cleanup:
    return;
}

static void test_properties_refuse_absent_devices_and_null(void)
{
    device_properties p;
    EXPECT_REFUSED(device_get_properties(sim(sim_gpus), &p), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(device_get_properties(cuda(real_gpus), &p), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(device_get_properties(device_cpu(), NULL), STATUS_BAD_ARGUMENT);
}

/* NVIDIA's CUDA C Programming Guide, "Arithmetic Instructions" (FP32 results per
 * clock per multiprocessor). */
static void test_fp32_cores_per_multiprocessor_follow_nvidias_table(void)
{
    const struct {
        int major, minor, cores;
    } table[] = {
        { 7, 5, 64 },   /* Turing */
        { 8, 0, 64 },   /* A100 */
        { 8, 6, 128 },  /* GA10x */
        { 8, 7, 128 },  /* Orin */
        { 8, 9, 128 },  /* Ada */
        { 9, 0, 128 },  /* Hopper */
        { 10, 0, 128 }, /* Blackwell (datacenter) */
        { 12, 0, 128 }, /* Blackwell (consumer) */
        { 12, 1, 128 },
        /* unknown: 0, never a guess */
        { 3, 0, 0 },
        { 99, 0, 0 },
        { 0, 0, 0 },
        { -1, -1, 0 },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        int got = fp32_cores_per_multiprocessor(table[i].major, table[i].minor);
        EXPECT_MSG(got == table[i].cores, "fp32_cores_per_multiprocessor(%d, %d) is %d, want %d",
                   table[i].major, table[i].minor, got, table[i].cores);
    }
}

static void test_peak_is_sms_times_cores_times_clock_times_two(void)
{
    /* RTX 3080 (10 GB): 68 SMs of 128 FP32 cores at a 1.71 GHz boost */
    const double rtx3080 = peak_fp32_gflops(68, 128, 1.71);
    EXPECT_NEAR(rtx3080, 68.0 * 128.0 * 1.71 * 2.0, 0.0, 1e-12);
    EXPECT_NEAR(rtx3080, 29770.0, 0.0, 0.01); /* NVIDIA's "29.77 TFLOPS" */
    EXPECT_NEAR(peak_fp32_gflops(132, 128, 1.98), 132.0 * 128.0 * 1.98 * 2.0, 0.0, 1e-12);
    EXPECT(peak_fp32_gflops(0, 128, 1.5) == 0.0);
    EXPECT(peak_fp32_gflops(68, 0, 1.5) == 0.0);
}

/* ---- tensor cores ----------------------------------------------------------- */

static void test_cpu_and_sim_have_no_tensor_cores_and_say_so(void)
{
    device_properties p;
    memset(&p, 0x5a, sizeof p);
    REQUIRE_OK(device_get_properties(device_cpu(), &p));
    expect_string_terminated("tensor_notes", p.tensor_notes, sizeof p.tensor_notes);
    EXPECT(!p.tensor_cores);
    EXPECT(p.peak_tf32_gflops == 0.0 && p.peak_fp16_gflops == 0.0 && p.peak_bf16_gflops == 0.0);
    EXPECT_CONTAINS(p.tensor_notes, "no tensor cores");
    if (sim_gpus == 0) return;
    memset(&p, 0x5a, sizeof p);
    REQUIRE_OK(device_get_properties(sim(0), &p));
    expect_string_terminated("tensor_notes", p.tensor_notes, sizeof p.tensor_notes);
    EXPECT(!p.tensor_cores);
    EXPECT(p.peak_tf32_gflops == 0.0 && p.peak_fp16_gflops == 0.0 && p.peak_bf16_gflops == 0.0);
    EXPECT_CONTAINS(p.tensor_notes, "no tensor cores");
cleanup:
    return;
}

static void test_tensor_rates_follow_the_architectures(void)
{
    const struct {
        int major, minor, tf32, fp16, bf16;
    } table[] = {
        { 7, 0, 0, 1024, 0 },        /* Volta: FP16 only */
        { 7, 5, 0, 1024, 0 },        /* Turing: FP16 only */
        { 8, 0, 1024, 2048, 2048 },  /* A100 */
        { 8, 6, 512, 1024, 1024 },   /* GA10x */
        { 8, 9, 512, 1024, 1024 },   /* Ada */
        { 9, 0, 2048, 4096, 4096 },  /* Hopper */
        { 10, 0, 4096, 8192, 8192 }, /* B200 */
        { 6, 1, 0, 0, 0 },           /* Pascal: none */
        { 13, 0, 0, 0, 0 },          /* unknown: 0, never a guess */
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const tensor_rates r = tensor_flops_per_clock(table[i].major, table[i].minor);
        EXPECT_MSG(r.tf32 == table[i].tf32 && r.fp16 == table[i].fp16 && r.bf16 == table[i].bf16,
                   "tensor_flops_per_clock(%d, %d) is {%d, %d, %d}, want {%d, %d, %d}", table[i].major,
                   table[i].minor, r.tf32, r.fp16, r.bf16, table[i].tf32, table[i].fp16, table[i].bf16);
    }
    EXPECT_NEAR(peak_tensor_gflops(108, 2048, 1.41), 108.0 * 2048 * 1.41, 0.0, 1e-12);
    EXPECT(peak_tensor_gflops(0, 2048, 1.41) == 0.0);
    EXPECT(peak_tensor_gflops(108, 0, 1.41) == 0.0);
    EXPECT(peak_tensor_gflops(108, 2048, 0.0) == 0.0);
}

/* A GPU as cudart would describe it, with its tensor fields filled in. */
static device_properties described_gpu(const char *name, int major, int minor, int sms, double clock_ghz)
{
    device_properties p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "%s", name);
    p.cc_major = major, p.cc_minor = minor, p.multiprocessors = sms, p.clock_ghz = clock_ghz;
    status s = tensor_core_properties(&p);
    if (s != STATUS_OK)
        harness_fail(__FILE__, __LINE__, "tensor_core_properties(%s): %s", name, last_error());
    return p;
}

/* NVIDIA's published dense figures (TFLOPS, float32 accumulation), within 1%:
 * the formula, the rates and the clocks reproduce them. */
static void test_tensor_peaks_reproduce_published_figures(void)
{
    const struct {
        const char *name;
        int major, minor, sms;
        double clock_ghz; /* what cudart reports */
        double tf32, fp16, bf16;
    } gpus[] = {
        { "NVIDIA A100-SXM4-80GB", 8, 0, 108, 1.41, 156, 312, 312 },
        { "NVIDIA H100 80GB HBM3", 9, 0, 132, 1.98, 494.7, 989.4, 989.4 }, /* H100 SXM, at 1.83 GHz */
        { "NVIDIA H200", 9, 0, 132, 1.98, 494.7, 989.4, 989.4 },
        { "NVIDIA H100 PCIe", 9, 0, 114, 1.755, 378, 756, 756 },
        { "NVIDIA L40", 8, 9, 142, 2.49, 90.5, 181.05, 181.05 },            /* half-rate accumulation */
        { "NVIDIA GeForce RTX 4090", 8, 9, 128, 2.52, 82.6, 165.2, 165.2 }, /* GeForce: half rate */
        { "NVIDIA GeForce RTX 3090", 8, 6, 82, 1.695, 35.6, 71, 71 },
        { "NVIDIA RTX A6000", 8, 6, 84, 1.80, 77.4, 154.8, 154.8 },
        { "Tesla T4", 7, 5, 40, 1.59, 0, 65, 0 },
        { "Tesla V100-SXM2-16GB", 7, 0, 80, 1.53, 0, 125, 0 },
    };
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        const device_properties p =
            described_gpu(gpus[i].name, gpus[i].major, gpus[i].minor, gpus[i].sms, gpus[i].clock_ghz);
        EXPECT_MSG(p.tensor_cores, "%s has tensor cores", gpus[i].name);
        const double want[3] = { gpus[i].tf32, gpus[i].fp16, gpus[i].bf16 };
        const double got[3] = { p.peak_tf32_gflops, p.peak_fp16_gflops, p.peak_bf16_gflops };
        const char *format[3] = { "TF32", "FP16", "BF16" };
        for (int f = 0; f < 3; f++)
            EXPECT_MSG(harness_close(got[f] / 1000.0, want[f], 0.0, 0.01),
                       "%s: %s peak %.1f TFLOPS, NVIDIA publishes %.1f (notes: %s)", gpus[i].name, format[f],
                       got[f] / 1000.0, want[f], p.tensor_notes);
        expect_string_terminated("tensor_notes", p.tensor_notes, sizeof p.tensor_notes);
    }
    /* the notes say at which clock: H100 SXM's figures assume 1.83 GHz, not cudart's 1.98 */
    device_properties h100 = described_gpu("NVIDIA H100 80GB HBM3", 9, 0, 132, 1.98);
    EXPECT_CONTAINS(h100.tensor_notes, "1.830 GHz");
    EXPECT_CONTAINS(h100.tensor_notes, "1.98");
    /* an H100 the kit does not know: cudart's clock, and a warning that it may overestimate */
    device_properties nvl = described_gpu("NVIDIA H100 NVL", 9, 0, 132, 1.785);
    EXPECT_NEAR(nvl.peak_bf16_gflops, 132 * 4096 * 1.785, 0.0, 1e-9);
    EXPECT_CONTAINS(nvl.tensor_notes, "overestimate");
}

static void test_tensor_cores_absent_or_unknown_are_said_plainly(void)
{
    device_properties gtx = described_gpu("NVIDIA GeForce GTX 1660 SUPER", 7, 5, 22, 1.785);
    EXPECT(!gtx.tensor_cores);
    EXPECT(gtx.peak_fp16_gflops == 0.0);
    EXPECT_CONTAINS(gtx.tensor_notes, "no tensor cores");
    device_properties future = described_gpu("NVIDIA Future GPU", 13, 0, 200, 2.0);
    EXPECT(future.tensor_cores);
    EXPECT(future.peak_tf32_gflops == 0.0 && future.peak_fp16_gflops == 0.0 &&
           future.peak_bf16_gflops == 0.0);
    EXPECT_CONTAINS(future.tensor_notes, "not in the kit's table");
    EXPECT_REFUSED(tensor_core_properties(NULL), STATUS_BAD_ARGUMENT);
}

/* ============================================================================
 * a bad environment
 * ========================================================================== */

static void test_bad_setting_is_an_error_naming_the_variable(void)
{
    /* the first use (device_count, in main) initialises lazily; devices_init()
     * still reports the setting afterwards, as often as asked */
    EXPECT_EQ_I64(gpu_count(), real_gpus);
    EXPECT_REFUSED(devices_init(), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), bad_variable);
    EXPECT_REFUSED(devices_init(), STATUS_BAD_ARGUMENT);
}

/* Without simulated GPUs, that is: the real ones, counted by cudart, stay. */
static void test_after_a_bad_setting_the_kit_runs_without_simulated_gpus(void)
{
    device out[LABKIT_MAX_DEVICES];
    device d = device_cpu();
    tensor *a = NULL, *b = NULL, *sum = NULL;
    float value = 0.0f;
    EXPECT_EQ_I64(device_count(DEVICE_SIM), 0);
    EXPECT_EQ_I64(gpu_count(), real_gpus);
    EXPECT_DEVICE(try_gpu(0), real_gpus > 0 ? cuda(0) : device_cpu());
    EXPECT_EQ_I64(try_all_gpus(out, LABKIT_MAX_DEVICES), real_gpus > 0 ? real_gpus : 1);
    EXPECT_DEVICE(out[0], real_gpus > 0 ? cuda(0) : device_cpu());
    EXPECT_EQ_I64(device_list(out, LABKIT_MAX_DEVICES), 1 + real_gpus);
    EXPECT_REFUSED(device_parse("sim:0", &d), STATUS_WRONG_DEVICE);
    EXPECT(!device_exists(sim(0)));
    /* the CPU still works */
    REQUIRE_OK(tensor_full(&a, device_cpu(), shape2(3, 5), 2.0f));
    REQUIRE_OK(tensor_full(&b, device_cpu(), shape2(3, 5), 0.5f));
    REQUIRE_OK(tensor_empty(&sum, device_cpu(), DTYPE_F32, shape1(1)));
    REQUIRE_OK(op_mul(a, b, a));
    REQUIRE_OK(op_sum(a, sum));
    REQUIRE_OK(tensor_item(sum, &value));
    EXPECT(value == 15.0f);
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(sum);
}

/* ============================================================================ */

static int usage(const char *program)
{
    fprintf(stderr, "usage: %s expect S [BYTES] | %s bad-env VARIABLE\n", program, program);
    return 2;
}

int main(int argc, char **argv)
{
    /* R: what cudart counts, checked against the build by a test below */
    real_gpus = device_count(DEVICE_CUDA);
    if (argc >= 3 && strcmp(argv[1], "bad-env") == 0) {
        bad_variable = argv[2];
        const char *value = getenv(bad_variable);
        printf("%s=\"%s\" must be refused (%d real GPU(s) here)\n", bad_variable, value ? value : "(unset)",
               real_gpus);
        RUN_TEST(test_bad_setting_is_an_error_naming_the_variable);
        RUN_TEST(test_after_a_bad_setting_the_kit_runs_without_simulated_gpus);
        RUN_TEST(test_real_gpus_exist_only_in_a_build_with_cuda);
        RUN_TEST(test_fp32_cores_per_multiprocessor_follow_nvidias_table);
        return harness_finish();
    }
    if (argc < 3 || argc > 4 || strcmp(argv[1], "expect") != 0) return usage(argv[0]);
    if (devices_init() != STATUS_OK) { /* a bad setting outside bad-env: stop, as every program does */
        fprintf(stderr, "test_devices: %s\n", last_error());
        return 2;
    }
    char *end = NULL;
    sim_gpus = (int)strtol(argv[2], &end, 10);
    if (*end != '\0' || sim_gpus < 0 || sim_gpus > LABKIT_MAX_SIM_DEVICES) return usage(argv[0]);
    if (argc == 4) expected_sim_bytes = (size_t)strtoull(argv[3], NULL, 10);
    printf("expecting %d simulated GPU(s) beside %d real one(s)\n", sim_gpus, real_gpus);

    RUN_TEST(test_devices_init_succeeds_every_time);
    RUN_TEST(test_real_gpus_exist_only_in_a_build_with_cuda);
    RUN_TEST(test_device_count_gives_each_kind);
    RUN_TEST(test_gpu_count_is_the_real_gpus_or_else_the_simulated_ones);
    RUN_TEST(test_try_gpu_gives_gpu_i_or_else_the_cpu);
    RUN_TEST(test_try_all_gpus_lists_every_gpu_or_just_the_cpu);
    RUN_TEST(test_device_list_is_the_cpu_then_the_real_then_the_simulated_gpus);
    RUN_TEST(test_device_predicates_agree_with_the_registry);
    RUN_TEST(test_synchronize_is_fine_on_present_devices_only);
    RUN_TEST(test_memory_info_reports_the_capacity);
    RUN_TEST(test_memory_bandwidth_refuses_what_is_not_there);
    RUN_TEST(test_parser_accepts_the_documented_forms_of_present_devices);
    RUN_TEST(test_parser_refuses_malformed_text_listing_the_accepted_forms);
    RUN_TEST(test_parser_refuses_indices_too_large_for_any_device);
    RUN_TEST(test_parser_refuses_absent_devices_naming_those_present);
    RUN_TEST(test_device_names_round_trip_through_the_parser);
    RUN_TEST(test_cpu_properties_are_plausible_and_consistent);
    RUN_TEST(test_sim_properties_are_a_modelled_card_not_the_host);
    RUN_TEST(test_real_gpu_properties_are_plausible_and_consistent);
    RUN_TEST(test_properties_refuse_absent_devices_and_null);
    RUN_TEST(test_fp32_cores_per_multiprocessor_follow_nvidias_table);
    RUN_TEST(test_peak_is_sms_times_cores_times_clock_times_two);
    RUN_TEST(test_cpu_and_sim_have_no_tensor_cores_and_say_so);
    RUN_TEST(test_tensor_rates_follow_the_architectures);
    RUN_TEST(test_tensor_peaks_reproduce_published_figures);
    RUN_TEST(test_tensor_cores_absent_or_unknown_are_said_plainly);
    return harness_finish();
}
