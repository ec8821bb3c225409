/* check.c: does lab 05's training loop hold on a given device?
 *
 *   1. backward: every parameter's gradient matches float64 finite differences;
 *   2. learning: held-out accuracy passes a threshold within a few epochs;
 *   3. the same seed gives the same per-epoch losses as on the cpu;
 *   4. the log kept on the device costs one device-to-host read per epoch, the
 *      item-every-step log one per step (counted by the library), and on a GPU
 *      only the on-device log lets the host run ahead of the device;
 *   5. the IDX reader refuses truncated, wrong-magic and wrong-size files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "lab.h"
#include "train.h"

/* Small enough for a loaded 2-core machine: 125 steps of 32 images per epoch.
 * Measured: about 80% held-out after 4 epochs, 77% after 3, 68% after 2. A
 * sanitizer build (10 times slower on the simulated GPU) trains 2 epochs. */
#define TRAIN_SAMPLES 4000
#define HELDOUT_SAMPLES 1000
#define BATCH 32
#if defined(__SANITIZE_ADDRESS__)
#define EPOCHS 2
#define ACCURACY_THRESHOLD 0.60
#else
#define EPOCHS 4
#define ACCURACY_THRESHOLD 0.70
#endif
#define EVERY_STEP_SAMPLES 1000 /* the item-every-step epoch: 32 steps */
#define SAME_SEED_RTOL 1e-4
/* Float32 gradients against float64 central differences: |g - fd| <= ATOL + RTOL |fd|. */
#define GRAD_ATOL 1e-4
#define GRAD_RTOL 1e-3

/* ==== 1. gradients against finite differences ================================ */

enum { G_BATCH = 6, G_LAYERS = 3 };
static const int64_t g_sizes[G_LAYERS + 1] = { 12, 7, 5, 4 };

/* The tiny network's parameters on the host, in float64. */
typedef struct host_net {
    double *W[G_LAYERS], *b[G_LAYERS];
} host_net;

/* The mean softmax cross-entropy of the tiny network, all in float64. */
static double host_loss(const host_net *h, const double *x, const int32_t *y)
{
    double total = 0.0;
    for (int r = 0; r < G_BATCH; ++r) {
        double a[16], z[16];
        for (int i = 0; i < g_sizes[0]; ++i) a[i] = x[r * g_sizes[0] + i];
        for (int l = 0; l < G_LAYERS; ++l) {
            for (int j = 0; j < g_sizes[l + 1]; ++j) {
                z[j] = h->b[l][j];
                for (int i = 0; i < g_sizes[l]; ++i) z[j] += a[i] * h->W[l][i * g_sizes[l + 1] + j];
            }
            for (int j = 0; j < g_sizes[l + 1]; ++j) a[j] = l + 1 < G_LAYERS && z[j] < 0 ? 0 : z[j];
        }
        double max = a[0], sum = 0.0;
        for (int j = 1; j < g_sizes[G_LAYERS]; ++j) max = fmax(max, a[j]);
        for (int j = 0; j < g_sizes[G_LAYERS]; ++j) sum += exp(a[j] - max);
        total += log(sum) - (a[y[r]] - max);
    }
    return total / G_BATCH;
}

static double *to_host_f64(const tensor *t)
{
    const int64_t n = tensor_numel(t);
    float *f = malloc((size_t)n * sizeof *f);
    double *d = malloc((size_t)n * sizeof *d);
    CHECK(tensor_to_host(t, f, n));
    for (int64_t i = 0; i < n; ++i) d[i] = f[i];
    free(f);
    return d;
}

/* Worst |analytic - numeric| over the parameters of one array, against the
 * tolerance; counts the parameters looked at. */
static double compare_param(const host_net *h, double *param, const double *grad, int64_t n, const double *x,
                            const int32_t *y, int64_t *checked, int64_t *bad)
{
    const double step = 1e-6;
    double worst = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double keep = param[i];
        param[i] = keep + step;
        const double up = host_loss(h, x, y);
        param[i] = keep - step;
        const double down = host_loss(h, x, y);
        param[i] = keep;
        const double numeric = (up - down) / (2 * step), error = fabs(grad[i] - numeric);
        worst = fmax(worst, error);
        *bad += error > GRAD_ATOL + GRAD_RTOL * fabs(numeric);
        ++*checked;
    }
    return worst;
}

static void check_gradients(device d)
{
    mlp net;
    mlp_batch b;
    CHECK(mlp_create(&net, d, g_sizes, G_LAYERS + 1, 5));
    CHECK(mlp_batch_create(&net, G_BATCH, &b));
    tensor *xt;
    CHECK(tensor_uniform(&xt, d, shape2(G_BATCH, g_sizes[0]), -1.0f, 1.0f, 11));
    const int32_t y[G_BATCH] = { 0, 3, 1, 2, 3, 0 };
    CHECK(tensor_copy(b.x, xt));
    CHECK(tensor_copy_from_host_i32(b.labels, y, G_BATCH));
    /* The forward and backward passes under test, on device d. */
    CHECK(mlp_forward(&net, &b));
    CHECK(op_softmax_cross_entropy(b.out[G_LAYERS - 1], b.labels, b.probs, b.loss));
    CHECK(op_softmax_cross_entropy_backward(b.probs, b.labels, b.grad[G_LAYERS - 1]));
    CHECK(mlp_backward(&net, &b));

    host_net h;
    double *x = to_host_f64(xt), worst = 0.0;
    int64_t checked = 0, bad = 0;
    for (int l = 0; l < G_LAYERS; ++l)
        h.W[l] = to_host_f64(net.layers[l].W), h.b[l] = to_host_f64(net.layers[l].b);
    for (int l = 0; l < G_LAYERS; ++l) {
        double *dW = to_host_f64(net.layers[l].dW), *db = to_host_f64(net.layers[l].db);
        worst =
            fmax(worst, compare_param(&h, h.W[l], dW, tensor_numel(net.layers[l].W), x, y, &checked, &bad));
        worst =
            fmax(worst, compare_param(&h, h.b[l], db, tensor_numel(net.layers[l].b), x, y, &checked, &bad));
        free(dW), free(db);
    }
    check_that(bad == 0 && checked > 0,
               "backward: every parameter's gradient matches float64 central differences",
               "MLP 12-7-5-4, batch %d: %lld of %lld parameters within %.0e + %.0e |fd|; worst error %.2e",
               G_BATCH, (long long)(checked - bad), (long long)checked, GRAD_ATOL, GRAD_RTOL, worst);
    for (int l = 0; l < G_LAYERS; ++l) free(h.W[l]), free(h.b[l]);
    free(x);
    tensor_free(xt);
    mlp_batch_free(&b);
    mlp_free(&net);
}

/* ==== 2-4. training on the device =================================================== */

typedef struct training {
    epoch_result epochs[EPOCHS];
    double accuracy[EPOCHS];
} training;

static const int64_t default_sizes[] = { 784, 256, 256, 10 };

static void train_on(device d, const dataset *train, const dataset *test, log_style style, int epochs,
                     training *out)
{
    const train_settings settings = { BATCH, 0.05f, 0.9f, 1 };
    trainer t;
    CHECK(trainer_create(&t, d, default_sizes, 4, &settings));
    for (int e = 0; e < epochs; ++e) {
        CHECK(train_epoch(&t, train, e, style, &out->epochs[e]));
        CHECK(evaluate(&t, test, &out->accuracy[e]));
    }
    trainer_free(&t);
}

static void check_learning(device d, const training *run)
{
    check_that(run->accuracy[EPOCHS - 1] >= ACCURACY_THRESHOLD,
               "learning: held-out accuracy on synthetic digits passes the threshold",
               "%.1f%% after %d epochs of %d images, batch %d (threshold %.0f%%; after epoch 1: %.1f%%; loss "
               "%.3f -> %.3f) "
               "on %s",
               100 * run->accuracy[EPOCHS - 1], EPOCHS, TRAIN_SAMPLES, BATCH, 100 * ACCURACY_THRESHOLD,
               100 * run->accuracy[0], run->epochs[0].loss, run->epochs[EPOCHS - 1].loss, device_name(d));
}

static void check_same_seed(device d, const training *run, const training *cpu_run)
{
    double worst = 0.0;
    for (int e = 0; e < EPOCHS; ++e) {
        const double a = run->epochs[e].loss, b = cpu_run->epochs[e].loss;
        worst = fmax(worst, fabs(a - b) / fabs(b));
    }
    check_that(
        worst <= SAME_SEED_RTOL,
        device_is_gpu(d) ? "same seed: per-epoch losses on this device agree with the cpu's"
                         : "same seed: a second cpu run gives the same per-epoch losses",
        "%d epochs, worst relative difference %.1e (tolerance %.0e); last epoch %.7f on %s, %.7f on cpu",
        EPOCHS, worst, SAME_SEED_RTOL, run->epochs[EPOCHS - 1].loss, device_name(d),
        cpu_run->epochs[EPOCHS - 1].loss);
}

/* On a GPU a host read is a blocking device-to-host copy. On the cpu nothing
 * crosses a bus: the counters show no d2h copy at all, and each host read or
 * batch upload counts as a copy within the cpu (d2d): 2 uploads per step plus
 * the reads. */
static void check_reads(device d, const epoch_result *on_device, const epoch_result *every_step)
{
    typedef unsigned long long ull;
    const ull sa = (ull)on_device->steps, sb = (ull)every_step->steps;
    const device_counters *a = &on_device->counters, *b = &every_step->counters;
    if (device_is_gpu(d)) {
        check_that(a->d2h_copies == 1, "on-device log: exactly one blocking device-to-host read per epoch",
                   "%llu d2h copies (%llu bytes), %llu syncs over %llu steps", (ull)a->d2h_copies,
                   (ull)a->d2h_bytes, (ull)a->syncs, sa);
        check_that(b->d2h_copies == sb, "item every step: one blocking device-to-host read per step",
                   "%llu d2h copies, %llu syncs over %llu steps", (ull)b->d2h_copies, (ull)b->syncs, sb);
        /* The host waits for a staging buffer only when it is two steps ahead of
         * the device. A blocking upload or a read every step keeps it level. */
        check_that(
            4 * on_device->buffer_waits >= on_device->steps && every_step->buffer_waits == 0,
            "queued uploads: with the on-device log the host runs ahead of the device, with a read every "
            "step "
            "it cannot",
            "on-device: two steps ahead (waited for its staging buffer) at %lld of %llu steps (at least a "
            "quarter expected; none: are the step's copies the _async ones?); item every step: at %lld of "
            "%llu",
            (long long)on_device->buffer_waits, sa, (long long)every_step->buffer_waits, sb);
    } else {
        check_that(a->d2h_copies == 0 && b->d2h_copies == 0, "cpu: no device-to-host copy in either style",
                   "%llu and %llu d2h copies", (ull)a->d2h_copies, (ull)b->d2h_copies);
        check_that(
            a->d2d_copies == 2 * sa + 1 && b->d2d_copies == 3 * sb,
            "cpu: host reads of the loss, counted as copies within the cpu: one per epoch vs one per step",
            "on-device: %llu = 2 x %llu batch uploads + 1 read expected; item every step: %llu = 3 x %llu "
            "(2 uploads + 1 read per step) expected",
            (ull)a->d2d_copies, sa, (ull)b->d2d_copies, sb);
    }
}

/* ==== 5. the IDX reader ================================================================ */

typedef struct idx_files {
    char images[64], labels[64];
} idx_files;

static void make_temp(char *path, size_t size)
{
    snprintf(path, size, "/tmp/lab05-idx-XXXXXX");
    const int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        exit(CHECK_FAILS);
    }
    close(fd);
}

/* Rewrites byte `at` of a file, or its length (truncated or grown by zeros). */
static void poke_byte(const char *path, long at, unsigned char value)
{
    FILE *f = fopen(path, "r+b");
    if (!f || fseek(f, at, SEEK_SET) != 0 || fputc(value, f) == EOF) exit(CHECK_FAILS);
    fclose(f);
}

static void set_length(const char *path, long length)
{
    if (truncate(path, length) != 0) exit(CHECK_FAILS);
}

/* Loads the pair and expects a refusal whose message names the file and says `what`. */
static bool refused(const idx_files *f, const char *bad_file, const char *what, char *message, size_t size)
{
    dataset d;
    clear_error();
    const status s = dataset_load_idx(&d, f->images, f->labels);
    snprintf(message, size, "%s", last_error());
    if (s == STATUS_OK) dataset_free(&d);
    return s == STATUS_IO_FAILED && strstr(message, what) && strstr(message, bad_file);
}

static void check_idx_reader(void)
{
    dataset good, back;
    idx_files f;
    make_temp(f.images, sizeof f.images);
    make_temp(f.labels, sizeof f.labels);
    CHECK(dataset_synthetic(&good, 5, 3));
    CHECK(dataset_write_idx(&good, f.images, f.labels));
    CHECK(dataset_load_idx(&back, f.images, f.labels));
    double worst = 0.0;
    for (int64_t i = 0; i < good.count * dataset_pixels(&good); ++i)
        worst = fmax(worst, fabs(good.images[i] - back.images[i]));
    const bool same_labels = memcmp(good.labels, back.labels, sizeof(int32_t) * (size_t)good.count) == 0;
    check_that(back.count == 5 && back.rows == 28 && back.cols == 28 && same_labels &&
                   worst <= 0.5 / 255 + 1e-6,
               "IDX: a good file pair reads back", "%lld images of %lldx%lld, labels %s, pixels within %.4f",
               (long long)back.count, (long long)back.rows, (long long)back.cols,
               same_labels ? "equal" : "DIFFER", worst);
    dataset_free(&back);

    const long image_bytes = 16 + 5 * 784;
    char m1[512], m2[512], m3[512], m4[512];
    set_length(f.images, image_bytes - 100);
    const bool truncated = refused(&f, f.images, "truncated", m1, sizeof m1);
    CHECK(dataset_write_idx(&good, f.images, f.labels));
    poke_byte(f.images, 3, 0x01); /* 0x00000801: a labels file where images are expected */
    const bool magic = refused(&f, f.images, "wrong magic", m2, sizeof m2);
    CHECK(dataset_write_idx(&good, f.images, f.labels));
    set_length(f.labels, 8 + 5 + 3);
    const bool size = refused(&f, f.labels, "wrong size", m3, sizeof m3);
    CHECK(dataset_write_idx(&good, f.images, f.labels));
    poke_byte(f.labels, 8 + 2, 42);
    const bool label = refused(&f, f.labels, "labels must be 0 to 9", m4, sizeof m4);
    check_that(truncated, "IDX: a truncated images file is refused", "%s", m1);
    check_that(magic, "IDX: a wrong magic number is refused", "%s", m2);
    check_that(size, "IDX: a file longer than its header says is refused", "%s", m3);
    check_that(label, "IDX: a label out of range is refused", "%s", m4);
    remove(f.images);
    remove(f.labels);
    dataset_free(&good);
}

int main(int argc, char **argv)
{
    device d = check_device(argc, argv);
    check_gradients(d);

    dataset train, test;
    CHECK(dataset_synthetic(&train, TRAIN_SAMPLES, 1));
    CHECK(dataset_synthetic(&test, HELDOUT_SAMPLES, 1001));
    static training run, cpu_run, every_step;
    train_on(d, &train, &test, LOG_ON_DEVICE, EPOCHS, &run);
    check_learning(d, &run);
    train_on(device_cpu(), &train, &test, LOG_ON_DEVICE, EPOCHS, &cpu_run);
    check_same_seed(d, &run, &cpu_run);
    dataset head;
    CHECK(dataset_head(&train, EVERY_STEP_SAMPLES, &head));
    train_on(d, &head, &test, LOG_EVERY_STEP, 1, &every_step);
    dataset_free(&head);
    check_reads(d, &run.epochs[EPOCHS - 1], &every_step.epochs[0]);
    dataset_free(&train);
    dataset_free(&test);

    check_idx_reader();
    return check_finish("05_training_loop");
}
