/* check.c: does lab 05 hold on a given device? One group of claims per step:
 *
 *   1. backward: every parameter's gradient matches float64 finite differences;
 *   2. the log: 1.5 + 0.25 + 0.25 is exactly 2 on the device, read by nobody;
 *   3. the upload: a batch arrives whole, by two copies that wait for nothing;
 *   4. the step: the mean loss's own gradients (float64 finite differences),
 *      the cpu's loss and gradients within float32 rounding, SGD with momentum
 *      to the rounding, learning (loss and accuracy), and the reads and waits
 *      of an epoch in each logging style, counted (on a GPU, nothing in a step
 *      may wait);
 *   1, 3 and 4: each call they make refused in turn, each failure returned;
 *   5. the captured step: the eager step's losses, one host launch per step;
 *      a step that fails inside the capture, a capture refused, and each call
 *      of lab_capture_step refused in turn, return the failure and leave no
 *      device capturing and no graph (*out NULL, whatever it held); a step
 *      and a capture's end that both fail return the step's failure; a network
 *      on another device (sim:1 beside sim:0) is captured there;
 *   6. saved and loaded: one copy per tensor each way, the names and shapes of
 *      the file, bit-identical logits on the same device, the same accuracy on
 *      the cpu, the tensors found by name in any order, and files of other
 *      networks, names (one misspelled), shapes (a dimension fewer too) or
 *      dtypes refused without touching this one, naming the tensor that
 *      differs and how; each call of the file functions refused in turn,
 *      each failure returned; every load closes its file and leaves no
 *      tensor behind.
 * At the end, with every network freed, the bytes in use on the device and on
 * the cpu are those of the start.
 *
 * Every claim is a count, an exact value or a tolerance of float32 rounding:
 * none depends on how fast the device is, so they hold on the cpu, on a
 * simulated GPU and on a real one, also with other programs on the cores. The
 * given code (the IDX reader, the sizing of a network) is tested by test05_inputs. */
#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "lab.h"
#include "train.h"

/* Small enough for a loaded 2-core machine: 125 steps of 32 images per epoch.
 * Measured: 79.8% held-out after 4 epochs, 77% after 3, 68% after 2, with a
 * training loss of 0.24 in the fourth epoch and 0.79 in the second. A step
 * that is nearly right learns too, only worse (the loss's gradient taken from
 * the logits instead of the probabilities: 74.9% and a loss of 1.76), so the
 * loss is held near its figure as well as the accuracy. A sanitizer build (10
 * times slower on the simulated GPU) trains 2 epochs. */
#define TRAIN_SAMPLES 4000
#define HELDOUT_SAMPLES 1000
#define BATCH 32
#if defined(__SANITIZE_ADDRESS__)
#define EPOCHS 2
#define ACCURACY_THRESHOLD 0.60
#define LOSS_THRESHOLD 1.0
#else
#define EPOCHS 4
#define ACCURACY_THRESHOLD 0.75
#define LOSS_THRESHOLD 0.35
#endif
#define EVERY_STEP_SAMPLES 1000 /* the item-every-step epoch: 32 steps */
#define CAPTURE_SAMPLES 200     /* 6 full batches and one of 8 rows: three graphs */
#define LR 0.05f
#define MOMENTUM 0.9f
/* Float32 gradients against float64 central differences: |g - fd| <= ATOL + RTOL |fd|. */
#define GRAD_ATOL 1e-4
#define GRAD_RTOL 1e-3
/* Two BLAS libraries (cuBLAS, OpenBLAS) sum in different orders: one step's
 * results differ by float32 rounding, |a - b| / |b| of 1e-6 over a tensor. */
#define CROSS_DEVICE_RTOL 1e-4
/* The captured step runs the eager step's own kernels: the same numbers. */
#define CAPTURED_RTOL 1e-5

static const int64_t default_sizes[] = { 784, 256, 256, 10 };
static const train_settings settings = { BATCH, LR, MOMENTUM, 1 };

/* A call of the student's that the claims after it need: a failure fails
 * `claim` (CHECK_CALL, labkit/check.h) and ends the check, since what follows
 * cannot be measured. */
#define MUST(call, claim)                                                     \
    do {                                                                      \
        if (!CHECK_CALL(call, claim)) exit(check_finish("05_training_loop")); \
    } while (0)

/* Bytes in use on d: the memory of the tensors alive there. */
static size_t bytes_in_use(device d)
{
    device_counters c;
    CHECK(counters_read(d, &c));
    return c.memory_current;
}

/* Graphs made on d and not freed yet. */
static uint64_t graphs_alive(device d)
{
    device_counters c;
    CHECK(counters_read(d, &c));
    return c.graphs;
}

/* The device beside d of its kind (sim:1 for sim:0), else the cpu for a GPU,
 * and the cpu for the cpu: a second device on which a mix-up of devices shows
 * (try_gpu(0) where the network's own device was meant). */
static device neighbour(device d)
{
    if (!device_is_gpu(d)) return d;
    device e = d;
    e.index = d.index + 1 < device_count(d.kind) ? d.index + 1 : d.index - 1;
    return e.index >= 0 && e.index != d.index ? e : device_cpu();
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

/* |a - b| / |b| over two tensors of one shape (norms over all elements). */
static double relative_difference(const tensor *a, const tensor *b)
{
    const int64_t n = tensor_numel(a);
    double *x = to_host_f64(a), *y = to_host_f64(b), diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; ++i) diff += (x[i] - y[i]) * (x[i] - y[i]), norm += y[i] * y[i];
    free(x), free(y);
    return norm > 0 ? sqrt(diff / norm) : sqrt(diff);
}

/* The largest relative_difference over the layers of two networks alike: of
 * their gradients (dW, db) or of their parameters (W, b). */
static double worst_layer_difference(const mlp *a, const mlp *b, bool gradients)
{
    double worst = 0.0;
    for (int l = 0; l < a->nlayers; ++l) {
        const layer *x = &a->layers[l], *y = &b->layers[l];
        worst = fmax(worst, relative_difference(gradients ? x->dW : x->W, gradients ? y->dW : y->W));
        worst = fmax(worst, relative_difference(gradients ? x->db : x->b, gradients ? y->db : y->b));
    }
    return worst;
}

/* ==== Step 1: gradients against finite differences =========================== */

enum { G_BATCH = 6, G_LAYERS = 3, G_INPUTS = 12 };
static const int64_t g_sizes[G_LAYERS + 1] = { G_INPUTS, 7, 5, 4 };

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

/* Worst |analytic - numeric| over the parameters of one array; counts the
 * parameters looked at and those out of tolerance. */
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

/* The tiny network on d, seed 5, with a batch of G_BATCH rows already on d. */
typedef struct tiny {
    mlp net;
    mlp_batch b;
    double x[G_BATCH * G_INPUTS]; /* the batch's inputs, on the host */
} tiny;

static const int32_t tiny_labels[G_BATCH] = { 0, 3, 1, 2, 3, 0 };

static void tiny_create(tiny *t, device d)
{
    tensor *xt;
    CHECK(mlp_create(&t->net, d, g_sizes, G_LAYERS + 1, 5));
    CHECK(mlp_batch_create(&t->net, G_BATCH, &t->b));
    CHECK(tensor_uniform(&xt, d, shape2(G_BATCH, g_sizes[0]), -1.0f, 1.0f, 11));
    CHECK(tensor_copy(t->b.x, xt));
    CHECK(tensor_copy_from_host_i32(t->b.labels, tiny_labels, G_BATCH));
    double *x = to_host_f64(xt);
    memcpy(t->x, x, sizeof t->x);
    free(x);
    tensor_free(xt);
}

static void tiny_free(tiny *t)
{
    mlp_batch_free(&t->b);
    mlp_free(&t->net);
}

static void host_net_of(const mlp *net, host_net *h)
{
    for (int l = 0; l < G_LAYERS; ++l)
        h->W[l] = to_host_f64(net->layers[l].W), h->b[l] = to_host_f64(net->layers[l].b);
}

static void host_net_free(host_net *h)
{
    for (int l = 0; l < G_LAYERS; ++l) free(h->W[l]), free(h->b[l]);
}

/* Every gradient the tiny network holds (dW, db) against central differences
 * of the float64 loss at the parameters h: the worst error, and how many
 * parameters were looked at and were out of tolerance. */
static double compare_gradients(const tiny *t, host_net *h, int64_t *checked, int64_t *bad)
{
    double worst = 0.0;
    *checked = *bad = 0;
    for (int l = 0; l < G_LAYERS; ++l) {
        const layer *L = &t->net.layers[l];
        double *dW = to_host_f64(L->dW), *db = to_host_f64(L->db);
        worst =
            fmax(worst, compare_param(h, h->W[l], dW, tensor_numel(L->W), t->x, tiny_labels, checked, bad));
        worst =
            fmax(worst, compare_param(h, h->b[l], db, tensor_numel(L->b), t->x, tiny_labels, checked, bad));
        free(dW), free(db);
    }
    return worst;
}

static void check_gradients(device d)
{
    const char *claim = "backward: every parameter's gradient matches float64 central differences";
    tiny t;
    tiny_create(&t, d);
    mlp_batch *b = &t.b;
    CHECK(mlp_forward(&t.net, b));
    CHECK(op_softmax_cross_entropy(b->out[G_LAYERS - 1], b->labels, b->probs, b->loss));
    CHECK(op_softmax_cross_entropy_backward(b->probs, b->labels, b->grad[G_LAYERS - 1]));
    if (CHECK_CALL(mlp_backward(&t.net, b), claim)) { /* the student's step 1, layer by layer */
        host_net h;
        int64_t checked = 0, bad = 0;
        host_net_of(&t.net, &h);
        const double worst = compare_gradients(&t, &h, &checked, &bad);
        check_that(
            bad == 0 && checked > 0, claim,
            "MLP 12-7-5-4, batch %d: %lld of %lld parameters within %.0e + %.0e |fd|; worst error %.2e",
            G_BATCH, (long long)(checked - bad), (long long)checked, GRAD_ATOL, GRAD_RTOL, worst);
        host_net_free(&h);
    }
    tiny_free(&t);
}

/* ==== Step 2: the log on the device ============================================= */

#define ACCUMULATE "the log adds each step's loss to the sum on the device, reading neither"

static void check_accumulate(device d)
{
    tensor *sum, *step;
    device_counters c;
    float value = 0.0f;
    CHECK(tensor_full(&sum, d, shape1(1), 1.5f));
    CHECK(tensor_full(&step, d, shape1(1), 0.25f));
    CHECK(device_synchronize(d));
    CHECK(counters_reset(d));
    MUST(lab_accumulate_loss(step, sum), ACCUMULATE);
    MUST(lab_accumulate_loss(step, sum), ACCUMULATE);
    CHECK(counters_read(d, &c));
    CHECK(tensor_item(sum, &value));
    const unsigned long long copies = c.d2h_copies + c.d2d_copies + c.h2d_copies;
    check_that(value == 2.0f && copies == 0 && c.syncs == 0, ACCUMULATE,
               "1.5 + 0.25 + 0.25 gave %g (2 expected) with %llu copies and %llu blocking waits (0 expected)",
               (double)value, copies, (unsigned long long)c.syncs);
    tensor_free(sum), tensor_free(step);
}

/* ==== Step 3: the upload =========================================================== */

#define UPLOAD "the upload: the batch arrives whole, images in b->x and labels in b->labels"

static void check_upload(device d)
{
    enum { ROWS = 6 };
    mlp net;
    mlp_batch b;
    CHECK(mlp_create(&net, d, g_sizes, G_LAYERS + 1, 5));
    CHECK(mlp_batch_create(&net, ROWS, &b));
    float *images = host_alloc(ROWS * 12 * sizeof(float), 1), back[ROWS * 12];
    int32_t *labels = host_alloc(ROWS * sizeof(int32_t), 1), labels_back[ROWS];
    if (!images || !labels) CHECK(fail(STATUS_OUT_OF_MEMORY, "check: no host memory for a batch"));
    for (int i = 0; i < ROWS * 12; ++i) images[i] = 0.5f * (float)i;
    for (int i = 0; i < ROWS; ++i) labels[i] = (i * 3) % 4;
    device_counters c;
    CHECK(device_synchronize(d));
    CHECK(counters_reset(d));
    MUST(lab_upload_batch(&b, images, labels), UPLOAD);
    CHECK(counters_read(d, &c));
    CHECK(tensor_to_host(b.x, back, ROWS * 12));
    CHECK(tensor_to_host_i32(b.labels, labels_back, ROWS));
    const bool whole =
        memcmp(back, images, sizeof back) == 0 && memcmp(labels_back, labels, sizeof labels_back) == 0;
    check_that(whole, UPLOAD, "%s",
               whole ? "6 rows of 12 pixels and 6 labels, bit for bit" : "the device holds other values");
    if (device_is_gpu(d))
        check_that(c.h2d_copies == 2 && c.syncs == 0,
                   "the upload: two queued host-to-device copies, and the host waits for neither",
                   "%llu host-to-device copies, %llu blocking waits (2 and 0 expected; a blocking copy waits "
                   "for the work queued before it)",
                   (unsigned long long)c.h2d_copies, (unsigned long long)c.syncs);
    host_free(images, 1), host_free(labels, 1);
    mlp_batch_free(&b);
    mlp_free(&net);
}

/* ==== Step 4: the step ================================================================== */

#define FIRST_STEP \
    "the step: the loss and every gradient of a first step agree with the cpu's within float32 rounding"
#define LEARNING "learning: the training loss and the held-out accuracy on synthetic digits reach their marks"

/* A network of the default sizes on d with its batch, seed 1, and a log. */
typedef struct stepper {
    mlp net;
    mlp_batch b;
    tensor *loss_sum;
} stepper;

static void stepper_create(stepper *s, device d)
{
    CHECK(mlp_create(&s->net, d, default_sizes, 4, 1));
    CHECK(mlp_batch_create(&s->net, BATCH, &s->b));
    CHECK(tensor_zeros(&s->loss_sum, d, shape1(1)));
}

static void stepper_free(stepper *s)
{
    tensor_free(s->loss_sum);
    mlp_batch_free(&s->b);
    mlp_free(&s->net);
}

/* Batch k (0 or 1) of `data` uploaded, then one step. */
static void step_on(stepper *s, const dataset *data, int k)
{
    MUST(lab_upload_batch(&s->b, data->images + k * BATCH * 784, data->labels + k * BATCH), FIRST_STEP);
    MUST(lab_train_step(&s->net, &s->b, LR, MOMENTUM, s->loss_sum), FIRST_STEP);
}

/* Every parameter (weights, then biases, layer by layer), or every gradient
 * in the same order, in one host array of *n values. */
static double *all_of(const mlp *net, bool gradients, int64_t *n)
{
    *n = 0;
    for (int l = 0; l < net->nlayers; ++l)
        *n += tensor_numel(net->layers[l].W) + tensor_numel(net->layers[l].b);
    double *all = malloc((size_t)*n * sizeof *all), *at = all;
    for (int l = 0; l < net->nlayers; ++l)
        for (int k = 0; k < 2; ++k) {
            const layer *L = &net->layers[l];
            const tensor *t = gradients ? (k ? L->db : L->dW) : (k ? L->b : L->W);
            double *v = to_host_f64(t);
            memcpy(at, v, (size_t)tensor_numel(t) * sizeof *v);
            at += tensor_numel(t);
            free(v);
        }
    return all;
}

static double *parameters(const mlp *net, int64_t *n) { return all_of(net, false, n); }

/* Parameters that are not `before - lr * velocity` within float32 rounding. */
static int64_t sgd_misses(const double *before, const double *after, const double *velocity, int64_t n)
{
    int64_t misses = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double expected = before[i] - (double)LR * velocity[i];
        const double scale = fabs(before[i]) + (double)LR * fabs(velocity[i]) + 1e-30;
        misses += fabs(after[i] - expected) > 8 * FLT_EPSILON * scale;
    }
    return misses;
}

#define STEP_GRADIENTS \
    "the step: its loss and gradients are the mean softmax cross-entropy's (float64 central differences)"

/* One step of the tiny network with lr 0, which changes no parameter: its
 * loss and the gradients it leaves in dW and db are those of the mean loss of
 * the batch, whatever the step computed them from. The first-step claim below
 * compares two devices running the same code, which a wrong step passes. */
static void check_step_gradients(device d)
{
    tiny t;
    tensor *log;
    tiny_create(&t, d);
    CHECK(tensor_zeros(&log, d, shape1(1)));
    host_net h;
    host_net_of(&t.net, &h);
    if (CHECK_CALL(lab_train_step(&t.net, &t.b, 0.0f, 0.0f, log), STEP_GRADIENTS)) {
        float loss = 0.0f;
        int64_t checked = 0, bad = 0;
        CHECK(tensor_item(t.b.loss, &loss));
        const double want = host_loss(&h, t.x, tiny_labels),
                     worst = compare_gradients(&t, &h, &checked, &bad);
        const bool loss_right = fabs(loss - want) <= 1e-5 * fabs(want);
        check_that(loss_right && bad == 0 && checked > 0, STEP_GRADIENTS,
                   "MLP 12-7-5-4, batch %d, lr 0: loss %.7f (float64 %.7f); %lld of %lld gradients within "
                   "%.0e + %.0e |fd|; worst error %.2e",
                   G_BATCH, (double)loss, want, (long long)(checked - bad), (long long)checked, GRAD_ATOL,
                   GRAD_RTOL, worst);
    }
    host_net_free(&h);
    tensor_free(log);
    tiny_free(&t);
}

/* Two steps on d, one on the cpu, from the same network and batches. */
static void check_step(device d, const dataset *data)
{
    stepper on_d, on_cpu;
    stepper_create(&on_d, d);
    stepper_create(&on_cpu, device_cpu());
    int64_t n = 0;
    double *w0 = parameters(&on_d.net, &n);
    float loss1 = 0, loss2 = 0, cpu_loss = 0, sum = 0;
    step_on(&on_d, data, 0);
    step_on(&on_cpu, data, 0);
    CHECK(tensor_item(on_d.b.loss, &loss1));
    CHECK(tensor_item(on_cpu.b.loss, &cpu_loss));
    const double worst = fmax(fabs((double)loss1 - cpu_loss) / fabs((double)cpu_loss),
                              worst_layer_difference(&on_d.net, &on_cpu.net, true));
    check_that(worst <= CROSS_DEVICE_RTOL, FIRST_STEP,
               "MLP 784-256-256-10, batch %d: loss %.7f on %s, %.7f on the cpu; worst |a - b| / |b| %.1e "
               "(tolerance %.0e: two BLAS libraries sum in other orders)",
               BATCH, (double)loss1, device_name(d), (double)cpu_loss, worst, CROSS_DEVICE_RTOL);
    double *g1 = all_of(&on_d.net, true, &n), *w1 = parameters(&on_d.net, &n);
    step_on(&on_d, data, 1);
    CHECK(tensor_item(on_d.b.loss, &loss2));
    CHECK(tensor_item(on_d.loss_sum, &sum));
    double *g2 = all_of(&on_d.net, true, &n), *w2 = parameters(&on_d.net, &n);
    for (int64_t i = 0; i < n; ++i) g2[i] += (double)MOMENTUM * g1[i]; /* the velocity after step 2 */
    const int64_t first = sgd_misses(w0, w1, g1, n), second = sgd_misses(w1, w2, g2, n);
    check_that(
        first == 0 && second == 0,
        "the step: SGD with momentum, after two steps every parameter is W - lr (momentum g1 + g2)",
        "lr %g, momentum %g: of %lld parameters, %lld differ by more than float32 rounding after step 1, "
        "%lld after step 2",
        (double)LR, (double)MOMENTUM, (long long)n, (long long)first, (long long)second);
    check_that(sum == loss1 + loss2, "the step: it adds its loss to the log",
               "after two steps the log holds %.7f; their losses %.7f + %.7f = %.7f", (double)sum,
               (double)loss1, (double)loss2, (double)(loss1 + loss2));
    free(w0), free(w1), free(w2), free(g1), free(g2);
    stepper_free(&on_d);
    stepper_free(&on_cpu);
}

typedef struct training {
    trainer t;
    int trained; /* epochs */
    epoch_result epochs[EPOCHS];
    double accuracy[EPOCHS];
} training;

/* Trains `epochs` epochs; the trainer is kept (the caller frees it). */
static void train_on(device d, const dataset *train, const dataset *test, train_style style, int epochs,
                     training *out)
{
    CHECK(trainer_create(&out->t, d, default_sizes, 4, &settings));
    out->trained = epochs;
    for (int e = 0; e < epochs; ++e) {
        MUST(train_epoch(&out->t, train, e, style, &out->epochs[e]), LEARNING);
        CHECK(evaluate(&out->t, test, &out->accuracy[e]));
    }
}

/* ==== Every failure passed on (steps 1, 3 and 4) =================================== */

/* lab.cmake links this check with -Wl,--wrap for the operations steps 1 and 4
 * call, directly or through the given mlp_forward, mlp_backward and
 * mlp_sgd_step, and for the queued copies of step 3: each comes here first.
 * While a step is tried with a failure, the refuse_at-th of them fails, as a
 * full device, a refused launch or a full copy queue would, and the step must
 * return that failure: one lost along the way (a status overwritten by the
 * next call's, or never looked at) lets a training loop go on from a step that
 * did not happen, or train on the batch before. */

static status refusal(const char *name) { return check_refusal_status(name, "a failing device or disk"); }

/* Appends to a claim's figures what refusing the calls of `name` in turn
 * showed: how many calls it makes whole, and the first refusal it lost. */
static void append_refusals(char *figures, size_t size, const char *name, status whole, int calls, int lost,
                            const char *lost_name)
{
    const char *then = figures[0] ? "; " : "";
    if (whole != STATUS_OK)
        check_append(figures, size, "%s%s failed with nothing refused%s", then, name,
                     check_failure_text(whole));
    else if (lost)
        check_append(figures, size,
                     "%s%s returned STATUS_OK when call %d of its %d (%s) failed: its status was lost", then,
                     name, lost, calls, lost_name);
    else if (calls == 1)
        check_append(figures, size, "%s%s: its one call refused, the failure returned", then, name);
    else
        check_append(figures, size, "%s%s: each of its %d calls refused in turn, each failure returned", then,
                     name, calls);
}

/* __wrap_NAME: refused, or the real NAME. */
#define WRAPPED(name, params, args)                     \
    status __real_##name params;                        \
    status __wrap_##name params;                        \
    status __wrap_##name params                         \
    {                                                   \
        if (check_refuse(#name)) return refusal(#name); \
        return __real_##name args;                      \
    }

WRAPPED(op_matmul, (const tensor *a, bool ta, const tensor *b, bool tb, const tensor *bias, tensor *out),
        (a, ta, b, tb, bias, out))
WRAPPED(op_relu, (const tensor *x, tensor *out), (x, out))
WRAPPED(op_relu_backward, (const tensor *x, const tensor *g, tensor *out), (x, g, out))
WRAPPED(op_column_sum, (const tensor *x, tensor *out), (x, out))
WRAPPED(op_softmax_cross_entropy, (const tensor *z, const tensor *y, tensor *p, tensor *loss),
        (z, y, p, loss))
WRAPPED(op_softmax_cross_entropy_backward, (const tensor *p, const tensor *y, tensor *g), (p, y, g))
WRAPPED(op_add, (const tensor *a, const tensor *b, tensor *out), (a, b, out))
WRAPPED(op_scale, (const tensor *a, float alpha, tensor *out), (a, alpha, out))
WRAPPED(op_axpy, (float alpha, const tensor *x, tensor *y), (alpha, x, y))
WRAPPED(op_sgd_momentum,
        (tensor *const *p, const tensor *const *g, tensor *const *v, int count, float lr, float momentum),
        (p, g, v, count, lr, momentum))
WRAPPED(tensor_copy_from_host_async, (tensor * t, const float *src, int64_t count), (t, src, count))
WRAPPED(tensor_copy_from_host_async_i32, (tensor * t, const int32_t *src, int64_t count), (t, src, count))

#define FAILURES_RETURNED "every failure inside steps 1, 3 and 4 is returned, none lost"

typedef enum tried_step { TRIED_BACKWARD, TRIED_UPLOAD, TRIED_TRAIN_STEP, TRIED_STEPS } tried_step;

/* A batch for step 3, in pinned staging buffers as the epoch loop's. */
typedef struct staged {
    float *images;
    int32_t *labels;
} staged;

static status call_step(tried_step which, tiny *t, tensor *log, const staged *batch)
{
    layer *hidden = &t->net.layers[1]; /* a ReLU layer with an input gradient to pass on */
    if (which == TRIED_BACKWARD)
        return lab_layer_backward(hidden, t->b.out[0], t->b.out[1], t->b.grad[1], t->b.grad[0]);
    if (which == TRIED_UPLOAD) return lab_upload_batch(&t->b, batch->images, batch->labels);
    return lab_train_step(&t->net, &t->b, LR, MOMENTUM, log);
}

/* One step refused call by call: how many calls it makes whole (0 when it
 * fails by itself), and the first refusal it lost, in *lost (0: none). */
static int refuse_each_call(device d, tried_step which, int *lost, const char **lost_name, status *whole)
{
    tiny t;
    tensor *log;
    tiny_create(&t, d);
    CHECK(tensor_zeros(&log, d, shape1(1)));
    CHECK(mlp_forward(&t.net, &t.b)); /* step 1 needs the forward's outputs */
    staged batch = { host_alloc(sizeof(float) * G_BATCH * G_INPUTS, 1),
                     host_alloc(sizeof(int32_t) * G_BATCH, 1) };
    if (!batch.images || !batch.labels)
        CHECK(fail(STATUS_OUT_OF_MEMORY, "check: no host memory for a batch"));
    for (int i = 0; i < G_BATCH * G_INPUTS; ++i) batch.images[i] = (float)t.x[i];
    memcpy(batch.labels, tiny_labels, sizeof tiny_labels);
    check_refuse_call(0);
    *whole = CHECK_YOURS(call_step(which, &t, log, &batch));
    check_refuse_call(-1); /* counting, refusing nothing */
    CHECK_YOURS(call_step(which, &t, log, &batch));
    const int calls = check_calls_counted();
    *lost = 0;
    for (int at = 1; at <= calls && *lost == 0 && *whole == STATUS_OK; ++at) {
        check_refuse_call(at);
        const status s = CHECK_YOURS(call_step(which, &t, log, &batch));
        if (s == STATUS_OK && check_refused_call()) *lost = at, *lost_name = check_refused_call();
    }
    check_refuse_call(0);
    CHECK(device_synchronize(d)); /* the queued copies have read the staging buffers */
    host_free(batch.images, 1), host_free(batch.labels, 1);
    tensor_free(log);
    tiny_free(&t);
    return *whole == STATUS_OK ? calls : 0;
}

static void check_failures_returned(device d)
{
    if (check_leaves_out(FAILURES_RETURNED, NULL)) return;
    const char *names[TRIED_STEPS] = { "lab_layer_backward", "lab_upload_batch", "lab_train_step" };
    const char *lost_name[TRIED_STEPS] = { "", "", "" };
    int calls[TRIED_STEPS], lost[TRIED_STEPS];
    status whole[TRIED_STEPS];
    bool all = true;
    for (int w = 0; w < TRIED_STEPS; ++w)
        calls[w] = refuse_each_call(d, (tried_step)w, &lost[w], &lost_name[w], &whole[w]);
    char figures[768] = "";
    for (int w = 0; w < TRIED_STEPS; ++w) {
        all = all && whole[w] == STATUS_OK && !lost[w] && calls[w] > 0;
        append_refusals(figures, sizeof figures, names[w], whole[w], calls[w], lost[w], lost_name[w]);
    }
    check_that(all, FAILURES_RETURNED, "%s", figures);
}

static void check_learning(device d, const training *run)
{
    const double loss = run->epochs[EPOCHS - 1].loss, accuracy = run->accuracy[EPOCHS - 1];
    check_that(loss <= LOSS_THRESHOLD && accuracy >= ACCURACY_THRESHOLD, LEARNING,
               "after %d epochs of %d images, batch %d, on %s: loss %.3f (at most %.2f; epoch 1: %.3f), "
               "held-out %.1f%% (at least %.0f%%; epoch 1: %.1f%%)",
               EPOCHS, TRAIN_SAMPLES, BATCH, device_name(d), loss, LOSS_THRESHOLD, run->epochs[0].loss,
               100 * accuracy, 100 * ACCURACY_THRESHOLD, 100 * run->accuracy[0]);
}

/* On a GPU a host read is a blocking device-to-host copy, and so the count of
 * blocking waits says whether anything else in a step waits. On the cpu
 * nothing crosses a bus: each host read and each batch upload counts as a copy
 * within the cpu (d2d). */
static void check_reads(device d, const epoch_result *on_device, const epoch_result *every_step)
{
    typedef unsigned long long ull;
    const ull sa = (ull)on_device->steps, sb = (ull)every_step->steps;
    const device_counters *a = &on_device->counters, *b = &every_step->counters;
    /* The epoch loop (train.c) calls your step 3 with the copy queue open, the
     * same on every device: counted even on the cpu, where copies are done at once. */
    check_that(a->copy_queue_copies == 2 * sa && a->queue_waits == 2 * sa,
               "each batch crosses on the copy queue, beside the step before it",
               "on-device log, %llu steps: %llu copies on the copy queue (%llu expected: the images and the "
               "labels of each batch), %llu waits of one queue for the other on the device (%llu expected: "
               "each copy for the last step that read its set of tensors, each step for its copy)",
               sa, (ull)a->copy_queue_copies, 2 * sa, (ull)a->queue_waits, 2 * sa);
    if (!device_is_gpu(d)) {
        /* A claim never begins with "<device>:": the driver's headline ends a
         * claim at its first ": ", so the device goes in the figures. */
        check_that(a->d2h_copies == 0 && b->d2h_copies == 0,
                   "no device-to-host copy in either style where no bus is crossed",
                   "on %s: %llu and %llu d2h copies (on-device log, item every step; 0 expected)",
                   device_name(d), (ull)a->d2h_copies, (ull)b->d2h_copies);
        check_that(
            a->d2d_copies == 2 * sa + 1 && b->d2d_copies == 3 * sb,
            "host reads of the loss, counted as copies within the device: one per epoch vs one per step",
            "on %s, on-device log: %llu copies, %llu expected (2 x %llu batch uploads + 1 read); item every "
            "step: %llu, %llu expected (3 x %llu: 2 uploads and 1 read per step)",
            device_name(d), (ull)a->d2d_copies, 2 * sa + 1, sa, (ull)b->d2d_copies, 3 * sb, sb);
        return;
    }
    check_that(a->d2h_copies == 1,
               "exactly one blocking device-to-host read per epoch with the on-device log",
               "on %s: %llu d2h copies (%llu bytes) over %llu steps", device_name(d), (ull)a->d2h_copies,
               (ull)a->d2h_bytes, sa);
    check_that(b->d2h_copies == sb, "one blocking device-to-host read per step with a read every step",
               "on %s: %llu d2h copies over %llu steps", device_name(d), (ull)b->d2h_copies, sb);
    /* The host may wait for a staging buffer when it has run ahead of the
     * device (often on a simulated GPU, never on a GPU faster than the host);
     * any other wait is a step that blocks. */
    check_that(
        a->syncs == (ull)on_device->buffer_waits + 1 && b->syncs == sb,
        "nothing in a step waits: the host waits only for a staging buffer and for the log's reads",
        "on-device log: %llu blocking waits, %lld + 1 expected (%lld for a staging buffer, 1 read); item "
        "every step: %llu, %llu expected (its reads)",
        (ull)a->syncs, (long long)on_device->buffer_waits, (long long)on_device->buffer_waits, (ull)b->syncs,
        sb);
}

/* ==== Step 5: the captured step ============================================================== */

static void check_captured(device d, const dataset *data)
{
    const char *same = "captured step: the same losses and parameters as the eager step";
    const char *one = "captured step: one host launch per step, replaying the eager step's operations";
    trainer eager, captured;
    epoch_result e[2], c[2];
    CHECK(trainer_create(&eager, d, default_sizes, 4, &settings));
    CHECK(trainer_create(&captured, d, default_sizes, 4, &settings));
    MUST(train_epoch(&eager, data, 0, STYLE_ON_DEVICE, &e[0]), same);
    if (CHECK_CALL(train_epoch(&captured, data, 0, STYLE_CAPTURED, &c[0]), same)) {
        const double worst = fmax(fabs(c[0].loss - e[0].loss) / e[0].loss,
                                  worst_layer_difference(&captured.net, &eager.net, false));
        check_that(worst <= CAPTURED_RTOL, same,
                   "one epoch of %lld images: loss %.7f captured, %.7f eager; worst |a - b| / |b| over the "
                   "loss and the parameters %.1e (tolerance %.0e)",
                   (long long)data->count, c[0].loss, e[0].loss, worst, CAPTURED_RTOL);
    }
    /* The second epochs make no new batch tensors: eagerly, a fill of the log
     * and the step's K operations per step are all they launch. */
    MUST(train_epoch(&eager, data, 1, STYLE_ON_DEVICE, &e[1]), one);
    if (CHECK_CALL(train_epoch(&captured, data, 1, STYLE_CAPTURED, &c[1]), one)) {
        typedef unsigned long long ull;
        const ull steps = (ull)e[1].steps, k = (e[1].counters.launches - 1) / steps;
        /* One graph per set of device tensors and batch size: the full batches
         * go through both sets, the last, partial one through one. */
        const long long full = data->count / BATCH,
                        graphs = (full < 2 ? full : 2) + (data->count % BATCH != 0);
        check_that(c[1].counters.launches == steps + 1 && c[1].counters.replayed == steps * k &&
                       c[0].captures == graphs && c[1].captures == 0,
                   one,
                   "%llu steps of %llu operations eagerly (%llu launches); captured: %llu launches and %llu "
                   "operations replayed (%llu and %llu expected: one launch per step and the log's fill); "
                   "%lld then %lld graphs captured (%lld then 0 expected: one per set of batch tensors and "
                   "batch size, then reused)",
                   steps, k, (ull)e[1].counters.launches, (ull)c[1].counters.launches,
                   (ull)c[1].counters.replayed, steps + 1, steps * k, (long long)c[0].captures,
                   (long long)c[1].captures, graphs);
    }
    trainer_free(&eager);
    trainer_free(&captured);
}

/* Ends every capture left going, on any device (its graph freed), so that the
 * check can go on: the names of those devices in `names`. */
static int end_stray_captures(char *names, size_t size)
{
    device all[LABKIT_MAX_DEVICES];
    const int n = device_list(all, LABKIT_MAX_DEVICES);
    int stray = 0;
    names[0] = '\0';
    for (int i = 0; i < n; ++i)
        if (graph_capturing(all[i])) {
            graph *g = NULL;
            graph_end_capture(all[i], &g);
            graph_free(g);
            check_append(names, size, "%s%s", stray++ ? ", " : "", device_name(all[i]));
        }
    return stray;
}

/* Whether d still runs what is queued on it and reads it back. */
static bool device_usable(device d)
{
    tensor *t = NULL;
    float value = 0.0f;
    const bool usable = tensor_full(&t, d, shape1(1), 3.0f) == STATUS_OK &&
                        tensor_item(t, &value) == STATUS_OK && value == 3.0f;
    tensor_free(t);
    return usable;
}

/* What *out holds before each capture that must fail: no graph the library
 * made, so that an *out your function never set shows (lab.h: on failure *out
 * is NULL). Never freed, never launched. */
static max_align_t not_a_graph;
#define UNTOUCHED ((graph *)&not_a_graph)

static const char *out_text(const graph *g)
{
    return g == UNTOUCHED ? "NOT NULL (left as the caller had it: set *out to NULL on failure)"
           : g            ? "NOT NULL"
                          : "NULL";
}

#define CAPTURE_FAILS \
    "a step that fails inside the capture: its failure returned, the capture ended, no graph left"
#define CAPTURE_REFUSED \
    "a device already capturing: lab_capture_step returns the refusal and leaves that capture alone"
#define BOTH_FAIL "when the step and the capture's end both fail, the step's failure is returned"

/* While set, every graph_end_capture fails (its wrapper, below), whatever
 * check_refuse_call asks: the end refused on top of a step that fails. */
static bool refuse_every_end;

/* The paths a correct epoch never takes: a recorded step that fails (the log
 * given has two elements, so the step's last operation, the log's addition,
 * is refused inside the capture), the same with the capture's end refused
 * too, and a capture that cannot begin. */
static void check_capture_failures(device d)
{
    tiny t;
    tensor *wrong_log, *log;
    tiny_create(&t, d);
    CHECK(tensor_zeros(&wrong_log, d, shape1(2)));
    CHECK(tensor_zeros(&log, d, shape1(1)));
    int64_t n = 0;
    double *before = parameters(&t.net, &n);
    const size_t bytes = bytes_in_use(d);
    const uint64_t graphs = graphs_alive(d);
    graph *g = UNTOUCHED;
    status s = CHECK_YOURS(lab_capture_step(&t.net, &t.b, LR, MOMENTUM, wrong_log, &g));
    char stray[128];
    const int left = end_stray_captures(stray, sizeof stray);
    double *after = parameters(&t.net, &n);
    const bool unchanged = memcmp(before, after, (size_t)n * sizeof *before) == 0, usable = device_usable(d);
    /* A graph handed back with a failure may be one your code freed already:
     * freeing it again here would crash in this check, not in your code. */
    if (s == STATUS_OK && g != UNTOUCHED) graph_free(g);
    const size_t bytes_after = bytes_in_use(d);
    const uint64_t graphs_after = graphs_alive(d);
    check_that(
        s != STATUS_OK && left == 0 && !g && unchanged && usable && bytes_after == bytes &&
            graphs_after == graphs,
        CAPTURE_FAILS,
        "a log of 2 elements, so the step's addition to it is refused: %s returned%s; %s; *out %s; the "
        "network %s; %s %s; %zu bytes in use before, %zu after; graphs alive %llu before, %llu after%s",
        status_name(s), s == STATUS_OK ? " (the step's failure expected)" : "",
        left ? "the device was LEFT CAPTURING" : "no device left capturing", out_text(g),
        unchanged ? "unchanged (nothing ran)" : "CHANGED", device_name(d),
        usable ? "usable afterwards" : "NOT USABLE afterwards", bytes, bytes_after,
        (unsigned long long)graphs, (unsigned long long)graphs_after,
        graphs_after > graphs ? " (the graph of the failed capture was never freed: graph_free it)" : "");
    if (left) printf("        (left capturing: %s)\n", stray);

    /* The same failing step, and its capture's end refused as well: lab.h
     * asks for the step's failure, the cause, not the end's that follows. */
    const status step_failure = s;
    g = UNTOUCHED;
    refuse_every_end = true;
    s = CHECK_YOURS(lab_capture_step(&t.net, &t.b, LR, MOMENTUM, wrong_log, &g));
    refuse_every_end = false;
    const int left_both = end_stray_captures(stray, sizeof stray);
    if (s == STATUS_OK && g != UNTOUCHED) graph_free(g);
    const uint64_t graphs_both = graphs_alive(d);
    check_that(s != STATUS_OK && s == step_failure && left_both == 0 && !g && graphs_both == graphs,
               BOTH_FAIL,
               "the log of 2 elements again, and graph_end_capture refused: lab_capture_step returned %s "
               "(the step alone failed with %s)%s; %s; *out %s; graphs alive %llu before, %llu after",
               status_name(s), status_name(step_failure),
               s != STATUS_OK && s != step_failure ? ": the end's failure, not the step's" : "",
               left_both ? "the device was LEFT CAPTURING" : "no device left capturing", out_text(g),
               (unsigned long long)graphs, (unsigned long long)graphs_both);
    if (left_both) printf("        (left capturing: %s)\n", stray);

    /* Someone else's capture is going on d: graph_begin_capture refuses. */
    CHECK(graph_begin_capture(d));
    g = UNTOUCHED;
    s = CHECK_YOURS(lab_capture_step(&t.net, &t.b, LR, MOMENTUM, log, &g));
    const bool still = graph_capturing(d);
    graph *outer = NULL;
    if (still) CHECK(graph_end_capture(d, &outer));
    const int64_t recorded = graph_operations(outer);
    end_stray_captures(stray, sizeof stray);
    check_that(
        s != STATUS_OK && !g && still && recorded == 0, CAPTURE_REFUSED,
        "lab_capture_step returned %s; *out %s; the other capture %s, %lld operations recorded into it "
        "(0 expected)",
        status_name(s), out_text(g), still ? "still going" : "ENDED", (long long)recorded);
    graph_free(outer);
    if (g && g != outer && g != UNTOUCHED) graph_free(g);
    free(before), free(after);
    tensor_free(wrong_log), tensor_free(log);
    tiny_free(&t);
}

/* lab.cmake wraps the capture's beginning and end as it wraps the step's
 * operations. A refused end is what a backend that cannot build the graph
 * does (graph.h): the capture ends all the same, and *out is NULL. */
WRAPPED(graph_begin_capture, (device d), (d))
status __real_graph_end_capture(device d, graph **out);
status __wrap_graph_end_capture(device d, graph **out);
status __wrap_graph_end_capture(device d, graph **out)
{
    const bool refused = check_refuse("graph_end_capture") || refuse_every_end;
    if (!out || !refused) return __real_graph_end_capture(d, out);
    graph *g = NULL;
    __real_graph_end_capture(d, &g);
    graph_free(g);
    *out = NULL;
    return refusal("graph_end_capture");
}

#define CAPTURE_CALLS "every failure inside step 5 is returned: the capture ended, *out NULL, no graph left"

/* lab_capture_step with each of its calls refused in turn: the capture's
 * beginning, each operation of the recorded step, the capture's end. A
 * failure lost (an end whose status nobody read hands the caller a NULL
 * graph with STATUS_OK), an *out never set, a capture left going or a graph
 * left alive shows here. */
static void check_capture_calls_refused(device d)
{
    if (check_leaves_out(CAPTURE_CALLS, NULL)) return;
    tiny t;
    tensor *log;
    tiny_create(&t, d);
    CHECK(tensor_zeros(&log, d, shape1(1)));
    const uint64_t graphs = graphs_alive(d);
    char stray[128], figures[512] = "";
    graph *g = NULL;
    check_refuse_call(-1); /* counting, refusing nothing */
    const status whole = CHECK_YOURS(lab_capture_step(&t.net, &t.b, LR, MOMENTUM, log, &g));
    const int calls = check_calls_counted();
    check_refuse_call(0);
    end_stray_captures(stray, sizeof stray);
    if (whole == STATUS_OK) graph_free(g);
    bool all = whole == STATUS_OK && calls > 0;
    if (!all)
        check_append(figures, sizeof figures, "lab_capture_step failed with nothing refused%s",
                     check_failure_text(whole));
    for (int at = 1; all && at <= calls; ++at) {
        g = UNTOUCHED;
        check_refuse_call(at);
        const status s = CHECK_YOURS(lab_capture_step(&t.net, &t.b, LR, MOMENTUM, log, &g));
        const char *refused = check_refused_call();
        check_refuse_call(0);
        const int left = end_stray_captures(stray, sizeof stray);
        if (s == STATUS_OK && g != UNTOUCHED) graph_free(g);
        const uint64_t alive = graphs_alive(d);
        if (refused && (s == STATUS_OK || g || left || alive != graphs)) {
            all = false;
            check_append(figures, sizeof figures,
                         "call %d of its %d (%s) refused: lab_capture_step returned %s; *out %s; %s; graphs "
                         "alive %llu before, %llu after",
                         at, calls, refused,
                         s == STATUS_OK ? "STATUS_OK (the failure was lost)" : status_name(s), out_text(g),
                         left ? "a device LEFT CAPTURING" : "no device left capturing",
                         (unsigned long long)graphs, (unsigned long long)alive);
        }
    }
    if (all)
        check_append(figures, sizeof figures,
                     "each of its %d calls refused in turn: each failure returned, *out NULL, no capture "
                     "left going, no graph left",
                     calls);
    check_that(all, CAPTURE_CALLS, "%s", figures);
    tensor_free(log);
    tiny_free(&t);
}

#define CAPTURE_DEVICE \
    "the capture is the network's own device's: recording runs nothing, one launch makes one step"

/* A network on the device beside d (sim:1 beside sim:0): captured there, not
 * on try_gpu(0) or on d. Recording runs nothing, on that device or any other;
 * one launch then takes the eager step of a twin network. */
static void check_capture_device(device d)
{
    const device e = neighbour(d);
    tiny eager, captured;
    tensor *eager_log, *captured_log;
    tiny_create(&eager, e);
    tiny_create(&captured, e);
    CHECK(tensor_zeros(&eager_log, e, shape1(1)));
    CHECK(tensor_zeros(&captured_log, e, shape1(1)));
    int64_t n = 0;
    double *before = parameters(&captured.net, &n);
    MUST(lab_train_step(&eager.net, &eager.b, LR, MOMENTUM, eager_log), CAPTURE_DEVICE);
    graph *g = NULL;
    const status s =
        CHECK_YOURS(lab_capture_step(&captured.net, &captured.b, LR, MOMENTUM, captured_log, &g));
    char stray[128];
    const int left = end_stray_captures(stray, sizeof stray);
    double *recorded = parameters(&captured.net, &n);
    const bool ran = memcmp(before, recorded, (size_t)n * sizeof *before) != 0;
    const bool on_e = g && device_equal(graph_device(g), e);
    const status launched = s == STATUS_OK && g ? graph_launch(g) : STATUS_OK;
    const double difference = s == STATUS_OK && g && launched == STATUS_OK
                                  ? worst_layer_difference(&captured.net, &eager.net, false)
                                  : INFINITY;
    check_that(
        s == STATUS_OK && on_e && left == 0 && !ran && launched == STATUS_OK && difference <= CAPTURED_RTOL,
        CAPTURE_DEVICE,
        "a network on %s: lab_capture_step returned %s, its graph %s%s; %s; the network %s while recording; "
        "after one launch, |a - b| / |b| %.1e from the eager step's parameters (tolerance %.0e)",
        device_name(e), status_name(s),
        !g     ? "NULL"
        : on_e ? "on "
               : "on ANOTHER DEVICE, ",
        g ? device_name(graph_device(g)) : "", left ? "a device LEFT CAPTURING" : "no device left capturing",
        ran ? "TRAINED" : "unchanged", difference, CAPTURED_RTOL);
    if (left) printf("        (left capturing: %s)\n", stray);
    graph_free(g);
    free(before), free(recorded);
    tensor_free(eager_log), tensor_free(captured_log);
    tiny_free(&eager), tiny_free(&captured);
}

/* ==== Step 6: saved and loaded =============================================================== */

#define SAVED "saved: the file holds layers.<i>.weight [in, out] and layers.<i>.bias [out], nothing else"
#define COPIES "saved and loaded: one copy per tensor each way"
#define ON_CPU "loaded on the cpu: the held-out accuracy of the trained network"

/* The parameters' bytes, for "unchanged" and "bit-identical". */
static bool same_parameters(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* How many of this process's file descriptors have `path` open (Linux's
 * /proc/self/fd): a file that a refusal forgot to close is among them. */
static int descriptors_on(const char *path)
{
    char real[PATH_MAX], link[64], target[PATH_MAX];
    if (!realpath(path, real)) return 0;
    int open = 0;
    for (int fd = 0; fd < 1024; ++fd) {
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        const ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        open += strcmp(target, real) == 0;
    }
    return open;
}

/* What every call of lab_load_parameters left behind, loaded or refused: the
 * file still open, and bytes in use on the network's device beyond those
 * before the call (a tensor made and never freed). */
static struct {
    int loads, files_left, leaks;
    char first_file[200], first_leak[200];
    char message[512]; /* the last load's message */
    status status;     /* the last load's status */
} loads;

static status load_counted(mlp *net, const char *path, const char *what)
{
    const size_t bytes = bytes_in_use(net->dev);
    clear_error();
    const status s = lab_load_parameters(net, path);
    if (s == STATUS_TODO) CHECK(s);
    snprintf(loads.message, sizeof loads.message, "%s", last_error());
    loads.status = s;
    const int open = descriptors_on(path);
    const size_t after = bytes_in_use(net->dev);
    ++loads.loads;
    if (open > 0 && loads.files_left++ == 0)
        snprintf(loads.first_file, sizeof loads.first_file, "%s (%s): %d descriptor(s) still open on it",
                 what, s == STATUS_OK ? "loaded" : "refused", open);
    if (after != bytes && loads.leaks++ == 0)
        snprintf(loads.first_leak, sizeof loads.first_leak,
                 "%s (%s): %zu bytes in use on %s before, %zu after", what,
                 s == STATUS_OK ? "loaded" : "refused", bytes, device_name(net->dev), after);
    return s;
}

#define SAVES_ANY_DEPTH "lab_save_parameters saves a network of any depth, up to MLP_MAX_LAYERS layers"

/* Writes a network of other sizes to `path` with your step 6. Arrays sized
 * for the default network's 3 layers overflow at 4: whatever that makes
 * safetensors_save say, this claim says where to look. */
static void save_other(const char *path, const int64_t *sizes, int nsizes)
{
    mlp other;
    CHECK(mlp_create(&other, device_cpu(), sizes, nsizes, 9));
    if (!CHECK_CALL(lab_save_parameters(&other, path, NULL), SAVES_ANY_DEPTH))
        exit(check_finish("05_training_loop"));
    mlp_free(&other);
}

typedef enum alteration {
    LAST_WEIGHT_TRANSPOSED,
    LAST_WEIGHT_FLAT,
    LAST_BIAS_INT32,
    LAST_WEIGHT_RENAMED
} alteration;

/* Writes to `path` a file of the names of a 3-layer network of `sizes`, in
 * their order, made on the cpu: each weight [in, out], each bias [out] of
 * f32, but for the last layer's weight, [out, in] (LAST_WEIGHT_TRANSPOSED:
 * PyTorch's nn.Linear layout) or [in x out] (LAST_WEIGHT_FLAT: one dimension),
 * as many elements either way, or its bias, int32 (LAST_BIAS_INT32), or its
 * name misspelled, "layers.2.weights" (LAST_WEIGHT_RENAMED: as many tensors,
 * every shape right, one of the network's missing). Values 0.5 (the int32
 * bias: 0). */
static void save_altered(const char *path, const int64_t *sizes, alteration change)
{
    tensor *t[6] = { 0 };
    char names[6][32];
    safetensors_entry entries[6];
    for (int i = 0; i < 6; ++i) {
        const int l = i / 2;
        const bool bias = i % 2, last = l == 2;
        const int64_t in = sizes[l], out = sizes[l + 1];
        const shape shp = bias                                       ? shape1(out)
                          : last && change == LAST_WEIGHT_TRANSPOSED ? shape2(out, in)
                          : last && change == LAST_WEIGHT_FLAT       ? shape1(in * out)
                                                                     : shape2(in, out);
        const bool int32 = bias && last && change == LAST_BIAS_INT32;
        CHECK(tensor_empty(&t[i], device_cpu(), int32 ? DTYPE_I32 : DTYPE_F32, shp));
        CHECK(op_fill(t[i], int32 ? 0.0f : 0.5f));
        snprintf(names[i], sizeof names[i], "layers.%d.%s", l,
                 bias                                    ? "bias"
                 : last && change == LAST_WEIGHT_RENAMED ? "weights"
                                                         : "weight");
        entries[i] = (safetensors_entry){ names[i], t[i] };
    }
    CHECK(safetensors_save(path, entries, 6, NULL));
    for (int i = 0; i < 6; ++i) tensor_free(t[i]);
}

/* What the refusal of a file that differs from the network in one tensor
 * names besides the file (lab.h): that tensor, and its shape or its dtype
 * both in the file and in the network. */
typedef struct difference {
    const char *name;
    shape in_file, in_net;
    dtype file_type, net_type;
} difference;

/* Whether `message` holds s's sizes one after the other, however written
 * ("[10, 256]", "(10, 256)", "10x256"), the file's path left out (its digits
 * are no shape's). */
static bool names_shape(const char *message, const char *path, shape s)
{
    int64_t numbers[64];
    int count = 0;
    const size_t skip = strlen(path);
    for (const char *at = message; *at && count < 64;) {
        if (skip && strncmp(at, path, skip) == 0) {
            at += skip;
        } else if (isdigit((unsigned char)*at)) {
            char *end;
            numbers[count++] = strtoll(at, &end, 10);
            at = end;
        } else {
            ++at;
        }
    }
    for (int i = 0; i + s.ndim <= count; ++i) {
        int d = 0;
        while (d < s.ndim && numbers[i + d] == s.dims[d]) ++d;
        if (d == s.ndim) return true;
    }
    return false;
}

/* Whether `message` names the dtype t, as dtype_name does or as NumPy and
 * PyTorch do. */
static bool names_dtype(const char *message, dtype t)
{
    const char *other = t == DTYPE_I32 ? "int32" : t == DTYPE_F32 ? "float" : NULL;
    return strstr(message, dtype_name(t)) || (other && strstr(message, other));
}

/* The refusals of a file that differs in one tensor, and the first whose
 * message left out what differs. */
static struct {
    int refusals, vague;
    char first_vague[400];
} told;

static void note_what_differs(const char *message, const char *path, const char *what, const difference *d)
{
    char missing[240] = "", a[64], b[64];
    if (!strstr(message, d->name)) check_append(missing, sizeof missing, "the tensor (%s)", d->name);
    if (!names_shape(message, path, d->in_file) || !names_shape(message, path, d->in_net))
        check_append(missing, sizeof missing, "%sits shape in the file and in this network (%s and %s)",
                     missing[0] ? ", " : "", shape_format(d->in_file, a, sizeof a),
                     shape_format(d->in_net, b, sizeof b));
    if (d->file_type != d->net_type &&
        (!names_dtype(message, d->file_type) || !names_dtype(message, d->net_type)))
        check_append(missing, sizeof missing, "%sits dtype in the file and in this network (%s and %s)",
                     missing[0] ? ", " : "", dtype_name(d->file_type), dtype_name(d->net_type));
    ++told.refusals;
    if (missing[0] && told.vague++ == 0)
        snprintf(told.first_vague, sizeof told.first_vague, "%s: the message does not name %s", what,
                 missing);
}

/* Loads `path` into net, which must refuse it naming the file and leave the
 * network as it was; when the file differs in one tensor (`differs`), the
 * refusal also names what differs. */
static void check_refused(mlp *net, const char *path, const char *claim, const char *what,
                          const difference *differs)
{
    int64_t n = 0;
    double *before = parameters(net, &n);
    const status s = load_counted(net, path, what);
    double *after = parameters(net, &n);
    check_that(s != STATUS_OK && strstr(loads.message, path), claim, "%s: %s", what,
               s == STATUS_OK ? "loaded without a word" : loads.message);
    if (s != STATUS_OK && differs) note_what_differs(loads.message, path, what, differs);
    check_that(same_parameters(before, after, n), "a refused file leaves the network as it was",
               "%s: the network's parameters %s", what,
               same_parameters(before, after, n) ? "unchanged" : "CHANGED");
    free(before), free(after);
}

/* The logits of net and of other on the first BATCH held-out images, on
 * their device: bit-identical? */
static bool same_logits(mlp *net, mlp_batch *b, mlp *other, mlp_batch *b2, const dataset *test)
{
    CHECK(tensor_copy_from_host(b->x, test->images, BATCH * 784));
    CHECK(tensor_copy_from_host(b2->x, test->images, BATCH * 784));
    CHECK(mlp_forward(net, b));
    CHECK(mlp_forward(other, b2));
    return relative_difference(b2->out[2], b->out[2]) == 0.0;
}

#define REORDERED "a file holding the tensors in another order (biases first) loads the same network"
#define FILES_CLOSED "lab_load_parameters closes the file on every path, loaded or refused"
#define WHAT_DIFFERS \
    "a refusal names the tensor that differs, with its shape or dtype in the file and in this network"
#define LOAD_LEAVES_NOTHING \
    "lab_load_parameters leaves no tensor behind: the device's bytes in use are back where they were"

/* lab.cmake wraps the file calls of step 6 as it wraps the step's operations:
 * each can fail as a full disk, a file removed or a read cut short would. A
 * refused save writes nothing, as safetensors_save's own failures. */
WRAPPED(safetensors_save,
        (const char *path, const safetensors_entry *entries, int count, const char *metadata_json),
        (path, entries, count, metadata_json))
WRAPPED(safetensors_find, (const safetensors_file *f, const char *name, safetensors_info *out),
        (f, name, out))
WRAPPED(safetensors_load_into, (safetensors_file * f, const char *name, tensor *t), (f, name, t))
status __real_safetensors_open(safetensors_file **out, const char *path);
status __wrap_safetensors_open(safetensors_file **out, const char *path);
status __wrap_safetensors_open(safetensors_file **out, const char *path)
{
    if (!check_refuse("safetensors_open")) return __real_safetensors_open(out, path);
    if (out) *out = NULL;
    return refusal("safetensors_open");
}

#define FILE_FAILURES "every failure inside step 6 is returned, none lost"

/* lab_save_parameters (saving net to `scratch`) and lab_load_parameters
 * (loading `path` into net) with each of their calls refused in turn: a save
 * that reports a file it never wrote, or a load that reports a network it
 * never read, lets a training run lose its work without a word. The loads go
 * through load_counted, so that each of these paths also closes its file and
 * leaves no tensor behind. */
static void check_file_failures(mlp *net, const char *path, const char *scratch)
{
    if (check_leaves_out(FILE_FAILURES, FILES_CLOSED, LOAD_LEAVES_NOTHING, NULL)) return;
    char figures[512] = "", what[96];
    bool all = true;
    for (int load = 0; load < 2; ++load) {
        check_refuse_call(-1); /* counting, refusing nothing */
        const status whole = load ? load_counted(net, path, "the saved file")
                                  : CHECK_YOURS(lab_save_parameters(net, scratch, NULL));
        const int calls = check_calls_counted();
        int lost = 0;
        const char *lost_name = "";
        for (int at = 1; at <= calls && !lost && whole == STATUS_OK; ++at) {
            snprintf(what, sizeof what, "the saved file, call %d refused", at);
            check_refuse_call(at);
            const status s =
                load ? load_counted(net, path, what) : CHECK_YOURS(lab_save_parameters(net, scratch, NULL));
            if (s == STATUS_OK && check_refused_call()) lost = at, lost_name = check_refused_call();
        }
        check_refuse_call(0);
        all = all && whole == STATUS_OK && !lost && calls > 0;
        append_refusals(figures, sizeof figures, load ? "lab_load_parameters" : "lab_save_parameters", whole,
                        calls, lost, lost_name);
    }
    check_that(all, FILE_FAILURES, "%s", figures);
}

static void check_saved(device d, training *run, const dataset *test, const char *dir)
{
    typedef unsigned long long ull;
    char path[512], other[512];
    snprintf(path, sizeof path, "%s/mlp.safetensors", dir);
    snprintf(other, sizeof other, "%s/other.safetensors", dir);
    mlp *net = &run->t.net;
    device_counters saving, loading;
    CHECK(device_synchronize(d));
    CHECK(counters_reset(d));
    MUST(lab_save_parameters(net, path, "{\"by\": \"check05\"}"), SAVED);
    CHECK(counters_read(d, &saving));
    /* The file: exactly the network's tensors, named as PyTorch's state_dict. */
    safetensors_file *f;
    CHECK(safetensors_open(&f, path));
    int right = 0;
    for (int l = 0; l < 3; ++l)
        for (int k = 0; k < 2; ++k) {
            char name[32];
            safetensors_info info;
            snprintf(name, sizeof name, "layers.%d.%s", l, k ? "bias" : "weight");
            const shape want =
                k ? shape1(default_sizes[l + 1]) : shape2(default_sizes[l], default_sizes[l + 1]);
            right += safetensors_find(f, name, &info) == STATUS_OK && info.type == DTYPE_F32 &&
                     info.shp.ndim == want.ndim && info.shp.dims[0] == want.dims[0] &&
                     info.shp.dims[want.ndim - 1] == want.dims[want.ndim - 1];
        }
    const int count = safetensors_count(f);
    const char *by = safetensors_metadata(f, "by");
    char metadata[80];
    snprintf(metadata, sizeof metadata, "%s%s%s", by ? "\"" : "", by ? by : "none", by ? "\"" : "");
    const bool kept = by && strcmp(by, "check05") == 0;
    safetensors_close(f);
    check_that(
        right == 6 && count == 6 && kept,
        "saved: the file holds layers.<i>.weight [in, out] and layers.<i>.bias [out], nothing else, "
        "and the metadata given",
        "%d of 6 tensors with the right name, dtype and shape; %d tensors in the file; metadata \"by\": "
        "%s (saved with {\"by\": \"check05\"})",
        right, count, metadata);
    /* Loaded on the same device: the same network, bit for bit, and no copy
     * but the one of each tensor across the bus (on the cpu, within it). */
    trainer copy;
    CHECK(trainer_create(&copy, d, default_sizes, 4, &(train_settings){ BATCH, LR, MOMENTUM, 77 }));
    CHECK(counters_reset(d));
    if (!CHECK_CALL(load_counted(&copy.net, path, "the saved file"), COPIES))
        exit(check_finish("05_training_loop"));
    CHECK(counters_read(d, &loading));
    const bool gpu = device_is_gpu(d);
    const ull save_all = saving.d2h_copies + saving.h2d_copies + saving.d2d_copies,
              load_all = loading.d2h_copies + loading.h2d_copies + loading.d2d_copies;
    const ull per_save = gpu ? saving.d2h_copies : saving.d2d_copies;
    const ull per_load = gpu ? loading.h2d_copies : loading.d2d_copies;
    check_that(
        per_save == 6 && per_load == 6 && save_all == 6 && load_all == 6, COPIES,
        "%llu %s copies to save (%llu copies in all), %llu %s copies to load (%llu in all) the network's "
        "6 tensors",
        per_save, gpu ? "device-to-host" : "(cpu)", save_all, per_load, gpu ? "host-to-device" : "(cpu)",
        load_all);
    mlp_batch *b = &run->t.batches[0][0], *b2 = &copy.batches[0][0];
    CHECK(mlp_batch_create(&copy.net, BATCH, b2));
    const bool identical = same_logits(net, b, &copy.net, b2, test);
    check_that(identical, "loaded on the same device: bit-identical logits", "%d images' logits on %s: %s",
               BATCH, device_name(d), identical ? "identical" : "DIFFER");
    /* Loaded on the cpu: the same predictions, to float32 rounding. */
    trainer cpu;
    double accuracy = 0.0;
    CHECK(trainer_create(&cpu, device_cpu(), default_sizes, 4, &settings));
    if (!CHECK_CALL(load_counted(&cpu.net, path, "the saved file, on the cpu"), ON_CPU))
        exit(check_finish("05_training_loop"));
    CHECK(evaluate(&cpu, test, &accuracy));
    const double trained = run->accuracy[run->trained - 1];
    check_that(fabs(accuracy - trained) <= 0.01,
               "loaded on the cpu: the held-out accuracy of the trained network",
               "%.2f%% on the cpu, %.2f%% on %s (within 1 point: rounding may flip a borderline image)",
               100 * accuracy, 100 * trained, device_name(d));
    /* The same tensors in another order: the format fixes none, and a file
     * written elsewhere may list the biases first. */
    const tensor *order[6];
    char names[6][32];
    safetensors_entry entries[6];
    for (int i = 0; i < 6; ++i) {
        const int l = i % 3;
        const bool bias = i < 3;
        order[i] = bias ? net->layers[l].b : net->layers[l].W;
        snprintf(names[i], sizeof names[i], "layers.%d.%s", l, bias ? "bias" : "weight");
        entries[i] = (safetensors_entry){ names[i], order[i] };
    }
    CHECK(safetensors_save(other, entries, 6, NULL));
    trainer reordered;
    CHECK(trainer_create(&reordered, d, default_sizes, 4, &(train_settings){ BATCH, LR, MOMENTUM, 78 }));
    const status s = load_counted(&reordered.net, other, "the biases first");
    if (s == STATUS_OK) {
        mlp_batch *b3 = &reordered.batches[0][0];
        CHECK(mlp_batch_create(&reordered.net, BATCH, b3));
        const bool same = same_logits(net, b, &reordered.net, b3, test);
        check_that(same, REORDERED,
                   "layers.0.bias, layers.1.bias, layers.2.bias, then the weights: %s logits",
                   same ? "bit-identical" : "OTHER");
    } else {
        check_that(false, REORDERED,
                   "layers.0.bias, layers.1.bias, layers.2.bias, then the weights: refused: %s",
                   loads.message);
    }
    trainer_free(&reordered);
    /* Files of other networks, and of this one's sizes but not its layout or
     * dtype: refused, and nothing loaded. */
    const int64_t smaller[] = { 784, 256, 128, 10 }, deeper[] = { 784, 256, 256, 10, 10 };
    save_other(other, smaller, 4);
    check_refused(&copy.net, other, "another network's file is refused, naming the file",
                  "784-256-128-10 into 784-256-256-10 (layer 0 alike)", NULL);
    save_other(other, deeper, 5);
    check_refused(&copy.net, other, "a file with a layer more is refused, naming the file",
                  "784-256-256-10-10 into 784-256-256-10 (the first three layers alike)", NULL);
    save_altered(other, default_sizes, LAST_WEIGHT_TRANSPOSED);
    check_refused(&copy.net, other, "a weight in PyTorch's layout, [out, in], is refused, naming the file",
                  "layers.2.weight [10, 256] (as nn.Linear holds it: as many elements as [256, 10])",
                  &(difference){ "layers.2.weight", shape2(10, 256), shape2(256, 10), DTYPE_F32, DTYPE_F32 });
    save_altered(other, default_sizes, LAST_WEIGHT_RENAMED);
    check_refused(&copy.net, other,
                  "a file without one of this network's tensors is refused, naming the file",
                  "layers.2.weight saved as layers.2.weights (6 tensors, every shape right)", NULL);
    /* What differs there is a tensor missing: the refusal names it. */
    bool named = false;
    for (const char *at = loads.message; !named && (at = strstr(at, "layers.2.weight")) != NULL; ++at)
        named = at[strlen("layers.2.weight")] != 's'; /* not the file's misspelling */
    named = named && loads.status != STATUS_OK;
    check_that(named, "a refusal of a file without one of this network's tensors names the tensor missing",
               "layers.2.weight saved as layers.2.weights: %s",
               loads.status == STATUS_OK ? "loaded without a word"
               : named                   ? loads.message
                       : "the message does not name layers.2.weight, the tensor this network "
                         "needs and the file lacks");
    save_altered(other, default_sizes, LAST_BIAS_INT32);
    check_refused(&copy.net, other, "a tensor of another dtype is refused, naming the file",
                  "layers.2.bias int32 [10], the rest f32",
                  &(difference){ "layers.2.bias", shape1(10), shape1(10), DTYPE_I32, DTYPE_F32 });
    /* A layer of one output, its weight [5, 1] saved flat as [5] (a column
     * squeezed): as many elements, and its sizes those of the network's
     * first dimension, so that only the number of dimensions differs. */
    const int64_t one_output[] = { G_INPUTS, 7, 5, 1 };
    mlp narrow;
    CHECK(mlp_create(&narrow, d, one_output, 4, 6));
    save_altered(other, one_output, LAST_WEIGHT_FLAT);
    check_refused(&narrow, other, "a weight of another number of dimensions is refused, naming the file",
                  "layers.2.weight [5] into 12-7-5-1's [5, 1] (as many elements)",
                  &(difference){ "layers.2.weight", shape1(5), shape2(5, 1), DTYPE_F32, DTYPE_F32 });
    mlp_free(&narrow);
    check_that(told.refusals > 0 && told.vague == 0, WHAT_DIFFERS,
               "%d refusals of a file that differs in one tensor: %s", told.refusals,
               told.vague ? told.first_vague : "each names the tensor and both shapes or dtypes");
    check_file_failures(&copy.net, path, other);
    check_that(loads.files_left == 0, FILES_CLOSED, "%d loads: %s", loads.loads,
               loads.files_left ? loads.first_file : "every file closed");
    check_that(loads.leaks == 0, LOAD_LEAVES_NOTHING, "%d loads: %s", loads.loads,
               loads.leaks ? loads.first_leak : "no byte left behind");
    remove(other), remove(path);
    trainer_free(&cpu);
    trainer_free(&copy);
}

#define NOTHING_LEFT \
    "nothing is left behind: with the check's networks freed, the bytes in use are back where they were"

int main(int argc, char **argv)
{
    /* The lab as students run it: bench_training_epoch's switch puts the
     * epoch loop's copies back on the compute queue (train.h). */
    unsetenv("LABKIT_TRAIN_ONE_QUEUE");
    device d = check_device(argc, argv);
    const device cpu = device_cpu();
    const size_t start = bytes_in_use(d), start_cpu = bytes_in_use(cpu);
    check_gradients(d);
    check_accumulate(d);
    check_upload(d);

    dataset train, test, head;
    CHECK(dataset_synthetic(&train, TRAIN_SAMPLES, 1));
    CHECK(dataset_synthetic(&test, HELDOUT_SAMPLES, 1001));
    check_step_gradients(d);
    check_step(d, &train);
    check_failures_returned(d);
    static training run, every_step;
    /* The test of a known-wrong version caught later needs a trained network,
     * not a good one: one epoch, not EPOCHS (half a second of a simulated GPU). */
    const bool learns = !check_leaves_out(LEARNING, NOTHING_LEFT, NULL);
    train_on(d, &train, &test, STYLE_ON_DEVICE, learns ? EPOCHS : 1, &run);
    if (learns) check_learning(d, &run);
    CHECK(dataset_head(&train, EVERY_STEP_SAMPLES, &head));
    train_on(d, &head, &test, STYLE_ITEM_EVERY_STEP, 1, &every_step);
    trainer_free(&every_step.t);
    dataset_free(&head);
    check_reads(d, &run.epochs[run.trained - 1], &every_step.epochs[0]);

    CHECK(dataset_head(&train, CAPTURE_SAMPLES, &head));
    check_captured(d, &head);
    dataset_free(&head);
    check_capture_failures(d);
    check_capture_calls_refused(d);
    check_capture_device(d);

    char dir[] = "/tmp/check05-XXXXXX";
    if (!mkdtemp(dir)) CHECK(fail(STATUS_IO_FAILED, "check: no scratch directory in /tmp"));
    check_saved(d, &run, &test, dir);
    rmdir(dir);
    trainer_free(&run.t);
    dataset_free(&train);
    dataset_free(&test);
    /* A tensor made by your functions and never freed, or a reference to one
     * kept (tensor_to on its own device), outlives the networks. */
    const size_t end = bytes_in_use(d), end_cpu = bytes_in_use(cpu);
    if (device_equal(d, cpu))
        check_that(end == start, NOTHING_LEFT, "%zu bytes in use on the cpu at the start, %zu at the end",
                   start, end);
    else
        check_that(end == start && end_cpu == start_cpu, NOTHING_LEFT,
                   "%zu bytes in use on %s at the start, %zu at the end; on the cpu %zu, then %zu", start,
                   device_name(d), end, start_cpu, end_cpu);
    return check_finish("05_training_loop");
}
