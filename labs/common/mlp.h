/* mlp.h: lab 05's multilayer perceptron, whose parameters and activations
 * live on one device, built from the library's operations; the labs' shared
 * code (labs/common/): lab 05 trains it, lab 06 trains it with its products
 * at a lower precision, lab 08 keeps one replica of it per device.
 *
 *   x [B, n0] -> linear(W1 [n0, n1], b1) -> ReLU -> ... -> linear(WL, bL) -> logits [B, nL]
 *
 * Every hidden layer is a linear map followed by a ReLU; the last layer is linear
 * only, and the softmax cross-entropy turns its logits into the loss. The
 * parameters are drawn from a seed on the host and copied, so the same seed gives
 * the same network on every device. Not student work, but for its backward
 * pass: mlp_backward (mlp_backward.c) runs lab 05's step 1, the student's
 * lab_layer_backward, for every layer. */
#ifndef LABS_COMMON_MLP_H
#define LABS_COMMON_MLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labkit/labkit.h"

#define MLP_MAX_LAYERS 8

/* One layer's parameters, their gradients and their momentum buffers. */
typedef struct layer {
    int64_t in, out;
    bool relu;       /* a ReLU after the linear map (every layer but the last) */
    tensor *W, *b;   /* [in, out], [out] */
    tensor *dW, *db; /* the gradients of the mean loss, same shapes */
    tensor *vW, *vb; /* momentum buffers (velocities), same shapes */
} layer;

typedef struct mlp {
    device dev;
    int nlayers;
    layer layers[MLP_MAX_LAYERS];
} mlp;

/* What one batch of B rows needs on the device, allocated once and reused by
 * every step of that batch size (a different B, the last partial batch of an
 * epoch, needs its own). */
typedef struct mlp_batch {
    int64_t rows;                 /* B */
    tensor *x;                    /* [B, n0]: the images of the batch */
    tensor *labels;               /* int32 [B] */
    tensor *out[MLP_MAX_LAYERS];  /* [B, n_i]: each layer's output (after its ReLU) */
    tensor *grad[MLP_MAX_LAYERS]; /* [B, n_i]: the loss's gradient for that output */
    tensor *probs;                /* [B, nL]: softmax of the logits */
    tensor *loss;                 /* [1]: this batch's mean loss */
    tensor *accuracy;             /* [1]: this batch's fraction of right answers */
} mlp_batch;

/* sizes[0] inputs, sizes[n-1] classes, n = 2..MLP_MAX_LAYERS+1 sizes. Weights
 * ~ N(0, 2/in) (He initialisation, suited to ReLU), biases 0, velocities 0.
 * A network too large for d is refused first (mlp_check_fits, batch 0). */
status mlp_create(mlp *net, device d, const int64_t *sizes, int nsizes, uint64_t seed);

/* Sets of batch tensors a trainer keeps on its device: one that a batch is
 * copied into while a step computes from the other (lab 05's train.h). */
#define MLP_BATCH_SETS 2

/* The bytes a network of `sizes` needs on its device when trained at `batch`
 * rows (0: its parameters alone): every weight and bias three times (the
 * values, their gradients, their momentum), and in each of MLP_BATCH_SETS sets
 * the tensors of a batch for up to three batch sizes (a full batch, and the
 * last, partial ones of training and of evaluation). */
uint64_t mlp_device_bytes(const int64_t *sizes, int nsizes, int64_t batch);

/* Refuses a network that does not fit, before anything is allocated or drawn:
 * on d (mlp_device_bytes against the free memory device_memory_info reports)
 * and on the host, which draws each weight matrix before copying it to d. The
 * message names the device, its memory and what the network needs. */
status mlp_check_fits(device d, const int64_t *sizes, int nsizes, int64_t batch);

/* "784-256-256-10" into text; returns text. */
const char *mlp_format_sizes(const int64_t *sizes, int nsizes, char *text, size_t size);
void mlp_free(mlp *net);

status mlp_batch_create(const mlp *net, int64_t rows, mlp_batch *out);
void mlp_batch_free(mlp_batch *b);

/* The batch among slots[0 .. count) for `rows` rows: the one made for that
 * size, or a new one in the first empty slot (mlp_batch_create), so that each
 * size is allocated once and reused; *slot is its index. When every slot
 * holds another size, STATUS_BAD_ARGUMENT, the message naming `who` and its
 * `what` ("trainer: more than 4 batch sizes"). */
status mlp_batch_slot(const mlp *net, mlp_batch *slots, int count, int64_t rows, const char *who,
                      const char *what, int *slot);

/* Every layer's dW and db set to 0: the gradient of a slice of no rows. */
status mlp_zero_gradients(const mlp *net);

/* out[i] of every layer, from b->x; the logits end up in b->out[nlayers-1]. */
status mlp_forward(const mlp *net, mlp_batch *b);

/* A product of the forward pass, out = a b + bias (bias [cols], on every
 * row), made by a caller's own function: mlp_forward's is op_matmul; lab 06's
 * network reads its operands at a lower precision. `context` is the caller's. */
typedef status (*mlp_product)(tensor *a, tensor *b, const tensor *bias, tensor *out, const void *context);

/* mlp_forward with every layer's product made by `product`. */
status mlp_forward_by(const mlp *net, mlp_batch *b, mlp_product product, const void *context);

/* From the logits' gradient in b->grad[nlayers-1], every layer's dW and db,
 * layer by layer backwards, each through lab_layer_backward (mlp_backward.c:
 * only the programs that link lab 05's lab.c have it). */
status mlp_backward(mlp *net, mlp_batch *b);

/* Lab 05's step 1, in labs/05_training_loop/lab.c (lab 05's lab.h says what
 * it does): the student's, in the programs of lab 05 and of the labs that
 * train with it. */
status lab_layer_backward(layer *l, const tensor *input, const tensor *output, tensor *grad_output,
                          tensor *grad_input);

/* SGD: v = momentum v + g, then W -= lr v (with momentum 0: W -= lr g), for
 * every weight and bias in one launch (op_sgd_momentum: one kernel on a GPU).
 * With LABKIT_MLP_UNFUSED=1 in the environment it is mlp_sgd_step_unfused: how
 * bench_training_epoch runs lab 05's own program before fusion. */
status mlp_sgd_step(mlp *net, float lr, float momentum);

/* The same update, bit for bit, as three operations per tensor (op_scale,
 * op_axpy, op_axpy): 6 x layers launches. Kept for the benches' comparison of
 * the step before and after fusion. */
status mlp_sgd_step_unfused(mlp *net, float lr, float momentum);

/* The largest layer size --layers accepts. */
#define MLP_MAX_WIDTH 100000

/* Parses "784,256,256,10" into sizes (at most `capacity`, each 1 to
 * MLP_MAX_WIDTH): the first must be `inputs`, the last `classes`. */
status mlp_parse_sizes(const char *text, int64_t inputs, int64_t classes, int64_t *sizes, int capacity,
                       int *nsizes);

#endif
