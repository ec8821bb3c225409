/* train.h: lab 05's network on one rank's device, and one step of training
 * across the ranks around your step 3 (given).
 *
 *   x [B, n0] -> linear(W1, b1) -> ReLU -> ... -> linear(WL, bL) -> logits [B, nL]
 *
 * The network is lab 05's (the labs' shared code, labs/common/mlp.h), its
 * backward pass your lab 05 step 1 (lab_layer_backward): lab 10 trains with
 * your lab 05, as lab 08 does. Every rank holds the whole dataset in host
 * memory and learns from its own slice of each batch (lab_chunk). */
#ifndef LAB10_TRAIN_H
#define LAB10_TRAIN_H

#include <mpi.h>
#include <stdint.h>

#include "data.h"
#include "labkit/labkit.h"
#include "mlp.h"

#define DIST_SLICE_SIZES 4 /* slice sizes a model keeps tensors for */

typedef struct dist_model {
    mlp net;                            /* lab 05's network, on net.dev */
    mlp_batch slices[DIST_SLICE_SIZES]; /* the tensors of a slice, one per size met so far */
    float loss;                         /* the mean loss over the last slice (0 for an empty one) */
} dist_model;

/* Lab 05's network on d, drawn from `seed` (the check seeds every rank
 * differently: only lab_broadcast_parameters makes them equal). */
status dist_create(dist_model *m, device d, const int64_t *sizes, int nsizes, uint64_t seed);
void dist_free(dist_model *m);

/* Forward and backward over `rows` rows from host memory: afterwards every
 * dW and db holds the gradient of the mean loss over those rows (0 rows:
 * every gradient 0), and m->loss that loss. */
status dist_slice_gradients(dist_model *m, const float *images, const int32_t *labels, int64_t rows);

/* One SGD step of data-parallel training on the batch of `batch` rows that
 * starts at image `first` of data: this rank's slice (your lab_chunk), its
 * gradients, your lab_average_gradients, then lab 05's SGD step. */
status dist_step(dist_model *m, const dataset *data, int64_t first, int64_t batch, float lr, MPI_Comm comm);

/* Every weight and bias (gradients: every dW and db), layer by layer,
 * flattened into out (room for dist_parameter_count floats). Blocking reads. */
int64_t dist_parameter_count(const mlp *net);
status dist_read(const mlp *net, int gradients, float *out, int64_t capacity);

#endif
