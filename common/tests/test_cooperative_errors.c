/* test_cooperative_errors.c: the mistakes a student makes with cooperating
 * threads are each a clear error on the device given as argv[1], never a hang:
 * a barrier not every thread reaches, a shuffle's mask that leaves out its
 * caller or names a thread that never comes, a launch a GPU refuses, arguments
 * the simulated GPU cannot pass, a GPU thread's stack that overflows. Each
 * message names the kernel, its LAUNCH site, the barrier's file and line, the
 * block and the threads. The error is the device's: on a simulated GPU the
 * next wait returns it, once, and the device works on; on the CPU device the
 * launch returns it.
 *
 *   test_cooperative_errors cpu | sim:0 | cuda:0   (exits 77 when the device is absent)
 *
 * On a real GPU only the refused launches apply: the other mistakes hang it or
 * compute garbage, as CUDA leaves them undefined. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/kernel.h"
#include "labkit/fault.h"
#include "labkit/tensor.h"
#include "test_cooperative_kernels.h"

static device under_test;

static bool emulated(void)
{
    if (under_test.kind != DEVICE_CUDA) return true;
    harness_skip("a real GPU leaves this mistake undefined (it may hang); only the emulation names it");
    return false;
}

/* Launches k and waits for the device: the status of the step that failed. */
static status launch_and_wait(const kernel_launchers *k, const void *args, size_t size)
{
    clear_error();
    status s = device_launch(under_test, k, args, size);
    return s == STATUS_OK ? device_synchronize(under_test) : s;
}

/* `out_args` for a kernel of `block` threads in `grid` blocks, writing ints to
 * `out`. */
static out_args out_for(tensor *out, int value, unsigned grid, unsigned block)
{
    const out_args a = { tensor_data(out), value, grid, block };
    return a;
}

/* "common/tests/test_cooperative_kernels.cuh:LINE" */
static const char *kernel_site(int line)
{
    static char text[96];
    snprintf(text, sizeof text, "common/tests/test_cooperative_kernels.cuh:%d", line);
    return text;
}

#define EXPECT_KERNEL_FAILED(s) \
    EXPECT_MSG((s) == STATUS_KERNEL_FAILED, "got %s: %s", status_name(s), last_error())

/* ============================================================================
 * barrier divergence
 * ========================================================================== */

static void test_threads_that_return_before_a_barrier_the_others_wait_at_are_named(void)
{
    if (!emulated()) return;
    tensor *out = NULL;
    REQUIRE_OK(tensor_zeros(&out, under_test, shape1(128)));
    const out_args args = out_for(out, 16, 2, 64);
    EXPECT_KERNEL_FAILED(launch_and_wait(&early_return, &args, sizeof args));
    EXPECT_CONTAINS(last_error(), device_name(under_test));
    EXPECT_CONTAINS(last_error(), "early_return_kernel (launched at common/tests/test_cooperative_sim.c:");
    EXPECT_CONTAINS(last_error(), "barrier divergence in block (0, 0, 0)");
    EXPECT_CONTAINS(last_error(), "threads 0-15 at __syncthreads()");
    EXPECT_CONTAINS(last_error(), kernel_site(early_return_barrier_line));
    EXPECT_CONTAINS(last_error(), "threads 16-63 returned");
    EXPECT_CONTAINS(last_error(), "hint:");
cleanup:
    tensor_free(out);
}

static void test_barriers_on_two_lines_for_two_halves_of_a_block_are_named(void)
{
    if (!emulated()) return;
    tensor *out = NULL;
    REQUIRE_OK(tensor_zeros(&out, under_test, shape1(64)));
    const out_args args = out_for(out, 32, 1, 64);
    EXPECT_KERNEL_FAILED(launch_and_wait(&two_barriers, &args, sizeof args));
    EXPECT_CONTAINS(last_error(), "two_barriers_kernel");
    EXPECT_CONTAINS(last_error(), "barrier divergence");
    EXPECT_CONTAINS(last_error(), "threads 0-31 at __syncthreads()");
    EXPECT_CONTAINS(last_error(), kernel_site(first_half_barrier_line));
    EXPECT_CONTAINS(last_error(), "threads 32-63 at __syncthreads()");
    EXPECT_CONTAINS(last_error(), kernel_site(second_half_barrier_line));
cleanup:
    tensor_free(out);
}

/* ============================================================================
 * shuffles with a wrong mask
 * ========================================================================== */

static void test_a_shuffle_whose_mask_leaves_out_its_caller_is_named(void)
{
    if (!emulated()) return;
    tensor *out = NULL;
    REQUIRE_OK(tensor_zeros(&out, under_test, shape1(32)));
    const out_args args = out_for(out, 5, 1, 32);
    EXPECT_KERNEL_FAILED(launch_and_wait(&mask_leaves_out, &args, sizeof args));
    EXPECT_CONTAINS(last_error(), "mask_leaves_out_kernel");
    EXPECT_CONTAINS(last_error(), "__shfl_down_sync()");
    EXPECT_CONTAINS(last_error(), kernel_site(mask_leaves_out_line));
    EXPECT_CONTAINS(last_error(), "mask 0x0000ffff in block (0, 0, 0)");
    EXPECT_CONTAINS(last_error(), "called by thread 16 (lane 16 of warp 0)");
    EXPECT_CONTAINS(last_error(), "leaves out the calling thread");
cleanup:
    tensor_free(out);
}

static void test_a_shuffle_whose_mask_names_threads_that_never_come_is_named(void)
{
    if (!emulated()) return;
    tensor *out = NULL;
    REQUIRE_OK(tensor_zeros(&out, under_test, shape1(32)));
    const out_args args = out_for(out, 5, 1, 32);
    EXPECT_KERNEL_FAILED(launch_and_wait(&mask_never_comes, &args, sizeof args));
    EXPECT_CONTAINS(last_error(), "mask_never_comes_kernel");
    EXPECT_CONTAINS(last_error(),
                    "a warp barrier that some threads of its mask never reach, in block (0, 0, 0)");
    EXPECT_CONTAINS(last_error(), "threads 0-15 at __shfl_down_sync() with mask 0xffffffff");
    EXPECT_CONTAINS(last_error(), kernel_site(mask_never_comes_line));
    EXPECT_CONTAINS(last_error(), "threads 16-31 returned");
cleanup:
    tensor_free(out);
}

/* ============================================================================
 * launches a GPU refuses, arguments the emulation cannot pass
 * ========================================================================== */

/* A real GPU refuses at the launch (cudaError...); the emulation stops the
 * launch and names what is wrong. Nothing runs either way. */
static void expect_refused(const kernel_launchers *k, const void *args, size_t size, const char *why)
{
    const status s = launch_and_wait(k, args, size);
    if (under_test.kind == DEVICE_CUDA) {
        EXPECT_MSG(s == STATUS_BACKEND_FAILED, "got %s: %s", status_name(s), last_error());
        EXPECT_CONTAINS(last_error(), "cudaError");
        return;
    }
    EXPECT_KERNEL_FAILED(s);
    EXPECT_CONTAINS(last_error(), k->name);
    EXPECT_CONTAINS(last_error(), why);
    EXPECT_CONTAINS(last_error(), "nothing ran");
}

static void test_launches_a_gpu_refuses_are_refused(void)
{
    enum { N = 4096 };
    tensor *x = NULL, *out = NULL;
    static float got[N];
    REQUIRE_OK(tensor_full(&x, under_test, shape1(4096), 1.0f));
    REQUIRE_OK(tensor_full(&out, under_test, shape1(4096), 7.0f));
    vector_pair_args wide = { tensor_data_const(x), tensor_data(out), 4096, 2, 2048, 2048 * sizeof(float) };
    expect_refused(&reverse_block, &wide, sizeof wide, "a block of 2048 x 1 x 1 threads");
    vector_pair_args too_much_shared = { tensor_data_const(x), tensor_data(out), 4096, 16, 256, 64 << 10 };
    expect_refused(&reverse_block, &too_much_shared, sizeof too_much_shared, "48 KiB");
    /* 70000 tiles of c along y: more blocks than a grid has along y */
    const matmul_args tall = {
        tensor_data_const(x), tensor_data_const(x), tensor_data(out), 70000 * 16, 1, 1
    };
    expect_refused(&tiled_matmul, &tall, sizeof tall, "65535");
    REQUIRE_OK(tensor_to_host(out, got, N));
    for (int i = 0; i < N; ++i) EXPECT_MSG(got[i] == 7.0f, "out[%d] is %g: something ran", i, got[i]);
cleanup:
    tensor_free(x), tensor_free(out);
}

static void test_arguments_a_kernel_with_barriers_cannot_be_called_with_are_named(void)
{
    if (!emulated()) return;
    tensor *out = NULL;
    REQUIRE_OK(tensor_zeros(&out, under_test, shape1(32)));
    const out_args args = out_for(out, 5, 1, 32);
    EXPECT_KERNEL_FAILED(launch_and_wait(&wide_count, &args, sizeof args));
    EXPECT_CONTAINS(last_error(), "wide_count_kernel");
    EXPECT_CONTAINS(last_error(), "(a pointer, int32) do not have exactly its parameters' types");
    EXPECT_CONTAINS(last_error(), "an int64_t for an int64_t");
    EXPECT_KERNEL_FAILED(launch_and_wait(&struct_argument, &args, sizeof args));
    EXPECT_CONTAINS(last_error(), "struct_argument_kernel");
    EXPECT_CONTAINS(last_error(), "argument 2 is a struct or union by value");
cleanup:
    tensor_free(out);
}

/* ============================================================================
 * the error is the device's, once
 * ========================================================================== */

static void test_a_failed_launch_is_reported_once_and_the_device_works_on(void)
{
    if (!emulated()) return;
    enum { N = 64 };
    tensor *out = NULL;
    int got[N];
    REQUIRE_OK(tensor_zeros(&out, under_test, shape1(N)));
    const out_args failing = out_for(out, 16, 1, N), fine = out_for(out, 0, 1, N);
    clear_error();
    const status launched = device_launch(under_test, &early_return, &failing, sizeof failing);
    if (under_test.kind == DEVICE_CPU) {
        /* at once, on the host: the launch itself says so */
        EXPECT_KERNEL_FAILED(launched);
    } else {
        /* queued: returns at once; the work after it still runs; the next wait says so */
        EXPECT_OK(launched);
        EXPECT_OK(device_launch(under_test, &two_barriers, &fine, sizeof fine));
        EXPECT_KERNEL_FAILED(device_synchronize(under_test));
    }
    EXPECT_CONTAINS(last_error(), "early_return_kernel");
    EXPECT_OK(device_synchronize(under_test)); /* once */
    if (under_test.kind == DEVICE_CPU)
        REQUIRE_OK(device_launch(under_test, &two_barriers, &fine, sizeof fine));
    REQUIRE_OK(tensor_to_host_raw(out, got, sizeof got));
    for (int i = 0; i < N; ++i) EXPECT_MSG(got[i] == 2, "thread %d wrote %d, want 2", i, got[i]);
cleanup:
    tensor_free(out);
}

/* ============================================================================
 * a GPU thread's stack overflowing
 * ========================================================================== */

/* In the child: what fault_describe_address said, written to the pipe. */
static int report_pipe = -1;

static void report_fault(int signal, siginfo_t *info, void *context)
{
    (void)signal, (void)context;
    char text[1024];
    if (fault_describe_address(info->si_addr, NULL, text, sizeof text) == 0) {
        static const char none[] = "not a GPU thread's stack";
        ssize_t ignored = write(report_pipe, none, sizeof none - 1);
        (void)ignored;
        _exit(4);
    }
    ssize_t ignored = write(report_pipe, text, strlen(text));
    (void)ignored;
    _exit(3);
}

/* A child process (started before this program touched any device, so that
 * a simulated GPU's worker is its own) runs a kernel that recurses until its
 * stack overflows, and reports what the crash handler would learn. */
static void test_a_gpu_threads_stack_overflow_is_reported_as_such(void)
{
    if (!emulated()) return;
    char report[1024] = { 0 };
    EXPECT(fault_describe_address((void *)16, NULL, report, sizeof report) ==
           0); /* known-wrong: not a guard page */
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    fflush(NULL);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        close(fds[0]);
        report_pipe = fds[1];
        struct sigaction on_fault = { 0 };
        on_fault.sa_sigaction = report_fault;
        on_fault.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigaction(SIGSEGV, &on_fault, NULL);
        sigaction(SIGBUS, &on_fault, NULL);
        tensor *out = NULL;
        if (tensor_zeros(&out, under_test, shape1(64)) != STATUS_OK) _exit(5);
        const out_args args = out_for(out, 2000, 1, 64); /* 2 MiB: past 64 KiB, within 8 MiB */
        launch_and_wait(&deep_recursion, &args, sizeof args);
        _exit(6); /* the kernel came back: no overflow */
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < sizeof report && (n = read(fds[0], report + got, sizeof report - 1 - got)) > 0)
        got += (size_t)n;
    close(fds[0]);
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    /* it exits from the handler (with 3; valgrind may put its own code there) */
    EXPECT_MSG(WIFEXITED(wstatus), "the child ended with status 0x%x: \"%s\"", (unsigned)wstatus, report);
    EXPECT_CONTAINS(report, "a GPU thread's stack overflowed: thread ");
    EXPECT_CONTAINS(report, "of block (0, 0, 0) of deep_recursion_kernel (launched at "
                            "common/tests/test_cooperative_sim.c:");
    EXPECT_CONTAINS(report, "KiB");
    EXPECT_CONTAINS(report, "hint:");
cleanup:;
}

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "DEVICE   (cpu, sim:0, cuda:0, ...)", &under_test);
    if (rc != 0) return rc;
    printf("the mistakes of cooperating threads, on %s\n", device_name(under_test));
    RUN_TEST(test_a_gpu_threads_stack_overflow_is_reported_as_such); /* first: it forks */
    RUN_TEST(test_threads_that_return_before_a_barrier_the_others_wait_at_are_named);
    RUN_TEST(test_barriers_on_two_lines_for_two_halves_of_a_block_are_named);
    RUN_TEST(test_a_shuffle_whose_mask_leaves_out_its_caller_is_named);
    RUN_TEST(test_a_shuffle_whose_mask_names_threads_that_never_come_is_named);
    RUN_TEST(test_launches_a_gpu_refuses_are_refused);
    RUN_TEST(test_arguments_a_kernel_with_barriers_cannot_be_called_with_are_named);
    RUN_TEST(test_a_failed_launch_is_reported_once_and_the_device_works_on);
    return harness_finish();
}
