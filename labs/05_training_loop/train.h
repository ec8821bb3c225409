/* train.h: epochs of training and a held-out evaluation, around the student's
 * lab_train_step, with the two ways of keeping the loss log:
 *
 *   LOG_ON_DEVICE    each step adds its loss to a sum on the device
 *                    (lab_accumulate_loss); the host reads it once per epoch
 *   LOG_EVERY_STEP   the host reads each step's loss (tensor_item), as a
 *                    print(loss.item()) in every iteration does
 *
 * and the device's counters over each epoch, which tell the two apart.
 *
 * The batches reach the device as in real training code (PyTorch's
 * pin_memory=True with .to(device, non_blocking=True)): each one is gathered
 * into one of two pinned staging buffers and copied by a queued copy, and an
 * event says when the device is done with the buffer. Not student work. */
#ifndef LAB05_TRAIN_H
#define LAB05_TRAIN_H

#include "data.h"
#include "mlp.h"

typedef enum log_style { LOG_ON_DEVICE = 0, LOG_EVERY_STEP = 1 } log_style;

const char *log_style_name(log_style style); /* "on-device", "item every step" */

typedef struct train_settings {
    int64_t batch;  /* rows per step */
    float lr;       /* SGD learning rate */
    float momentum; /* 0: plain SGD */
    uint64_t seed;  /* initialisation and shuffling */
} train_settings;

#define TRAINER_BATCH_SIZES 4

typedef struct trainer {
    mlp net;
    train_settings settings;
    mlp_batch batches[TRAINER_BATCH_SIZES]; /* one per batch size met so far */
    tensor *loss_sum;                       /* [1] the epoch's log on the device */
    tensor *correct;                        /* [1] evaluation: right answers so far */
    /* Two staging buffers in pinned host memory, used in turn: batch k is
     * gathered into buffer k % 2 while the device may still be copying or
     * running batch k - 1 from the other one. */
    float *host_x[2];   /* images [batch, n0] */
    int32_t *host_y[2]; /* labels [batch] */
    event *released[2]; /* reached: the device is done with that buffer */
    int next_buffer;    /* the buffer the next batch goes to */
    int64_t *order;     /* this epoch's shuffle */
    int64_t order_capacity;
} trainer;

typedef struct epoch_result {
    double loss;    /* mean over the steps of each batch's mean loss */
    double seconds; /* wall clock, until the loss was on the host */
    int64_t steps;
    int64_t buffer_waits;     /* steps at which the host, two steps ahead of the
                                 device, waited for its staging buffer */
    device_counters counters; /* the device's counters over the epoch */
} epoch_result;

status trainer_create(trainer *t, device d, const int64_t *sizes, int nsizes, const train_settings *settings);
void trainer_free(trainer *t);

/* One pass over `data` in a shuffled order (seeded by the settings and
 * `epoch`), every step through lab_train_step. */
status train_epoch(trainer *t, const dataset *data, int epoch, log_style style, epoch_result *out);

/* The fraction of `data` the network classifies right (forward passes only,
 * counted on the device, one read at the end). */
status evaluate(trainer *t, const dataset *data, double *accuracy);

#endif
