/* mixed_mlp.c: the mixed-precision MLP of step 6 (mixed_mlp.h). Every matrix
 * product goes through the student's lab_mixed_product; everything else is
 * float32 and the library's own operations. */
#include "mixed_mlp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void mixed_mlp_free(mixed_mlp *net)
{
    if (!net) return;
    mlp_free(&net->net);
    mlp_batch_free(&net->batch);
    tensor_free(net->loss_sum), tensor_free(net->hit_sum);
    free(net->host_x), free(net->host_y), free(net->order);
    memset(net, 0, sizeof *net);
}

status mixed_mlp_create(mixed_mlp *net, device d, const int64_t *sizes, int nsizes, int64_t batch,
                        lab_precision p, uint64_t seed)
{
    if (!net || !sizes || nsizes < 2 || nsizes > MIXED_MLP_MAX_LAYERS + 1 || batch < 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "mixed_mlp_create: give 2 to %d layer sizes and a batch of at least 1",
                    MIXED_MLP_MAX_LAYERS + 1);
    memset(net, 0, sizeof *net);
    net->precision = p;
    /* Lab 05's network from the same seed: the same weights at every precision. */
    status s = mlp_create(&net->net, d, sizes, nsizes, seed);
    if (s == STATUS_OK) s = mlp_batch_create(&net->net, batch, &net->batch);
    if (s == STATUS_OK) s = tensor_zeros(&net->loss_sum, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&net->hit_sum, d, shape1(1));
    net->host_x = malloc((size_t)(batch * sizes[0]) * sizeof(float));
    net->host_y = malloc((size_t)batch * sizeof(int32_t));
    if (s == STATUS_OK && (!net->host_x || !net->host_y))
        s = fail(STATUS_OUT_OF_MEMORY, "mixed_mlp_create: no host memory for a batch");
    if (s != STATUS_OK) mixed_mlp_free(net);
    return s;
}

/* Rows order[first .. first + B - 1] of data into the batch tensors. */
static status load_batch(mixed_mlp *net, const dataset *data, const int64_t *order, int64_t first)
{
    const int64_t pixels = dataset_pixels(data), rows = net->batch.rows;
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t row = order ? order[first + r] : first + r;
        memcpy(net->host_x + r * pixels, data->images + row * pixels, (size_t)pixels * sizeof(float));
        net->host_y[r] = data->labels[row];
    }
    TRY(tensor_copy_from_host(net->batch.x, net->host_x, rows * pixels));
    return tensor_copy_from_host_i32(net->batch.labels, net->host_y, rows);
}

/* The forward pass's product: one mixed product per layer, the bias added
 * in float32 (mlp_forward_by adds the ReLU). */
static status mixed_product(tensor *a, tensor *b, const tensor *bias, tensor *out, const void *context)
{
    const mixed_mlp *net = context;
    return lab_mixed_product(a, false, b, false, bias, out, net->precision);
}

static status forward(mixed_mlp *net) { return mlp_forward_by(&net->net, &net->batch, mixed_product, net); }

/* From the logits' gradient in grad[last]: per layer G (through the ReLU),
 * dW = input^T G and grad_input = G W^T as mixed products, db = column sums. */
static status backward(mixed_mlp *net)
{
    mlp_batch *b = &net->batch;
    for (int i = net->net.nlayers - 1; i >= 0; --i) {
        layer *l = &net->net.layers[i];
        tensor *input = i == 0 ? b->x : b->out[i - 1], *g = b->grad[i];
        if (l->relu) TRY(op_relu_backward(b->out[i], g, g));
        TRY(lab_mixed_product(input, true, g, false, NULL, l->dW, net->precision));
        TRY(op_column_sum(g, l->db));
        if (i > 0) TRY(lab_mixed_product(g, false, l->W, true, NULL, b->grad[i - 1], net->precision));
    }
    return STATUS_OK;
}

static status check_data(const mixed_mlp *net, const dataset *data, const char *who)
{
    if (!data || dataset_pixels(data) != tensor_dim(net->batch.x, 1) || data->count < net->batch.rows)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: the data must have %lld pixels an image and at least %lld images", who,
                    (long long)tensor_dim(net->batch.x, 1), (long long)net->batch.rows);
    return STATUS_OK;
}

status mixed_mlp_train_epoch(mixed_mlp *net, const dataset *data, int epoch, float lr, double *loss)
{
    if (!net || !loss) return fail(STATUS_BAD_ARGUMENT, "mixed_mlp_train_epoch: net or loss is NULL");
    status s = check_data(net, data, "mixed_mlp_train_epoch");
    if (s != STATUS_OK) return s;
    if (net->order_capacity < data->count) {
        free(net->order);
        net->order = malloc((size_t)data->count * sizeof *net->order);
        net->order_capacity = net->order ? data->count : 0;
        if (!net->order) return fail(STATUS_OUT_OF_MEMORY, "mixed_mlp_train_epoch: no host memory");
    }
    data_permutation(net->order, data->count, 1000003u * (uint64_t)epoch + 17);
    const int64_t steps = data->count / net->batch.rows;
    const int last = net->net.nlayers - 1;
    mlp_batch *b = &net->batch;
    s = op_fill(net->loss_sum, 0.0f);
    for (int64_t step = 0; s == STATUS_OK && step < steps; ++step) {
        s = load_batch(net, data, net->order, step * b->rows);
        if (s == STATUS_OK) s = forward(net);
        if (s == STATUS_OK) s = op_softmax_cross_entropy(b->out[last], b->labels, b->probs, b->loss);
        if (s == STATUS_OK) s = op_softmax_cross_entropy_backward(b->probs, b->labels, b->grad[last]);
        if (s == STATUS_OK) s = backward(net);
        if (s == STATUS_OK) s = mlp_sgd_step(&net->net, lr, 0.0f); /* plain SGD: W -= lr dW */
        if (s == STATUS_OK) s = op_add(net->loss_sum, b->loss, net->loss_sum);
    }
    float sum = 0.0f;
    if (s == STATUS_OK) s = tensor_item(net->loss_sum, &sum);
    if (s == STATUS_OK) *loss = sum / (double)steps;
    return s;
}

status mixed_mlp_accuracy(mixed_mlp *net, const dataset *data, double *accuracy)
{
    if (!net || !accuracy) return fail(STATUS_BAD_ARGUMENT, "mixed_mlp_accuracy: net or accuracy is NULL");
    status s = check_data(net, data, "mixed_mlp_accuracy");
    mlp_batch *b = &net->batch;
    const int64_t batches = data ? data->count / b->rows : 0;
    if (s == STATUS_OK) s = op_fill(net->hit_sum, 0.0f);
    for (int64_t k = 0; s == STATUS_OK && k < batches; ++k) {
        s = load_batch(net, data, NULL, k * b->rows);
        if (s == STATUS_OK) s = forward(net);
        if (s == STATUS_OK) s = op_accuracy(b->out[net->net.nlayers - 1], b->labels, b->accuracy);
        if (s == STATUS_OK) s = op_add(net->hit_sum, b->accuracy, net->hit_sum);
    }
    float sum = 0.0f;
    if (s == STATUS_OK) s = tensor_item(net->hit_sum, &sum);
    if (s == STATUS_OK) *accuracy = sum / (double)batches;
    return s;
}
