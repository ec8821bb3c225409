/* bench_attention.c: is the kit's self-attention forward as fast as PyTorch's
 * unfused one, and lab 07's attention in one pass as fast as PyTorch's fused
 * one? One head, n = 1024 to 8192, d = 64 and 128, float32, on cuda:0, both
 * sides in the same run.
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
 * Attention in one pass (lab 07's step 7, from its solution: the student copy
 * has none, and leaves these rows out) is flash_attention_kernel, launched
 * through lab 07's own launchers (launch.c, launch.cu): a block of 256
 * threads per 32 rows, 8 threads per row each over an eighth of the keys, K
 * and V a tile at a time through shared memory, a running max and sum per
 * thread, the row's eight merged by warp shuffles at the end; heads up to
 * FLASH_MAX_HEAD (64): the d = 128 rows leave it out. On every device here (cpu and sim:0 at n = 256 and 512,
 * where the kernel runs one thread at a time; cuda:0 at the sizes above) it is
 * timed beside the kit's two products and their softmax (on cpu and sim:0 lab
 * 07's one-thread-per-row softmax, on cuda:0 the bench's tuned one), with the
 * peak memory of each beyond q, k, v and out (the device's counters); on
 * cuda:0 also beside PyTorch's scaled_dot_product_attention and its unfused
 * form (pytorch_attention.py --fused). The aim: within 2x of PyTorch's fused
 * attention at n = 4096, d = 64, with no memory beyond the operands.
 *
 * PyTorch with CUDA is looked for in LABKIT_PYTHON, then python3 on PATH
 * (a virtual environment's), then /usr/bin/python3 (bench_python); without it
 * the kit's times are printed alone. Without a real GPU the bench runs the
 * one-pass rows on cpu and sim:0, says that the rest needs cuda:0, and stops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#ifdef BENCH_WITH_CUDA
#include "bench_cuda.h"
#endif
#ifdef BENCH_WITH_LAB07
#include "launch.h" /* lab 07's launchers, compiled here with its solution's kernels */
#endif

#if defined(BENCH_WITH_CUDA) || defined(BENCH_WITH_LAB07)
/* The largest error of four rows of out against float64, relative to sum p |v|. */
static double sampled_error(const tensor *tq, const tensor *tk, const tensor *tv, const tensor *tout,
                            int64_t n, int64_t dim)
{
    float *q = malloc((size_t)(n * dim) * sizeof *q), *k = malloc((size_t)(n * dim) * sizeof *k);
    float *v = malloc((size_t)(n * dim) * sizeof *v), *out = malloc((size_t)(n * dim) * sizeof *out);
    double *p = malloc((size_t)n * sizeof *p), worst = 0.0;
    if (!q || !k || !v || !out || !p) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for the check"));
    CHECK(tensor_to_host(tq, q, n * dim));
    CHECK(tensor_to_host(tk, k, n * dim));
    CHECK(tensor_to_host(tv, v, n * dim));
    CHECK(tensor_to_host(tout, out, n * dim));
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
#endif

#ifdef BENCH_WITH_LAB07
#define BENCH_ONE_PASS 1
#else
#define BENCH_ONE_PASS 0
#endif

#ifdef BENCH_WITH_CUDA
#define AIM 1.2
enum { NSIZES = 4, NDIMS = 2, RUNS = 10 };
static const int64_t sizes[NSIZES] = { 1024, 2048, 4096, 8192 };
static const int64_t dims[NDIMS] = { 64, 128 };

/* ---- PyTorch's side ---------------------------------------------------------------- */

/* PyTorch's figures per head size and n (0: not measured): the unfused
 * forward's milliseconds and peak bytes, and scaled_dot_product_attention's. */
typedef struct torch_figures {
    double ms[NDIMS][NSIZES], sdpa_ms[NDIMS][NSIZES];
    double peak[NDIMS][NSIZES], sdpa_peak[NDIMS][NSIZES];
} torch_figures;

/* Runs pytorch_attention.py with `python` (with --fused where lab 07's one
 * pass is here to compare); fills *f and returns true when it measured on a
 * GPU. Prints what it said about itself. */
static bool pytorch_times(const char *python, torch_figures *f)
{
    char dir[4096], command[8192], line[512];
    bench_dir(dir, sizeof dir);
    snprintf(command, sizeof command,
             "%s %s/pytorch_attention.py --sizes 1024,2048,4096,8192 --dims 64,128%s 2>&1", python, dir,
             BENCH_ONE_PASS ? " --fused" : "");
    FILE *p = popen(command, "r");
    bool measured = false;
    while (p && fgets(line, sizeof line, p)) {
        long long n = 0, d = 0;
        double t = 0.0, peak = 0.0;
        const bool unfused = sscanf(line, "pytorch: n=%lld d=%lld ms=%lf peak=%lf", &n, &d, &t, &peak) == 4;
        const bool fused =
            !unfused && sscanf(line, "pytorch: n=%lld d=%lld sdpa_ms=%lf peak=%lf", &n, &d, &t, &peak) == 4;
        if (unfused || fused) {
            for (int i = 0; i < NDIMS; ++i)
                for (int j = 0; j < NSIZES; ++j) {
                    if (dims[i] != d || sizes[j] != n) continue;
                    measured = true;
                    if (unfused) f->ms[i][j] = t, f->peak[i][j] = peak;
                    if (fused) f->sdpa_ms[i][j] = t, f->sdpa_peak[i][j] = peak;
                }
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
    *error = sampled_error(a.q, a.k, a.v, a.out, n, dim);
    event_destroy(start), event_destroy(stop);
    tensor_free(a.q), tensor_free(a.k), tensor_free(a.v), tensor_free(a.scores), tensor_free(a.out);
    return best;
}
#endif

#ifdef BENCH_WITH_LAB07
/* ---- lab 07's attention in one pass, on every device --------------------------------- */

/* One forward's operands on d: with `fused`, lab 07's one pass into out;
 * without, the kit's two products around a softmax through the n x n scores. */
typedef struct one_pass {
    device d;
    tensor *q, *k, *v, *scores, *out;
    int64_t n, dim;
    bool fused;
} one_pass;

static void one_pass_forward(const one_pass *a)
{
    const float scale = (float)(1.0 / sqrt((double)a->dim));
    if (a->fused) {
        const flash_args args = { tensor_data_const(a->q),
                                  tensor_data_const(a->k),
                                  tensor_data_const(a->v),
                                  tensor_data(a->out),
                                  a->n,
                                  a->dim,
                                  scale,
                                  0 };
        CHECK(device_launch(a->d, &flash_attention_launchers, &args, sizeof args));
        return;
    }
    CHECK(op_matmul(a->q, false, a->k, true, NULL, a->scores));
#ifdef BENCH_WITH_CUDA
    if (a->d.kind == DEVICE_CUDA) { /* the bench's tuned softmax, as the table above */
        const kernel_launchers tuned = { "bench_softmax_rows", NULL, bench_cuda_softmax_rows };
        const bench_softmax_args args = { tensor_data(a->scores), a->n, a->n, scale };
        CHECK(device_launch(a->d, &tuned, &args, sizeof args));
    } else
#endif
    { /* lab 07's one-thread-per-row softmax (its solution's step 5) */
        const softmax_args args = { tensor_data(a->scores), a->n, a->n, scale, 0 };
        CHECK(device_launch(a->d, &softmax_rows_launchers, &args, sizeof args));
    }
    CHECK(op_matmul(a->scores, false, a->v, false, NULL, a->out));
}

/* The device's milliseconds per forward: the fastest of `runs` runs, each as
 * many forwards queued back to back between two events as fill about 10 ms. */
static double one_pass_ms(const one_pass *a, int runs)
{
    event *start, *stop;
    CHECK(event_create(&start, a->d));
    CHECK(event_create(&stop, a->d));
    double best = INFINITY;
    int repeat = 1;
    for (int r = -2; r < runs; ++r) { /* two untimed tries: a warm-up, then the repeat count */
        double ms;
        CHECK(event_record(start));
        for (int i = 0; i < repeat; ++i) one_pass_forward(a);
        CHECK(event_record(stop));
        CHECK(event_synchronize(stop));
        CHECK(event_elapsed_ms(start, stop, &ms));
        ms /= repeat;
        if (r == -1) repeat = ms >= 10.0 ? 1 : ms <= 0.1 ? 100 : (int)(10.0 / ms);
        if (r >= 0) best = fmin(best, ms);
    }
    event_destroy(start), event_destroy(stop);
    return best;
}

/* Bytes a forward needs beyond q, k, v and out at its peak, the scores made
 * and freed around it as lab 07's attention does (the device's counters). */
static long long one_pass_peak(one_pass *a)
{
    device_counters before, after;
    CHECK(device_synchronize(a->d));
    CHECK(counters_reset(a->d));
    CHECK(counters_read(a->d, &before));
    tensor *kept = a->scores;
    if (!a->fused) CHECK(tensor_empty(&a->scores, a->d, DTYPE_F32, shape2(a->n, a->n)));
    one_pass_forward(a);
    if (!a->fused) tensor_free(a->scores);
    a->scores = kept;
    CHECK(device_synchronize(a->d));
    CHECK(counters_read(a->d, &after));
    return (long long)after.memory_peak - (long long)before.memory_current;
}

typedef struct one_pass_figures {
    double ms[2], error; /* [0]: one pass, [1]: two products */
    long long peak[2];
} one_pass_figures;

static one_pass_figures one_pass_measure(device d, int64_t n, int64_t dim, int runs)
{
    one_pass_figures f;
    one_pass a = { .d = d, .n = n, .dim = dim };
    CHECK(tensor_uniform(&a.q, d, shape2(n, dim), -1.0f, 1.0f, 1));
    CHECK(tensor_uniform(&a.k, d, shape2(n, dim), -1.0f, 1.0f, 2));
    CHECK(tensor_uniform(&a.v, d, shape2(n, dim), -1.0f, 1.0f, 3));
    CHECK(tensor_empty(&a.scores, d, DTYPE_F32, shape2(n, n)));
    CHECK(tensor_empty(&a.out, d, DTYPE_F32, shape2(n, dim)));
    for (int fused = 1; fused >= 0; --fused) {
        a.fused = fused;
        f.ms[1 - fused] = one_pass_ms(&a, runs);
        if (fused) f.error = sampled_error(a.q, a.k, a.v, a.out, n, dim);
    }
    tensor_free(a.scores), a.scores = NULL;
    for (int fused = 1; fused >= 0; --fused) a.fused = fused, f.peak[1 - fused] = one_pass_peak(&a);
    tensor_free(a.q), tensor_free(a.k), tensor_free(a.v), tensor_free(a.out);
    return f;
}

static void one_pass_header(const char *device_text, bool torch)
{
    printf(
        "\nattention in one pass (lab 07's step 7) on %s, one head, float32: ms per forward and bytes at the "
        "peak beyond q, k, v and out\n%8s %4s %6s %11s %11s %7s %12s %12s %10s",
        device_text, "device", "d", "n", "one pass", "2 products", "ratio", "peak 1 pass", "peak 2 prod",
        "error");
    if (torch) printf(" %11s %12s %11s %7s", "torch sdpa", "sdpa peak", "torch 2 pr", "vs sdpa");
    printf("\n");
}

static void one_pass_row(device d, int64_t n, int64_t dim, const one_pass_figures *f)
{
    printf("%8s %4lld %6lld %11.4f %11.4f %6.2fx %12lld %12lld %10.1e", device_name(d), (long long)dim,
           (long long)n, f->ms[0], f->ms[1], f->ms[0] / f->ms[1], f->peak[0], f->peak[1], f->error);
}

/* cpu and sim:0, where the kernel runs one thread at a time: small n. */
static void one_pass_small(void)
{
    static const int64_t small[] = { 256, 512 };
    one_pass_header("cpu and sim:0 (kernels run one thread at a time here, the products in OpenBLAS: the "
                    "memory is the lesson, not the time)",
                    false);
    device devices[2] = { device_cpu(), { DEVICE_SIM, 0 } };
    for (int i = 0; i < 2; ++i) {
        if (!device_exists(devices[i])) continue;
        for (size_t j = 0; j < sizeof small / sizeof small[0]; ++j) {
            const one_pass_figures f = one_pass_measure(devices[i], small[j], 64, 3);
            one_pass_row(devices[i], small[j], 64, &f);
            printf("\n");
        }
    }
}
#endif

#if defined(BENCH_WITH_LAB07) && defined(BENCH_WITH_CUDA)
/* cuda:0 at the sizes above, beside PyTorch's scaled_dot_product_attention and
 * its unfused forward (torch: 0 where not measured). */
static void one_pass_gpu(device gpu, const torch_figures *torch)
{
    one_pass_header("cuda:0", true);
    double aim_ratio = 0.0;
    for (int i = 0; i < NDIMS; ++i)
        for (int j = 0; j < NSIZES; ++j) {
            if (dims[i] > FLASH_MAX_HEAD) {
                printf("  cuda:0 %4lld %6lld  (left out: lab 07's one pass takes heads up to FLASH_MAX_HEAD, "
                       "%d)\n",
                       (long long)dims[i], (long long)sizes[j], FLASH_MAX_HEAD);
                continue;
            }
            const one_pass_figures f = one_pass_measure(gpu, sizes[j], dims[i], RUNS);
            one_pass_row(gpu, sizes[j], dims[i], &f);
            if (torch->sdpa_ms[i][j] > 0) {
                printf(" %11.4f %12.0f %11.4f %6.2fx\n", torch->sdpa_ms[i][j], torch->sdpa_peak[i][j],
                       torch->ms[i][j], f.ms[0] / torch->sdpa_ms[i][j]);
                if (dims[i] == 64 && sizes[j] == 4096) aim_ratio = f.ms[0] / torch->sdpa_ms[i][j];
            } else
                printf(" %11s %12s %11s %7s\n", "-", "-", "-", "-");
        }
    printf(
        "\naim: lab 07's one pass within 2x of PyTorch's fused attention at n = 4096, d = 64, no memory "
        "beyond the operands (PyTorch's peaks count its output too: n d floats; its unfused forward's, the "
        "scores as well)");
    if (aim_ratio > 0)
        printf(": %.2fx, %s\n", aim_ratio, aim_ratio <= 2.0 ? "met" : "NOT met");
    else
        printf(": not measured (no PyTorch with CUDA here)\n");
}
#endif

int main(void)
{
    bench_devices();
    const device gpu = { DEVICE_CUDA, 0 };
#ifdef BENCH_WITH_LAB07
    one_pass_small();
#else
    printf("bench_attention: lab 07's attention in one pass comes from its solution, not in this copy (its "
           "rows are left out)\n");
#endif
    if (!device_exists(gpu)) {
        printf(
            "bench_attention: no real GPU here: the kit's attention against PyTorch's, fused and not, runs "
            "on cuda:0 (skipped)\n");
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
    static double kit[2][NDIMS][NSIZES], errors[NDIMS][NSIZES];
    static torch_figures torch;
    const char *python = bench_python(true);
    bool measured = false;
    for (int pass = 0; pass < 2; ++pass) { /* before and after PyTorch's run: the faster one counts */
        for (int i = 0; i < NDIMS; ++i)
            for (int j = 0; j < NSIZES; ++j) kit[pass][i][j] = kit_ms(gpu, sizes[j], dims[i], &errors[i][j]);
        if (pass == 0 && python) measured = pytorch_times(python, &torch);
    }
    if (!measured)
        printf("  PyTorch with CUDA was not found (LABKIT_PYTHON picks a python): the kit's times alone\n");

    printf("\n%4s %6s %12s %12s %8s %14s\n", "d", "n", "kit ms", "PyTorch ms", "ratio", "kit error");
    int within = 0, compared = 0;
    for (int i = 0; i < NDIMS; ++i)
        for (int j = 0; j < NSIZES; ++j) {
            const double k = fmin(kit[0][i][j], kit[1][i][j]), t = torch.ms[i][j];
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
#ifdef BENCH_WITH_LAB07
    one_pass_gpu(gpu, &torch);
#endif
    return 0;
#endif
}
