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
    for (int i = 0; i < TRAINER_BUFFERS; ++i) {
        /* A queued copy may still read a staging buffer: free it only once the
         * device is done with it (if the device failed, leaking it is safer). */
        const bool idle = !t->uploaded[i] || event_synchronize(t->uploaded[i]) == STATUS_OK;
        if (idle) host_free(t->host_x[i], 1), host_free(t->host_y[i], 1);
        event_destroy(t->uploaded[i]);
        event_destroy(t->computed[i]);
    }
    /* The graphs first: they replay the batches' tensors. */
    for (int k = 0; k < TRAINER_BUFFERS; ++k)
        for (int i = 0; i < TRAINER_BATCH_SIZES; ++i) graph_free(t->steps[k][i]);
    for (int k = 0; k < TRAINER_BUFFERS; ++k)
        for (int i = 0; i < TRAINER_BATCH_SIZES; ++i) mlp_batch_free(&t->batches[k][i]);
    tensor_free(t->loss_sum);
    tensor_free(t->correct);
    free(t->order);
    mlp_free(&t->net);
    memset(t, 0, sizeof *t);
}

/* An event recorded and reached once, so that its first wait finds it passed. */
static status passed_event(device d, event **out)
{
    status s = event_create(out, d);
    if (s == STATUS_OK) s = event_record(*out);
    if (s == STATUS_OK) s = event_synchronize(*out);
    return s;
}

status trainer_create(trainer *t, device d, const int64_t *sizes, int nsizes, const train_settings *settings)
{
    memset(t, 0, sizeof *t);
    t->settings = *settings;
    const char *one_queue = getenv("LABKIT_TRAIN_ONE_QUEUE");
    t->one_queue = one_queue && strcmp(one_queue, "1") == 0;
    status s = mlp_check_fits(d, sizes, nsizes, settings->batch);
    if (s == STATUS_OK) s = mlp_create(&t->net, d, sizes, nsizes, settings->seed);
    if (s == STATUS_OK) s = tensor_zeros(&t->loss_sum, d, shape1(1));
    if (s == STATUS_OK) s = tensor_zeros(&t->correct, d, shape1(1));
    for (int i = 0; i < TRAINER_BUFFERS && s == STATUS_OK; ++i) {
        s = passed_event(d, &t->uploaded[i]);
        if (s == STATUS_OK) s = passed_event(d, &t->computed[i]);
    }
    if (s != STATUS_OK) {
        trainer_free(t);
        return s;
    }
    /* Pinned host memory: a real GPU copies it by DMA while the host goes on. */
    for (int i = 0; i < TRAINER_BUFFERS; ++i) {
        t->host_x[i] = host_alloc((size_t)(settings->batch * sizes[0]) * sizeof(float), 1);
        t->host_y[i] = host_alloc((size_t)settings->batch * sizeof(int32_t), 1);
        if (!t->host_x[i] || !t->host_y[i]) {
            trainer_free(t);
            return fail(STATUS_OUT_OF_MEMORY, "trainer_create: no host memory for a batch");
        }
    }
    return STATUS_OK;
}

/* Set `buffer`'s device tensors for batches of `rows`: made on first use,
 * then reused; *slot is their index in t->batches[buffer] (and t->steps).
 * New tensors are written (zeroed) by the compute queue: the copy into them
 * waits for that, as for a step. */
static status batch_of(trainer *t, int buffer, int64_t rows, int *slot)
{
    mlp_batch *sets = t->batches[buffer];
    int made_before = 0;
    while (made_before < TRAINER_BATCH_SIZES && sets[made_before].rows != 0) ++made_before;
    status s = mlp_batch_slot(&t->net, sets, TRAINER_BATCH_SIZES, rows, "trainer", "batch", slot);
    if (s == STATUS_OK && *slot >= made_before) s = event_record(t->computed[buffer]);
    return s;
}

/* The data pipeline: double buffering. The batch is copied to the device by a
 * queued copy, which returns before the device has read the staging buffer; so
 * the host must not write into that buffer again until the copy is done, which
 * the buffer's event says. With two buffers the host gathers the next batch
 * while the device still copies or computes the other one, and waits only when
 * it has run that far ahead. Returns the buffer to fill, and whether the host
 * had to wait for it. */
static status claim_buffer(trainer *t, int *buffer, bool *waited)
{
    *buffer = t->next_buffer;
    t->next_buffer = (t->next_buffer + 1) % TRAINER_BUFFERS;
    event *copied = t->uploaded[*buffer];
    *waited = !event_done(copied);
    return *waited ? event_synchronize(copied) : STATUS_OK;
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
 * staging buffer holding its rows once the device is done copying that
 * buffer's previous batch, and the slot of its device tensors in that set. */
static status next_batch(trainer *t, const dataset *data, const int64_t *order, int64_t first, int *slot,
                         int *buffer, bool *waited)
{
    const int64_t rows = data->count - first < t->settings.batch ? data->count - first : t->settings.batch;
    status s = claim_buffer(t, buffer, waited);
    if (s == STATUS_OK) s = batch_of(t, *buffer, rows, slot);
    if (s == STATUS_OK) gather(t, *buffer, data, order, first, rows);
    return s;
}

/* The batch's copy (your step 3), from its staging buffer into its set's
 * device tensors, on the copy queue, once the last step that read those
 * tensors is done; then the compute queue waits, on the device, for the copy.
 * The host waits for neither. */
static status upload_beside(trainer *t, int buffer, int slot)
{
    const device d = t->net.dev;
    status s = t->one_queue ? STATUS_OK : copy_queue_begin(d);
    if (s != STATUS_OK) return s;
    s = event_wait_on_device(t->computed[buffer]);
    if (s == STATUS_OK) s = lab_upload_batch(&t->batches[buffer][slot], t->host_x[buffer], t->host_y[buffer]);
    if (s == STATUS_OK) s = event_record(t->uploaded[buffer]);
    if (!t->one_queue) { /* closed whatever happened, so that the device goes on as before */
        const status closed = copy_queue_end(d);
        if (s == STATUS_OK) s = closed;
    }
    return s == STATUS_OK ? event_wait_on_device(t->uploaded[buffer]) : s;
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

/* STYLE_CAPTURED: the step of set `buffer`'s batch size `slot`, captured on
 * first use (the batch is already uploaded, outside the graph), then launched. */
static status launch_captured(trainer *t, int buffer, int slot, int64_t *captures)
{
    const device d = t->net.dev;
    graph **step = &t->steps[buffer][slot];
    if (!*step) {
        status s = lab_capture_step(&t->net, &t->batches[buffer][slot], t->settings.lr, t->settings.momentum,
                                    t->loss_sum, step);
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
        if (!*step)
            return fail(STATUS_BAD_ARGUMENT, "lab_capture_step succeeded but gave no graph (*out is NULL)");
        ++*captures;
    }
    return graph_launch(*step);
}

/* One step from staging buffer `buffer`: the upload through your step 3 on
 * the copy queue, then the step itself; the set's event after it. */
static status queue_step(trainer *t, int slot, int buffer, train_style style, int64_t *captures)
{
    mlp_batch *b = &t->batches[buffer][slot];
    status s = upload_beside(t, buffer, slot);
    if (s == STATUS_OK && style == STYLE_CAPTURED) s = launch_captured(t, buffer, slot, captures);
    if (s == STATUS_OK && style != STYLE_CAPTURED)
        s = lab_train_step(&t->net, b, t->settings.lr, t->settings.momentum, t->loss_sum);
    return s == STATUS_OK ? event_record(t->computed[buffer]) : s;
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
    t->next_buffer = 0;    /* every epoch takes its batches through the sets in the same order */
    for (int64_t first = 0; s == STATUS_OK && first < data->count; first += batch) {
        int slot = 0, buffer = 0;
        bool waited = false;
        s = next_batch(t, data, t->order, first, &slot, &buffer, &waited);
        if (s != STATUS_OK) break;
        out->buffer_waits += waited;
        const double queued = wall_seconds();
        s = queue_step(t, slot, buffer, style, &out->captures);
        out->host_seconds += wall_seconds() - queued;
        if (s == STATUS_OK && style == STYLE_ITEM_EVERY_STEP) {
            float step_loss = 0.0f;
            s = tensor_item(t->batches[buffer][slot].loss, &step_loss); /* waits for the device, every step */
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

/* The evaluation uploads each batch with blocking copies, on the compute
 * queue: it is never timed, its accuracy does not depend on your step 3, and
 * the queued copies are that step's to write. */
status evaluate(trainer *t, const dataset *data, double *accuracy)
{
    const int64_t batch = t->settings.batch;
    status s = op_fill(t->correct, 0.0f);
    for (int64_t first = 0; s == STATUS_OK && first < data->count; first += batch) {
        int slot = 0, buffer = 0;
        bool waited = false;
        s = next_batch(t, data, NULL, first, &slot, &buffer, &waited);
        if (s != STATUS_OK) break;
        mlp_batch *b = &t->batches[buffer][slot];
        s = tensor_copy_from_host(b->x, t->host_x[buffer], tensor_numel(b->x));
        if (s == STATUS_OK) s = tensor_copy_from_host_i32(b->labels, t->host_y[buffer], b->rows);
        if (s == STATUS_OK) s = mlp_forward(&t->net, b);
        if (s == STATUS_OK) s = op_accuracy(b->out[t->net.nlayers - 1], b->labels, b->accuracy);
        /* accuracy is a fraction of this batch: weigh it by its rows */
        if (s == STATUS_OK) s = op_axpy((float)b->rows, b->accuracy, t->correct);
        if (s == STATUS_OK) s = event_record(t->computed[buffer]);
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
