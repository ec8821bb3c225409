/* mlp.c: the MLP's parameters, its forward pass and the SGD step (its
 * backward pass, through lab 05's step 1, is mlp_backward.c). Every operation
 * is queued on the network's device; nothing here reads a value back to the
 * host. */
#include "mlp.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parameters -------------------------------------------------------------- */

/* Frees what is not NULL, so a half-built network can be freed too. */
void mlp_free(mlp *net)
{
    if (!net) return;
    for (int i = 0; i < net->nlayers; ++i) {
        layer *l = &net->layers[i];
        tensor *all[] = { l->W, l->b, l->dW, l->db, l->vW, l->vb };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) tensor_free(all[k]);
    }
    memset(net, 0, sizeof *net);
}

static status layer_create(layer *l, device d, int64_t in, int64_t out, bool relu, uint64_t seed)
{
    l->in = in, l->out = out, l->relu = relu;
    const float he_stddev = (float)sqrt(2.0 / (double)in);
    TRY(tensor_normal(&l->W, d, shape2(in, out), 0.0f, he_stddev, seed));
    TRY(tensor_zeros(&l->b, d, shape1(out)));
    TRY(tensor_zeros(&l->dW, d, shape2(in, out)));
    TRY(tensor_zeros(&l->db, d, shape1(out)));
    TRY(tensor_zeros(&l->vW, d, shape2(in, out)));
    TRY(tensor_zeros(&l->vb, d, shape1(out)));
    return STATUS_OK;
}

/* ---- will it fit? ---------------------------------------------------------------- */

const char *mlp_format_sizes(const int64_t *sizes, int nsizes, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < nsizes && used < size; ++i)
        used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? "-" : "", (long long)sizes[i]);
    return text;
}

uint64_t mlp_device_bytes(const int64_t *sizes, int nsizes, int64_t batch)
{
    uint64_t parameters = 0, activations = 0;
    for (int i = 0; i + 1 < nsizes; ++i) {
        parameters += (uint64_t)sizes[i] * (uint64_t)sizes[i + 1] + (uint64_t)sizes[i + 1];
        activations += 2 * (uint64_t)sizes[i + 1]; /* each layer's output and its gradient */
    }
    /* a batch: images, labels, activations, softmax probabilities, loss, accuracy */
    const uint64_t per_row = (uint64_t)sizes[0] + 1 + activations + (uint64_t)sizes[nsizes - 1];
    const uint64_t per_batch = batch > 0 ? 4 * ((uint64_t)batch * per_row + 2) : 0;
    return 3 * 4 * parameters + MLP_BATCH_SETS * 3 * per_batch;
}

/* "28.4 GiB", "512 MiB" */
static const char *bytes_text(uint64_t bytes, char *text, size_t size)
{
    const char *units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    double value = (double)bytes;
    int u = 0;
    while (value >= 1024 && u < 4) value /= 1024, ++u;
    snprintf(text, size, u ? "%.1f %s" : "%.0f %s", value, units[u]);
    return text;
}

status mlp_check_fits(device d, const int64_t *sizes, int nsizes, int64_t batch)
{
    if (!sizes || nsizes < 2 || nsizes > MLP_MAX_LAYERS + 1 || batch < 0)
        return fail(STATUS_BAD_ARGUMENT, "mlp_check_fits: give 2 to %d layer sizes and a batch >= 0",
                    MLP_MAX_LAYERS + 1);
    uint64_t largest = 0; /* the biggest weight matrix, drawn on the host before it is copied */
    for (int i = 0; i + 1 < nsizes; ++i)
        if ((uint64_t)sizes[i] * (uint64_t)sizes[i + 1] * 4 > largest)
            largest = (uint64_t)sizes[i] * (uint64_t)sizes[i + 1] * 4;
    const uint64_t need = mlp_device_bytes(sizes, nsizes, batch);
    size_t free_bytes = 0, total = 0, host_free = 0, host_total = 0;
    status s = device_memory_info(d, &free_bytes, &total);
    if (s == STATUS_OK) s = device_memory_info(device_cpu(), &host_free, &host_total);
    if (s != STATUS_OK) return s;
    char layers[160], a[32], b[32], c[32];
    mlp_format_sizes(sizes, nsizes, layers, sizeof layers);
    if (need > free_bytes)
        return fail(STATUS_OUT_OF_MEMORY,
                    "MLP %s at batch %lld needs %s on %s (every parameter three times: the values, their "
                    "gradients and their momentum; and a batch's activations), but %s has %s, %s of it "
                    "free.\n  hint: smaller --layers or --batch%s",
                    layers, (long long)batch, bytes_text(need, a, sizeof a), device_name(d), device_name(d),
                    bytes_text(total, b, sizeof b), bytes_text(free_bytes, c, sizeof c),
                    d.kind == DEVICE_SIM ? " (LABKIT_SIM_MEMORY sets a simulated GPU's memory)" : "");
    if (largest > host_free)
        return fail(STATUS_OUT_OF_MEMORY,
                    "MLP %s: its largest weight matrix (%s) is drawn on the host before it goes to %s, but "
                    "the host has %s free.\n  hint: smaller --layers",
                    layers, bytes_text(largest, a, sizeof a), device_name(d),
                    bytes_text(host_free, b, sizeof b));
    return STATUS_OK;
}

/* ---- creation ------------------------------------------------------------------------ */

status mlp_create(mlp *net, device d, const int64_t *sizes, int nsizes, uint64_t seed)
{
    if (!net || !sizes || nsizes < 2 || nsizes > MLP_MAX_LAYERS + 1)
        return fail(STATUS_BAD_ARGUMENT, "mlp_create: give 2 to %d layer sizes (inputs, hidden..., classes)",
                    MLP_MAX_LAYERS + 1);
    memset(net, 0, sizeof *net);
    status fits = mlp_check_fits(d, sizes, nsizes, 0);
    if (fits != STATUS_OK) return fits;
    net->dev = d;
    for (int i = 0; i + 1 < nsizes; ++i) {
        net->nlayers = i + 1; /* counted before creating, so mlp_free frees a partial layer */
        const bool last = i + 2 == nsizes;
        status s = layer_create(&net->layers[i], d, sizes[i], sizes[i + 1], !last, seed * 1000 + (uint64_t)i);
        if (s != STATUS_OK) {
            mlp_free(net);
            return s;
        }
    }
    return STATUS_OK;
}

/* ---- per-batch buffers ----------------------------------------------------------- */

void mlp_batch_free(mlp_batch *b)
{
    if (!b) return;
    for (int i = 0; i < MLP_MAX_LAYERS; ++i) tensor_free(b->out[i]), tensor_free(b->grad[i]);
    tensor_free(b->x), tensor_free(b->labels), tensor_free(b->probs);
    tensor_free(b->loss), tensor_free(b->accuracy);
    memset(b, 0, sizeof *b);
}

status mlp_batch_slot(const mlp *net, mlp_batch *slots, int count, int64_t rows, const char *who,
                      const char *what, int *slot)
{
    *slot = -1;
    for (int i = 0; i < count; ++i) {
        if (slots[i].rows == rows) {
            *slot = i;
            return STATUS_OK;
        }
        if (slots[i].rows == 0) {
            *slot = i;
            return mlp_batch_create(net, rows, &slots[i]);
        }
    }
    return fail(STATUS_BAD_ARGUMENT, "%s: more than %d %s sizes", who, count, what);
}

status mlp_zero_gradients(const mlp *net)
{
    for (int i = 0; i < net->nlayers; ++i) {
        TRY(op_fill(net->layers[i].dW, 0.0f));
        TRY(op_fill(net->layers[i].db, 0.0f));
    }
    return STATUS_OK;
}

status mlp_batch_create(const mlp *net, int64_t rows, mlp_batch *out)
{
    memset(out, 0, sizeof *out);
    out->rows = rows;
    const device d = net->dev;
    const int64_t classes = net->layers[net->nlayers - 1].out;
    status s = tensor_zeros(&out->x, d, shape2(rows, net->layers[0].in));
    if (s == STATUS_OK) s = tensor_empty(&out->labels, d, DTYPE_I32, shape1(rows));
    if (s == STATUS_OK) s = op_fill(out->labels, 0.0f);
    for (int i = 0; s == STATUS_OK && i < net->nlayers; ++i) {
        s = tensor_zeros(&out->out[i], d, shape2(rows, net->layers[i].out));
        if (s == STATUS_OK) s = tensor_zeros(&out->grad[i], d, shape2(rows, net->layers[i].out));
    }
    if (s == STATUS_OK) s = tensor_zeros(&out->probs, d, shape2(rows, classes));
    if (s == STATUS_OK) s = tensor_zeros(&out->loss, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&out->accuracy, d, shape1(1));
    if (s != STATUS_OK) mlp_batch_free(out);
    return s;
}

/* ---- forward, backward, step -------------------------------------------------------- */

/* mlp_forward's product: op_matmul. */
static status matmul(tensor *a, tensor *b, const tensor *bias, tensor *out, const void *context)
{
    (void)context;
    return op_matmul(a, false, b, false, bias, out);
}

status mlp_forward(const mlp *net, mlp_batch *b) { return mlp_forward_by(net, b, matmul, NULL); }

status mlp_forward_by(const mlp *net, mlp_batch *b, mlp_product product, const void *context)
{
    if (!net || !b || !product)
        return fail(STATUS_BAD_ARGUMENT, "mlp_forward_by: give a network, its batch and a product");
    for (int i = 0; i < net->nlayers; ++i) {
        const layer *l = &net->layers[i];
        tensor *input = i == 0 ? b->x : b->out[i - 1];
        /* out[B, n_i] = input[B, n_{i-1}] W[n_{i-1}, n_i] + b[n_i] on every row */
        TRY(product(input, l->W, l->b, b->out[i], context));
        if (l->relu) TRY(op_relu(b->out[i], b->out[i]));
    }
    return STATUS_OK;
}

static status sgd_update(tensor *param, const tensor *grad, tensor *velocity, float lr, float momentum)
{
    if (momentum == 0.0f) return op_axpy(-lr, grad, param);
    TRY(op_scale(velocity, momentum, velocity));
    TRY(op_axpy(1.0f, grad, velocity));
    return op_axpy(-lr, velocity, param);
}

status mlp_sgd_step_unfused(mlp *net, float lr, float momentum)
{
    if (!net) return fail(STATUS_BAD_ARGUMENT, "mlp_sgd_step_unfused: net is NULL");
    for (int i = 0; i < net->nlayers; ++i) {
        layer *l = &net->layers[i];
        TRY(sgd_update(l->W, l->dW, l->vW, lr, momentum));
        TRY(sgd_update(l->b, l->db, l->vb, lr, momentum));
    }
    return STATUS_OK;
}

/* Every weight and bias in one launch. */
_Static_assert(2 * MLP_MAX_LAYERS <= OP_SGD_MAX_TENSORS, "op_sgd_momentum must take every parameter at once");
status mlp_sgd_step(mlp *net, float lr, float momentum)
{
    if (!net) return fail(STATUS_BAD_ARGUMENT, "mlp_sgd_step: net is NULL");
    const char *unfused = getenv("LABKIT_MLP_UNFUSED");
    if (unfused && strcmp(unfused, "1") == 0) return mlp_sgd_step_unfused(net, lr, momentum);
    tensor *params[2 * MLP_MAX_LAYERS], *velocities[2 * MLP_MAX_LAYERS];
    const tensor *grads[2 * MLP_MAX_LAYERS];
    for (int i = 0; i < net->nlayers; ++i) {
        layer *l = &net->layers[i];
        params[2 * i] = l->W, grads[2 * i] = l->dW, velocities[2 * i] = l->vW;
        params[2 * i + 1] = l->b, grads[2 * i + 1] = l->db, velocities[2 * i + 1] = l->vb;
    }
    return op_sgd_momentum(params, grads, velocities, 2 * net->nlayers, lr, momentum);
}

/* ---- the --layers option ---------------------------------------------------------- */

status mlp_parse_sizes(const char *text, int64_t inputs, int64_t classes, int64_t *sizes, int capacity,
                       int *nsizes)
{
    *nsizes = 0;
    const char *p = text;
    while (*p) {
        char *end = NULL;
        errno = 0;
        const long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 1 || v > MLP_MAX_WIDTH || (*end != ',' && *end != '\0'))
            return fail(STATUS_BAD_ARGUMENT,
                        "--layers %s: expected sizes from 1 to %d separated by commas, like 784,256,256,10",
                        text, MLP_MAX_WIDTH);
        if (*nsizes == capacity)
            return fail(STATUS_BAD_ARGUMENT, "--layers %s: at most %d sizes (%d layers)", text, capacity,
                        capacity - 1);
        sizes[(*nsizes)++] = v;
        p = *end == ',' ? end + 1 : end;
        if (*end == ',' && *p == '\0')
            return fail(STATUS_BAD_ARGUMENT, "--layers %s: ends with a comma", text);
    }
    if (*nsizes < 2)
        return fail(STATUS_BAD_ARGUMENT, "--layers %s: give at least two sizes (inputs, classes)", text);
    if (sizes[0] != inputs || sizes[*nsizes - 1] != classes)
        return fail(
            STATUS_BAD_ARGUMENT,
            "--layers %s: the first size must be %lld (the pixels of an image), the last %lld (the classes)",
            text, (long long)inputs, (long long)classes);
    return STATUS_OK;
}
