/* lab.c: lab 05, a training loop on a device with its log kept on the device,
 * the step captured as one launch, the parameters saved and loaded.
 * Fill in each TODO; README.md explains every step. */
#include "lab.h"

#include <stdio.h>

/* ==== Step 1: The backward pass of one layer (README, "Step 1") ============ */

/* Goal: from the gradient of the layer's output, the gradients of its weight,
 * its bias and its input (lab.h says which tensor holds what). The README
 * derives the four formulas and says why their order matters; each is one
 * call of ops.h (look up op_relu_backward, op_matmul and its transpose flags,
 * op_column_sum). Nothing needs zeroing: every output is overwritten. */
status lab_layer_backward(layer *l, const tensor *input, const tensor *output, tensor *grad_output,
                          tensor *grad_input)
{
    /* TODO: your code here */
    (void)l, (void)input, (void)output, (void)grad_output, (void)grad_input;
    return todo("step 1: lab_layer_backward");
}

/* ==== Step 2: A log that stays on the device (README, "Step 2") ============ */

/* Goal: the epoch's loss sum grows by this step's loss, and the host never
 * learns either value (ops.h: the element-wise operations). */
status lab_accumulate_loss(const tensor *step_loss, tensor *loss_sum)
{
    /* TODO: your code here */
    (void)step_loss, (void)loss_sum;
    return todo("step 2: lab_accumulate_loss");
}

/* ==== Step 3: The batch on its way (README, "Step 3") ====================== */

/* Goal: the batch's images and labels in the device tensors of b, and the host
 * free to go on at once (tensor.h has two kinds of copies from the host: which
 * one does not wait, for floats and for int32 labels?). */
status lab_upload_batch(mlp_batch *b, const float *images, const int32_t *labels)
{
    /* TODO: your code here */
    (void)b, (void)images, (void)labels;
    return todo("step 3: lab_upload_batch");
}

/* ==== Step 4: The loop body (README, "Step 4") ============================= */

/* Goal: one training step on the batch already on the device, the six moves of
 * the README. mlp.h runs the network forward and backward and takes the SGD
 * step; ops.h has the loss and its gradient. Find where mlp_forward leaves the
 * logits and where mlp_backward expects the loss's gradient. */
status lab_train_step(mlp *net, mlp_batch *b, float lr, float momentum, tensor *loss_sum)
{
    /* TODO: your code here */
    (void)net, (void)b, (void)lr, (void)momentum, (void)loss_sum;
    return todo("step 4: lab_train_step");
}

/* ==== Step 5: The step as one launch (README, "Step 5") ==================== */

/* Goal: your step 4 recorded once, as a graph that one launch replays
 * (graph.h). Think about the device's state when the recorded step fails. */
status lab_capture_step(mlp *net, mlp_batch *b, float lr, float momentum, tensor *loss_sum, graph **out)
{
    /* TODO: your code here */
    (void)net, (void)b, (void)lr, (void)momentum, (void)loss_sum;
    *out = NULL;
    return todo("step 5: lab_capture_step");
}

/* ==== Step 6: Parameters saved and loaded (README, "Step 6") =============== */

/* Goal: every layer's weight and bias in one safetensors file, under the names
 * lab.h gives (safetensors.h). */
status lab_save_parameters(const mlp *net, const char *path, const char *metadata_json)
{
    /* TODO: your code here */
    (void)net, (void)path, (void)metadata_json;
    return todo("step 6: lab_save_parameters");
}

/* Goal: the saved parameters back into the network, but only from a file that
 * holds exactly this network: decide that (how many tensors, which names,
 * which shapes) before copying anything, so that a refused file changes
 * nothing (safetensors.h: opening reads the header alone). */
status lab_load_parameters(mlp *net, const char *path)
{
    /* TODO: your code here */
    (void)net, (void)path;
    return todo("step 6: lab_load_parameters");
}
