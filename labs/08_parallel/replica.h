/* replica.h: lab 05's MLP on one device, as one replica of data-parallel
 * training (given: step 5 uses it, and the epoch loop around your step).
 *
 *   x [B, n0] -> linear(W1, b1) -> ReLU -> ... -> linear(WL, bL) -> logits [B, nL]
 *
 * The network is lab 05's own (the labs' shared code, labs/common/mlp.h): the
 * same parameters from the same seed on every device, the same forward pass
 * and SGD step with momentum, and the backward pass of lab 05's step 1, your
 * lab_layer_backward (labs/05_training_loop/lab.c): lab 08 trains with your
 * lab 05, so one replica trained on whole batches gives lab 05's losses.
 * Data-parallel training keeps one replica per device; every step, each
 * computes the gradients of its own slice of the batch
 * (replica_forward_backward), the gradients are summed across the devices,
 * and every replica takes the same SGD step. */
#ifndef LAB08_REPLICA_H
#define LAB08_REPLICA_H

#include <stdbool.h>
#include <stdint.h>

#include "data.h"
#include "labkit/labkit.h"
#include "mlp.h"

#define REPLICA_MAX_LAYERS 4
#define REPLICA_MAX_GRADIENTS (2 * REPLICA_MAX_LAYERS) /* a weight and a bias per layer */
#define REPLICA_SLICE_SIZES 6                          /* slice sizes a replica keeps buffers for */
#define DP_MAX_DEVICES 8                               /* replicas in one data-parallel run */

typedef struct replica {
    mlp net;                               /* lab 05's network, on net.dev */
    mlp_batch slices[REPLICA_SLICE_SIZES]; /* the tensors of a slice, one per size met so far */
    tensor *loss;                          /* [1]: the mean loss over the last slice (0 for an empty one) */
    tensor *loss_sum;                      /* [1]: the epoch's log, kept on the device (dp_epoch) */
} replica;

/* Lab 05's network on d: sizes[0] inputs, sizes[nsizes-1] classes, weights
 * ~ N(0, 2/in) drawn from `seed` as lab 05 draws them, biases and velocities 0. */
status replica_create(replica *r, device d, const int64_t *sizes, int nsizes, uint64_t seed);
void replica_free(replica *r);

/* Inputs per row (n0): the images of row i start at images + i * n0. */
int64_t replica_inputs(const replica *r);

/* The forward and backward passes over one slice: `rows` images [rows, n0]
 * and labels from host memory, copied to the replica's device (blocking
 * copies: the host memory may change once this returns), then queued there:
 * the forward pass, the slice's mean loss into r->loss, and the backward pass,
 * which overwrites every layer's dW and db with the gradient of that mean
 * loss. rows = 0 (an empty slice) makes every gradient and the loss zero. */
status replica_forward_backward(replica *r, const float *images, const int32_t *labels, int64_t rows);

/* The replica's gradient tensors in a fixed order (dW then db, layer by layer,
 * the same on every replica): writes them to grads (room for
 * REPLICA_MAX_GRADIENTS) and returns how many. */
int replica_gradients(replica *r, tensor **grads);

/* SGD with momentum from the gradients in dW and db, lab 05's: v = momentum v
 * + g, then W -= lr v (momentum 0: W -= lr g). Queued. */
status replica_sgd_step(replica *r, float lr, float momentum);

/* How many parameters the replica has (every weight and bias). */
int64_t replica_parameter_count(const replica *r);

/* Every parameter (gradients: every gradient) in that order, flattened, into
 * out (room for replica_parameter_count floats). Blocking reads. */
status replica_read(const replica *r, bool gradients, float *out, int64_t capacity);

/* ---- an epoch of data-parallel training around lab_data_parallel_step ---- */

typedef struct dp_settings {
    int64_t batch;  /* rows per step, shared out among the devices */
    float lr;       /* SGD learning rate */
    float momentum; /* 0: plain SGD */
    uint64_t seed;  /* initialisation and shuffling: lab 05's */
} dp_settings;

typedef struct dp_epoch_result {
    double loss;    /* mean over the steps of each batch's mean loss (lab 05's) */
    double seconds; /* wall clock, until the loss was on the host */
    int64_t steps;
    /* Copies between the host and the devices, all devices together, over
     * the epoch: the batches' uploads and the all-reduce's round trips. */
    uint64_t h2d_copies, d2h_copies;
} dp_epoch_result;

/* One pass over `data` in lab 05's shuffled order (seeded by the settings and
 * `epoch`), every step through your lab_data_parallel_step on the n replicas.
 * Each replica adds its slice's loss, weighted by its share of the batch, to
 * its loss_sum; the host reads the n sums once, at the end. */
status dp_epoch(replica *const *replicas, int n, const dataset *data, int epoch, const dp_settings *settings,
                dp_epoch_result *out);

/* A whole run: lab 05's network made afresh on each of the n devices (from
 * the settings' seed: the same on every one), then `epochs` epochs of
 * dp_epoch, epoch e's result in results[e]. */
status dp_train(const device *devices, int n, const int64_t *sizes, int nsizes, const dataset *data,
                int epochs, const dp_settings *settings, dp_epoch_result *results);

#endif
