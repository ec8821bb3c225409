/* mixed_mlp.h: a small multilayer perceptron trained with mixed precision,
 * given, not a step. Step 6 of the README uses it.
 *
 *   x [B, n0] -> linear(W1 [n0, n1], b1) -> ReLU -> ... -> linear(WL, bL) -> logits [B, nL]
 *
 * Lab 05's network (the labs' shared code, labs/common/mlp.h), trained the way
 * mixed-precision training trains it: the parameters (the "master weights"),
 * their gradients and every activation are float32, and only the matrix
 * products read their operands at a lower precision: every product of the
 * forward and the backward pass is your lab_mixed_product at the network's
 * precision. Plain SGD (W -= lr dW), the loss summed on the device and read
 * once per epoch. The data are lab 05's synthetic digits (labs/common/data.h).
 *
 * Its backward pass is lab 05's step 1 with every product through
 * lab_mixed_product: lab 06 comes after lab 05, whose step 1 it takes for
 * granted (README, "Files: yours and given"). */
#ifndef LAB06_MIXED_MLP_H
#define LAB06_MIXED_MLP_H

#include <stdint.h>

#include "data.h"
#include "lab.h"
#include "mlp.h"

#define MIXED_MLP_MAX_LAYERS 4

typedef struct mixed_mlp {
    mlp net;                    /* lab 05's network: W, b, dW, db of every layer */
    mlp_batch batch;            /* one batch: x, labels, every layer's out and grad, probs, loss, accuracy */
    lab_precision precision;    /* of every product */
    tensor *loss_sum, *hit_sum; /* [1], [1]: an epoch's losses, a pass's right answers */
    float *host_x;              /* a batch gathered on the host */
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
