/* replica.c: lab 05's MLP as a replica on one device, and the epoch loop of
 * data-parallel training (replica.h says what each does). Every operation is
 * lab 05's, in lab 05's order, so that one replica reproduces its losses. */
#include "replica.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

/* ---- the network ------------------------------------------------------------ */

void replica_free(replica *r)
{
    if (!r) return;
    for (int i = 0; i < r->nlayers; ++i) {
        replica_layer *l = &r->layers[i];
        tensor *all[] = { l->W, l->b, l->dW, l->db, l->vW, l->vb };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) tensor_free(all[k]);
    }
    for (int s = 0; s < REPLICA_SLICE_SIZES; ++s) {
        replica_buffers *b = &r->buffers[s];
        for (int i = 0; i < REPLICA_MAX_LAYERS; ++i) tensor_free(b->out[i]), tensor_free(b->grad[i]);
        tensor_free(b->x), tensor_free(b->labels), tensor_free(b->probs);
    }
    tensor_free(r->loss), tensor_free(r->loss_sum);
    memset(r, 0, sizeof *r);
}

/* Lab 05's layer: He initialisation from the layer's own seed. */
static status layer_create(replica_layer *l, device d, int64_t in, int64_t out, bool relu, uint64_t seed)
{
    l->in = in, l->out = out, l->relu = relu;
    const float he_stddev = (float)sqrt(2.0 / (double)in);
    status s = tensor_normal(&l->W, d, shape2(in, out), 0.0f, he_stddev, seed);
    if (s == STATUS_OK) s = tensor_zeros(&l->b, d, shape1(out));
    if (s == STATUS_OK) s = tensor_zeros(&l->dW, d, shape2(in, out));
    if (s == STATUS_OK) s = tensor_zeros(&l->db, d, shape1(out));
    if (s == STATUS_OK) s = tensor_zeros(&l->vW, d, shape2(in, out));
    if (s == STATUS_OK) s = tensor_zeros(&l->vb, d, shape1(out));
    return s;
}

status replica_create(replica *r, device d, const int64_t *sizes, int nsizes, uint64_t seed)
{
    if (!r || !sizes || nsizes < 2 || nsizes > REPLICA_MAX_LAYERS + 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "replica_create: give 2 to %d layer sizes (inputs, hidden..., classes)",
                    REPLICA_MAX_LAYERS + 1);
    memset(r, 0, sizeof *r);
    r->dev = d;
    status s = tensor_zeros(&r->loss, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&r->loss_sum, d, shape1(1));
    for (int i = 0; s == STATUS_OK && i + 1 < nsizes; ++i) {
        r->nlayers = i + 1; /* counted first, so that replica_free frees a partial layer */
        s = layer_create(&r->layers[i], d, sizes[i], sizes[i + 1], i + 2 < nsizes, seed * 1000 + (uint64_t)i);
    }
    if (s != STATUS_OK) replica_free(r);
    return s;
}

int64_t replica_inputs(const replica *r) { return r && r->nlayers > 0 ? r->layers[0].in : 0; }

/* ---- one slice: forward, loss, backward --------------------------------------- */

static status buffers_create(const replica *r, int64_t rows, replica_buffers *b)
{
    const device d = r->dev;
    b->rows = rows;
    status s = tensor_zeros(&b->x, d, shape2(rows, r->layers[0].in));
    if (s == STATUS_OK) s = tensor_empty(&b->labels, d, DTYPE_I32, shape1(rows));
    for (int i = 0; s == STATUS_OK && i < r->nlayers; ++i) {
        s = tensor_zeros(&b->out[i], d, shape2(rows, r->layers[i].out));
        if (s == STATUS_OK) s = tensor_zeros(&b->grad[i], d, shape2(rows, r->layers[i].out));
    }
    if (s == STATUS_OK) s = tensor_zeros(&b->probs, d, shape2(rows, r->layers[r->nlayers - 1].out));
    return s;
}

/* The buffers for slices of `rows` rows: made on first use, then reused. */
static status buffers_for(replica *r, int64_t rows, replica_buffers **out)
{
    for (int i = 0; i < REPLICA_SLICE_SIZES; ++i) {
        replica_buffers *b = &r->buffers[i];
        *out = b;
        if (b->rows == rows) return STATUS_OK;
        if (b->rows == 0) return buffers_create(r, rows, b);
    }
    return fail(STATUS_BAD_ARGUMENT, "replica: slices of more than %d sizes", REPLICA_SLICE_SIZES);
}

/* Lab 05's forward pass: out[i] = input W + b, then a ReLU but for the last. */
static status forward(const replica *r, replica_buffers *b)
{
    status s = STATUS_OK;
    for (int i = 0; s == STATUS_OK && i < r->nlayers; ++i) {
        const replica_layer *l = &r->layers[i];
        s = op_matmul(i == 0 ? b->x : b->out[i - 1], false, l->W, false, l->b, b->out[i]);
        if (s == STATUS_OK && l->relu) s = op_relu(b->out[i], b->out[i]);
    }
    return s;
}

/* Lab 05's backward pass, layer by layer from the last: G = the gradient
 * before the ReLU (in place), dW = input^T G, db = column sums of G, and the
 * gradient for the layer's input G W^T (not for the first layer's). */
static status backward(replica *r, replica_buffers *b)
{
    status s = STATUS_OK;
    for (int i = r->nlayers - 1; s == STATUS_OK && i >= 0; --i) {
        replica_layer *l = &r->layers[i];
        const tensor *input = i == 0 ? b->x : b->out[i - 1];
        if (l->relu) s = op_relu_backward(b->out[i], b->grad[i], b->grad[i]);
        if (s == STATUS_OK) s = op_matmul(input, true, b->grad[i], false, NULL, l->dW);
        if (s == STATUS_OK) s = op_column_sum(b->grad[i], l->db);
        if (s == STATUS_OK && i > 0) s = op_matmul(b->grad[i], false, l->W, true, NULL, b->grad[i - 1]);
    }
    return s;
}

/* An empty slice: no rows, so no gradient and no loss. */
static status zero_slice(replica *r)
{
    status s = op_fill(r->loss, 0.0f);
    for (int i = 0; s == STATUS_OK && i < r->nlayers; ++i) {
        s = op_fill(r->layers[i].dW, 0.0f);
        if (s == STATUS_OK) s = op_fill(r->layers[i].db, 0.0f);
    }
    return s;
}

status replica_forward_backward(replica *r, const float *images, const int32_t *labels, int64_t rows)
{
    if (!r || r->nlayers < 1 || rows < 0 || (rows > 0 && (!images || !labels)))
        return fail(STATUS_BAD_ARGUMENT,
                    "replica_forward_backward: a replica made by replica_create, rows >= 0 (%lld) and, for a "
                    "slice that is not empty, its images and labels",
                    (long long)rows);
    if (rows == 0) return zero_slice(r);
    replica_buffers *b;
    status s = buffers_for(r, rows, &b);
    if (s == STATUS_OK) s = tensor_copy_from_host(b->x, images, rows * replica_inputs(r));
    if (s == STATUS_OK) s = tensor_copy_from_host_i32(b->labels, labels, rows);
    if (s == STATUS_OK) s = forward(r, b);
    const int last = r->nlayers - 1;
    if (s == STATUS_OK) s = op_softmax_cross_entropy(b->out[last], b->labels, b->probs, r->loss);
    if (s == STATUS_OK) s = op_softmax_cross_entropy_backward(b->probs, b->labels, b->grad[last]);
    if (s == STATUS_OK) s = backward(r, b);
    return s;
}

int replica_gradients(replica *r, tensor **grads)
{
    int count = 0;
    for (int i = 0; r && grads && i < r->nlayers; ++i) {
        grads[count++] = r->layers[i].dW;
        grads[count++] = r->layers[i].db;
    }
    return count;
}

/* Lab 05's update of one parameter. */
static status sgd_update(tensor *param, const tensor *grad, tensor *velocity, float lr, float momentum)
{
    if (momentum == 0.0f) return op_axpy(-lr, grad, param);
    status s = op_scale(velocity, momentum, velocity);
    if (s == STATUS_OK) s = op_axpy(1.0f, grad, velocity);
    if (s == STATUS_OK) s = op_axpy(-lr, velocity, param);
    return s;
}

status replica_sgd_step(replica *r, float lr, float momentum)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "replica_sgd_step: r is NULL");
    status s = STATUS_OK;
    for (int i = 0; s == STATUS_OK && i < r->nlayers; ++i) {
        replica_layer *l = &r->layers[i];
        s = sgd_update(l->W, l->dW, l->vW, lr, momentum);
        if (s == STATUS_OK) s = sgd_update(l->b, l->db, l->vb, lr, momentum);
    }
    return s;
}

int64_t replica_parameter_count(const replica *r)
{
    int64_t count = 0;
    for (int i = 0; r && i < r->nlayers; ++i) count += r->layers[i].in * r->layers[i].out + r->layers[i].out;
    return count;
}

status replica_read(const replica *r, bool gradients, float *out, int64_t capacity)
{
    if (!r || !out || capacity < replica_parameter_count(r))
        return fail(STATUS_BAD_ARGUMENT, "replica_read: room for %lld floats needed, %lld given",
                    (long long)replica_parameter_count(r), (long long)capacity);
    status s = STATUS_OK;
    for (int i = 0; s == STATUS_OK && i < r->nlayers; ++i) {
        const replica_layer *l = &r->layers[i];
        const tensor *w = gradients ? l->dW : l->W, *b = gradients ? l->db : l->b;
        s = tensor_to_host(w, out, tensor_numel(w));
        out += tensor_numel(w);
        if (s == STATUS_OK) s = tensor_to_host(b, out, tensor_numel(b));
        out += tensor_numel(b);
    }
    return s;
}

/* ---- the epoch loop ------------------------------------------------------------ */

/* Copies, all devices together, so far. */
static status count_copies(replica *const *replicas, int n, uint64_t *h2d, uint64_t *d2h)
{
    *h2d = *d2h = 0;
    for (int d = 0; d < n; ++d) {
        device_counters c;
        status s = counters_read(replicas[d]->dev, &c);
        if (s != STATUS_OK) return s;
        *h2d += c.h2d_copies, *d2h += c.d2h_copies;
    }
    return STATUS_OK;
}

/* Rows order[first .. first + rows - 1] of data into the batch buffers. */
static void gather(const dataset *data, const int64_t *order, int64_t first, int64_t rows, float *images,
                   int32_t *labels)
{
    const int64_t pixels = dataset_pixels(data);
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = order[first + r];
        memcpy(images + r * pixels, data->images + i * pixels, (size_t)pixels * sizeof(float));
        labels[r] = data->labels[i];
    }
}

/* Each replica's slice loss into its log, weighted by its share of the batch:
 * the batch's mean loss is the sum of these over the devices. */
static status log_losses(replica *const *replicas, int n, int64_t rows)
{
    status s = STATUS_OK;
    for (int d = 0; d < n && s == STATUS_OK; ++d) {
        int64_t first = 0, count = 0;
        s = lab_slice(rows, n, d, &first, &count);
        if (s == STATUS_OK) s = op_axpy((float)count / (float)rows, replicas[d]->loss, replicas[d]->loss_sum);
    }
    return s;
}

static status check_epoch_arguments(replica *const *replicas, int n, const dataset *data,
                                    const dp_settings *settings, dp_epoch_result *out)
{
    if (!replicas || n < 1 || n > DP_MAX_DEVICES || !data || !settings || !out || settings->batch < 1)
        return fail(STATUS_BAD_ARGUMENT, "dp_epoch: 1 to %d replicas, a dataset, settings with a batch >= 1",
                    DP_MAX_DEVICES);
    for (int d = 0; d < n; ++d)
        if (!replicas[d] || replica_inputs(replicas[d]) != dataset_pixels(data))
            return fail(STATUS_BAD_ARGUMENT, "dp_epoch: replica %d does not take %lld inputs per row", d,
                        (long long)dataset_pixels(data));
    return STATUS_OK;
}

status dp_epoch(replica *const *replicas, int n, const dataset *data, int epoch, const dp_settings *settings,
                dp_epoch_result *out)
{
    status s = check_epoch_arguments(replicas, n, data, settings, out);
    if (s != STATUS_OK) return s;
    memset(out, 0, sizeof *out);
    const int64_t batch = settings->batch, pixels = dataset_pixels(data);
    int64_t *order = malloc((size_t)data->count * sizeof *order);
    float *images = malloc((size_t)(batch * pixels) * sizeof *images);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    if (!order || !images || !labels) s = fail(STATUS_OUT_OF_MEMORY, "dp_epoch: no host memory for a batch");
    if (s == STATUS_OK) data_permutation(order, data->count, settings->seed * 7919 + (uint64_t)epoch);
    uint64_t h2d = 0, d2h = 0;
    if (s == STATUS_OK) s = count_copies(replicas, n, &h2d, &d2h);
    const double start = wall_seconds();
    for (int d = 0; d < n && s == STATUS_OK; ++d) s = op_fill(replicas[d]->loss_sum, 0.0f);
    for (int64_t first = 0; s == STATUS_OK && first < data->count; first += batch) {
        const int64_t rows = data->count - first < batch ? data->count - first : batch;
        gather(data, order, first, rows, images, labels);
        s = lab_data_parallel_step(replicas, n, images, labels, rows, settings->lr, settings->momentum);
        if (s == STATUS_OK) s = log_losses(replicas, n, rows);
        out->steps++;
    }
    double sum = 0.0; /* the devices' logs, one read each */
    for (int d = 0; d < n && s == STATUS_OK; ++d) {
        float part = 0.0f;
        s = tensor_item(replicas[d]->loss_sum, &part);
        sum += part;
    }
    out->seconds = wall_seconds() - start;
    out->loss = out->steps ? sum / (double)out->steps : 0.0;
    uint64_t h2d_end = 0, d2h_end = 0;
    if (s == STATUS_OK) s = count_copies(replicas, n, &h2d_end, &d2h_end);
    out->h2d_copies = h2d_end - h2d, out->d2h_copies = d2h_end - d2h;
    free(order), free(images), free(labels);
    return s;
}

status dp_train(const device *devices, int n, const int64_t *sizes, int nsizes, const dataset *data,
                int epochs, const dp_settings *settings, dp_epoch_result *results)
{
    if (!devices || n < 1 || n > DP_MAX_DEVICES || !settings || !results || epochs < 1)
        return fail(STATUS_BAD_ARGUMENT, "dp_train: 1 to %d devices (n = %d), settings, epochs >= 1 (%d)",
                    DP_MAX_DEVICES, n, epochs);
    replica replicas[DP_MAX_DEVICES], *all[DP_MAX_DEVICES];
    memset(replicas, 0, sizeof replicas);
    status s = STATUS_OK;
    for (int d = 0; d < n && s == STATUS_OK; ++d)
        s = replica_create(all[d] = &replicas[d], devices[d], sizes, nsizes, settings->seed);
    for (int e = 0; e < epochs && s == STATUS_OK; ++e) s = dp_epoch(all, n, data, e, settings, &results[e]);
    for (int d = 0; d < n; ++d) replica_free(&replicas[d]);
    return s;
}
