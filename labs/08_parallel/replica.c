/* replica.c: lab 05's MLP as a replica on one device, and the epoch loop of
 * data-parallel training (replica.h says what each does). The network is lab
 * 05's (labs/common/mlp.c), its backward pass the student's lab 05 step 1
 * (mlp_backward), so that one replica reproduces lab 05's losses. */
#include "replica.h"

#include <stdlib.h>
#include <string.h>

#include "lab.h"

/* ---- the network ------------------------------------------------------------ */

void replica_free(replica *r)
{
    if (!r) return;
    mlp_free(&r->net);
    for (int i = 0; i < REPLICA_SLICE_SIZES; ++i) mlp_batch_free(&r->slices[i]);
    tensor_free(r->loss), tensor_free(r->loss_sum);
    memset(r, 0, sizeof *r);
}

status replica_create(replica *r, device d, const int64_t *sizes, int nsizes, uint64_t seed)
{
    if (!r || !sizes || nsizes < 2 || nsizes > REPLICA_MAX_LAYERS + 1)
        return fail(STATUS_BAD_ARGUMENT,
                    "replica_create: give 2 to %d layer sizes (inputs, hidden..., classes)",
                    REPLICA_MAX_LAYERS + 1);
    memset(r, 0, sizeof *r);
    status s = tensor_zeros(&r->loss, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&r->loss_sum, d, shape1(1));
    if (s == STATUS_OK) s = mlp_create(&r->net, d, sizes, nsizes, seed); /* lab 05's, from the same seed */
    if (s != STATUS_OK) replica_free(r);
    return s;
}

int64_t replica_inputs(const replica *r) { return r && r->net.nlayers > 0 ? r->net.layers[0].in : 0; }

/* ---- one slice: forward, loss, backward --------------------------------------- */

/* The tensors for slices of `rows` rows: made on first use, then reused. */
static status slice_for(replica *r, int64_t rows, mlp_batch **out)
{
    int slot;
    *out = NULL;
    TRY(mlp_batch_slot(&r->net, r->slices, REPLICA_SLICE_SIZES, rows, "replica", "slice", &slot));
    *out = &r->slices[slot];
    return STATUS_OK;
}

/* An empty slice: no rows, so no gradient and no loss. */
static status zero_slice(replica *r)
{
    TRY(op_fill(r->loss, 0.0f));
    return mlp_zero_gradients(&r->net);
}

status replica_forward_backward(replica *r, const float *images, const int32_t *labels, int64_t rows)
{
    if (!r || r->net.nlayers < 1 || rows < 0 || (rows > 0 && (!images || !labels)))
        return fail(STATUS_BAD_ARGUMENT,
                    "replica_forward_backward: a replica made by replica_create, rows >= 0 (%lld) and, for a "
                    "slice that is not empty, its images and labels",
                    (long long)rows);
    if (rows == 0) return zero_slice(r);
    mlp_batch *b;
    TRY(slice_for(r, rows, &b));
    TRY(tensor_copy_from_host(b->x, images, rows * replica_inputs(r)));
    TRY(tensor_copy_from_host_i32(b->labels, labels, rows));
    TRY(mlp_forward(&r->net, b));
    const int last = r->net.nlayers - 1;
    TRY(op_softmax_cross_entropy(b->out[last], b->labels, b->probs, r->loss));
    TRY(op_softmax_cross_entropy_backward(b->probs, b->labels, b->grad[last]));
    return mlp_backward(&r->net, b); /* your lab 05's lab_layer_backward, layer by layer */
}

int replica_gradients(replica *r, tensor **grads)
{
    int count = 0;
    for (int i = 0; r && grads && i < r->net.nlayers; ++i) {
        grads[count++] = r->net.layers[i].dW;
        grads[count++] = r->net.layers[i].db;
    }
    return count;
}

status replica_sgd_step(replica *r, float lr, float momentum)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "replica_sgd_step: r is NULL");
    return mlp_sgd_step(&r->net, lr, momentum); /* lab 05's: v = momentum v + g, W -= lr v */
}

int64_t replica_parameter_count(const replica *r)
{
    int64_t count = 0;
    for (int i = 0; r && i < r->net.nlayers; ++i)
        count += r->net.layers[i].in * r->net.layers[i].out + r->net.layers[i].out;
    return count;
}

status replica_read(const replica *r, bool gradients, float *out, int64_t capacity)
{
    if (!r || !out || capacity < replica_parameter_count(r))
        return fail(STATUS_BAD_ARGUMENT, "replica_read: room for %lld floats needed, %lld given",
                    (long long)replica_parameter_count(r), (long long)capacity);
    for (int i = 0; i < r->net.nlayers; ++i) {
        const layer *l = &r->net.layers[i];
        const tensor *w = gradients ? l->dW : l->W, *b = gradients ? l->db : l->b;
        TRY(tensor_to_host(w, out, tensor_numel(w)));
        out += tensor_numel(w);
        TRY(tensor_to_host(b, out, tensor_numel(b)));
        out += tensor_numel(b);
    }
    return STATUS_OK;
}

/* ---- the epoch loop ------------------------------------------------------------ */

/* Copies, all devices together, so far. */
static status count_copies(replica *const *replicas, int n, uint64_t *h2d, uint64_t *d2h)
{
    *h2d = *d2h = 0;
    for (int d = 0; d < n; ++d) {
        device_counters c;
        status s = counters_read(replicas[d]->net.dev, &c);
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
