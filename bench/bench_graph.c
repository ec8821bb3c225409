/* bench_graph.c: lab 05's training step launched call by call, and launched as
 * one captured graph, on the first GPU (sim:0 here; cuda:0 on a workstation),
 * before and after fusion, in one run.
 *
 * The step is lab 05's: an MLP 784-256-256-10 at batch 128, its batch uploaded
 * from pinned memory, forward, softmax cross-entropy, backward, SGD with
 * momentum, the loss added to a sum on the device: K operations and 2 uploads.
 * For each way, two figures from the same run:
 *   host us/step   what the host spends queueing one step (median; the queue
 *                  is drained, untimed, every few steps so that it never fills);
 *   us/step        steps queued back to back and waited for: what a training
 *                  loop gets, the host's cost or the device's, whichever is more.
 * Before fusion the SGD step is 18 operations (op_scale, op_axpy, op_axpy per
 * tensor), after it one (op_sgd_momentum). The library's other fusions (the
 * bias in the product's epilogue, the one-kernel softmax cross-entropy, the
 * wider column sums) are inside its operations and in both: before them, the
 * same step was 41 kernels on a GPU, 19 after (labs/05_training_loop/README.md).
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
    bool fused; /* the SGD step as one op_sgd_momentum, or 18 operations */
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
    if (n->fused && s == STATUS_OK) {
        tensor *params[2 * LAYERS], *velocities[2 * LAYERS];
        const tensor *grads[2 * LAYERS];
        for (int i = 0; i < LAYERS; ++i) {
            params[2 * i] = L[i].W, grads[2 * i] = L[i].dW, velocities[2 * i] = L[i].vW;
            params[2 * i + 1] = L[i].b, grads[2 * i + 1] = L[i].db, velocities[2 * i + 1] = L[i].vb;
        }
        s = op_sgd_momentum(params, grads, velocities, 2 * LAYERS, 0.01f, 0.9f);
    }
    for (int i = 0; !n->fused && s == STATUS_OK && i < LAYERS; ++i) {
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

/* The step captured once, after a few eager steps (libraries and kernels loaded). */
static graph *capture(net *n)
{
    graph *g = NULL;
    for (int i = 0; i < 20; ++i) CHECK(train_step(n));
    CHECK(device_synchronize(n->dev));
    CHECK(graph_begin_capture(n->dev));
    CHECK(train_step(n));
    CHECK(graph_end_capture(n->dev, &g));
    return g;
}

static void print_row(const char *way, result r)
{
    printf("  %-34s %14llu %14.1f %12.1f\n", way, (unsigned long long)r.launches, r.host_us, r.step_us);
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
    make_net(&n, gpu);
    result r[2][2]; /* [fused][captured] */
    long long operations[2] = { 0, 0 };
    for (int fused = 0; fused < 2; ++fused) {
        n.fused = fused;
        graph *step = capture(&n);
        operations[fused] = (long long)graph_operations(step);
        r[fused][0] = measure(&n, NULL, steps), r[fused][1] = measure(&n, step, steps);
        graph_free(step);
    }
    printf("lab 05's training step on %s (784-256-256-10, batch 128, SGD with momentum): %lld operations "
           "and 2 uploads before fusion, %lld after; %d steps back to back\n",
           device_name(gpu), operations[0], operations[1], steps);
    printf("  %-34s %14s %14s %12s\n", "", "launches/step", "host us/step", "us/step");
    print_row("call by call, before fusion", r[0][0]);
    print_row("call by call, fused", r[1][0]);
    print_row("one graph (captured), before fusion", r[0][1]);
    print_row("one graph (captured), fused", r[1][1]);
    printf(
        "takeaway: fused, the step is %lld operations instead of %lld; the graph queues it %.0fx faster on "
        "the host; captured, a fused step takes %.2fx the time of an unfused one%s.\n",
        operations[1], operations[0], r[1][0].host_us / r[1][1].host_us, r[1][1].step_us / r[0][1].step_us,
        gpu.kind == DEVICE_SIM ? " (on a simulated GPU the kernels run on the same cores as the host: the "
                                 "times say little; on a real GPU each kernel saved is a microsecond or two)"
                               : "");
    free_net(&n);
    return 0;
}
