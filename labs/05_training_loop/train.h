/* train.h: epochs of training and a held-out evaluation around the student's
 * steps, in three styles:
 *
 *   STYLE_ITEM_EVERY_STEP  the host reads each step's loss (tensor_item), as a
 *                          print(loss.item()) in every iteration does
 *   STYLE_ON_DEVICE        each step adds its loss to a sum on the device
 *                          (lab_accumulate_loss); the host reads it once per epoch
 *   STYLE_CAPTURED         the same, with the step captured once per batch size
 *                          (lab_capture_step) and replayed as one launch
 *
 * and the device's counters over each epoch, which tell them apart.
 *
 * The batches reach the device as in real training code (PyTorch's
 * pin_memory=True with .to(device, non_blocking=True)): each is gathered into
 * one of two pinned staging buffers and copied by the queued copies of
 * lab_upload_batch into the device tensors of its batch size, which every step
 * of that size reuses (so a captured step finds its batch where it was
 * recorded); an event recorded after the step says when the device is done
 * with the staging buffer. Not student work. */
#ifndef LAB05_TRAIN_H
#define LAB05_TRAIN_H

#include "data.h"
#include "mlp.h"

typedef enum train_style { STYLE_ITEM_EVERY_STEP = 0, STYLE_ON_DEVICE = 1, STYLE_CAPTURED = 2 } train_style;
#define STYLES 3

const char *style_name(train_style style); /* "item every step", "on-device log", "captured step" */

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
    graph *steps[TRAINER_BATCH_SIZES];      /* STYLE_CAPTURED: batches[i]'s step, captured on first use */
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
    /* Optional: progress of a long run, advanced step by step from
     * progress_from to progress_to over an epoch (main.c sets them). */
    progress *progress;
    double progress_from, progress_to;
} trainer;

typedef struct epoch_result {
    double loss;         /* mean over the steps of each batch's mean loss */
    double seconds;      /* wall clock, until the loss was on the host */
    double host_seconds; /* of which the host spent queueing the steps (upload, then step or launch) */
    int64_t steps;
    int64_t buffer_waits;     /* steps at which the host, two steps ahead of the
                                 device, waited for its staging buffer */
    int64_t captures;         /* STYLE_CAPTURED: steps captured in this epoch */
    device_counters counters; /* the device's counters over the epoch */
} epoch_result;

/* Refuses a network too large for d (mlp_check_fits) before anything is made. */
status trainer_create(trainer *t, device d, const int64_t *sizes, int nsizes, const train_settings *settings);
void trainer_free(trainer *t);

/* One pass over `data` in a shuffled order (seeded by the settings and
 * `epoch`), every step through the student's functions. */
status train_epoch(trainer *t, const dataset *data, int epoch, train_style style, epoch_result *out);

/* The fraction of `data` the network classifies right (forward passes only,
 * counted on the device, one read at the end). */
status evaluate(trainer *t, const dataset *data, double *accuracy);

/* Loads the parameters saved at `path` (the student's lab_load_parameters)
 * into a new network of `sizes` on d and evaluates it on `data`. */
status evaluate_saved(device d, const int64_t *sizes, int nsizes, const train_settings *settings,
                      const char *path, const dataset *data, double *accuracy);

/* The floating-point operations of the matrix products of one epoch of
 * `samples` images: 2 per weight per image forward, 4 backward (the
 * gradients of the weight and of the input), less the first layer's input
 * gradient, which is never computed. */
double epoch_flops(const int64_t *sizes, int nsizes, int64_t samples);

/* A rough duration of one epoch of `samples` images on d: epoch_flops at a
 * quarter of d's FP32 peak, plus 30 microseconds per step. For progress.h; 0 when d's peak is
 * unknown. */
double estimate_epoch_seconds(device d, const int64_t *sizes, int nsizes, int64_t samples, int64_t batch);

#endif
