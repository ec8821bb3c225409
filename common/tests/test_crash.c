/* test_crash.c: a crash report that arrives, at once, and names the line,
 * however broken the program is (labkit/crash.h, labkit/fault.h).
 *
 * Each test runs a child that crashes in one of the ways a student's code
 * does, and reads its report within a time limit: an index one past the end of
 * a host array and of a tensor on the CPU and on a simulated GPU (a kernel's
 * thread), a heap that malloc finds corrupted (the C library aborts while it
 * holds its own lock: a report that allocated or forked would wait for ever),
 * another thread holding stdout, and a stack overflow. */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/crash.h"
#include "labkit/cuda_emulation.h"
#include "labkit/kernel.h"
#include "labkit/tensor.h"

#define REPORT_LIMIT_SECONDS 30

typedef struct crash_run {
    char err[16384];
    int signal;    /* the signal the child died of, 0 if it did not */
    bool finished; /* it ended within the limit */
    double seconds;
} crash_run;

/* Runs child() in a process of its own with the crash report installed; waits
 * at most REPORT_LIMIT_SECONDS for it to end, killing it after. */
static crash_run run_crashing_as_rank(void (*child)(void), const char *rank);

static crash_run run_crashing(void (*child)(void)) { return run_crashing_as_rank(child, NULL); }

/* The same, where a launcher (Open MPI's mpiexec) started the child as `rank`
 * (NULL: none did). */
static crash_run run_crashing_as_rank(void (*child)(void), const char *rank)
{
    crash_run run = { .signal = 0 };
    int err_pipe[2];
    if (pipe(err_pipe) != 0) return run;
    fflush(stdout), fflush(stderr);
    const double start = harness_seconds();
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(err_pipe[1], STDERR_FILENO);
        close(err_pipe[0]), close(err_pipe[1]);
        if (rank) setenv("OMPI_COMM_WORLD_RANK", rank, 1);
        crash_report_on_fatal_signals();
        child();
        _exit(99); /* child() should not return */
    }
    close(err_pipe[1]);
    size_t used = 0;
    for (;;) {
        const double left = REPORT_LIMIT_SECONDS - (harness_seconds() - start);
        struct pollfd p = { .fd = err_pipe[0], .events = POLLIN };
        if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0) break;
        const ssize_t got = read(err_pipe[0], run.err + used, sizeof run.err - 1 - used);
        if (got <= 0) break;
        used += (size_t)got;
    }
    run.err[used] = '\0';
    close(err_pipe[0]);
    int status = 0;
    while (!(run.finished = waitpid(pid, &status, WNOHANG) == pid) &&
           harness_seconds() - start < REPORT_LIMIT_SECONDS)
        usleep(10000);
    if (!run.finished) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    run.seconds = harness_seconds() - start;
    run.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return run;
}

/* The line of this file that holds `marker` (a comment beside the statement
 * a child crashes on), as the report must name it: "common/tests/test_crash.c:NN". */
static void marked_line(const char *marker, char *out, size_t size)
{
    snprintf(out, size, "(no line holds %s)", marker);
    FILE *f = fopen(LABKIT_SOURCE_ROOT "common/tests/test_crash.c", "r");
    if (!f) return;
    char text[512];
    for (int line = 1; fgets(text, sizeof text, f); ++line) {
        if (strstr(text, marker) && !strstr(text, "marked_line")) {
            snprintf(out, size, "common/tests/test_crash.c:%d", line);
            break;
        }
    }
    fclose(f);
}

static void expect_report(const crash_run *run, int signal, const char *marker, const char *what)
{
    EXPECT_MSG(run->finished, "the crashed child still ran after %d s: the report hangs",
               REPORT_LIMIT_SECONDS);
    EXPECT_MSG(run->signal == signal, "the child died of signal %d, not %d", run->signal, signal);
    EXPECT_CONTAINS(run->err, "crash: ");
    EXPECT_CONTAINS(run->err, "\nwhere ");
    if (what) EXPECT_CONTAINS(run->err, what);
    char line[96];
    marked_line(marker, line, sizeof line);
    EXPECT_CONTAINS(run->err, line);
    if (harness_failures_in_test)
        fprintf(stderr, "--- the child's report (%.1f s) ---\n%s\n", run->seconds, run->err);
}

/* ---- one past the end of a host array or a tensor ------------------------------- */

static void write_one_past_a_host_array(void)
{
    enum { N = 1000 };
    float *x = host_alloc(N * sizeof(float), 0);
    volatile int64_t n = N;                       /* the loop's bound, written wrongly as a student would */
    for (int64_t i = 0; i <= n; ++i) x[i] = 1.0f; /* crash: host array */
    host_free(x, 0);
}

static void test_an_index_one_past_a_host_array_stops_at_its_line(void)
{
    const crash_run run = run_crashing(write_one_past_a_host_array);
    expect_report(&run, SIGSEGV, "crash: host array",
                  "what: a write 0 bytes past the end of a buffer of 4000 bytes");
}

/* A kernel whose bound check lets one thread too many write. */
__global__ void fill_one_too_many_kernel(float *out, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 2.0f; /* crash: kernel */
}

typedef struct fill_args {
    float *out;
    int64_t n;
} fill_args;

static void fill_on_sim(const void *raw, void *stream)
{
    const fill_args *a = raw;
    const dim3 grid = { (unsigned)((a->n + 64) / 64), 1, 1 }, block = { 64, 1, 1 };
    LAUNCH(fill_one_too_many_kernel, grid, block, stream, a->out, a->n);
}

static const kernel_launchers fill_one_too_many = { "fill_one_too_many_kernel", fill_on_sim, NULL };

static device kernel_device;

static void launch_past_a_tensor(void)
{
    tensor *t = NULL;
    if (tensor_empty(&t, kernel_device, DTYPE_F32, shape1(640)) != STATUS_OK) _exit(98);
    const fill_args args = { tensor_data(t), 640 };
    if (device_launch(kernel_device, &fill_one_too_many, &args, sizeof args) != STATUS_OK) _exit(97);
    device_synchronize(kernel_device);
    tensor_free(t);
}

static void test_a_kernel_thread_one_past_a_tensor_stops_at_its_line(const char *device_text)
{
    if (device_parse(device_text, &kernel_device) != STATUS_OK) {
        harness_skip("the device is not here");
        return;
    }
    const crash_run run = run_crashing(launch_past_a_tensor);
    expect_report(&run, SIGSEGV, "crash: kernel", "past the end of a buffer of 2560 bytes");
    /* thread 640 of blocks of 64: the first thread of block 10 */
    EXPECT_CONTAINS(run.err, "gpu thread: fill_one_too_many_kernel, block (10, 0, 0), thread (0, 0, 0)");
}

static void test_a_kernel_on_the_cpu_device(void)
{
    test_a_kernel_thread_one_past_a_tensor_stops_at_its_line("cpu");
}
static void test_a_kernel_on_a_simulated_gpu(void)
{
    test_a_kernel_thread_one_past_a_tensor_stops_at_its_line("sim:0");
}

/* ---- a heap that malloc finds corrupted ----------------------------------------- */

/* An array that overruns into the heap's top chunk: the next malloc that
 * carves from it finds the chunk's size overwritten and aborts with its arena
 * locked. A report that allocated, or forked (fork takes the malloc locks),
 * would then wait for ever. */
static void corrupt_the_heap(void)
{
    enum { BYTES = 100000, TAKEN = 64 }; /* below the size malloc gives its own mapping */
    static char *volatile taken[TAKEN];
    /* Free chunks left by earlier work are used first: take enough that the
     * last array comes from the top of the heap. */
    for (int i = 0; i < TAKEN; ++i) taken[i] = malloc(BYTES);
    memset(taken[TAKEN - 1], 0x5a, BYTES + 64);
    char *volatile next = malloc(BYTES); /* crash: heap */
    free(next);
}

static void test_a_corrupted_heap_is_reported_at_once(void)
{
    const crash_run run = run_crashing(corrupt_the_heap);
    EXPECT_MSG(run.finished, "the crashed child still ran after %d s: the report hangs",
               REPORT_LIMIT_SECONDS);
    EXPECT_MSG(run.signal == SIGABRT, "the child died of signal %d, not SIGABRT", run.signal);
    EXPECT_CONTAINS(run.err, "crash: SIGABRT");
    char line[96], where[160];
    marked_line("crash: heap", line, sizeof line);
    snprintf(where, sizeof where, "corrupt_the_heap at %s", line);
    EXPECT_CONTAINS(run.err, where);
    if (harness_failures_in_test) fprintf(stderr, "--- the child's report ---\n%s\n", run.err);
}

/* ---- another thread holds stdout ------------------------------------------------ */

static void *hold_stdout(void *unused)
{
    (void)unused;
    flockfile(stdout);
    for (;;) pause();
    return NULL;
}

static void crash_while_stdout_is_held(void)
{
    pthread_t holder;
    printf("a line still in stdout's buffer");
    pthread_create(&holder, NULL, hold_stdout, NULL);
    usleep(20000);
    volatile int *nowhere = NULL;
    *nowhere = 1; /* crash: stdout held */
}

static void test_a_report_does_not_wait_for_stdout(void)
{
    const crash_run run = run_crashing(crash_while_stdout_is_held);
    expect_report(&run, SIGSEGV, "crash: stdout held", NULL);
}

/* ---- a stack overflow --------------------------------------------------------------- */

static volatile int deeper = 1; /* always 1; the compiler cannot know it */

static int recurse(int depth)
{
    volatile char room[4096];
    room[0] = (char)depth;
    if (!deeper) return room[0];
    return recurse(depth + 1) + room[0]; /* crash: recursion */
}

static void overflow_the_stack(void) { (void)recurse(0); }

static void test_a_stack_overflow_is_named(void)
{
    const crash_run run = run_crashing(overflow_the_stack);
    expect_report(&run, SIGSEGV, "crash: recursion", "the stack overflowed");
}

/* A crash on a thread that runs none of the program's code, as inside one of
 * OpenBLAS's threads given a wrong leading dimension (or in its kernels, which
 * keep no frames to follow): no line of the program on the stack. The
 * thread's start routine is the C library's abort itself. */
static void abort_on_a_library_thread(void)
{
    pthread_t thread;
    void *(*library_routine)(void *) = (void *(*)(void *))(void (*)(void))abort;
    if (pthread_create(&thread, NULL, library_routine, NULL) == 0) pthread_join(thread, NULL);
}

static void test_a_crash_inside_a_library_points_at_the_last_call(void)
{
    const crash_run run = run_crashing(abort_on_a_library_thread);
    EXPECT_MSG(run.finished && run.signal == SIGABRT, "the child ended after %.1f s, of signal %d",
               run.seconds, run.signal);
    EXPECT_CONTAINS(run.err, "no frame of this program's code can be found on the crashing thread's stack");
    EXPECT_CONTAINS(run.err, "next: compare each size, stride and pointer of your last call of a library");
    EXPECT_MSG(!strstr(run.err, "could not read this program's debug information"),
               "blamed addr2line for a stack without the program: %s", run.err);
}

/* The same where a wrapper noted the call into the library, as lab 04's check
 * does for cblas_sgemm: the report names the line of that call. */
static __attribute__((noinline)) void noted_library_call(void)
{
    crash_note_library_call("the library", __builtin_return_address(0));
    abort_on_a_library_thread();
}

static volatile int returned; /* written after the call: a call, not a jump, so its line is named */

static void call_a_library_that_crashes(void)
{
    noted_library_call(); /* crash: a noted call */
    returned = 1;
}

static void test_a_crash_inside_a_library_names_the_noted_call(void)
{
    const crash_run run = run_crashing(call_a_library_that_crashes);
    expect_report(&run, SIGABRT, "crash: a noted call", "Your last call of the library:");
    EXPECT_CONTAINS(run.err, "next: compare each size, stride and pointer of that call");
}

/* Two of lab 10's ranks that crash together print at once into one terminal:
 * each line of a rank's report names it, so that neither report is lost in
 * the other. */
static void test_a_rank_s_report_names_it_on_every_line(void)
{
    const crash_run run = run_crashing_as_rank(write_one_past_a_host_array, "3");
    EXPECT_MSG(run.finished && run.signal == SIGSEGV, "the child ended after %.1f s, of signal %d",
               run.seconds, run.signal);
    EXPECT_CONTAINS(run.err, "\n[rank 3] crash: SIGSEGV");
    EXPECT_CONTAINS(run.err, "\n[rank 3] what: a write 0 bytes past the end");
    EXPECT_CONTAINS(run.err, "\n[rank 3] where ");
    EXPECT_CONTAINS(run.err, "\n[rank 3]   write_one_past_a_host_array at ");
    int lines = 0;
    for (const char *line = run.err; *line; ++lines) {
        const char *end = strchr(line, '\n');
        const size_t length = end ? (size_t)(end - line) : strlen(line);
        EXPECT_MSG(length == 0 || strncmp(line, "[rank 3] ", 9) == 0,
                   "a line of rank 3's report without it: %.*s", (int)length, line);
        line += length + (end != NULL);
    }
    EXPECT_MSG(lines >= 4, "rank 3's report has %d lines", lines);
    if (harness_failures_in_test) fprintf(stderr, "--- rank 3's report ---\n%s\n", run.err);
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__)
    puts("skipped: AddressSanitizer reports crashes itself; the kit's report is not installed");
    return HARNESS_SKIPPED;
#endif
    RUN_TEST(test_an_index_one_past_a_host_array_stops_at_its_line);
    RUN_TEST(test_a_kernel_on_the_cpu_device);
    RUN_TEST(test_a_kernel_on_a_simulated_gpu);
    RUN_TEST(test_a_corrupted_heap_is_reported_at_once);
    RUN_TEST(test_a_report_does_not_wait_for_stdout);
    RUN_TEST(test_a_stack_overflow_is_named);
    RUN_TEST(test_a_crash_inside_a_library_points_at_the_last_call);
    RUN_TEST(test_a_crash_inside_a_library_names_the_noted_call);
    RUN_TEST(test_a_rank_s_report_names_it_on_every_line);
    return harness_finish();
}
