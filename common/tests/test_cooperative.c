/* test_cooperative.c: kernels whose threads cooperate (shared memory, block and
 * warp barriers, shuffles, atomics; test_cooperative_kernels.cuh) give what
 * float64 and CUDA's definitions say, on the device given as argv[1]; on the
 * CPU and the simulated GPU also in a fixed order of execution, every run, and
 * with every barrier seen by the runtime's hooks.
 *
 *   test_cooperative cpu | sim:0 | cuda:0      (exits 77 when the device is absent)
 *
 * Each claim has a known-wrong kernel beside it that the same comparison must
 * catch: a tiled product without its second barrier, a reduction without its
 * barriers, a warp sum that shuffles up instead of down. */
#include <limits.h>

#include "harness.h"
#include "labkit/kernel.h"
#include "labkit/tensor.h"
#include "sim/coop_hooks.h"
#include "test_cooperative_kernels.h"

static device under_test;

/* The order of execution and the hooks are the emulation's own: a real GPU has
 * neither, and it runs the known-wrong kernels racily, not wrongly each time. */
static bool emulated(void) { return under_test.kind != DEVICE_CUDA; }

/* How many of n results differ from float64 beyond atol + rtol*|want|, silently
 * (a known-wrong kernel is expected to differ). */
static int64_t mismatches(const float *got, const double *want, int64_t n, double atol, double rtol)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += !harness_close(got[i], want[i], atol, rtol);
    return count;
}

/* A buffer of 32-bit words on the device under test, filled from the host. */
static status words_on_device(tensor **out, const void *words, int64_t n)
{
    return tensor_from_host_raw(out, under_test, DTYPE_I32, shape1(n), words, (size_t)n * 4);
}

/* ============================================================================
 * a tiled product against float64
 * ========================================================================== */

/* c = a b through `k` for (m, n, kk) into got; the float64 product into want. */
static bool product(const kernel_launchers *k, int m, int n, int kk, float *got, double *want)
{
    bool ok = false;
    tensor *a = NULL, *b = NULL, *c = NULL;
    float *ha = malloc(sizeof(float) * (size_t)(m * kk)), *hb = malloc(sizeof(float) * (size_t)(kk * n));
    REQUIRE(ha && hb);
    REQUIRE_OK(tensor_uniform(&a, under_test, shape2(m, kk), -1.0f, 1.0f, 11));
    REQUIRE_OK(tensor_uniform(&b, under_test, shape2(kk, n), -1.0f, 1.0f, 12));
    REQUIRE_OK(tensor_full(&c, under_test, shape2(m, n), NAN));
    const matmul_args args = { tensor_data_const(a), tensor_data_const(b), tensor_data(c), m, n, kk };
    REQUIRE_OK(device_launch(under_test, k, &args, sizeof args));
    REQUIRE_OK(tensor_to_host(c, got, m * n));
    REQUIRE_OK(tensor_to_host(a, ha, m * kk));
    REQUIRE_OK(tensor_to_host(b, hb, kk * n));
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = 0.0;
            for (int p = 0; p < kk; ++p) sum += (double)ha[i * kk + p] * hb[p * n + j];
            want[i * n + j] = sum;
        }
    ok = true;
cleanup:
    free(ha), free(hb);
    tensor_free(a), tensor_free(b), tensor_free(c);
    return ok;
}

static void test_a_tiled_product_in_shared_memory_matches_float64_at_sizes_not_multiples_of_16(void)
{
    static const int sizes[][3] = {
        { 17, 33, 40 }, { 50, 7, 65 }, { 1, 1, 1 }, { 33, 31, 16 }, { 64, 48, 19 }
    };
    enum { MOST = 64 * 64 };
    static float got[MOST];
    static double want[MOST];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        const int m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
        char what[64];
        snprintf(what, sizeof what, "tiled %d x %d x %d", m, n, k);
        if (!product(&tiled_matmul, m, n, k, got, want)) return;
        EXPECT_CLOSE(what, got, want, m * n, 1e-5, 1e-5);
    }
}

static void test_the_known_wrong_tiled_product_without_its_second_barrier_is_caught(void)
{
    if (!emulated()) {
        harness_skip("on a real GPU the missing barrier is a race, not a wrong result every run");
        return;
    }
    enum { M = 33, N = 31, K = 40 };
    static float got[M * N];
    static double want[M * N];
    if (!product(&tiled_matmul_one_barrier, M, N, K, got, want)) return;
    EXPECT_MSG(mismatches(got, want, M * N, 1e-5, 1e-5) > M * N / 2,
               "the product without its second barrier matched float64 in %lld of %d cells",
               (long long)(M * N - mismatches(got, want, M * N, 1e-5, 1e-5)), M * N);
}

/* ============================================================================
 * reductions
 * ========================================================================== */

/* out = k(x) for n uniform values of x, in `grid` blocks of `block`; x on the
 * host into hx. */
static bool reduce(const kernel_launchers *k, int n, unsigned grid, unsigned block, int outputs, float *hx,
                   float *got)
{
    bool ok = false;
    tensor *x = NULL, *out = NULL;
    REQUIRE_OK(tensor_uniform(&x, under_test, shape1(n), -1.0f, 1.0f, 21));
    REQUIRE_OK(tensor_full(&out, under_test, shape1(outputs), NAN));
    const vector_pair_args args = { tensor_data_const(x), tensor_data(out), n, grid, block, 0 };
    REQUIRE_OK(device_launch(under_test, k, &args, sizeof args));
    REQUIRE_OK(tensor_to_host(out, got, outputs));
    REQUIRE_OK(tensor_to_host(x, hx, n));
    ok = true;
cleanup:
    tensor_free(x), tensor_free(out);
    return ok;
}

/* The float64 sums of consecutive runs of `width` elements. */
static void sums_of_runs(const float *x, int n, int width, int runs, double *want)
{
    for (int r = 0; r < runs; ++r) {
        want[r] = 0.0;
        for (int i = r * width; i < (r + 1) * width && i < n; ++i) want[r] += x[i];
    }
}

static void test_a_block_reduction_in_shared_memory_matches_float64(void)
{
    enum { N = 1000, BLOCKS = (N + TEST_REDUCE_BLOCK - 1) / TEST_REDUCE_BLOCK };
    float x[N], got[BLOCKS];
    double want[BLOCKS];
    if (!reduce(&block_sum, N, BLOCKS, TEST_REDUCE_BLOCK, BLOCKS, x, got)) return;
    sums_of_runs(x, N, TEST_REDUCE_BLOCK, BLOCKS, want);
    EXPECT_CLOSE("block sums", got, want, BLOCKS, 1e-5, 1e-5);
    if (!emulated()) return;
    /* known-wrong: the same tree without its barriers */
    if (!reduce(&block_sum_unsynced, N, BLOCKS, TEST_REDUCE_BLOCK, BLOCKS, x, got)) return;
    EXPECT_MSG(mismatches(got, want, BLOCKS, 1e-5, 1e-5) == BLOCKS,
               "the reduction without barriers matched float64 in some block");
}

static void test_a_warp_reduction_with_shfl_down_sync_matches_float64(void)
{
    enum { N = 200, WARPS = (N + 31) / 32 };
    float x[N], got[WARPS];
    double want[WARPS];
    if (!reduce(&warp_sum, N, 1, WARPS * 32, WARPS, x, got)) return;
    sums_of_runs(x, N, 32, WARPS, want);
    EXPECT_CLOSE("warp sums", got, want, WARPS, 1e-5, 1e-5);
    if (!emulated()) return;
    /* known-wrong: shuffling up leaves lane 0 with its own value */
    if (!reduce(&warp_sum_up, N, 1, WARPS * 32, WARPS, x, got)) return;
    EXPECT_MSG(mismatches(got, want, WARPS, 1e-5, 1e-5) == WARPS, "the warp sum shuffled up matched float64");
}

/* CUDA's lanes, from the Programming Guide's definitions (widths of 8 and 16). */
static int expected_shuffle(int lane, int result)
{
    const int v = 100 + lane, base8 = lane & ~7;
    switch (result) {
    case 0: return 103;
    case 1: return 100 + (lane ^ 1);
    case 2: return lane - base8 >= 1 ? v - 1 : v;
    case 3: return lane - base8 + 2 < 8 ? v + 2 : v;
    case 4: return 7 * (lane ^ 5);
    case 5: return (lane + 1) % 32;
    default: return v + 1;
    }
}

static void test_every_shuffle_mode_type_and_width_gives_cudas_lanes(void)
{
    enum { WORDS = 32 * TEST_SHUFFLE_RESULTS };
    int got[WORDS], zeros[WORDS] = { 0 };
    tensor *out = NULL;
    REQUIRE_OK(words_on_device(&out, zeros, WORDS));
    const out_args args = { tensor_data(out), 0, 1, 32 };
    REQUIRE_OK(device_launch(under_test, &shuffle, &args, sizeof args));
    REQUIRE_OK(tensor_to_host_raw(out, got, sizeof got));
    for (int lane = 0; lane < 32; ++lane)
        for (int r = 0; r < TEST_SHUFFLE_RESULTS; ++r) {
            /* lanes 15 and 31 read past their half warp's mask: undefined on a GPU */
            if (r == 6 && (lane == 15 || lane == 31)) continue;
            EXPECT_MSG(got[lane * TEST_SHUFFLE_RESULTS + r] == expected_shuffle(lane, r),
                       "lane %d, result %d: got %d, want %d", lane, r, got[lane * TEST_SHUFFLE_RESULTS + r],
                       expected_shuffle(lane, r));
        }
cleanup:
    tensor_free(out);
}

/* ============================================================================
 * atomics
 * ========================================================================== */

/* A fixed pseudo-random sequence (a linear congruential generator). */
static void values_of(int *v, int n, int modulo, int offset)
{
    uint32_t state = 12345u;
    for (int i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;
        v[i] = (int)(state >> 8) % modulo + offset;
    }
}

static bool histogram_of(const int *values, int n, unsigned *got)
{
    bool ok = false;
    tensor *v = NULL, *bins = NULL;
    const unsigned zeros[TEST_HISTOGRAM_BINS] = { 0 };
    REQUIRE_OK(words_on_device(&v, values, n));
    REQUIRE_OK(words_on_device(&bins, zeros, TEST_HISTOGRAM_BINS));
    const histogram_args args = { tensor_data_const(v), n, tensor_data(bins), (unsigned)(n + 127) / 128,
                                  128 };
    REQUIRE_OK(device_launch(under_test, &histogram, &args, sizeof args));
    REQUIRE_OK(tensor_to_host_raw(bins, got, sizeof zeros));
    ok = true;
cleanup:
    tensor_free(v), tensor_free(bins);
    return ok;
}

static void test_a_histogram_with_atomic_add_counts_every_value(void)
{
    enum { N = 1000 };
    int values[N];
    unsigned got[TEST_HISTOGRAM_BINS], want[TEST_HISTOGRAM_BINS] = { 0 };
    values_of(values, N, 1000, 0);
    for (int i = 0; i < N; ++i) want[values[i] % TEST_HISTOGRAM_BINS]++;
    if (!histogram_of(values, N, got)) return;
    EXPECT_BITWISE_EQUAL("bins", got, want, TEST_HISTOGRAM_BINS);
}

static void test_every_atomic_function_does_what_cuda_says(void)
{
    enum { N = 100 };
    int v[N], ints[6] = { 0, 0, INT_MIN, INT_MAX, 0, -1 };
    unsigned uints[6] = { 0, 1000, 0, UINT_MAX, 0, 0 };
    float floats[2] = { 0.0f, 0.0f };
    unsigned long long wide[2] = { 0, 0 };
    tensor *tv = NULL, *ti = NULL, *tu = NULL, *tf = NULL, *tw = NULL;
    values_of(v, N, 100, -50);
    long long sum = 0;
    int most = INT_MIN, least = INT_MAX;
    for (int i = 0; i < N; ++i)
        sum += v[i], most = v[i] > most ? v[i] : most, least = v[i] < least ? v[i] : least;
    REQUIRE_OK(words_on_device(&tv, v, N));
    REQUIRE_OK(words_on_device(&ti, ints, 6));
    REQUIRE_OK(words_on_device(&tu, uints, 6));
    REQUIRE_OK(words_on_device(&tf, floats, 2));
    REQUIRE_OK(words_on_device(&tw, wide, 4));
    const atomics_args args = {
        tensor_data_const(tv), N, tensor_data(ti), tensor_data(tu), tensor_data(tf), tensor_data(tw), 2, 64
    };
    REQUIRE_OK(device_launch(under_test, &atomics, &args, sizeof args));
    REQUIRE_OK(tensor_to_host_raw(ti, ints, sizeof ints));
    REQUIRE_OK(tensor_to_host_raw(tu, uints, sizeof uints));
    REQUIRE_OK(tensor_to_host_raw(tf, floats, sizeof floats));
    REQUIRE_OK(tensor_to_host_raw(tw, wide, sizeof wide));
    EXPECT_EQ_I64(ints[0], sum);
    EXPECT_EQ_I64(ints[1], -sum);
    EXPECT_EQ_I64(ints[2], most);
    EXPECT_EQ_I64(ints[3], least);
    /* the first thread to reach atomicCAS wins, the last atomicExch stays: on a
     * GPU any thread; in the emulation's fixed order, thread 0 and thread N-1 */
    EXPECT(ints[4] >= 1 && ints[4] <= N);
    EXPECT(ints[5] >= 0 && ints[5] < N);
    if (emulated()) {
        EXPECT_EQ_I64(ints[4], 1);
        EXPECT_EQ_I64(ints[5], N - 1);
    }
    EXPECT_EQ_I64(uints[0], 2 * N);
    EXPECT_EQ_I64(uints[1], 1000 - N);
    EXPECT_EQ_I64(uints[2], most + 100);
    EXPECT_EQ_I64(uints[3], least + 100);
    EXPECT_EQ_I64(uints[4], 7);
    EXPECT_EQ_I64(uints[5], 9);
    EXPECT(floats[0] == 0.5f * N);
    EXPECT(floats[1] == 1.5f);
    EXPECT_EQ_I64((long long)wide[0], 3 * N);
    EXPECT_EQ_I64((long long)wide[1], N - 1);
cleanup:
    tensor_free(tv), tensor_free(ti), tensor_free(tu), tensor_free(tf), tensor_free(tw);
}

/* ============================================================================
 * dynamic shared memory
 * ========================================================================== */

static void test_dynamic_shared_memory_holds_a_block_of_the_size_the_launch_gives(void)
{
    enum { N = 300, BLOCK = 128, GRID = (N + BLOCK - 1) / BLOCK };
    float hx[N], got[N];
    double want[N];
    tensor *x = NULL, *out = NULL;
    REQUIRE_OK(tensor_uniform(&x, under_test, shape1(N), -1.0f, 1.0f, 31));
    REQUIRE_OK(tensor_full(&out, under_test, shape1(N), NAN));
    const vector_pair_args args = { tensor_data_const(x), tensor_data(out), N, GRID, BLOCK,
                                    BLOCK * sizeof(float) };
    REQUIRE_OK(device_launch(under_test, &reverse_block, &args, sizeof args));
    REQUIRE_OK(tensor_to_host(out, got, N));
    REQUIRE_OK(tensor_to_host(x, hx, N));
    for (int i = 0; i < N; ++i) {
        const int mirrored = i / BLOCK * BLOCK + BLOCK - 1 - i % BLOCK;
        want[i] = mirrored < N ? hx[mirrored] : 0.0;
    }
    EXPECT_CLOSE("mirrored", got, want, N, 0.0, 0.0);
cleanup:
    tensor_free(x), tensor_free(out);
}

/* ============================================================================
 * the order of execution
 * ========================================================================== */

enum {
    TRACE_GRID = 2,
    TRACE_BLOCK = 40,
    TRACE_THREADS = TRACE_GRID * TRACE_BLOCK,
    TRACE_LENGTH = 4 * TRACE_THREADS
};

static bool trace_once(int *order)
{
    bool ok = false;
    tensor *counter = NULL, *out = NULL;
    const int zero = 0;
    REQUIRE_OK(words_on_device(&counter, &zero, 1));
    REQUIRE_OK(tensor_full(&out, under_test, shape1(TRACE_LENGTH), NAN));
    const trace_args args = { tensor_data(counter), tensor_data(out), TRACE_GRID, TRACE_BLOCK };
    REQUIRE_OK(device_launch(under_test, &trace, &args, sizeof args));
    REQUIRE_OK(tensor_to_host_raw(out, order, TRACE_LENGTH * sizeof(int)));
    ok = true;
cleanup:
    tensor_free(counter), tensor_free(out);
    return ok;
}

/* The first place where two traces differ, or -1. */
static int first_difference(const int *a, const int *b, int n)
{
    for (int i = 0; i < n; ++i)
        if (a[i] != b[i]) return i;
    return -1;
}

/* The order cuda_emulation.h promises for trace_kernel: blocks one after the
 * other; in each, every phase by all its threads in index order (a barrier
 * releases lowest index first; warp 1's 8 threads finish phase 1 after warp
 * 0, which waits at its __syncwarp() meanwhile). */
static void promised_order(int *order)
{
    int at = 0;
    for (int b = 0; b < TRACE_GRID; ++b)
        for (int phase = 0; phase < 4; ++phase)
            for (int t = 0; t < TRACE_BLOCK; ++t) order[at++] = (b * TRACE_BLOCK + t) * 4 + phase;
}

static void test_the_result_and_the_order_of_execution_are_the_same_over_five_runs(void)
{
    if (!emulated()) {
        harness_skip("a real GPU promises no order between its threads");
        return;
    }
    enum { RUNS = 5, M = 33, N = 31, K = 40, VALUES = 500 };
    static int orders[RUNS][TRACE_LENGTH], promised[TRACE_LENGTH], values[VALUES];
    static float products[RUNS][M * N];
    static double want[M * N];
    static unsigned bins[RUNS][TEST_HISTOGRAM_BINS];
    values_of(values, VALUES, 77, 0);
    for (int run = 0; run < RUNS; ++run) {
        if (!trace_once(orders[run]) || !product(&tiled_matmul, M, N, K, products[run], want) ||
            !histogram_of(values, VALUES, bins[run]))
            return;
    }
    promised_order(promised);
    EXPECT_MSG(first_difference(orders[0], promised, TRACE_LENGTH) < 0,
               "the order differs from the promised one first at place %d",
               first_difference(orders[0], promised, TRACE_LENGTH));
    for (int run = 1; run < RUNS; ++run) {
        EXPECT_MSG(first_difference(orders[run], orders[0], TRACE_LENGTH) < 0,
                   "run %d's order differs from run 0's", run);
        EXPECT_BITWISE_EQUAL("product", products[run], products[0], M * N);
        EXPECT_BITWISE_EQUAL("bins", bins[run], bins[0], TEST_HISTOGRAM_BINS);
    }
    /* known-wrong: a trace with two threads swapped is told apart */
    int swapped[TRACE_LENGTH];
    memcpy(swapped, orders[0], sizeof swapped);
    swapped[41] = orders[0][42], swapped[42] = orders[0][41];
    EXPECT_EQ_I64(first_difference(swapped, orders[0], TRACE_LENGTH), 41);
}

/* ============================================================================
 * the hooks a kernel sanitizer will use
 * ========================================================================== */

typedef struct barrier_counts {
    const char *kernel; /* the launches counted: this kernel's (the library's fills launch too) */
    long launches_begun, launches_ended, cooperative_blocks, arrivals, releases;
} barrier_counts;

static void count_begin(void *user, const labkit_launch *l)
{
    barrier_counts *c = user;
    c->launches_begun += strcmp(l->kernel_name, c->kernel) == 0;
}

static void count_end(void *user, const labkit_launch *l)
{
    barrier_counts *c = user;
    c->launches_ended += strcmp(l->kernel_name, c->kernel) == 0;
}

static void count_block(void *user, dim3 b, unsigned first)
{
    (void)b, (void)first, ((barrier_counts *)user)->cooperative_blocks++;
}
static void count_arrival(void *user, const coop_barrier_event *e)
{
    (void)e, ((barrier_counts *)user)->arrivals++;
}
static void count_release(void *user, const coop_barrier_event *e)
{
    (void)e, ((barrier_counts *)user)->releases++;
}

static barrier_counts counted_product(const kernel_launchers *k, int size)
{
    static float got[64 * 64];
    static double want[64 * 64];
    barrier_counts counts = { k->name, 0, 0, 0, 0, 0 };
    const coop_hooks hooks = { &counts,       count_begin,   count_end, count_block,
                               count_arrival, count_release, NULL };
    coop_set_hooks(&hooks);
    product(k, size, size, size, got, want);
    coop_set_hooks(NULL);
    return counts;
}

static void test_every_barrier_arrival_and_release_reaches_the_hooks(void)
{
    if (!emulated()) {
        harness_skip("the hooks are the simulated GPU's");
        return;
    }
    enum { SIZE = 40, TILES = (SIZE + 15) / 16, BLOCKS = TILES * TILES, THREADS = 16 * 16 };
    /* the tiled product: 2 barriers per tile of k, for every thread of every block */
    const barrier_counts two = counted_product(&tiled_matmul, SIZE);
    EXPECT_EQ_I64(two.launches_begun, 1);
    EXPECT_EQ_I64(two.launches_ended, 1);
    EXPECT_EQ_I64(two.cooperative_blocks, BLOCKS);
    EXPECT_EQ_I64(two.arrivals, (long)BLOCKS * THREADS * TILES * 2);
    EXPECT_EQ_I64(two.releases, BLOCKS * TILES * 2);
    /* the known-wrong one counts one barrier per tile: the counts tell them apart */
    const barrier_counts one = counted_product(&tiled_matmul_one_barrier, SIZE);
    EXPECT_EQ_I64(one.launches_begun, 1);
    EXPECT_EQ_I64(one.arrivals, (long)BLOCKS * THREADS * TILES);
    EXPECT_EQ_I64(one.releases, BLOCKS * TILES);
}

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "DEVICE   (cpu, sim:0, cuda:0, ...)", &under_test);
    if (rc != 0) return rc;
    printf("kernels whose threads cooperate, on %s\n", device_name(under_test));
    RUN_TEST(test_a_tiled_product_in_shared_memory_matches_float64_at_sizes_not_multiples_of_16);
    RUN_TEST(test_the_known_wrong_tiled_product_without_its_second_barrier_is_caught);
    RUN_TEST(test_a_block_reduction_in_shared_memory_matches_float64);
    RUN_TEST(test_a_warp_reduction_with_shfl_down_sync_matches_float64);
    RUN_TEST(test_every_shuffle_mode_type_and_width_gives_cudas_lanes);
    RUN_TEST(test_a_histogram_with_atomic_add_counts_every_value);
    RUN_TEST(test_every_atomic_function_does_what_cuda_says);
    RUN_TEST(test_dynamic_shared_memory_holds_a_block_of_the_size_the_launch_gives);
    RUN_TEST(test_the_result_and_the_order_of_execution_are_the_same_over_five_runs);
    RUN_TEST(test_every_barrier_arrival_and_release_reaches_the_hooks);
    return harness_finish();
}
