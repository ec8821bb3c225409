/* mixed_mlp.h: a small multilayer perceptron trained with mixed precision,
 * given, not a step. Step 6 of the README uses it.
 *
 *   x [B, n0] -> linear(W1 [n0, n1], b1) -> ReLU -> ... -> linear(WL, bL) -> logits [B, nL]
 *
 * Lab 05's network, made the way mixed-precision training makes it: the
 * parameters (the "master weights"), their gradients and every activation are
 * float32, and only the matrix products read their operands at a lower
 * precision: every product of the forward and the backward pass is your
 * lab_mixed_product at the network's precision. Plain SGD (W -= lr dW), the
 * loss summed on the device and read once per epoch. The data are lab 05's
 * synthetic digits (labs/05_training_loop/data.h). */
#ifndef LAB06_MIXED_MLP_H
#define LAB06_MIXED_MLP_H

#include <stdint.h>

#include "../05_training_loop/data.h"
#include "lab.h"

#define MIXED_MLP_MAX_LAYERS 4

typedef struct mixed_mlp {
    device dev;
    lab_precision precision; /* of every product */
    int nlayers;
    int64_t batch; /* rows per step: every step takes a whole batch */
    tensor *W[MIXED_MLP_MAX_LAYERS], *b[MIXED_MLP_MAX_LAYERS];      /* float32 [n_i, n_i+1], [n_i+1] */
    tensor *dW[MIXED_MLP_MAX_LAYERS], *db[MIXED_MLP_MAX_LAYERS];    /* their gradients */
    tensor *x, *labels;                                             /* one batch: [B, n0], int32 [B] */
    tensor *out[MIXED_MLP_MAX_LAYERS], *grad[MIXED_MLP_MAX_LAYERS]; /* [B, n_i+1] each */
    tensor *probs, *loss, *loss_sum, *hits, *hit_sum;               /* [B, nL], [1], [1], [1], [1] */
    float *host_x;                                                  /* a batch gathered on the host */
    int32_t *host_y;
    int64_t *order; /* an epoch's shuffle */
    int64_t order_capacity;
} mixed_mlp;

/* sizes[0] inputs, ..., sizes[nsizes-1] classes (2 to MIXED_MLP_MAX_LAYERS + 1
 * sizes) on device d, products at precision p. Weights ~ N(0, 2/in) from
 * `seed` (the same seed: the same network, whatever p), biases 0. */
status mixed_mlp_create(mixed_mlp *net, device d, const int64_t *sizes, int nsizes, int64_t batch,
                        lab_precision p, uint64_t seed);
void mixed_mlp_free(mixed_mlp *net);

/* One epoch of SGD with learning rate lr over the whole batches of `data`, in
 * an order shuffled from the seed and `epoch` (the same for every precision);
 * *loss = the mean of the batches' losses, read from the device once. */
status mixed_mlp_train_epoch(mixed_mlp *net, const dataset *data, int epoch, float lr, double *loss);

/* The fraction of the whole batches of `data` the network classifies right. */
status mixed_mlp_accuracy(mixed_mlp *net, const dataset *data, double *accuracy);

#endif
