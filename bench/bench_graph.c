/* bench_graph.c: lab 05's training step launched call by call, and launched as
 * one captured graph, on the first GPU (sim:0 here; cuda:0 on a workstation).
 *
 * The step is lab 05's: an MLP 784-256-256-10 at batch 128, its batch uploaded
 * from pinned memory, forward, softmax cross-entropy, backward, SGD with
 * momentum, the loss added to a sum on the device: K operations and 2 uploads.
 * For each way, two figures from the same run:
 *   host us/step   what the host spends queueing one step (median; the queue
 *                  is drained, untimed, every few steps so that it never fills);
 *   us/step        steps queued back to back and waited for: what a training
 *                  loop gets, the host's cost or the device's, whichever is more.
 * The arguments: none, or a number of steps for the second figure. */
#include <string.h>

#include "bench_common.h"

#define LAYERS 3
#define BATCH 128
#define STEPS 500   /* the back-to-back run */
#define SAMPLES 400 /* steps timed one by one */
#define WINDOW 8    /* steps between two (untimed) drains of the queue */

static const int64_t sizes[LAYERS + 1] = { 784, 256, 256, 10 };

typedef struct layer {
    tensor *W, *b, *dW, *db, *vW, *vb;
    tensor *out, *grad; /* [BATCH, out] */
} layer;

typedef struct net {
    device dev;
    layer layers[LAYERS];
    tensor *x, *labels, *probs, *loss, *loss_sum;
    float *host_x;   /* pinned [BATCH, 784] */
    int32_t *host_y; /* pinned [BATCH] */
} net;

static void make_layer(layer *l, device d, int64_t in, int64_t out, uint64_t seed)
{
    CHECK(tensor_normal(&l->W, d, shape2(in, out), 0.0f, 0.05f, seed));
    CHECK(tensor_zeros(&l->b, d, shape1(out)));
    CHECK(tensor_zeros(&l->dW, d, shape2(in, out)));
    CHECK(tensor_zeros(&l->db, d, shape1(out)));
    CHECK(tensor_zeros(&l->vW, d, shape2(in, out)));
    CHECK(tensor_zeros(&l->vb, d, shape1(out)));
    CHECK(tensor_zeros(&l->out, d, shape2(BATCH, out)));
    CHECK(tensor_zeros(&l->grad, d, shape2(BATCH, out)));
}

static void make_net(net *n, device d)
{
    memset(n, 0, sizeof *n);
    n->dev = d;
    for (int i = 0; i < LAYERS; ++i) make_layer(&n->layers[i], d, sizes[i], sizes[i + 1], 100 + (uint64_t)i);
    CHECK(tensor_zeros(&n->x, d, shape2(BATCH, sizes[0])));
    CHECK(tensor_empty(&n->labels, d, DTYPE_I32, shape1(BATCH)));
    CHECK(tensor_zeros(&n->probs, d, shape2(BATCH, sizes[LAYERS])));
    CHECK(tensor_zeros(&n->loss, d, shape1(1)));
    CHECK(tensor_zeros(&n->loss_sum, d, shape1(1)));
    n->host_x = host_alloc(BATCH * (size_t)sizes[0] * sizeof(float), 1);
    n->host_y = host_alloc(BATCH * sizeof(int32_t), 1);
    if (!n->host_x || !n->host_y) {
        fprintf(stderr, "bench_graph: no host memory for a batch\n");
        exit(1);
    }
    for (int64_t i = 0; i < BATCH * sizes[0]; ++i) n->host_x[i] = (float)(i % 255) / 255.0f;
    for (int i = 0; i < BATCH; ++i) n->host_y[i] = i % 10;
}

static void free_net(net *n)
{
    for (int i = 0; i < LAYERS; ++i) {
        layer *l = &n->layers[i];
        tensor *all[] = { l->W, l->b, l->dW, l->db, l->vW, l->vb, l->out, l->grad };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) tensor_free(all[k]);
    }
    tensor_free(n->x), tensor_free(n->labels), tensor_free(n->probs);
    tensor_free(n->loss), tensor_free(n->loss_sum);
    host_free(n->host_x, 1), host_free(n->host_y, 1);
}

static status sgd(tensor *param, const tensor *grad, tensor *velocity)
{
    status s = op_scale(velocity, 0.9f, velocity);
    if (s == STATUS_OK) s = op_axpy(1.0f, grad, velocity);
    if (s == STATUS_OK) s = op_axpy(-0.01f, velocity, param);
    return s;
}

/* Lab 05's step, as its solution queues it. */
static status train_step(net *n)
{
    layer *L = n->layers;
    status s = tensor_copy_from_host_async(n->x, n->host_x, BATCH * sizes[0]);
    if (s == STATUS_OK) s = tensor_copy_from_host_async_i32(n->labels, n->host_y, BATCH);
    for (int i = 0; s == STATUS_OK && i < LAYERS; ++i) {
        s = op_matmul(i ? L[i - 1].out : n->x, false, L[i].W, false, L[i].b, L[i].out);
        if (s == STATUS_OK && i + 1 < LAYERS) s = op_relu(L[i].out, L[i].out);
    }
    if (s == STATUS_OK) s = op_softmax_cross_entropy(L[LAYERS - 1].out, n->labels, n->probs, n->loss);
    if (s == STATUS_OK) s = op_softmax_cross_entropy_backward(n->probs, n->labels, L[LAYERS - 1].grad);
    for (int i = LAYERS - 1; s == STATUS_OK && i >= 0; --i) {
        if (i + 1 < LAYERS) s = op_relu_backward(L[i].out, L[i].grad, L[i].grad);
        if (s == STATUS_OK) s = op_matmul(i ? L[i - 1].out : n->x, true, L[i].grad, false, NULL, L[i].dW);
        if (s == STATUS_OK) s = op_column_sum(L[i].grad, L[i].db);
        if (s == STATUS_OK && i > 0) s = op_matmul(L[i].grad, false, L[i].W, true, NULL, L[i - 1].grad);
    }
    for (int i = 0; s == STATUS_OK && i < LAYERS; ++i) {
        s = sgd(L[i].W, L[i].dW, L[i].vW);
        if (s == STATUS_OK) s = sgd(L[i].b, L[i].db, L[i].vb);
    }
    if (s == STATUS_OK) s = op_add(n->loss_sum, n->loss, n->loss_sum);
    return s;
}

typedef struct result {
    double host_us;    /* median host time to queue one step */
    double step_us;    /* steps back to back, waited for */
    uint64_t launches; /* counted for one step */
} result;

/* One step: eagerly (g == NULL) or as the graph. */
static status one_step(net *n, graph *g) { return g ? graph_launch(g) : train_step(n); }

static result measure(net *n, graph *g, int steps)
{
    static double samples[SAMPLES];
    result r;
    device_counters c;
    CHECK(device_synchronize(n->dev));
    CHECK(counters_reset(n->dev));
    CHECK(one_step(n, g));
    CHECK(counters_read(n->dev, &c));
    r.launches = c.launches;
    for (int i = 0; i < SAMPLES; ++i) {
        if (i % WINDOW == 0) CHECK(device_synchronize(n->dev));
        const double start = wall_seconds();
        CHECK(one_step(n, g));
        samples[i] = wall_seconds() - start;
    }
    r.host_us = 1e6 * median_of(samples, SAMPLES);
    CHECK(device_synchronize(n->dev));
    const double start = wall_seconds();
    for (int i = 0; i < steps; ++i) CHECK(one_step(n, g));
    CHECK(device_synchronize(n->dev));
    r.step_us = 1e6 * (wall_seconds() - start) / steps;
    return r;
}

int main(int argc, char **argv)
{
    const int steps = argc > 1 ? atoi(argv[1]) : STEPS;
    if (steps < 1) {
        fprintf(stderr, "usage: bench_graph [STEPS]\n");
        return 2;
    }
    device gpu = bench_gpu();
    net n;
    graph *step = NULL;
    make_net(&n, gpu);
    for (int i = 0; i < 20; ++i) CHECK(train_step(&n)); /* warm up: libraries loaded, kernels too */
    CHECK(device_synchronize(gpu));
    CHECK(graph_begin_capture(gpu));
    CHECK(train_step(&n));
    CHECK(graph_end_capture(gpu, &step));

    const result eager = measure(&n, NULL, steps), replayed = measure(&n, step, steps);
    printf("lab 05's training step on %s (784-256-256-10, batch 128, SGD with momentum): %lld operations "
           "and 2 uploads; %d steps back to back\n",
           device_name(gpu), (long long)graph_operations(step), steps);
    printf("  %-22s %14s %14s %12s\n", "", "launches/step", "host us/step", "us/step");
    printf("  %-22s %14llu %14.1f %12.1f\n", "call by call", (unsigned long long)eager.launches,
           eager.host_us, eager.step_us);
    printf("  %-22s %14llu %14.1f %12.1f\n", "one graph (captured)", (unsigned long long)replayed.launches,
           replayed.host_us, replayed.step_us);
    printf("takeaway: the graph queues the step %.0fx faster on the host; a step takes %.2fx the time of the "
           "call-by-call one%s.\n",
           eager.host_us / replayed.host_us, replayed.step_us / eager.step_us,
           gpu.kind == DEVICE_SIM ? " (a simulated GPU still spends 2 us per kernel, and its work runs on "
                                    "the same cores as the host)"
                                  : "");
    graph_free(step);
    free_net(&n);
    return 0;
}
