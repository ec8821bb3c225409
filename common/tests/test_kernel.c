/* test_kernel.c: a kernel of one's own, written once in CUDA's C subset, runs
 * through device_enqueue in queue order on the device given as argv[1], with
 * every block and thread of its grid (1-D and 2-D). */
#include "harness.h"
#include "labkit/cuda_emulation.h"
#include "labkit/kernel.h"
#include "labkit/ops.h"
#include "labkit/counters.h"

static device under_test;

/* out[i] += i: reads what the queue wrote before it, writes what comes after. */
__global__ void add_index_kernel(float *out, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += (float)i;
}

/* out[r, c] = 1000 r + c, one thread per cell of a 2-D grid of 2-D blocks. */
__global__ void cell_id_kernel(float *out, int64_t rows, int64_t cols)
{
    const int64_t r = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) out[r * cols + c] = (float)(1000 * r + c);
}

typedef struct vector_args {
    float *out;
    int64_t n;
} vector_args;

typedef struct matrix_args {
    float *out;
    int64_t rows, cols;
} matrix_args;

static void launch_add_index(const void *raw, void *stream)
{
    const vector_args *a = raw;
    dim3 grid = { (unsigned)((a->n + 63) / 64), 1, 1 }, block = { 64, 1, 1 };
    LAUNCH(add_index_kernel, grid, block, stream, a->out, a->n);
}

static void launch_cell_id(const void *raw, void *stream)
{
    const matrix_args *a = raw;
    dim3 block = { 8, 4, 1 };
    dim3 grid = { (unsigned)((a->cols + 7) / 8), (unsigned)((a->rows + 3) / 4), 1 };
    LAUNCH(cell_id_kernel, grid, block, stream, a->out, a->rows, a->cols);
}

static void test_a_kernel_runs_in_queue_order_between_library_ops(void)
{
    enum { N = 301 };
    tensor *x = NULL;
    float got[N];
    double want[N];
    REQUIRE_OK(tensor_full(&x, under_test, shape1(N), 5.0f));
    REQUIRE_OK(counters_reset(under_test));
    vector_args args = { tensor_data(x), N };
    REQUIRE_OK(device_enqueue(under_test, launch_add_index, &args, sizeof args));
    REQUIRE_OK(op_scale(x, 2.0f, x));
    REQUIRE_OK(tensor_to_host(x, got, N));
    for (int i = 0; i < N; ++i) want[i] = 2.0 * (5.0 + i);
    EXPECT_CLOSE("2 * (5 + i)", got, want, N, 0.0, 0.0);
    device_counters c;
    REQUIRE_OK(counters_read(under_test, &c));
    EXPECT_EQ_I64((int64_t)c.launches, 2);
cleanup:
    tensor_free(x);
}

static void test_a_two_dimensional_grid_reaches_every_cell(void)
{
    enum { ROWS = 13, COLS = 37 };
    tensor *m = NULL;
    float got[ROWS * COLS];
    double want[ROWS * COLS];
    REQUIRE_OK(tensor_full(&m, under_test, shape2(ROWS, COLS), NAN));
    matrix_args args = { tensor_data(m), ROWS, COLS };
    REQUIRE_OK(device_enqueue(under_test, launch_cell_id, &args, sizeof args));
    REQUIRE_OK(tensor_to_host(m, got, ROWS * COLS));
    for (int r = 0; r < ROWS; ++r)
        for (int c = 0; c < COLS; ++c) want[r * COLS + c] = 1000.0 * r + c;
    EXPECT_CLOSE("1000 r + c", got, want, ROWS * COLS, 0.0, 0.0);
cleanup:
    tensor_free(m);
}

static void test_device_enqueue_refuses_bad_arguments(void)
{
    unsigned char big[KERNEL_MAX_ARGS + 1] = { 0 };
    EXPECT_REFUSED(device_enqueue(under_test, NULL, big, 8), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(device_enqueue(under_test, launch_add_index, NULL, 8), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(device_enqueue(under_test, launch_add_index, big, sizeof big), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "at most");
    device absent = { DEVICE_SIM, 7 };
    EXPECT_REFUSED(device_enqueue(absent, launch_add_index, big, 8), STATUS_WRONG_DEVICE);
    EXPECT(tensor_data(NULL) == NULL);
}

int main(int argc, char **argv)
{
    if (argc != 2 || device_parse(argv[1], &under_test) != STATUS_OK) {
        fprintf(stderr, "usage: test_kernel DEVICE (cpu or sim:0 here): %s\n", last_error());
        return argc == 2 ? HARNESS_SKIPPED : 2;
    }
    printf("running a kernel of one's own on %s\n", device_name(under_test));
    RUN_TEST(test_a_kernel_runs_in_queue_order_between_library_ops);
    RUN_TEST(test_a_two_dimensional_grid_reaches_every_cell);
    RUN_TEST(test_device_enqueue_refuses_bad_arguments);
    return harness_finish();
}
