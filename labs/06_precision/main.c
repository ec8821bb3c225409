/* main.c: lab 06's experiment: one matrix product at four precisions (FP32,
 * TF32, BF16, F16) on --device, and what each costs and buys. Your roundings
 * (step 1), then one table in four parts: the bytes and copy time of a matrix
 * (step 2), the error against float64 as k grows (steps 3 and 4), TFLOP/s and
 * the fraction of the peak that applies, beside an H100's (step 5), and lab
 * 05's MLP trained with FP32 and with BF16 products (step 6).
 *
 *   ./lab run 06                                   on try_gpu(0)
 *   ./lab run 06 -- --device cpu --quick
 *   ./lab run 06 -- --plot precision.png   (and precision-error, -speed and -train.png beside it) */
#include <math.h>
#include <stdio.h>

#include "measure.h"
#include "mixed_mlp.h"

static const results_column columns[] = {
    { "part", RESULTS_TEXT, "part", "%s", 5 },
    { "device", RESULTS_TEXT, "device", "%s", 6 },
    { "precision", RESULTS_TEXT, "prec.", "%s", 5 },
    { "bytes", RESULTS_BYTES, "bytes", NULL, 9 },
    { "copy_ms", RESULTS_NUMBER, "copy ms", "%.2f", 7 },
    { "k", RESULTS_NUMBER, "k", "%.0f", 5 },
    { "error", RESULTS_NUMBER, "rel. error", "%.2e", 10 },
    { "unit_roundoff", RESULTS_NUMBER, "unit roundoff", "%.2e", 13 },
    { "n", RESULTS_NUMBER, "N", "%.0f", 5 },
    { "tflops", RESULTS_NUMBER, "TFLOP/s", "%.3g", 7 },
    { "peak_percent", RESULTS_NUMBER, "of peak", "%.1f%%", 7 },
    { "epoch", RESULTS_NUMBER, "epoch", "%.0f", 5 },
    { "loss", RESULTS_NUMBER, "loss", "%.3f", 5 },
    { "accuracy", RESULTS_NUMBER, "held-out", "%.1f%%", 8 },
};
#define NCOLUMNS ((int)(sizeof columns / sizeof columns[0]))

typedef struct settings {
    device dev;
    bool quick;
    int max_n, epochs;
} settings;

/* What the takeaway quotes: FP32 and BF16 at the largest size of each part. */
typedef struct summary {
    double copy_ms[LAB_PRECISIONS], error[LAB_PRECISIONS], tflops[LAB_PRECISIONS];
    double accuracy[LAB_PRECISIONS];
} summary;

static void start_row(results *r, const char *part, const char *device, lab_precision p)
{
    CHECK(results_row(r));
    results_text(r, "part", part);
    results_text(r, "device", device);
    results_text(r, "precision", precision_name(p));
}

/* ---- step 2: the bytes and the copy time of one matrix ------------------------------ */

/* An N x N matrix on the CPU, in each precision as lab_operand stores it,
 * copied to the device: the bytes the device counted, and the fastest of 5. */
static void measure_copies(results *r, const settings *s, summary *sum)
{
    enum { REPS = 5 };
    const int64_t n = s->quick ? 2048 : 4096;
    tensor *x = NULL;
    CHECK(tensor_uniform(&x, device_cpu(), shape2(n, n), -1.0f, 1.0f, 3));
    for (int i = 0; i < LAB_PRECISIONS; ++i) {
        tensor *operand = NULL, *there = NULL;
        double seconds = 0, bytes = 0;
        CHECK(lab_operand(x, all_precisions[i], &operand));
        CHECK(tensor_empty(&there, s->dev, tensor_dtype(operand), shape2(n, n)));
        CHECK(time_copy(there, operand, REPS, &seconds, &bytes));
        start_row(r, "copy", device_name(s->dev), all_precisions[i]);
        results_number(r, "bytes", bytes);
        results_number(r, "copy_ms", seconds * 1e3);
        sum->copy_ms[i] = seconds * 1e3;
        tensor_free(operand), tensor_free(there);
    }
    tensor_free(x);
}

/* ---- steps 3 and 4: the error against float64 as k grows ---------------------------- */

static void measure_errors(results *r, const settings *s, summary *sum)
{
    enum { M = 64, N = 64 };
    const int64_t k_max = s->quick ? 1024 : 4096;
    static float got[M * N];
    for (int64_t k = 16; k <= k_max; k *= 4) {
        product_case c;
        CHECK(product_case_make(&c, M, N, k, false, false, false, 100 + (uint64_t)k));
        for (int i = 0; i < LAB_PRECISIONS; ++i) {
            double u = 0;
            CHECK(product_case_run(&c, s->dev, all_precisions[i], got));
            CHECK(lab_relative_error(got, c.ref, M * N, &sum->error[i]));
            CHECK(lab_unit_roundoff(all_precisions[i], &u));
            start_row(r, "error", device_name(s->dev), all_precisions[i]);
            results_number(r, "k", (double)k);
            results_number(r, "error", sum->error[i]);
            results_number(r, "unit_roundoff", u);
        }
        product_case_free(&c);
    }
}

/* ---- step 5: TFLOP/s and the fraction of the peak that applies ---------------------- */

static void speed_row(results *r, const char *device, const device_properties *props, lab_precision p,
                      int64_t n, double tflops)
{
    double peak = 0;
    CHECK(lab_peak_gflops(props, p, &peak));
    start_row(r, "speed", device, p);
    results_number(r, "n", (double)n);
    results_number(r, "tflops", tflops);
    if (peak > 0) results_number(r, "peak_percent", 100.0 * tflops * 1e3 / peak);
}

static void measure_speed(results *r, const settings *s, const device_properties *props, summary *sum,
                          progress *pg)
{
    const int64_t sizes[3] = { s->max_n / 8, s->max_n / 2, s->max_n };
    double done = 0, total = 0; /* FLOP, for the progress lines of a long run */
    for (int i = 0; i < 3; ++i) total += LAB_PRECISIONS * 2.0 * (double)(sizes[i] * sizes[i] * sizes[i]);
    for (int i = 0; i < 3; ++i) {
        const int64_t n = sizes[i];
        tensor *a = NULL, *b = NULL, *out = NULL;
        CHECK(tensor_uniform(&a, s->dev, shape2(n, n), -1.0f, 1.0f, 1));
        CHECK(tensor_uniform(&b, s->dev, shape2(n, n), -1.0f, 1.0f, 2));
        CHECK(tensor_empty(&out, s->dev, DTYPE_F32, shape2(n, n)));
        for (int j = 0; j < LAB_PRECISIONS; ++j) {
            double seconds = 0;
            CHECK(time_product(a, b, out, all_precisions[j], 5, &seconds));
            const double flop = 2.0 * (double)(n * n * n);
            sum->tflops[j] = flop / seconds / 1e12;
            speed_row(r, device_name(s->dev), props, all_precisions[j], n, sum->tflops[j]);
            progress_update(pg, (done += flop) / total);
        }
        tensor_free(a), tensor_free(b), tensor_free(out);
    }
    device_properties h100;
    CHECK(h100_properties(&h100));
    for (int i = 0; i < 3 * LAB_PRECISIONS; ++i) {
        const int64_t n = h100_pytorch_sizes[i / LAB_PRECISIONS];
        const lab_precision p = all_precisions[i % LAB_PRECISIONS];
        speed_row(r, "H100 (PyTorch)", &h100, p, n, h100_pytorch_tflops(p, n));
    }
}

/* ---- step 6: training with FP32 and with BF16 products -------------------------------- */

static void measure_training(results *r, const settings *s, summary *sum)
{
    const int64_t sizes[] = { 28 * 28, 128, 10 };
    dataset train, test;
    CHECK(dataset_synthetic(&train, s->quick ? 4096 : 8192, 1));
    CHECK(dataset_synthetic(&test, 1024, 2));
    const lab_precision trained[] = { LAB_FP32, LAB_BF16 };
    for (int i = 0; i < 2; ++i) {
        mixed_mlp net;
        CHECK(mixed_mlp_create(&net, s->dev, sizes, 3, 64, trained[i], 7));
        for (int epoch = 1; epoch <= s->epochs; ++epoch) {
            double loss = 0, accuracy = 0;
            CHECK(mixed_mlp_train_epoch(&net, &train, epoch, 0.5f, &loss));
            CHECK(mixed_mlp_accuracy(&net, &test, &accuracy));
            start_row(r, "train", device_name(s->dev), trained[i]);
            results_number(r, "epoch", epoch);
            results_number(r, "loss", loss);
            results_number(r, "accuracy", 100 * accuracy);
            sum->accuracy[trained[i]] = 100 * accuracy;
        }
        mixed_mlp_free(&net);
    }
    dataset_free(&train), dataset_free(&test);
}

static void print_takeaway(const summary *sum, const device_properties *props, device d)
{
    const double speedup = sum->tflops[LAB_BF16] / sum->tflops[LAB_FP32];
    printf("takeaway: BF16 stores a matrix in half the bytes, copied in %.2fx the time of FP32, and errs by "
           "%.1e against FP32's %.1e (8 bits of precision against 24); ",
           sum->copy_ms[LAB_BF16] / sum->copy_ms[LAB_FP32], sum->error[LAB_BF16], sum->error[LAB_FP32]);
    if (props->tensor_cores)
        printf("on %s's tensor cores it multiplied %.1fx as fast as FP32, ", device_name(d), speedup);
    else
        printf("with no tensor cores on %s it multiplied at %.2fx FP32's speed, the same float32 arithmetic "
               "(an H100's tensor cores: %.0fx), ",
               device_name(d), speedup,
               h100_pytorch_tflops(LAB_BF16, 8192) / h100_pytorch_tflops(LAB_FP32, 8192));
    printf("and the MLP still learns with BF16 products (%.1f%% held-out, FP32 %.1f%%).\n",
           sum->accuracy[LAB_BF16], sum->accuracy[LAB_FP32]);
}

int main(int argc, char **argv)
{
    settings s = { .max_n = 0, .epochs = 0 };
    const cli_option options[] = {
        { "max-n", CLI_INT, &s.max_n, "N",
          "largest N of the speed sweep, which also times N/8 and N/2; unset (0): 8192 on a GPU with tensor "
          "cores, 1024 elsewhere, 2048 and 512 with --quick",
          64, 16384 },
        { "epochs", CLI_INT, &s.epochs, "E",
          "epochs of training at each precision; unset (0): 4, 2 with --quick", 1, 50 },
    };
    const cli_program program = {
        .name = "06_precision",
        .summary = "one product at FP32, TF32, BF16 and F16: bytes and copy time, error against float64, "
                   "TFLOP/s, and an MLP trained with BF16 products",
        .options = options,
        .noptions = 2,
    };
    cli_args args;
    int code = cli_parse(&program, argc, argv, &args);
    if (code >= 0) return code;
    results *r = NULL;
    CHECK(results_create(&r, &args, columns, NCOLUMNS));
    /* One step's lesson a figure: FIG, FIG-error, FIG-speed and FIG-train. */
    static const char *const figures[] = { "copy", "error", "speed", "train" };
    CHECK(results_check_figures(r, figures, 4));
    device_properties props;
    CHECK(device_get_properties(args.dev, &props));
    s.dev = args.dev, s.quick = args.quick;
    if (!s.max_n) s.max_n = props.tensor_cores ? (s.quick ? 2048 : 8192) : (s.quick ? 512 : 1024);
    if (!s.epochs) s.epochs = s.quick ? 2 : 4;
    printf("%s: %s\n%s\n\n", device_name(s.dev), props.name, props.tensor_notes);

    CHECK(show_your_rounding());
    progress pg;
    progress_begin(&pg, "N x N products up to --max-n at four precisions",
                   sweep_seconds(s.max_n, fmax(device_compute_gflops(s.dev), 1)));
    summary sum = { 0 };
    measure_copies(r, &s, &sum);
    measure_errors(r, &s, &sum);
    measure_speed(r, &s, &props, &sum, &pg);
    measure_training(r, &s, &sum);
    progress_end(&pg);
    CHECK(results_print(r));

    char cores[32];
    snprintf(cores, sizeof cores, "tensor_cores=%d", props.tensor_cores ? 1 : 0);
    const char *vars[] = { cores, NULL };
    CHECK(results_finish_figures(r, figures, 4, vars));
    print_takeaway(&sum, &props, s.dev);
    results_free(r);
    return 0;
}
