/* bench_attention.c: is the kit's self-attention forward as fast as PyTorch's
 * unfused one? One head, n = 1024 to 8192, d = 64 and 128, float32, on cuda:0,
 * both sides in the same run.
 *
 * The kit's side: scores = Q K^T by op_matmul (cuBLAS, k read transposed), a
 * row softmax with the 1/sqrt(d) scale in place, out = P V by op_matmul, all
 * queued on the device's stream. The softmax is the bench's own
 * (bench_cuda.cu: a block per row, the row in shared memory, warp shuffles:
 * the tuned kind, CUDA-only); lab 07's students write a one-thread-per-row
 * kernel, which this file does not contain. PyTorch's side is
 * pytorch_attention.py: torch.softmax((q * scale) @ k.T, dim=-1) @ v, TF32
 * off, as the kit's products. Both are timed the same way: CUDA events around
 * back-to-back forwards filling about 10 ms, the fastest of 10 runs after a
 * warm-up. The aim: the kit within 1.2x of PyTorch's time.
 *
 * PyTorch with CUDA is looked for in LABKIT_PYTHON, then python3 on PATH
 * (a virtual environment's), then /usr/bin/python3 (bench_python); without it
 * the kit's times are printed alone. Without a real GPU the bench says so and stops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#ifdef BENCH_WITH_CUDA
#include "bench_cuda.h"
#endif

#ifdef BENCH_WITH_CUDA
#define AIM 1.2
enum { NSIZES = 4, NDIMS = 2, RUNS = 10 };
static const int64_t sizes[NSIZES] = { 1024, 2048, 4096, 8192 };
static const int64_t dims[NDIMS] = { 64, 128 };

/* ---- PyTorch's side ---------------------------------------------------------------- */

/* Runs pytorch_attention.py with `python`; fills ms[d][s] (0: not measured)
 * and returns true when it measured on a GPU. Prints what it said about itself. */
static bool pytorch_times(const char *python, double ms[NDIMS][NSIZES])
{
    char dir[4096], command[8192], line[512];
    bench_dir(dir, sizeof dir);
    snprintf(command, sizeof command,
             "%s %s/pytorch_attention.py --sizes 1024,2048,4096,8192 --dims 64,128 2>&1", python, dir);
    FILE *p = popen(command, "r");
    bool measured = false;
    while (p && fgets(line, sizeof line, p)) {
        long long n = 0, d = 0;
        double t = 0.0;
        if (sscanf(line, "pytorch: n=%lld d=%lld ms=%lf", &n, &d, &t) == 3) {
            for (int i = 0; i < NDIMS; ++i)
                for (int j = 0; j < NSIZES; ++j)
                    if (dims[i] == d && sizes[j] == n) ms[i][j] = t, measured = true;
        } else if (strncmp(line, "pytorch: ", 9) == 0) {
            printf("  %s: %s", python, line + 9);
        }
    }
    if (p) pclose(p);
    return measured;
}

/* ---- the kit's side ---------------------------------------------------------------- */

typedef struct attention {
    device d;
    tensor *q, *k, *v, *scores, *out;
    kernel_launchers softmax;
    bench_softmax_args args;
} attention;

static void forward(const attention *a)
{
    CHECK(op_matmul(a->q, false, a->k, true, NULL, a->scores));
    CHECK(device_launch(a->d, &a->softmax, &a->args, sizeof a->args));
    CHECK(op_matmul(a->scores, false, a->v, false, NULL, a->out));
}

/* The device's milliseconds for `repeat` forwards queued back to back. */
static double batch_ms(const attention *a, event *start, event *stop, int repeat)
{
    double ms;
    CHECK(event_record(start));
    for (int i = 0; i < repeat; ++i) forward(a);
    CHECK(event_record(stop));
    CHECK(event_synchronize(stop));
    CHECK(event_elapsed_ms(start, stop, &ms));
    return ms / repeat;
}

/* The largest error of four rows of out against float64, relative to sum p |v|. */
static double sampled_error(const attention *a, int64_t n, int64_t dim)
{
    float *q = malloc((size_t)(n * dim) * sizeof *q), *k = malloc((size_t)(n * dim) * sizeof *k);
    float *v = malloc((size_t)(n * dim) * sizeof *v), *out = malloc((size_t)(n * dim) * sizeof *out);
    double *p = malloc((size_t)n * sizeof *p), worst = 0.0;
    if (!q || !k || !v || !out || !p) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
    CHECK(tensor_to_host(a->q, q, n * dim));
    CHECK(tensor_to_host(a->k, k, n * dim));
    CHECK(tensor_to_host(a->v, v, n * dim));
    CHECK(tensor_to_host(a->out, out, n * dim));
    for (int64_t row = 0; row < n; row += n / 4 + 1) {
        double max = -INFINITY, total = 0.0;
        for (int64_t j = 0; j < n; ++j) {
            double dot = 0.0;
            for (int64_t c = 0; c < dim; ++c) dot += (double)q[row * dim + c] * k[j * dim + c];
            p[j] = dot / sqrt((double)dim), max = fmax(max, p[j]);
        }
        for (int64_t j = 0; j < n; ++j) total += p[j] = exp(p[j] - max);
        for (int64_t c = 0; c < dim; ++c) {
            double want = 0.0, size = 0.0;
            for (int64_t j = 0; j < n; ++j)
                want += p[j] / total * v[j * dim + c], size += p[j] / total * fabs(v[j * dim + c]);
            const double e = fabs(out[row * dim + c] - want) / size;
            worst = isnan(e) ? INFINITY : fmax(worst, e);
        }
    }
    free(q), free(k), free(v), free(out), free(p);
    return worst;
}

/* The kit's milliseconds per forward at n, dim on d (fastest of RUNS runs). */
static double kit_ms(device d, int64_t n, int64_t dim, double *error)
{
    attention a = { .d = d, .softmax = { "bench_softmax_rows", NULL, bench_cuda_softmax_rows } };
    CHECK(tensor_uniform(&a.q, d, shape2(n, dim), -1.0f, 1.0f, 1));
    CHECK(tensor_uniform(&a.k, d, shape2(n, dim), -1.0f, 1.0f, 2));
    CHECK(tensor_uniform(&a.v, d, shape2(n, dim), -1.0f, 1.0f, 3));
    CHECK(tensor_empty(&a.scores, d, DTYPE_F32, shape2(n, n)));
    CHECK(tensor_empty(&a.out, d, DTYPE_F32, shape2(n, dim)));
    a.args = (bench_softmax_args){ tensor_data(a.scores), n, n, (float)(1.0 / sqrt((double)dim)) };
    event *start, *stop;
    CHECK(event_create(&start, d));
    CHECK(event_create(&stop, d));
    for (int i = 0; i < 3; ++i) forward(&a); /* warm-up: cuBLAS picks its kernels */
    const double one = batch_ms(&a, start, stop, 1);
    const int repeat = one >= 10.0 ? 1 : one <= 0.1 ? 100 : (int)(10.0 / one);
    double best = INFINITY;
    for (int r = 0; r < RUNS; ++r) best = fmin(best, batch_ms(&a, start, stop, repeat));
    *error = sampled_error(&a, n, dim);
    event_destroy(start), event_destroy(stop);
    tensor_free(a.q), tensor_free(a.k), tensor_free(a.v), tensor_free(a.scores), tensor_free(a.out);
    return best;
}
#endif

int main(void)
{
    bench_devices();
    const device gpu = { DEVICE_CUDA, 0 };
    if (!device_exists(gpu)) {
        printf("bench_attention: no real GPU here: the kit's attention against PyTorch's runs on cuda:0 "
               "(skipped)\n");
        return 0;
    }
#ifndef BENCH_WITH_CUDA
    printf("bench_attention: this build has no CUDA benches (skipped)\n");
    return 0;
#else
    device_properties props;
    CHECK(device_get_properties(gpu, &props));
    printf("self-attention forward, one head, float32, on cuda:0 (%s): kit (op_matmul, the bench's softmax, "
           "op_matmul) against PyTorch (matmul, softmax, matmul); fastest of %d runs\n",
           props.name, RUNS);
    static double kit[2][NDIMS][NSIZES], errors[NDIMS][NSIZES], torch[NDIMS][NSIZES];
    const char *python = bench_python(true);
    bool measured = false;
    for (int pass = 0; pass < 2; ++pass) { /* before and after PyTorch's run: the faster one counts */
        for (int i = 0; i < NDIMS; ++i)
            for (int j = 0; j < NSIZES; ++j) kit[pass][i][j] = kit_ms(gpu, sizes[j], dims[i], &errors[i][j]);
        if (pass == 0 && python) measured = pytorch_times(python, torch);
    }
    if (!measured)
        printf("  PyTorch with CUDA was not found (LABKIT_PYTHON picks a python): the kit's times alone\n");

    printf("\n%4s %6s %12s %12s %8s %14s\n", "d", "n", "kit ms", "PyTorch ms", "ratio", "kit error");
    int within = 0, compared = 0;
    for (int i = 0; i < NDIMS; ++i)
        for (int j = 0; j < NSIZES; ++j) {
            const double k = fmin(kit[0][i][j], kit[1][i][j]), t = torch[i][j];
            printf("%4lld %6lld %12.4f ", (long long)dims[i], (long long)sizes[j], k);
            if (t > 0)
                printf("%12.4f %7.2fx", t, k / t);
            else
                printf("%12s %8s", "-", "-");
            printf(" %14.1e\n", errors[i][j]);
            compared += t > 0, within += t > 0 && k <= AIM * t;
        }
    if (compared)
        printf("\nthe kit within %.1fx of PyTorch's time: %d of %d sizes (ratio: kit / PyTorch; error: the "
               "kit's "
               "output against float64 on 4 rows, relative to sum p |v|)\n",
               AIM, within, compared);
    return 0;
#endif
}
