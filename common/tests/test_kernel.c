/* test_kernel.c: a kernel of one's own, written once in CUDA's C subset
 * (test_kernels.cuh), runs through device_launch in queue order on the device
 * given as argv[1], with every block and thread of its grid (1-D and 2-D).
 *
 *   test_kernel cpu | sim:0 | cuda:0      (exits 77 when the device is absent)
 *
 * The C compiler builds the kernels here, through labkit/cuda_emulation.h, for
 * the CPU and the simulated GPU; nvcc builds the same text for a real GPU
 * (test_kernel_cuda.cu, in a build with CUDA only). device_launch picks the
 * launcher for the device's kind. */
#include "harness.h"
#include "labkit/cuda_emulation.h"
#include "labkit/kernel.h"
#include "labkit/ops.h"
#include "labkit/counters.h"

#include "test_kernel_launch.h"
#include "test_kernels.cuh"

/* The real GPU's launchers exist only where nvcc compiled them. */
#ifdef LABKIT_TEST_BUILT_WITH_CUDA
#define ON_CUDA(launcher) launcher
#else
#define ON_CUDA(launcher) NULL
#endif

static device under_test;

static void add_index_on_sim(const void *raw, void *stream)
{
    const vector_args *a = raw;
    dim3 grid = { a->grid_x, 1, 1 }, block = { a->block_x, 1, 1 };
    LAUNCH(add_index_kernel, grid, block, stream, a->out, a->n);
}

static void cell_id_on_sim(const void *raw, void *stream)
{
    const matrix_args *a = raw;
    dim3 grid = { a->grid_x, a->grid_y, 1 }, block = { a->block_x, a->block_y, 1 };
    LAUNCH(cell_id_kernel, grid, block, stream, a->out, a->rows, a->cols);
}

static const kernel_launchers add_index = { "add_index_kernel", add_index_on_sim,
                                            ON_CUDA(add_index_on_cuda) };
static const kernel_launchers cell_id = { "cell_id_kernel", cell_id_on_sim, ON_CUDA(cell_id_on_cuda) };

/* One thread per element, in blocks of 64. */
static vector_args vector_of(tensor *t)
{
    const int64_t n = tensor_numel(t);
    vector_args a = { tensor_data(t), n, (unsigned)((n + 63) / 64), 64 };
    return a;
}

static void test_a_kernel_runs_in_queue_order_between_library_ops(void)
{
    enum { N = 301 };
    tensor *x = NULL;
    float got[N];
    double want[N];
    REQUIRE_OK(tensor_full(&x, under_test, shape1(N), 5.0f));
    REQUIRE_OK(counters_reset(under_test));
    vector_args args = vector_of(x);
    REQUIRE_OK(device_launch(under_test, &add_index, &args, sizeof args));
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
    /* blocks of 8 x 4 threads, rounded up: 5 x 4 blocks, some threads outside */
    matrix_args args = { tensor_data(m), ROWS, COLS, (COLS + 7) / 8, (ROWS + 3) / 4, 8, 4 };
    REQUIRE_OK(device_launch(under_test, &cell_id, &args, sizeof args));
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
    EXPECT_REFUSED(device_enqueue(under_test, add_index_on_sim, NULL, 8), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(device_enqueue(under_test, add_index_on_sim, big, sizeof big), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "at most");
    device absent = { DEVICE_SIM, 7 };
    EXPECT_REFUSED(device_enqueue(absent, add_index_on_sim, big, 8), STATUS_WRONG_DEVICE);
    EXPECT(tensor_data(NULL) == NULL);
    /* device_launch checks the same, and its own table */
    EXPECT_REFUSED(device_launch(under_test, NULL, big, 8), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(device_launch(under_test, &add_index, big, sizeof big), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "at most");
    EXPECT_REFUSED(device_launch(absent, &add_index, big, 8), STATUS_WRONG_DEVICE);
    EXPECT_CONTAINS(last_error(), "sim:7");
}

/* kernel.h: a launcher missing for the device's kind is an error that says why,
 * never a crash, and nothing is launched: on a real GPU a kernel whose .cu was
 * not compiled (on_cuda NULL), elsewhere one without its emulated side. */
static void test_a_missing_launcher_for_the_devices_kind_is_an_error_not_a_crash(void)
{
    const kernel_launchers sim_only = { "sim_only_kernel", add_index_on_sim, NULL };
    const kernel_launchers cuda_only = { "cuda_only_kernel", NULL, add_index_on_sim };
    tensor *x = NULL;
    float got[3];
    REQUIRE_OK(tensor_full(&x, under_test, shape1(3), 1.0f));
    vector_args args = vector_of(x);
    REQUIRE_OK(device_synchronize(under_test));
    REQUIRE_OK(counters_reset(under_test));
    if (under_test.kind == DEVICE_CUDA) {
        EXPECT_REFUSED(device_launch(under_test, &sim_only, &args, sizeof args), STATUS_BACKEND_FAILED);
        EXPECT_CONTAINS(last_error(), "sim_only_kernel");
    } else {
        EXPECT_REFUSED(device_launch(under_test, &cuda_only, &args, sizeof args), STATUS_BAD_ARGUMENT);
        EXPECT_CONTAINS(last_error(), "cuda_only_kernel");
    }
    EXPECT_CONTAINS(last_error(), device_name(under_test));
    device_counters c;
    REQUIRE_OK(counters_read(under_test, &c));
    EXPECT_EQ_I64((int64_t)c.launches, 0);
    REQUIRE_OK(tensor_to_host(x, got, 3));
    EXPECT(got[0] == 1.0f && got[1] == 1.0f && got[2] == 1.0f);
    /* where there is no real GPU, asking for one is refused naming those present */
    if (device_count(DEVICE_CUDA) == 0) {
        const device cuda0 = { DEVICE_CUDA, 0 };
        EXPECT_REFUSED(device_launch(cuda0, &add_index, &args, sizeof args), STATUS_WRONG_DEVICE);
        EXPECT_CONTAINS(last_error(), "cpu");
    }
cleanup:
    tensor_free(x);
}

/* A launch a GPU refuses (blocks of 2048 threads: the most is 1024) is an
 * error with the reason, nothing runs, and the device works on: on a real GPU
 * the launch returns CUDA's reason; the emulation refuses the same shapes, on
 * the CPU at the launch, on a simulated GPU at the next wait. */
static void test_a_launch_the_gpu_refuses_is_an_error_and_the_device_works_on(void)
{
    enum { N = 301 };
    tensor *x = NULL;
    float got[N];
    double want[N];
    REQUIRE_OK(tensor_full(&x, under_test, shape1(N), 5.0f));
    vector_args args = vector_of(x);
    vector_args too_wide = args;
    too_wide.grid_x = 1;
    too_wide.block_x = 2048;
    clear_error();
    status s = device_launch(under_test, &add_index, &too_wide, sizeof too_wide);
    if (s == STATUS_OK && under_test.kind == DEVICE_SIM) s = device_synchronize(under_test);
    if (under_test.kind == DEVICE_CUDA) {
        EXPECT_MSG(s == STATUS_BACKEND_FAILED, "got %s: %s", status_name(s), last_error());
        EXPECT_CONTAINS(last_error(), "cudaError");
    } else {
        EXPECT_MSG(s == STATUS_KERNEL_FAILED, "got %s: %s", status_name(s), last_error());
        EXPECT_CONTAINS(last_error(), "add_index_kernel");
        EXPECT_CONTAINS(last_error(), "a block of 2048 x 1 x 1 threads");
    }
    REQUIRE_OK(device_launch(under_test, &add_index, &args, sizeof args));
    REQUIRE_OK(tensor_to_host(x, got, N));
    for (int i = 0; i < N; ++i) want[i] = 5.0 + i;
    EXPECT_CLOSE("5 + i, once", got, want, N, 0.0, 0.0);
cleanup:
    tensor_free(x);
}

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "DEVICE   (cpu, sim:0, cuda:0, ...)", &under_test);
    if (rc != 0) return rc;
    printf("running a kernel of one's own on %s\n", device_name(under_test));
    RUN_TEST(test_a_kernel_runs_in_queue_order_between_library_ops);
    RUN_TEST(test_a_two_dimensional_grid_reaches_every_cell);
    RUN_TEST(test_device_enqueue_refuses_bad_arguments);
    RUN_TEST(test_a_missing_launcher_for_the_devices_kind_is_an_error_not_a_crash);
    RUN_TEST(test_a_launch_the_gpu_refuses_is_an_error_and_the_device_works_on);
    return harness_finish();
}
