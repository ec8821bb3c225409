/* given.c: lab 08's given code for the cores (given.h says what each does). */
#include "given.h"

#include "labkit/load.h"

#include <cblas.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Your lab 04's loop, not a copy of it: a copy would hand lab 04's step 3 to
 * whoever opens lab 08 first. */
void matmul_ikj(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)
{
    CHECK(lab_matmul_ikj(a, b, c, m, n, k));
}

status team_cpu_seconds(int threads, double *cpu, long *tid)
{
    if (threads < 1 || threads > TEAM_MAX_THREADS || !cpu || !tid)
        return fail(STATUS_BAD_ARGUMENT, "team_cpu_seconds: threads = %d (1 to %d) and two arrays of as many",
                    threads, TEAM_MAX_THREADS);
    int size = 0;
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        cpu[t] = thread_cpu_seconds();
        tid[t] = (long)syscall(SYS_gettid);
        if (t == 0) size = omp_get_num_threads();
    }
    if (size != threads)
        return fail(STATUS_BACKEND_FAILED,
                    "team_cpu_seconds: OpenMP gave a team of %d threads, not %d (OMP_THREAD_LIMIT?)", size,
                    threads);
    return STATUS_OK;
}

void blas_threads(int threads) { openblas_set_num_threads(threads > 0 ? threads : cores_here()); }

int cores_here(void) { return omp_get_num_procs(); }

double cores_busy_elsewhere(void)
{
    /* The harness measures it for every lab (labkit/load.h): here over a
     * quarter of a second of this program's quiet. */
    load_sample before;
    if (!load_now(&before)) return -1.0;
    pools_settle();
    return load_busy_elsewhere(&before, NULL);
}

void pools_settle(void)
{
    /* OpenBLAS's threads spin for 2^28 clock ticks after a call (about 0.1 s
     * at 2.5 GHz; measured here: 0.13 s), OpenMP's for a few milliseconds. */
    const struct timespec quarter = { 0, 250000000 };
    nanosleep(&quarter, NULL);
}

void blas_matmul(const float *a, const float *b, float *c, int64_t n)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, a, (int)n, b, (int)n,
                0.0f, c, (int)n);
}

int gpus_to_compare(const device *asked, device *out, int capacity, char *note, size_t size)
{
    const int cuda = device_count(DEVICE_CUDA), sim = device_count(DEVICE_SIM);
    /* Real GPUs where there are two, or one and no pair of simulated ones. */
    device_kind kind = cuda >= 2 || (cuda == 1 && sim < 2) ? DEVICE_CUDA : DEVICE_SIM;
    if (asked) kind = asked->kind;
    const int available = kind == DEVICE_CPU ? 0 : device_count(kind);
    int count = 0;
    for (int i = 0; out && i < available && i < capacity; ++i) out[count++] = (device){ kind, i };
    if (!note || size == 0) return count;
    note[0] = '\0';
    if (kind == DEVICE_CPU)
        snprintf(note, size, "--device cpu: no GPUs; the training runs on the cpu alone");
    else if (!asked && cuda == 1 && sim >= 2)
        snprintf(note, size,
                 "one real GPU here: comparing GPUs needs two of one kind, so the GPUs are sim:0 to "
                 "sim:%d (--device cuda:0: cuda:0 alone)",
                 count - 1);
    else if (count < 2)
        snprintf(note, size,
                 "fewer than two GPUs of one kind here, so no devices part, and the training on %s "
                 "alone; LABKIT_SIM_GPUS=2 gives two simulated GPUs",
                 count ? device_name(out[0]) : "the cpu");
    return count;
}

const char *device_names_joined(const device *d, int n, char *out, size_t size)
{
    if (!out || size == 0) return out;
    out[0] = '\0';
    for (int i = 0; d && i < n; ++i)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? "+" : "", device_name(d[i]));
    return out;
}
