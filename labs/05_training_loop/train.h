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
 * pin_memory=True with .to(device, non_blocking=True), on a stream of their
 * own): batch k is gathered into pinned staging buffer k % 2 and copied by the
 * queued copies of lab_upload_batch into device tensors of its own, set k % 2
 * of its batch size, on the device's copy queue (copy_queue.h): so batch k + 1
 * crosses the bus while step k computes from the other set. Events order the
 * two queues on the device, never the host: the copy into set k % 2 waits for
 * the end of step k - 2, the last to read it, and step k waits for the end of
 * its copy, after which the host may refill the staging buffer. A captured
 * step is recorded once per set and batch size, so that each graph finds its
 * batch where it was recorded. Not student work.
 *
 * LABKIT_TRAIN_ONE_QUEUE=1 in the environment puts the copies on the compute
 * queue instead, in line with the steps, as before the copy queue: how
 * bench_training_epoch measures what the overlap is worth. */
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
#define TRAINER_BUFFERS MLP_BATCH_SETS /* batches in flight: one crossing, one computed */

typedef struct trainer {
    mlp net;
    train_settings settings;
    bool one_queue; /* LABKIT_TRAIN_ONE_QUEUE=1: the copies on the compute queue */
    /* batches[k][i]: set k's device tensors of the i-th batch size met */
    mlp_batch batches[TRAINER_BUFFERS][TRAINER_BATCH_SIZES];
    graph *steps[TRAINER_BUFFERS][TRAINER_BATCH_SIZES]; /* STYLE_CAPTURED: captured on first use */
    tensor *loss_sum;                                   /* [1] the epoch's log on the device */
    tensor *correct;                                    /* [1] evaluation: right answers so far */
    /* Staging buffer k in pinned host memory and device set k go together:
     * batch k is gathered into buffer k % 2 while the device may still copy
     * or compute batch k - 1 from the other one. */
    float *host_x[TRAINER_BUFFERS];   /* images [batch, n0] */
    int32_t *host_y[TRAINER_BUFFERS]; /* labels [batch] */
    event *uploaded[TRAINER_BUFFERS]; /* reached: its last copy is done (the buffer may be refilled) */
    event *computed[TRAINER_BUFFERS]; /* reached: the last step on set k is done (the next copy may start) */
    int next_buffer;                  /* the buffer the next batch goes to */
    int64_t *order;                   /* this epoch's shuffle */
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
    int64_t buffer_waits;     /* steps at which the host, ahead of the device,
                                 waited for its staging buffer's copy */
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
