/* lab.c: lab 05, a training loop on a device with its log kept on the device.
 * Fill in each TODO; README.md explains every step. */
#include "lab.h"

/* Step 1 (README, "The backward pass of one layer"). For output = relu(Z) with
 * Z = input W + b, and G = dLoss/dZ:
 *   G        = grad_output where output > 0, else 0   (op_relu_backward, in place;
 *              skip it when the layer has no ReLU: then G = grad_output)
 *   dW       = input^T G     [in, out]                (op_matmul, trans_a)
 *   db       = column sums of G  [out]                (op_column_sum)
 *   grad_in  = G W^T         [B, in]                  (op_matmul, trans_b)
 * Each output is overwritten, so no gradient has to be zeroed first. */
status lab_layer_backward(layer *l, const tensor *input, const tensor *output, tensor *grad_output,
                          tensor *grad_input)
{
    (void)l, (void)input, (void)output, (void)grad_output, (void)grad_input;
    /* TODO: your code here */
    return todo("step 1: lab_layer_backward");
}

/* Step 2 (README, "A log that stays on the device"). One queued addition: the
 * host never sees the value, so it never waits for the device here. */
status lab_accumulate_loss(const tensor *step_loss, tensor *loss_sum)
{
    (void)step_loss, (void)loss_sum;
    /* TODO: your code here */
    return todo("step 2: lab_accumulate_loss");
}

/* Step 3 (README, "The loop body"). In order: the batch to the device with
 * queued copies (tensor_copy_from_host_async, tensor_copy_from_host_async_i32;
 * the blocking tensor_copy_from_host would wait for the previous step to end),
 * mlp_forward, the loss (op_softmax_cross_entropy into b->probs and b->loss),
 * its gradient for the logits (op_softmax_cross_entropy_backward into
 * b->grad[last]), mlp_backward, mlp_sgd_step, then lab_accumulate_loss. No
 * tensor_item, no tensor_to_host. */
status lab_train_step(mlp *net, mlp_batch *b, const float *images, const int32_t *labels, float lr,
                      float momentum, tensor *loss_sum)
{
    (void)net, (void)b, (void)images, (void)labels, (void)lr, (void)momentum, (void)loss_sum;
    /* TODO: your code here */
    return todo("step 3: lab_train_step");
}
