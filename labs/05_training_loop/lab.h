/* lab.h: what you write in lab 05 (README.md explains each step).
 *
 * A training step on a device: the batch copied up, the network run forward,
 * the loss, the backward pass, an SGD step, the loss added to a log that stays
 * on the device; then the same step captured once and replayed as one launch;
 * then the trained parameters saved to a file and loaded back. On a GPU every
 * step returns before the device has done it, and nothing in it may wait for
 * the device. When a call of the library fails inside one of these functions,
 * the function returns that failure (the first, if more fail): none
 * overwritten by a later call's status, none ignored (the check makes each
 * call fail in turn, as a full device or a full disk would). */
#ifndef LAB05_LAB_H
#define LAB05_LAB_H

#include "labkit/labkit.h"
#include "mlp.h"

/* ==== Step 1: The backward pass of one layer (README, "Step 1") ============ */

/* The gradients of one layer
 *   output = relu(input W + b)     (without relu when l->relu is false: the last layer)
 * given grad_output = dLoss/d output [B, out]. Overwrites grad_output in place
 * with the gradient before the ReLU, then writes l->dW [in, out], l->db [out]
 * and, unless grad_input is NULL (the first layer), grad_input [B, in]. */
status lab_layer_backward(layer *l, const tensor *input, const tensor *output, tensor *grad_output,
                          tensor *grad_input);

/* ==== Step 2: A log that stays on the device (README, "Step 2") ============ */

/* loss_sum += step_loss, both one-element tensors on one device, queued there:
 * neither value is read on the host. */
status lab_accumulate_loss(const tensor *step_loss, tensor *loss_sum);

/* ==== Step 3: The batch on its way (README, "Step 3") ====================== */

/* Copies a batch from the host into the device tensors every step reuses:
 * images [b->rows, n0] into b->x, labels [b->rows] into b->labels. Queued: it
 * returns at once, and `images` and `labels` (pinned staging buffers) stay
 * untouched until the device has read them (the caller sees to that). Either
 * copy may be refused (a full copy queue): that failure is returned. */
status lab_upload_batch(mlp_batch *b, const float *images, const int32_t *labels);

/* ==== Step 4: The loop body (README, "Step 4") ============================= */

/* One training step on the batch already in b->x and b->labels: forward, the
 * softmax cross-entropy loss into b->loss, backward, an SGD step with lr and
 * momentum, and b->loss added to loss_sum. Everything queued; no host reads,
 * no waits, no new tensors. */
status lab_train_step(mlp *net, mlp_batch *b, float lr, float momentum, tensor *loss_sum);

/* ==== Step 5: The step as one launch (README, "Step 5") ==================== */

/* Records lab_train_step on b as a graph (*out) that graph_launch replays:
 * every later step is one launch. Recording runs nothing: the network is the
 * same afterwards. Whatever happens, the device is no longer capturing when
 * this returns. The capture's beginning, the step or the capture's end may
 * fail: that failure is returned (the step's, when the step and the end both
 * fail), no graph is left alive, and *out is NULL, whatever it held before. */
status lab_capture_step(mlp *net, mlp_batch *b, float lr, float momentum, tensor *loss_sum, graph **out);

/* ==== Step 6: Parameters saved and loaded (README, "Step 6") =============== */

/* Saves every layer's weight and bias, from the network's device, to `path`
 * as a safetensors file: layer i's as "layers.<i>.weight" [in, out] and
 * "layers.<i>.bias" [out], nothing else. metadata_json: NULL, or a JSON object
 * of strings stored with them. A save that fails (a full disk, a path that
 * cannot be written) returns that failure. */
status lab_save_parameters(const mlp *net, const char *path, const char *metadata_json);

/* Loads the parameters saved by lab_save_parameters into `net` (on its own
 * device). A file that does not hold exactly this network's tensors, with
 * these names, dtypes and shapes (the number of dimensions too), is refused
 * with a message naming the file and what differs (a tensor missing: its
 * name; a tensor of another shape or dtype: its name, and its shape or dtype
 * in the file and in this network), and the network is left as it was. A file that cannot be opened or
 * read returns that failure (a read that fails half way, after the decision,
 * may leave the network partly loaded). Every path closes the file. */
status lab_load_parameters(mlp *net, const char *path);

#endif
