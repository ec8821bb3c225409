/* train.c: lab 05's network on one rank, and one step of data-parallel
 * training around your step 3 (train.h says what each does). */
#include "train.h"

#include <string.h>

#include "lab.h"

status dist_create(dist_model *m, device d, const int64_t *sizes, int nsizes, uint64_t seed)
{
    if (!m || !sizes) return fail(STATUS_BAD_ARGUMENT, "dist_create: m and sizes must not be NULL");
    memset(m, 0, sizeof *m);
    return mlp_create(&m->net, d, sizes, nsizes, seed);
}

void dist_free(dist_model *m)
{
    if (!m) return;
    mlp_free(&m->net);
    for (int i = 0; i < DIST_SLICE_SIZES; ++i) mlp_batch_free(&m->slices[i]);
    memset(m, 0, sizeof *m);
}

/* The tensors for slices of `rows` rows: made on first use, then reused. */
static status slice_for(dist_model *m, int64_t rows, mlp_batch **out)
{
    int slot;
    *out = NULL;
    TRY(mlp_batch_slot(&m->net, m->slices, DIST_SLICE_SIZES, rows, "dist_model", "slice", &slot));
    *out = &m->slices[slot];
    return STATUS_OK;
}

status dist_slice_gradients(dist_model *m, const float *images, const int32_t *labels, int64_t rows)
{
    if (!m || m->net.nlayers < 1 || rows < 0 || (rows > 0 && (!images || !labels)))
        return fail(
            STATUS_BAD_ARGUMENT,
            "dist_slice_gradients: a model made by dist_create, rows >= 0 (%lld) and, for a slice that "
            "is not empty, its images and labels",
            (long long)rows);
    m->loss = 0.0f;
    if (rows == 0)
        return mlp_zero_gradients(&m->net); /* an empty slice adds nothing to the batch's gradient */
    mlp_batch *b;
    TRY(slice_for(m, rows, &b));
    TRY(tensor_copy_from_host(b->x, images, rows * m->net.layers[0].in));
    TRY(tensor_copy_from_host_i32(b->labels, labels, rows));
    TRY(mlp_forward(&m->net, b));
    const int last = m->net.nlayers - 1;
    TRY(op_softmax_cross_entropy(b->out[last], b->labels, b->probs, b->loss));
    TRY(op_softmax_cross_entropy_backward(b->probs, b->labels, b->grad[last]));
    TRY(mlp_backward(&m->net, b)); /* your lab 05's lab_layer_backward, layer by layer */
    return tensor_item(b->loss, &m->loss);
}

status dist_step(dist_model *m, const dataset *data, int64_t first, int64_t batch, float lr, MPI_Comm comm)
{
    if (!m || !data || first < 0 || batch < 1 || first + batch > data->count)
        return fail(STATUS_BAD_ARGUMENT, "dist_step: a batch of %lld rows from image %lld of %lld",
                    (long long)batch, (long long)first, (long long)(data ? data->count : 0));
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int64_t mine = 0, rows = 0;
    TRY(lab_chunk(batch, size, rank, &mine, &rows));
    if (mine < 0 || rows < 0 || mine + rows > batch)
        return fail(STATUS_BAD_ARGUMENT,
                    "dist_step: lab_chunk gave rank %d rows %lld..%lld of a batch of %lld", rank,
                    (long long)mine, (long long)(mine + rows - 1), (long long)batch);
    const int64_t pixels = dataset_pixels(data);
    TRY(dist_slice_gradients(m, data->images + (first + mine) * pixels, data->labels + first + mine, rows));
    TRY(lab_average_gradients(&m->net, rows, batch, comm));
    return mlp_sgd_step(&m->net, lr, 0.0f);
}

int64_t dist_parameter_count(const mlp *net)
{
    int64_t count = 0;
    for (int i = 0; net && i < net->nlayers; ++i)
        count += net->layers[i].in * net->layers[i].out + net->layers[i].out;
    return count;
}

status dist_read(const mlp *net, int gradients, float *out, int64_t capacity)
{
    if (!net || !out || capacity < dist_parameter_count(net))
        return fail(STATUS_BAD_ARGUMENT, "dist_read: room for %lld floats needed, %lld given",
                    (long long)dist_parameter_count(net), (long long)capacity);
    for (int i = 0; i < net->nlayers; ++i) {
        const layer *l = &net->layers[i];
        const tensor *w = gradients ? l->dW : l->W, *b = gradients ? l->db : l->b;
        TRY(tensor_to_host(w, out, tensor_numel(w)));
        out += tensor_numel(w);
        TRY(tensor_to_host(b, out, tensor_numel(b)));
        out += tensor_numel(b);
    }
    return STATUS_OK;
}
