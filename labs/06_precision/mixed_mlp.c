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
    for (int i = 0; i < MIXED_MLP_MAX_LAYERS; ++i) {
        tensor_free(net->W[i]), tensor_free(net->b[i]), tensor_free(net->dW[i]), tensor_free(net->db[i]);
        tensor_free(net->out[i]), tensor_free(net->grad[i]);
    }
    tensor_free(net->x), tensor_free(net->labels), tensor_free(net->probs), tensor_free(net->loss);
    tensor_free(net->loss_sum), tensor_free(net->hits), tensor_free(net->hit_sum);
    free(net->host_x), free(net->host_y), free(net->order);
    memset(net, 0, sizeof *net);
}

static status create_layer(mixed_mlp *net, int i, int64_t in, int64_t out, uint64_t seed)
{
    const device d = net->dev;
    status s = tensor_normal(&net->W[i], d, shape2(in, out), 0.0f, (float)sqrt(2.0 / (double)in), seed);
    if (s == STATUS_OK) s = tensor_zeros(&net->b[i], d, shape1(out));
    if (s == STATUS_OK) s = tensor_zeros(&net->dW[i], d, shape2(in, out));
    if (s == STATUS_OK) s = tensor_zeros(&net->db[i], d, shape1(out));
    if (s == STATUS_OK) s = tensor_zeros(&net->out[i], d, shape2(net->batch, out));
    if (s == STATUS_OK) s = tensor_zeros(&net->grad[i], d, shape2(net->batch, out));
    return s;
}

status mixed_mlp_create(mixed_mlp *net, device d, const int64_t *sizes, int nsizes, int64_t batch,
                        lab_precision p, uint64_t seed)
{
    if (!net || !sizes || nsizes < 2 || nsizes > MIXED_MLP_MAX_LAYERS + 1 || batch < 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "mixed_mlp_create: give 2 to %d layer sizes and a batch of at least 1",
                    MIXED_MLP_MAX_LAYERS + 1);
    memset(net, 0, sizeof *net);
    net->dev = d, net->precision = p, net->nlayers = nsizes - 1, net->batch = batch;
    status s = STATUS_OK;
    for (int i = 0; s == STATUS_OK && i < net->nlayers; ++i)
        s = create_layer(net, i, sizes[i], sizes[i + 1], seed * 1000 + (uint64_t)i);
    const int64_t classes = sizes[nsizes - 1];
    if (s == STATUS_OK) s = tensor_zeros(&net->x, d, shape2(batch, sizes[0]));
    if (s == STATUS_OK) s = tensor_empty(&net->labels, d, DTYPE_I32, shape1(batch));
    if (s == STATUS_OK) s = tensor_zeros(&net->probs, d, shape2(batch, classes));
    if (s == STATUS_OK) s = tensor_zeros(&net->loss, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&net->loss_sum, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&net->hits, d, shape1(1));
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
    const int64_t pixels = dataset_pixels(data);
    for (int64_t r = 0; r < net->batch; ++r) {
        const int64_t row = order ? order[first + r] : first + r;
        memcpy(net->host_x + r * pixels, data->images + row * pixels, (size_t)pixels * sizeof(float));
        net->host_y[r] = data->labels[row];
    }
    status s = tensor_copy_from_host(net->x, net->host_x, net->batch * pixels);
    if (s == STATUS_OK) s = tensor_copy_from_host_i32(net->labels, net->host_y, net->batch);
    return s;
}

/* out[i] = relu(input W + b) (no ReLU for the last layer): one mixed product
 * per layer, the bias added in float32. */
static status forward(mixed_mlp *net)
{
    for (int i = 0; i < net->nlayers; ++i) {
        tensor *input = i == 0 ? net->x : net->out[i - 1];
        status s = lab_mixed_product(input, false, net->W[i], false, net->b[i], net->out[i], net->precision);
        if (s == STATUS_OK && i + 1 < net->nlayers) s = op_relu(net->out[i], net->out[i]);
        if (s != STATUS_OK) return s;
    }
    return STATUS_OK;
}

/* From the logits' gradient in grad[last]: per layer G (through the ReLU),
 * dW = input^T G and grad_input = G W^T as mixed products, db = column sums. */
static status backward(mixed_mlp *net)
{
    for (int i = net->nlayers - 1; i >= 0; --i) {
        tensor *input = i == 0 ? net->x : net->out[i - 1], *g = net->grad[i];
        status s = STATUS_OK;
        if (i + 1 < net->nlayers) s = op_relu_backward(net->out[i], g, g);
        if (s == STATUS_OK) s = lab_mixed_product(input, true, g, false, NULL, net->dW[i], net->precision);
        if (s == STATUS_OK) s = op_column_sum(g, net->db[i]);
        if (s == STATUS_OK && i > 0)
            s = lab_mixed_product(g, false, net->W[i], true, NULL, net->grad[i - 1], net->precision);
        if (s != STATUS_OK) return s;
    }
    return STATUS_OK;
}

/* SGD on the float32 master weights: the updates, often far smaller than a
 * bf16 weight's last bit, are not lost. */
static status sgd(mixed_mlp *net, float lr)
{
    for (int i = 0; i < net->nlayers; ++i) {
        status s = op_axpy(-lr, net->dW[i], net->W[i]);
        if (s == STATUS_OK) s = op_axpy(-lr, net->db[i], net->b[i]);
        if (s != STATUS_OK) return s;
    }
    return STATUS_OK;
}

static status check_data(const mixed_mlp *net, const dataset *data, const char *who)
{
    if (!data || dataset_pixels(data) != tensor_dim(net->x, 1) || data->count < net->batch)
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: the data must have %lld pixels an image and at least %lld images", who,
                    (long long)tensor_dim(net->x, 1), (long long)net->batch);
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
    const int64_t steps = data->count / net->batch;
    const int last = net->nlayers - 1;
    s = op_fill(net->loss_sum, 0.0f);
    for (int64_t step = 0; s == STATUS_OK && step < steps; ++step) {
        s = load_batch(net, data, net->order, step * net->batch);
        if (s == STATUS_OK) s = forward(net);
        if (s == STATUS_OK) s = op_softmax_cross_entropy(net->out[last], net->labels, net->probs, net->loss);
        if (s == STATUS_OK) s = op_softmax_cross_entropy_backward(net->probs, net->labels, net->grad[last]);
        if (s == STATUS_OK) s = backward(net);
        if (s == STATUS_OK) s = sgd(net, lr);
        if (s == STATUS_OK) s = op_add(net->loss_sum, net->loss, net->loss_sum);
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
    const int64_t batches = data ? data->count / net->batch : 0;
    if (s == STATUS_OK) s = op_fill(net->hit_sum, 0.0f);
    for (int64_t k = 0; s == STATUS_OK && k < batches; ++k) {
        s = load_batch(net, data, NULL, k * net->batch);
        if (s == STATUS_OK) s = forward(net);
        if (s == STATUS_OK) s = op_accuracy(net->out[net->nlayers - 1], net->labels, net->hits);
        if (s == STATUS_OK) s = op_add(net->hit_sum, net->hits, net->hit_sum);
    }
    float sum = 0.0f;
    if (s == STATUS_OK) s = tensor_item(net->hit_sum, &sum);
    if (s == STATUS_OK) *accuracy = sum / (double)batches;
    return s;
}
