/* main.c: lab 07's experiment: two layers built from matrix products, and
 * where their time and memory go, on the device of --device (default: GPU 0,
 * else the CPU).
 *   1. A convolution, with your direct kernel and as im2col and one product:
 *      the time of each, of im2col and of the product alone, the memory the
 *      layer needs beyond its input and output (the peak-memory counter), and
 *      the error against float64 on a sample of outputs.
 *   2. Self-attention, one head of size d, as the sequence grows: the time of
 *      Q K^T, of your softmax, of P V and of the whole, and the n x n scores in
 *      the peak memory; then attention in one pass (step 7): its time, and its
 *      peak memory, which holds no n x n matrix.
 * Sizes follow the device: a real GPU gets a realistic layer; the CPU and a
 * simulated GPU, whose kernels run one thread at a time, smaller ones. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "given.h"
#include "lab.h"

typedef enum part { DIRECT, IM2COL, PRODUCT, IM2COL_PATH, SCORES, SOFTMAX, VALUES, ATTENTION, ONE_PASS } part;
static const char *const part_names[] = { "direct",  "im2col", "matmul", "im2col+matmul", "Q K^T",
                                          "softmax", "P V",    "total",  "one pass" };

/* Everything the parts need; run() runs part t->p. */
typedef struct work {
    part p;
    tensor *x, *w, *filters, *cols, *product, *y; /* the convolution; filters: w as [K, C R S] */
    tensor *q, *k, *v, *scores, *out;             /* attention */
    conv_dims d;
    bool causal;
} work;

static status run(const void *context)
{
    const work *t = context;
    switch (t->p) {
    case DIRECT: return lab_conv_direct(t->x, t->w, t->d.pad, t->y);
    case IM2COL: return lab_im2col(t->x, t->d.r, t->d.s, t->d.pad, t->cols);
    case PRODUCT: return op_matmul(t->filters, false, t->cols, false, NULL, t->product);
    case IM2COL_PATH: return lab_conv_im2col(t->x, t->w, t->d.pad, t->y);
    case SCORES: return op_matmul(t->q, false, t->k, true, NULL, t->scores);
    case SOFTMAX:
        return lab_softmax_rows(t->scores, (float)(1.0 / sqrt((double)tensor_dim(t->q, 1))), t->causal);
    case VALUES: return op_matmul(t->scores, false, t->v, false, NULL, t->out);
    case ONE_PASS: return lab_flash_attention(t->q, t->k, t->v, t->causal, t->out);
    default: return lab_attention(t->q, t->k, t->v, t->causal, t->out);
    }
}

static const results_column columns[] = { { "device", RESULTS_TEXT, "device", "%s", 6 },
                                          { "layer", RESULTS_TEXT, "layer", "%s", 9 },
                                          { "part", RESULTS_TEXT, "part", "%s", 13 },
                                          { "n", RESULTS_NUMBER, "n", "%.0f", 5 },
                                          { "ms", RESULTS_NUMBER, "ms", "%.3f", 9 },
                                          { "gflops", RESULTS_NUMBER, "GFLOP/s", "%.1f", 8 },
                                          { "input_bytes", RESULTS_BYTES, "input", NULL, 9 },
                                          { "extra_bytes", RESULTS_BYTES, "extra at peak", NULL, 13 },
                                          { "error", RESULTS_NUMBER, "error vs f64", "%.1e", 12 } };

/* Part p's row: its time (the fastest of `runs`) and speed. A whole layer's row
 * also gets its input's bytes and the memory it needs beyond its operands. */
static double measure(results *r, device dev, work *t, part p, int runs, double flop, double input)
{
    double ms;
    call_usage u = { 0 };
    t->p = p;
    const bool layer = p == DIRECT || p == IM2COL_PATH || p == ATTENTION;
    if (layer) {
        const size_t before = usage_begin(dev);
        CHECK(run(t));
        u = usage_end(dev, before);
    }
    CHECK(time_call(dev, run, t, runs, &ms));
    CHECK(results_row(r));
    results_text(r, "device", device_name(dev));
    results_text(r, "layer", p < SCORES ? "conv" : "attention");
    results_text(r, "part", part_names[p]);
    if (p >= SCORES) results_number(r, "n", (double)tensor_dim(t->q, 0));
    results_number(r, "ms", ms);
    if (flop > 0) results_number(r, "gflops", flop / ms / 1e6);
    if (layer)
        results_number(r, "input_bytes", input), results_number(r, "extra_bytes", (double)u.peak_bytes);
    return ms;
}

/* What the takeaway says: the convolution's figures, and attention's at the longest n (ms:
 * Q K^T, the softmax, P V, the whole). */
typedef struct summary {
    double direct_ms, im2col_ms, im2col_extra, conv_input, buffer, ms[4], scores_bytes, qkv_bytes;
    int64_t n;
} summary;

/* ---- 1. the convolution -------------------------------------------------------------- */

/* The current row's error: y against float64 on 4096 of its elements. */
static void conv_error_cell(results *r, const work *t, const float *hx, const float *hw)
{
    float *hy;
    CHECK(host_copy(t->y, &hy));
    results_number(r, "error", conv_error(hx, hw, &t->d, hy, 4096, NULL));
    free(hy);
}

static void convolution(results *r, device dev, conv_dims d, int runs, summary *s)
{
    work t = { .d = d };
    const int64_t taps = d.c * d.r * d.s, pixels = d.n * d.h_out * d.w_out;
    float *hx, *hw;
    CHECK(tensor_uniform(&t.x, dev, shape4(d.n, d.c, d.h, d.w), -1.0f, 1.0f, 1));
    CHECK(tensor_uniform(&t.w, dev, shape4(d.k, d.c, d.r, d.s), -1.0f, 1.0f, 2));
    CHECK(tensor_empty(&t.y, dev, DTYPE_F32, shape4(d.n, d.k, d.h_out, d.w_out)));
    CHECK(tensor_empty(&t.cols, dev, DTYPE_F32, shape2(taps, pixels)));
    CHECK(tensor_empty(&t.product, dev, DTYPE_F32, shape2(d.k, pixels)));
    CHECK(tensor_reshape(t.w, shape2(d.k, taps), &t.filters));
    CHECK(host_copy(t.x, &hx));
    CHECK(host_copy(t.w, &hw));
    const double flop = 2.0 * (double)(d.k * taps * pixels);
    s->conv_input = (double)tensor_bytes(t.x), s->buffer = (double)tensor_bytes(t.cols);
    s->direct_ms = measure(r, dev, &t, DIRECT, runs, flop, s->conv_input);
    conv_error_cell(r, &t, hx, hw);
    measure(r, dev, &t, IM2COL, runs, 0.0, s->conv_input);
    measure(r, dev, &t, PRODUCT, runs, flop, s->conv_input);
    s->im2col_ms = measure(r, dev, &t, IM2COL_PATH, runs, flop, s->conv_input);
    conv_error_cell(r, &t, hx, hw);
    s->im2col_extra = results_get(r, results_count(r) - 1, "extra_bytes");
    tensor_free(t.x), tensor_free(t.w), tensor_free(t.filters), tensor_free(t.y), tensor_free(t.cols);
    tensor_free(t.product), free(hx), free(hw);
}

/* ---- 2. attention ---------------------------------------------------------------------- */

/* q, k and v [n, d] (the same draws for every way of computing attention) and out. */
static void attention_operands(work *t, device dev, int64_t n, int64_t d)
{
    CHECK(tensor_uniform(&t->q, dev, shape2(n, d), -1.0f, 1.0f, 3));
    CHECK(tensor_uniform(&t->k, dev, shape2(n, d), -1.0f, 1.0f, 4));
    CHECK(tensor_uniform(&t->v, dev, shape2(n, d), -1.0f, 1.0f, 5));
    CHECK(tensor_empty(&t->out, dev, DTYPE_F32, shape2(n, d)));
}

/* The current row's error: out against float64 on 16 of its rows. */
static void attention_error_cell(results *r, const work *t)
{
    const int64_t n = tensor_dim(t->q, 0), d = tensor_dim(t->q, 1);
    float *hq, *hk, *hv, *hout;
    CHECK(host_copy(t->q, &hq));
    CHECK(host_copy(t->k, &hk));
    CHECK(host_copy(t->v, &hv));
    CHECK(host_copy(t->out, &hout));
    results_number(r, "error", attention_error(hq, hk, hv, n, d, t->causal, hout, 16, NULL));
    free(hq), free(hk), free(hv), free(hout);
}

static void attention(results *r, device dev, int64_t n, int64_t d, bool causal, int runs, summary *s)
{
    work t = { .causal = causal };
    attention_operands(&t, dev, n, d);
    CHECK(tensor_empty(&t.scores, dev, DTYPE_F32, shape2(n, n)));
    const double flop = 2.0 * (double)(n * n * d), input = 3.0 * (double)tensor_bytes(t.q);
    s->n = n, s->qkv_bytes = input;
    const double flops[] = { flop, 0.0, flop, 2.0 * flop }; /* Q K^T, softmax (no product), P V, total */
    for (part p = SCORES; p <= ATTENTION; ++p)
        s->ms[p - SCORES] = measure(r, dev, &t, p, runs, flops[p - SCORES], input);
    s->scores_bytes = results_get(r, results_count(r) - 1, "extra_bytes");
    attention_error_cell(r, &t);
    tensor_free(t.q), tensor_free(t.k), tensor_free(t.v), tensor_free(t.scores), tensor_free(t.out);
}

/* ---- 3. attention in one pass ----------------------------------------------------------- */

/* Attention in one pass runs 8 threads per row, each through an eighth of the
 * keys: on the CPU and a simulated GPU still about 4 n^2 d multiply-adds at one
 * core's speed. Its time is measured up to this n there (its memory at every
 * n, from one call). */
enum { ONE_PASS_TIMED_N = 1024 };

/* The row "one pass" at n: the time of lab_flash_attention (where timed), the
 * memory it needs beyond q, k, v and out at its peak (none: no n x n scores)
 * and its error against float64 on 16 rows. Returns the time (NaN: not timed). */
static double one_pass(results *r, device dev, int64_t n, int64_t d, bool causal, int runs, bool timed)
{
    double ms = NAN;
    work t = { .causal = causal };
    attention_operands(&t, dev, n, d);
    const size_t before = usage_begin(dev);
    CHECK(lab_flash_attention(t.q, t.k, t.v, causal, t.out));
    const call_usage u = usage_end(dev, before);
    CHECK(results_row(r));
    results_text(r, "device", device_name(dev));
    results_text(r, "layer", "attention");
    results_text(r, "part", "one pass");
    results_number(r, "n", (double)n);
    if (timed) {
        t.p = ONE_PASS;
        CHECK(time_call(dev, run, &t, runs, &ms));
        results_number(r, "ms", ms);
        results_number(r, "gflops", 4.0 * (double)(n * n * d) / ms / 1e6);
    }
    results_number(r, "input_bytes", 3.0 * (double)tensor_bytes(t.q));
    results_number(r, "extra_bytes", (double)u.peak_bytes);
    attention_error_cell(r, &t);
    tensor_free(t.q), tensor_free(t.k), tensor_free(t.v), tensor_free(t.out);
    return ms;
}

/* Seconds for one pass at n: on the CPU or a simulated GPU about 4 n^2 d
 * multiply-adds at 1 GFLOP/s, about 15 runs where timed, one call above. */
static double one_pass_seconds(bool gpu, int64_t n, int head)
{
    const double call = 4.0 * (double)(n * n * head) / 1e9;
    return gpu ? 0.05 : n <= ONE_PASS_TIMED_N ? 15.0 * call : call;
}

/* What one pass saved at the longest n: its peak memory, the operands
 * included, against the two products' (summary), and its time where timed. */
static void print_one_pass_takeaway(const summary *s, double one_pass_ms, bool gpu)
{
    const double operands = s->qkv_bytes * 4.0 / 3.0; /* out is as large as q */
    printf(
        "one pass: at n = %lld, attention in one pass peaked at %.4g MiB (q, k, v and out) against %.4g MiB "
        "for the two products and their n x n scores (%.1fx)",
        (long long)s->n, operands / 1048576.0, (operands + s->scores_bytes) / 1048576.0,
        (operands + s->scores_bytes) / operands);
    if (!isnan(one_pass_ms)) printf(", in %.4g ms against %.4g ms", one_pass_ms, s->ms[3]);
    printf("%s\n",
           gpu || !(one_pass_ms > s->ms[3])
               ? ""
               : " (slower here: your kernel runs one thread at a time, the products in OpenBLAS; on a "
                 "GPU it reads K and V once per 32 rows where the products write and read the scores)");
}

/* ---- the experiment ----------------------------------------------------------------------- */

static void print_takeaway(device dev, const summary *s)
{
    const double products = 100.0 * (s->ms[0] + s->ms[2]) / (s->ms[0] + s->ms[1] + s->ms[2]);
    printf(
        "(error vs f64: the largest on sampled outputs, relative to the size of the terms summed; extra at "
        "peak: memory beyond the layer's operands, im2col's buffer alone %.1f MiB, %.1fx the input; total: "
        "the whole layer, which also makes its n x n scores afresh each call)\n",
        s->buffer / 1048576.0, s->buffer / s->conv_input);
    printf(
        "\ntakeaway: on %s the convolution through im2col and one product took %.4g ms against %.4g ms for "
        "the direct kernel (%.1fx), for %.1f MiB of extra memory (%.1fx its input); attention at n = %lld: "
        "the products %.0f%% of the time, the softmax %.0f%%, and an n x n score matrix of %.4g MiB, %.2gx "
        "Q, K and V together. That matrix is why fused attention kernels (FlashAttention) exist.\n",
        device_name(dev), s->im2col_ms, s->direct_ms, s->direct_ms / s->im2col_ms,
        s->im2col_extra / 1048576.0, s->im2col_extra / s->conv_input, (long long)s->n, products,
        100.0 - products, s->scores_bytes / 1048576.0, s->scores_bytes / s->qkv_bytes);
    double load = 0.0;
    if (s->im2col_ms > s->direct_ms && getloadavg(&load, 1) == 1) /* against the lesson: say why */
        printf("(the product should have won: other programs held the cores, load average %.1f)\n", load);
    if (dev.kind != DEVICE_CUDA)
        printf("(on %s kernels run one thread at a time, products in OpenBLAS: not a GPU's shares)\n",
               device_name(dev));
}

/* Seconds for attention at n: about 15 runs (measure and time_call), each of 20 ns per emulated
 * softmax element and products at 50 GFLOP/s on the CPU or a simulated GPU; little on a real GPU. */
static double attention_seconds(bool gpu, int64_t n, int head)
{
    return gpu ? 0.05 : 15.0 * ((double)n * n * 20e-9 + 4.0 * (double)(n * n * head) / 5e10);
}

int main(int argc, char **argv)
{
    int head = 64, max_n = 0;
    bool causal = false;
    const cli_option options[] = {
        { "head-size", CLI_INT, &head, "D", "attention's head size d", 1, 1024 },
        { "max-n", CLI_INT, &max_n, "N",
          "the longest sequence (0: 4096 on the CPU or a simulated GPU, 16384 on a real GPU; --quick: 512, "
          "2048)",
          0, 1 << 20 },
        { "causal", CLI_FLAG, &causal, NULL, "attention with the causal mask", 0, 0 },
    };
    const cli_program program = { "07_layers",
                                  "a convolution and self-attention from matrix products: where the "
                                  "time and the memory go",
                                  options, 3 };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;
    results *r;
    CHECK(results_create(&r, &args, columns, (int)(sizeof columns / sizeof columns[0])));
    /* Three lessons, three figures: FIG (attention's time), FIG-memory and FIG-peak. */
    static const char *const figures[] = { "time", "memory", "peak" };
    CHECK(results_check_figures(r, figures, 3));
    const device dev = args.dev;
    const bool gpu = dev.kind == DEVICE_CUDA;
    /* A real GPU: ResNet's second stage at batch 32. Elsewhere, kernels that run one thread at a time. */
    const conv_dims d = gpu          ? (conv_dims){ 32, 64, 56, 56, 64, 3, 3, 1, 56, 56 }
                        : args.quick ? (conv_dims){ 4, 32, 14, 14, 32, 3, 3, 1, 14, 14 }
                                     : (conv_dims){ 8, 64, 28, 28, 64, 3, 3, 1, 28, 28 };
    const int64_t last_n = max_n ? max_n : gpu ? (args.quick ? 2048 : 16384) : (args.quick ? 512 : 4096);
    const int64_t first_n = gpu ? 256 : args.quick ? 64 : 128, shortest = first_n < last_n ? first_n : last_n;
    const int runs = gpu ? 10 : 5;
    char xs[64], ws[64];
    printf("lab 07 on %s, sizes for %s\n", device_name(dev),
           gpu ? "a real GPU" : "kernels run one thread at a time");
    printf("1. convolution: x %s, w %s, padding %lld (%.2f GFLOP): your direct kernel, then im2col and one "
           "product\n",
           shape_format(shape4(d.n, d.c, d.h, d.w), xs, sizeof xs),
           shape_format(shape4(d.k, d.c, d.r, d.s), ws, sizeof ws), (long long)d.pad,
           2e-9 * (double)(d.n * d.k * d.h_out * d.w_out * d.c * d.r * d.s));
    printf("2. attention: one head, d = %d%s, n = %lld to %lld: Q K^T, your softmax, P V, and the whole\n\n",
           head, causal ? ", causal" : "", (long long)shortest, (long long)last_n);
    double estimate = 0.0, done = 0.0;
    for (int64_t n = shortest; n <= last_n; n *= 2)
        estimate += attention_seconds(gpu, n, head) + one_pass_seconds(gpu, n, head);
    progress p;
    progress_begin(&p, "attention up to the longest sequence", estimate);
    summary s = { 0 };
    double one_pass_ms = NAN;
    CHECK(results_echo(r, true));
    convolution(r, dev, d, runs, &s);
    for (int64_t n = shortest; n <= last_n; n *= 2) {
        attention(r, dev, n, head, causal, runs, &s);
        if (head <= FLASH_MAX_HEAD)
            one_pass_ms = one_pass(r, dev, n, head, causal, runs, gpu || n <= ONE_PASS_TIMED_N);
        done += attention_seconds(gpu, n, head) + one_pass_seconds(gpu, n, head);
        progress_update(&p, done / estimate);
    }
    progress_end(&p);
    CHECK(results_print(r));
    print_takeaway(dev, &s);
    if (head <= FLASH_MAX_HEAD)
        print_one_pass_takeaway(&s, one_pass_ms, gpu);
    else
        printf("(attention in one pass left out: a head of %d is more than its FLASH_MAX_HEAD, %d)\n", head,
               FLASH_MAX_HEAD);
    CHECK(results_finish_figures(r, figures, 3, NULL));
    results_free(r);
    return 0;
}
