/* test_kernel_tools: the kernel sanitizer and the memory profiler, on the
 * device given as argv[1] (cpu or sim:0), with the kernels of
 * test_kernel_tools_kernels.cuh built for the kernel tools.
 *
 * Each mistake's report is checked field by field (kind, file and line found
 * from the kernel file's "expect:" comments, block, thread, buffer, index),
 * and the right kernels give no report. The profiler's counts are checked
 * exactly against what a GPU's warps would ask of memory. */
#include "harness.h"

#include "labkit/kernel.h"
#include "labkit/kernel_profile.h"
#include "labkit/kernel_sanitizer.h"
#include "labkit/ops.h"
#include "labkit/tensor.h"
#include "test_kernel_tools_launch.h"

static device dev;

/* The line of the kernel file whose comment says "expect: <what>". */
static int expected_line(const char *what)
{
    FILE *f = fopen(tools_kernels_file, "r");
    char text[512], marker[128];
    snprintf(marker, sizeof marker, "expect: %s */", what);
    int line = 0, found = 0;
    while (f && fgets(text, sizeof text, f)) {
        ++line;
        if (strstr(text, marker)) {
            found = line;
            break;
        }
    }
    if (f) fclose(f);
    return found;
}

/* A float tensor of n elements on dev, all `value`. */
static tensor *filled(int64_t n, float value)
{
    tensor *t = NULL;
    if (tensor_full(&t, dev, shape1(n), value) != STATUS_OK) return NULL;
    return t;
}

static status run(tools_kernel k, const tools_args *args)
{
    status s = device_enqueue(dev, tools_launcher(k), args, sizeof *args);
    const status waited = device_synchronize(dev);
    return s != STATUS_OK ? s : waited;
}

/* The only report since the last clear, in *r; false (a failure recorded) otherwise. */
static bool one_report(kernel_report *r)
{
    const size_t n = kernel_sanitizer_count();
    EXPECT_MSG(n == 1, "%zu reports, want 1", n);
    for (size_t i = 0; i < n; ++i) {
        kernel_report x;
        if (kernel_sanitizer_report(i, &x) == STATUS_OK) fprintf(stderr, "  report %zu: %s\n", i, x.text);
    }
    return n >= 1 && kernel_sanitizer_report(0, r) == STATUS_OK;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

#define EXPECT_AT(r, what)                                                  \
    do {                                                                    \
        EXPECT_STREQ(base_name((r).file), "test_kernel_tools_kernels.cuh"); \
        EXPECT_EQ_I64((r).line, expected_line(what));                       \
    } while (0)

/* ---- the sanitizer ------------------------------------------------------------------- */

static void test_a_write_one_past_the_end_is_reported_and_stops_the_launch(void)
{
    kernel_sanitizer_clear();
    tensor *out = filled(100, 0.0f);
    REQUIRE(out);
    tools_args a = { .c = tensor_data(out), .n = 100, .grid = 4, .block = 32 };
    EXPECT_STATUS(run(WRITE_PAST_END, &a), STATUS_KERNEL_FAILED);
    EXPECT_CONTAINS(last_error(), "out-of-bounds write of global memory in write_past_end_kernel");
    kernel_report r;
    if (one_report(&r)) {
        EXPECT(r.kind == KERNEL_REPORT_OUT_OF_BOUNDS && r.write);
        EXPECT_AT(r, "write past end");
        EXPECT_STREQ(r.kernel, "write_past_end_kernel");
        EXPECT_STREQ(r.buffer, "c");
        EXPECT_EQ_I64(r.index, 100);
        EXPECT(r.block[0] == 3 && r.thread[0] == 4 && r.block[1] == 0 && r.thread[1] == 0);
        EXPECT_CONTAINS(r.text,
                        "thread (4, 0, 0) of block (3, 0, 0) writes c[100] (4 bytes, just past its end;");
    }
    /* the device works on */
    kernel_sanitizer_clear();
    tools_args ok = {
        .a = tensor_data(out), .c = tensor_data(out), .n = 100, .stride = 1, .grid = 4, .block = 32
    };
    EXPECT_OK(run(STRIDED_COPY, &ok));
    EXPECT_EQ_I64((int64_t)kernel_sanitizer_count(), 0);
cleanup:
    tensor_free(out);
}

static void test_a_read_before_the_start_is_reported_with_a_negative_index(void)
{
    kernel_sanitizer_clear();
    tensor *in = filled(64, 1.0f), *out = filled(64, 0.0f);
    REQUIRE(in && out);
    tools_args a = { .a = tensor_data(in), .c = tensor_data(out), .n = 64, .grid = 2, .block = 32 };
    EXPECT_STATUS(run(READ_BEFORE_START, &a), STATUS_KERNEL_FAILED);
    kernel_report r;
    if (one_report(&r)) {
        EXPECT(r.kind == KERNEL_REPORT_OUT_OF_BOUNDS && !r.write);
        EXPECT_AT(r, "read before start");
        EXPECT_STREQ(r.buffer, "a");
        EXPECT_EQ_I64(r.index, -1);
        EXPECT(r.block[0] == 0 && r.thread[0] == 0);
        EXPECT_CONTAINS(r.text, "reads a[-1] (4 bytes, 4 bytes before its start;");
    }
cleanup:
    tensor_free(in);
    tensor_free(out);
}

static void test_an_index_past_a_shared_array_is_reported_and_the_launch_goes_on(void)
{
    kernel_sanitizer_clear();
    tensor *out = filled(32, 0.0f);
    REQUIRE(out);
    tools_args a = { .c = tensor_data(out) };
    EXPECT_OK(run(SHARED_PAST_END, &a));
    kernel_report r;
    if (one_report(&r)) {
        EXPECT(r.kind == KERNEL_REPORT_OUT_OF_BOUNDS && r.write);
        EXPECT_AT(r, "shared past end");
        EXPECT_STREQ(r.buffer, "row");
        EXPECT_EQ_I64(r.index, 32);
        EXPECT(r.thread[0] == 31);
        EXPECT_CONTAINS(r.text, "out-of-bounds write of shared memory");
    }
cleanup:
    tensor_free(out);
}

static void test_a_tiled_product_without_its_second_barrier_is_a_race_on_shared_memory(void)
{
    kernel_sanitizer_clear();
    const int n = 40; /* three tiles, the last one partial */
    tensor *a = filled(n * n, 1.0f), *b = filled(n * n, 1.0f), *c = filled(n * n, 0.0f);
    REQUIRE(a && b && c);
    tools_args args = { .a = tensor_data(a), .b = tensor_data(b), .c = tensor_data(c), .n = n };
    EXPECT_OK(run(TILED_ONE_BARRIER, &args));
    const size_t count = kernel_sanitizer_count();
    EXPECT(count >= 1);
    kernel_report r;
    if (count >= 1 && kernel_sanitizer_report(0, &r) == STATUS_OK) {
        /* thread 0 runs first after the barrier: it reads the tiles, then loads
         * the next ones over them; thread 1 then reads what thread 0 wrote */
        EXPECT(r.kind == KERNEL_REPORT_SHARED_RACE && !r.write);
        EXPECT_AT(r, "race read");
        EXPECT_EQ_I64(r.other_line, expected_line("race write"));
        EXPECT_STREQ(r.buffer, "a_tile");
        EXPECT_CONTAINS(r.text,
                        "thread (1, 0, 0) of block (0, 0, 0) reads a_tile[0], which thread (0, 0, 0) wrote");
        EXPECT_CONTAINS(r.text, "no __syncthreads() came between them");
    }
    /* the same product with both barriers: nothing to report */
    kernel_sanitizer_clear();
    EXPECT_OK(run(TILED, &args));
    EXPECT_EQ_I64((int64_t)kernel_sanitizer_count(), 0);
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
}

static void test_a_read_of_shared_memory_no_thread_wrote_is_reported(void)
{
    kernel_sanitizer_clear();
    tensor *out = filled(64, 0.0f);
    REQUIRE(out);
    tools_args a = { .c = tensor_data(out) };
    EXPECT_OK(run(HALF_WRITTEN, &a));
    kernel_report r;
    if (one_report(&r)) {
        EXPECT(r.kind == KERNEL_REPORT_UNINITIALIZED_READ);
        EXPECT_AT(r, "uninitialized");
        EXPECT_STREQ(r.buffer, "s");
        EXPECT_EQ_I64(r.index, 32);
        EXPECT(r.thread[0] == 32);
        EXPECT_EQ_I64((int64_t)r.count, 32);
    }
cleanup:
    tensor_free(out);
}

static void test_a_write_over_what_other_threads_read_is_a_race(void)
{
    kernel_sanitizer_clear();
    tensor *in = filled(64, 1.0f), *out = filled(64, 0.0f);
    REQUIRE(in && out);
    tools_args a = { .a = tensor_data(in), .c = tensor_data(out) };
    EXPECT_OK(run(SHIFT_LEFT, &a));
    kernel_report r;
    if (one_report(&r)) {
        /* after the barrier thread 0 runs to its end first: it reads s[1],
         * then thread 1 writes it */
        EXPECT(r.kind == KERNEL_REPORT_SHARED_RACE && r.write);
        EXPECT_AT(r, "war write");
        EXPECT_EQ_I64(r.other_line, expected_line("war read"));
        EXPECT_STREQ(r.buffer, "s");
        EXPECT_EQ_I64(r.index, 1);
        EXPECT(r.thread[0] == 1 && r.other_thread[0] == 0);
        EXPECT_CONTAINS(r.text,
                        "thread (1, 0, 0) of block (0, 0, 0) writes s[1], which thread (0, 0, 0) read");
        EXPECT_EQ_I64((int64_t)r.count, 63); /* threads 1 to 63 */
    }
    /* every thread reads s[0], thread 63 last; then thread 63 writes it */
    kernel_sanitizer_clear();
    EXPECT_OK(run(LAST_WRITES, &a));
    if (one_report(&r)) {
        EXPECT(r.kind == KERNEL_REPORT_SHARED_RACE && r.write);
        EXPECT_AT(r, "last write");
        EXPECT_EQ_I64(r.other_line, expected_line("shared read"));
        EXPECT_STREQ(r.buffer, "s");
        EXPECT_EQ_I64(r.index, 0);
        EXPECT(r.thread[0] == 63 && r.other_thread[0] == 62);
        EXPECT_EQ_I64((int64_t)r.count, 1);
    }
cleanup:
    tensor_free(in);
    tensor_free(out);
}

static void test_threads_adding_into_one_cell_without_an_atomic_race_and_with_one_do_not(void)
{
    kernel_sanitizer_clear();
    tensor *in = filled(100, 1.0f), *total = filled(1, 0.0f);
    REQUIRE(in && total);
    tools_args a = { .a = tensor_data(in), .c = tensor_data(total), .n = 100, .grid = 4, .block = 32 };
    EXPECT_OK(run(UNGUARDED_SUM, &a));
    kernel_report r;
    if (one_report(&r)) {
        EXPECT(r.kind == KERNEL_REPORT_GLOBAL_RACE);
        EXPECT_AT(r, "global race");
        EXPECT_STREQ(r.buffer, "c");
        EXPECT_EQ_I64(r.index, 0);
        EXPECT(r.thread[0] == 1 && r.other_thread[0] == 0);
    }
    kernel_sanitizer_clear();
    float sum = 0.0f;
    REQUIRE_OK(op_fill(total, 0.0f));
    EXPECT_OK(run(ATOMIC_SUM, &a));
    REQUIRE_OK(tensor_to_host(total, &sum, 1));
    EXPECT(sum == 100.0f);
    EXPECT_EQ_I64((int64_t)kernel_sanitizer_count(), 0);
cleanup:
    tensor_free(in);
    tensor_free(total);
}

static void test_barrier_divergence_stays_the_launch_error_and_is_a_report(void)
{
    kernel_sanitizer_clear();
    tensor *out = filled(32, 0.0f);
    REQUIRE(out);
    tools_args a = { .c = tensor_data(out) };
    EXPECT_STATUS(run(DIVERGENT_BARRIER, &a), STATUS_KERNEL_FAILED);
    EXPECT_CONTAINS(last_error(), "barrier divergence");
    kernel_report r;
    if (one_report(&r)) {
        EXPECT(r.kind == KERNEL_REPORT_LAUNCH_FAILED);
        EXPECT_CONTAINS(r.text, "barrier divergence");
    }
cleanup:
    tensor_free(out);
}

static void test_the_api_refuses_what_it_cannot_give(void)
{
    kernel_report r;
    kernel_profile p;
    kernel_sanitizer_clear();
    EXPECT_REFUSED(kernel_sanitizer_report(0, &r), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(kernel_sanitizer_report(0, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_OK(kernel_profile_start());
    EXPECT_REFUSED(kernel_profile_get(0, &p), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(kernel_profile_last("no_such_kernel", &p), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(kernel_profile_last(NULL, &p), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(kernel_profile_print(NULL), STATUS_BAD_ARGUMENT);
    kernel_profile_stop();
    EXPECT(kernel_tools_built());
}

/* ---- the profiler --------------------------------------------------------------------- */

/* The profile of the one launch of kernel k with these arguments. */
static bool profile_of(tools_kernel k, const tools_args *a, const char *name, kernel_profile *p)
{
    if (kernel_profile_start() != STATUS_OK) return false;
    const status s = run(k, a);
    kernel_profile_stop();
    EXPECT_OK(s);
    EXPECT_EQ_I64((int64_t)kernel_profile_count(), 1);
    return s == STATUS_OK && kernel_profile_last(name, p) == STATUS_OK;
}

static void test_sectors_per_request_grow_with_the_stride_of_a_copy(void)
{
    const int n = 1024;
    tensor *in = filled((int64_t)n * 32, 1.0f), *out = filled(n, 0.0f);
    REQUIRE(in && out);
    const int strides[] = { 1, 2, 4, 8, 16, 32 };
    const double want[] = { 4, 8, 16, 32, 32, 32 };
    for (size_t s = 0; s < sizeof strides / sizeof strides[0]; ++s) {
        tools_args a = {
            .a = tensor_data(in), .c = tensor_data(out), .n = n, .stride = strides[s], .grid = 4, .block = 256
        };
        kernel_profile p;
        if (!profile_of(STRIDED_COPY, &a, "strided_copy_kernel", &p)) continue;
        EXPECT_EQ_I64((int64_t)p.global_load_requests, n / 32);
        EXPECT_NEAR(kernel_profile_sectors_per_load(&p), want[s], 0, 0);
        EXPECT_EQ_I64((int64_t)p.global_store_requests, n / 32);
        EXPECT_EQ_I64((int64_t)p.global_store_sectors, n / 32 * 4);
        EXPECT_EQ_I64((int64_t)p.warps, n / 32);
        EXPECT_EQ_I64((int64_t)(p.shared_load_requests + p.shared_store_requests + p.atomics + p.barriers),
                      0);
    }
cleanup:
    tensor_free(in);
    tensor_free(out);
}

static void test_a_tiled_product_makes_16_times_fewer_global_loads_than_the_naive_one(void)
{
    const int n = 64;
    tensor *a = filled(n * n, 1.0f), *b = filled(n * n, 1.0f), *c = filled(n * n, 0.0f);
    REQUIRE(a && b && c);
    tools_args args = { .a = tensor_data(a), .b = tensor_data(b), .c = tensor_data(c), .n = n };
    kernel_profile naive, tiled;
    if (profile_of(NAIVE, &args, "naive_kernel", &naive) &&
        profile_of(TILED, &args, "tiled_kernel", &tiled)) {
        const int64_t warps = (n / 16) * (n / 16) * 8;
        EXPECT_EQ_I64((int64_t)naive.global_load_requests, warps * 2 * n);
        EXPECT_EQ_I64((int64_t)tiled.global_load_requests, warps * 2 * (n / 16));
        EXPECT_EQ_I64((int64_t)tiled.barriers, (n / 16) * (n / 16) * (n / 16) * 2);
        EXPECT_EQ_I64((int64_t)naive.barriers, 0);
        /* a warp is two rows of 16 threads: one float of each of two rows of a
         * (2 sectors), the same 16 floats of b for both rows (64 bytes: 2) */
        EXPECT_EQ_I64((int64_t)naive.global_load_sectors, warps * n * (2 + 2));
        EXPECT(tiled.shared_load_requests > 0 &&
               tiled.shared_store_requests == (uint64_t)warps * 2 * (n / 16));
    }
cleanup:
    tensor_free(a);
    tensor_free(b);
    tensor_free(c);
}

static void test_a_padded_shared_tile_has_no_bank_conflicts_and_an_unpadded_one_has_31_per_load(void)
{
    const int n = 64;
    tensor *in = filled(n * n, 1.0f), *out = filled(n * n, 0.0f);
    REQUIRE(in && out);
    tools_args a = { .a = tensor_data(in), .c = tensor_data(out), .n = n };
    kernel_profile plain, padded;
    if (profile_of(TRANSPOSE, &a, "transpose_kernel", &plain) &&
        profile_of(TRANSPOSE_PADDED, &a, "transpose_padded_kernel", &padded)) {
        const int64_t requests = (n / 32) * (n / 32) * 8 * 4; /* blocks, warps, loads per warp */
        EXPECT_EQ_I64((int64_t)plain.shared_load_requests, requests);
        EXPECT_EQ_I64((int64_t)plain.shared_load_bank_conflicts, requests * 31);
        EXPECT_EQ_I64((int64_t)plain.shared_load_wavefronts, requests * 32);
        EXPECT_EQ_I64((int64_t)plain.shared_store_bank_conflicts, 0);
        EXPECT_EQ_I64((int64_t)padded.shared_load_requests, requests);
        EXPECT_EQ_I64((int64_t)padded.shared_load_bank_conflicts, 0);
        EXPECT_EQ_I64((int64_t)padded.shared_store_bank_conflicts, 0);
        EXPECT_EQ_I64((int64_t)padded.global_load_sectors, requests * 4);
    }
cleanup:
    tensor_free(in);
    tensor_free(out);
}

static void test_a_branch_on_odd_lanes_diverges_once_per_warp_and_a_histogram_counts_its_atomics(void)
{
    const int n = 256;
    tensor *values = NULL, *odd = NULL;
    unsigned *bins_data = NULL;
    tensor *bins = NULL;
    int host[256];
    for (int i = 0; i < n; ++i) host[i] = i * 7;
    REQUIRE_OK(tensor_from_host_i32(&values, dev, shape1(n), host));
    REQUIRE_OK(tensor_from_host_i32(&odd, dev, shape1(n), host));
    REQUIRE_OK(tensor_from_host_i32(&bins, dev, shape1(16), (int[16]){ 0 }));
    bins_data = tensor_data(bins);
    tools_args a = {
        .ia = tensor_data(values), .ib = tensor_data(odd), .bins = bins_data, .n = n, .grid = 4, .block = 64
    };
    kernel_profile p;
    if (profile_of(ODD_EVEN, &a, "odd_even_kernel", &p)) EXPECT_EQ_I64((int64_t)p.divergent_branches, n / 32);
    if (profile_of(HISTOGRAM, &a, "histogram_kernel", &p)) {
        EXPECT_EQ_I64((int64_t)p.atomics, n);
        EXPECT_EQ_I64((int64_t)p.global_atomic_requests, n / 32);
        EXPECT_EQ_I64((int64_t)p.divergent_branches, 0);
    }
    if (profile_of(STRIDED_COPY,
                   &(tools_args){ .a = tensor_data(values),
                                  .c = tensor_data(odd),
                                  .n = 200,
                                  .stride = 1,
                                  .grid = 4,
                                  .block = 64 },
                   "strided_copy_kernel", &p))
        /* 200 threads of 256 in range: warp 6 splits at its bounds check (lanes 8..31 return) */
        EXPECT_EQ_I64((int64_t)p.divergent_branches, 1);
cleanup:
    tensor_free(values);
    tensor_free(odd);
    tensor_free(bins);
}

int main(int argc, char **argv)
{
    const int code = test_device_argument(argc, argv, "cpu|sim:0", &dev);
    if (code != 0) return code;
    if (!kernel_tools_built()) {
        fprintf(stderr, "test_kernel_tools: its kernels were not built for the kernel tools\n");
        return 1;
    }
    RUN_TEST(test_the_api_refuses_what_it_cannot_give);
    RUN_TEST(test_a_write_one_past_the_end_is_reported_and_stops_the_launch);
    RUN_TEST(test_a_read_before_the_start_is_reported_with_a_negative_index);
    RUN_TEST(test_an_index_past_a_shared_array_is_reported_and_the_launch_goes_on);
    RUN_TEST(test_a_tiled_product_without_its_second_barrier_is_a_race_on_shared_memory);
    RUN_TEST(test_a_read_of_shared_memory_no_thread_wrote_is_reported);
    RUN_TEST(test_a_write_over_what_other_threads_read_is_a_race);
    RUN_TEST(test_threads_adding_into_one_cell_without_an_atomic_race_and_with_one_do_not);
    RUN_TEST(test_barrier_divergence_stays_the_launch_error_and_is_a_report);
    RUN_TEST(test_sectors_per_request_grow_with_the_stride_of_a_copy);
    RUN_TEST(test_a_tiled_product_makes_16_times_fewer_global_loads_than_the_naive_one);
    RUN_TEST(test_a_padded_shared_tile_has_no_bank_conflicts_and_an_unpadded_one_has_31_per_load);
    RUN_TEST(test_a_branch_on_odd_lanes_diverges_once_per_warp_and_a_histogram_counts_its_atomics);
    return harness_finish();
}
