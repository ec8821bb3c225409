/* lab.h: what you write in lab 05 (README.md explains each step).
 *
 * A training step on a device: move the batch there, run the network forward,
 * compute the loss, run it backward, take an SGD step, and add the loss to a
 * log that stays on the device. Everything, the copy of the batch included, is
 * queued: on a GPU the step returns before the device has finished it, and
 * nothing in it may wait for the device. */
#ifndef LAB05_LAB_H
#define LAB05_LAB_H

#include "labkit/labkit.h"
#include "mlp.h"

/* Step 1 (README, "The backward pass of one layer"): the gradients of one layer
 *   output = relu(input W + b)     (without relu for the last layer)
 * given grad_output = dLoss/d output [B, out]. Overwrite grad_output in place
 * with the gradient before the ReLU, then write l->dW [in, out], l->db [out]
 * and, unless grad_input is NULL (the first layer), grad_input [B, in]. */
status lab_layer_backward(layer *l, const tensor *input, const tensor *output, tensor *grad_output,
                          tensor *grad_input);

/* Step 2 (README, "A log that stays on the device"): loss_sum += step_loss,
 * both one-element tensors on the device, without reading either. */
status lab_accumulate_loss(const tensor *step_loss, tensor *loss_sum);

/* Step 3 (README, "The loop body"): one training step on batch b of `net`'s
 * device: copy the host's images [b->rows, n0] and labels [b->rows] into b->x
 * and b->labels with queued copies (images and labels are pinned staging
 * buffers that the caller leaves untouched until the device is done with them),
 * forward, softmax cross-entropy loss into b->loss, backward, SGD step with lr
 * and momentum, and add b->loss to loss_sum. No host reads. */
status lab_train_step(mlp *net, mlp_batch *b, const float *images, const int32_t *labels, float lr,
                      float momentum, tensor *loss_sum);

#endif
