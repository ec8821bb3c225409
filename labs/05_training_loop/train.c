/* train.c: the epoch loop around lab_train_step, and the evaluation. */
#include "train.h"

#include <stdlib.h>
#include <string.h>

#include "lab.h"

const char *log_style_name(log_style style)
{
    return style == LOG_ON_DEVICE ? "on-device" : "item every step";
}

void trainer_free(trainer *t)
{
    if (!t) return;
    for (int i = 0; i < TRAINER_BATCH_SIZES; ++i) mlp_batch_free(&t->batches[i]);
    tensor_free(t->loss_sum);
    tensor_free(t->correct);
    host_free(t->host_x, 1);
    host_free(t->host_y, 1);
    free(t->order);
    mlp_free(&t->net);
    memset(t, 0, sizeof *t);
}

status trainer_create(trainer *t, device d, const int64_t *sizes, int nsizes, const train_settings *settings)
{
    memset(t, 0, sizeof *t);
    t->settings = *settings;
    status s = mlp_create(&t->net, d, sizes, nsizes, settings->seed);
    if (s == STATUS_OK) s = tensor_zeros(&t->loss_sum, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&t->correct, d, shape1(1));
    if (s != STATUS_OK) {
        trainer_free(t);
        return s;
    }
    /* Pinned host memory: a real GPU copies it by DMA, without a staging copy. */
    t->host_x = host_alloc((size_t)(settings->batch * sizes[0]) * sizeof(float), 1);
    t->host_y = host_alloc((size_t)settings->batch * sizeof(int32_t), 1);
    if (!t->host_x || !t->host_y) {
        trainer_free(t);
        return fail(STATUS_OUT_OF_MEMORY, "trainer_create: no host memory for a batch");
    }
    return STATUS_OK;
}

/* The device buffers for batches of `rows`: made on first use, then reused. */
static status batch_of(trainer *t, int64_t rows, mlp_batch **out)
{
    for (int i = 0; i < TRAINER_BATCH_SIZES; ++i) {
        mlp_batch *b = &t->batches[i];
        if (b->rows == rows) {
            *out = b;
            return STATUS_OK;
        }
        if (b->rows == 0) {
            *out = b;
            return mlp_batch_create(&t->net, rows, b);
        }
    }
    return fail(STATUS_BAD_ARGUMENT, "trainer: more than %d batch sizes", TRAINER_BATCH_SIZES);
}

/* Rows order[first .. first+rows-1] of `data` into the host staging buffers. */
static void gather(trainer *t, const dataset *data, const int64_t *order, int64_t first, int64_t rows)
{
    const int64_t pixels = dataset_pixels(data);
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = order ? order[first + r] : first + r;
        memcpy(t->host_x + r * pixels, data->images + i * pixels, (size_t)pixels * sizeof(float));
        t->host_y[r] = data->labels[i];
    }
}

static status shuffle(trainer *t, int64_t n, uint64_t seed)
{
    if (t->order_capacity < n) {
        free(t->order);
        t->order = malloc((size_t)n * sizeof(int64_t));
        t->order_capacity = t->order ? n : 0;
        if (!t->order) return fail(STATUS_OUT_OF_MEMORY, "train_epoch: no host memory for the shuffle");
    }
    data_permutation(t->order, n, seed);
    return STATUS_OK;
}

status train_epoch(trainer *t, const dataset *data, int epoch, log_style style, epoch_result *out)
{
    memset(out, 0, sizeof *out);
    const device d = t->net.dev;
    const int64_t batch = t->settings.batch;
    status s = shuffle(t, data->count, t->settings.seed * 7919 + (uint64_t)epoch);
    if (s == STATUS_OK) s = counters_reset(d);
    if (s != STATUS_OK) return s;
    const double start = wall_seconds();
    s = op_fill(t->loss_sum, 0.0f);
    double host_sum = 0.0; /* LOG_EVERY_STEP: the host's own running sum */
    for (int64_t first = 0; s == STATUS_OK && first < data->count; first += batch) {
        const int64_t rows = data->count - first < batch ? data->count - first : batch;
        mlp_batch *b = NULL;
        s = batch_of(t, rows, &b);
        if (s != STATUS_OK) break;
        gather(t, data, t->order, first, rows);
        s = lab_train_step(&t->net, b, t->host_x, t->host_y, t->settings.lr, t->settings.momentum, t->loss_sum);
        if (s == STATUS_OK && style == LOG_EVERY_STEP) {
            float step_loss = 0.0f;
            s = tensor_item(b->loss, &step_loss); /* waits for the device, every step */
            host_sum += step_loss;
        }
        out->steps++;
    }
    if (s == STATUS_OK && style == LOG_ON_DEVICE) {
        float sum = 0.0f;
        s = tensor_item(t->loss_sum, &sum); /* the epoch's one read */
        host_sum = sum;
    }
    out->seconds = wall_seconds() - start;
    if (s == STATUS_OK) s = counters_read(d, &out->counters);
    out->loss = out->steps ? host_sum / (double)out->steps : 0.0;
    return s;
}

status evaluate(trainer *t, const dataset *data, double *accuracy)
{
    const int64_t batch = t->settings.batch;
    status s = op_fill(t->correct, 0.0f);
    for (int64_t first = 0; s == STATUS_OK && first < data->count; first += batch) {
        const int64_t rows = data->count - first < batch ? data->count - first : batch;
        mlp_batch *b = NULL;
        s = batch_of(t, rows, &b);
        if (s != STATUS_OK) break;
        gather(t, data, NULL, first, rows);
        s = tensor_copy_from_host(b->x, t->host_x, rows * dataset_pixels(data));
        if (s == STATUS_OK) s = tensor_copy_from_host_i32(b->labels, t->host_y, rows);
        if (s == STATUS_OK) s = mlp_forward(&t->net, b);
        if (s == STATUS_OK) s = op_accuracy(b->out[t->net.nlayers - 1], b->labels, b->accuracy);
        /* accuracy is a fraction of this batch: weigh it by its rows */
        if (s == STATUS_OK) s = op_axpy((float)rows, b->accuracy, t->correct);
    }
    float correct = 0.0f;
    if (s == STATUS_OK) s = tensor_item(t->correct, &correct);
    *accuracy = s == STATUS_OK ? (double)correct / (double)data->count : 0.0;
    return s;
}
