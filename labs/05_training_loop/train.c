/* train.c: the epoch loop around the student's steps, and the evaluation. */
#include "train.h"

#include <stdlib.h>
#include <string.h>

#include "lab.h"

const char *style_name(train_style style)
{
    static const char *names[STYLES] = { "item every step", "on-device log", "captured step" };
    return style >= 0 && style < STYLES ? names[style] : "no such style";
}

void trainer_free(trainer *t)
{
    if (!t) return;
    for (int i = 0; i < 2; ++i) {
        /* A queued copy may still read a staging buffer: free it only once the
         * device is done with it (if the device failed, leaking it is safer). */
        const bool idle = !t->released[i] || event_synchronize(t->released[i]) == STATUS_OK;
        if (idle) host_free(t->host_x[i], 1), host_free(t->host_y[i], 1);
        event_destroy(t->released[i]);
    }
    /* The graphs first: they replay the batches' tensors. */
    for (int i = 0; i < TRAINER_BATCH_SIZES; ++i) graph_free(t->steps[i]);
    for (int i = 0; i < TRAINER_BATCH_SIZES; ++i) mlp_batch_free(&t->batches[i]);
    tensor_free(t->loss_sum);
    tensor_free(t->correct);
    free(t->order);
    mlp_free(&t->net);
    memset(t, 0, sizeof *t);
}

status trainer_create(trainer *t, device d, const int64_t *sizes, int nsizes, const train_settings *settings)
{
    memset(t, 0, sizeof *t);
    t->settings = *settings;
    status s = mlp_check_fits(d, sizes, nsizes, settings->batch);
    if (s == STATUS_OK) s = mlp_create(&t->net, d, sizes, nsizes, settings->seed);
    if (s == STATUS_OK) s = tensor_zeros(&t->loss_sum, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&t->correct, d, shape1(1));
    /* Each event is recorded, and reached, once now (after the network's
     * initialisation), so that the first step finds both buffers free. */
    for (int i = 0; i < 2 && s == STATUS_OK; ++i) {
        s = event_create(&t->released[i], d);
        if (s == STATUS_OK) s = event_record(t->released[i]);
        if (s == STATUS_OK) s = event_synchronize(t->released[i]);
    }
    if (s != STATUS_OK) {
        trainer_free(t);
        return s;
    }
    /* Pinned host memory: a real GPU copies it by DMA while the host goes on. */
    for (int i = 0; i < 2; ++i) {
        t->host_x[i] = host_alloc((size_t)(settings->batch * sizes[0]) * sizeof(float), 1);
        t->host_y[i] = host_alloc((size_t)settings->batch * sizeof(int32_t), 1);
        if (!t->host_x[i] || !t->host_y[i]) {
            trainer_free(t);
            return fail(STATUS_OUT_OF_MEMORY, "trainer_create: no host memory for a batch");
        }
    }
    return STATUS_OK;
}

/* The device buffers for batches of `rows`: made on first use, then reused.
 * *slot is their index in t->batches (and t->steps). */
static status batch_of(trainer *t, int64_t rows, int *slot)
{
    return mlp_batch_slot(&t->net, t->batches, TRAINER_BATCH_SIZES, rows, "trainer", "batch", slot);
}

/* The data pipeline: double buffering. The batch is copied to the device by a
 * queued copy, which returns before the device has read the staging buffer; so
 * the host must not write into that buffer again until the device is done with
 * it, which the buffer's event says. With two buffers the host gathers the next
 * batch while the device still works from the other one, and waits only when
 * it has run two steps ahead. Returns the buffer to fill, and whether the host
 * had to wait for it. */
static status claim_buffer(trainer *t, int *buffer, bool *waited)
{
    *buffer = t->next_buffer;
    t->next_buffer = 1 - t->next_buffer;
    event *released = t->released[*buffer];
    *waited = !event_done(released);
    return *waited ? event_synchronize(released) : STATUS_OK;
}

/* Rows order[first .. first+rows-1] of `data` into staging buffer `buffer`. */
static void gather(trainer *t, int buffer, const dataset *data, const int64_t *order, int64_t first,
                   int64_t rows)
{
    const int64_t pixels = dataset_pixels(data);
    float *x = t->host_x[buffer];
    int32_t *y = t->host_y[buffer];
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = order ? order[first + r] : first + r;
        memcpy(x + r * pixels, data->images + i * pixels, (size_t)pixels * sizeof(float));
        y[r] = data->labels[i];
    }
}

/* The next batch of `data` from row `first` (in `order`, or as stored): the
 * slot of its device tensors, and a staging buffer holding its rows once the
 * device is done with that buffer's previous batch. */
static status next_batch(trainer *t, const dataset *data, const int64_t *order, int64_t first, int *slot,
                         int *buffer, bool *waited)
{
    const int64_t rows = data->count - first < t->settings.batch ? data->count - first : t->settings.batch;
    status s = batch_of(t, rows, slot);
    if (s == STATUS_OK) s = claim_buffer(t, buffer, waited);
    if (s == STATUS_OK) gather(t, *buffer, data, order, first, rows);
    return s;
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

/* STYLE_CAPTURED: the step of batch size `slot`, captured on first use (the
 * batch is already uploaded, outside the graph), then launched. */
static status launch_captured(trainer *t, int slot, int64_t *captures)
{
    const device d = t->net.dev;
    if (!t->steps[slot]) {
        status s = lab_capture_step(&t->net, &t->batches[slot], t->settings.lr, t->settings.momentum,
                                    t->loss_sum, &t->steps[slot]);
        if (graph_capturing(d)) { /* never leave the device recording everything queued after */
            graph *stray = NULL;
            graph_end_capture(d, &stray);
            graph_free(stray);
            return fail(STATUS_BAD_ARGUMENT,
                        "lab_capture_step returned with %s still capturing: end the capture "
                        "(graph_end_capture), also when the step fails",
                        device_name(d));
        }
        if (s != STATUS_OK) return s;
        if (!t->steps[slot])
            return fail(STATUS_BAD_ARGUMENT, "lab_capture_step succeeded but gave no graph (*out is NULL)");
        ++*captures;
    }
    return graph_launch(t->steps[slot]);
}

/* One step from staging buffer `buffer`: the upload, then the step itself. */
static status queue_step(trainer *t, int slot, int buffer, train_style style, int64_t *captures)
{
    mlp_batch *b = &t->batches[slot];
    status s = lab_upload_batch(b, t->host_x[buffer], t->host_y[buffer]);
    if (s != STATUS_OK) return s;
    if (style == STYLE_CAPTURED) return launch_captured(t, slot, captures);
    return lab_train_step(&t->net, b, t->settings.lr, t->settings.momentum, t->loss_sum);
}

status train_epoch(trainer *t, const dataset *data, int epoch, train_style style, epoch_result *out)
{
    memset(out, 0, sizeof *out);
    const device d = t->net.dev;
    const int64_t batch = t->settings.batch;
    status s = shuffle(t, data->count, t->settings.seed * 7919 + (uint64_t)epoch);
    if (s == STATUS_OK) s = counters_reset(d);
    if (s != STATUS_OK) return s;
    const double start = wall_seconds();
    s = op_fill(t->loss_sum, 0.0f);
    double host_sum = 0.0; /* STYLE_ITEM_EVERY_STEP: the host's own running sum */
    for (int64_t first = 0; s == STATUS_OK && first < data->count; first += batch) {
        int slot = 0, buffer = 0;
        bool waited = false;
        s = next_batch(t, data, t->order, first, &slot, &buffer, &waited);
        if (s != STATUS_OK) break;
        out->buffer_waits += waited;
        const double queued = wall_seconds();
        s = queue_step(t, slot, buffer, style, &out->captures);
        out->host_seconds += wall_seconds() - queued;
        /* The device is done with the staging buffer once it has passed this
         * event, recorded after the step and so after its copies. */
        if (s == STATUS_OK) s = event_record(t->released[buffer]);
        if (s == STATUS_OK && style == STYLE_ITEM_EVERY_STEP) {
            float step_loss = 0.0f;
            s = tensor_item(t->batches[slot].loss, &step_loss); /* waits for the device, every step */
            host_sum += step_loss;
        }
        out->steps++;
        if (t->progress) {
            const double done = (double)(first + batch < data->count ? first + batch : data->count);
            progress_update(t->progress, t->progress_from + (t->progress_to - t->progress_from) * done /
                                                                (double)data->count);
        }
    }
    if (s == STATUS_OK && style != STYLE_ITEM_EVERY_STEP) {
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
        int slot = 0, buffer = 0;
        bool waited = false;
        s = next_batch(t, data, NULL, first, &slot, &buffer, &waited);
        if (s != STATUS_OK) break;
        mlp_batch *b = &t->batches[slot];
        s = tensor_copy_from_host_async(b->x, t->host_x[buffer], tensor_numel(b->x));
        if (s == STATUS_OK) s = tensor_copy_from_host_async_i32(b->labels, t->host_y[buffer], b->rows);
        if (s == STATUS_OK)
            s = event_record(t->released[buffer]); /* after the copies: the buffer is free again */
        if (s == STATUS_OK) s = mlp_forward(&t->net, b);
        if (s == STATUS_OK) s = op_accuracy(b->out[t->net.nlayers - 1], b->labels, b->accuracy);
        /* accuracy is a fraction of this batch: weigh it by its rows */
        if (s == STATUS_OK) s = op_axpy((float)b->rows, b->accuracy, t->correct);
    }
    float correct = 0.0f;
    if (s == STATUS_OK) s = tensor_item(t->correct, &correct);
    *accuracy = s == STATUS_OK ? (double)correct / (double)data->count : 0.0;
    return s;
}

status evaluate_saved(device d, const int64_t *sizes, int nsizes, const train_settings *settings,
                      const char *path, const dataset *data, double *accuracy)
{
    trainer t;
    status s = trainer_create(&t, d, sizes, nsizes, settings);
    if (s != STATUS_OK) return s;
    s = lab_load_parameters(&t.net, path);
    if (s == STATUS_OK) s = evaluate(&t, data, accuracy);
    trainer_free(&t);
    return s;
}

double epoch_flops(const int64_t *sizes, int nsizes, int64_t samples)
{
    double per_image = 0.0;
    for (int i = 0; i + 1 < nsizes; ++i) per_image += 6.0 * (double)sizes[i] * (double)sizes[i + 1];
    if (nsizes >= 2) per_image -= 2.0 * (double)sizes[0] * (double)sizes[1];
    return per_image * (double)samples;
}

double estimate_epoch_seconds(device d, const int64_t *sizes, int nsizes, int64_t samples, int64_t batch)
{
    const double gflops = device_compute_gflops(d);
    if (gflops <= 0 || batch < 1) return 0.0;
    const double steps = (double)((samples + batch - 1) / batch);
    return epoch_flops(sizes, nsizes, samples) / (0.25 * gflops * 1e9) + 30e-6 * steps;
}
