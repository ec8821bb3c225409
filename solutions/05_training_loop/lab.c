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
    status s = STATUS_OK;
    if (l->relu) s = op_relu_backward(output, grad_output, grad_output);
    if (s == STATUS_OK) s = op_matmul(input, true, grad_output, false, NULL, l->dW);
    if (s == STATUS_OK) s = op_column_sum(grad_output, l->db);
    if (s == STATUS_OK && grad_input) s = op_matmul(grad_output, false, l->W, true, NULL, grad_input);
    return s;
}

/* Step 2 (README, "A log that stays on the device"). One queued addition: the
 * host never sees the value, so it never waits for the device here. */
status lab_accumulate_loss(const tensor *step_loss, tensor *loss_sum)
{
    return op_add(loss_sum, step_loss, loss_sum);
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
    const int last = net->nlayers - 1;
    status s = tensor_copy_from_host_async(b->x, images, tensor_numel(b->x));
    if (s == STATUS_OK) s = tensor_copy_from_host_async_i32(b->labels, labels, b->rows);
    if (s == STATUS_OK) s = mlp_forward(net, b);
    if (s == STATUS_OK) s = op_softmax_cross_entropy(b->out[last], b->labels, b->probs, b->loss);
    if (s == STATUS_OK) s = op_softmax_cross_entropy_backward(b->probs, b->labels, b->grad[last]);
    if (s == STATUS_OK) s = mlp_backward(net, b);
    if (s == STATUS_OK) s = mlp_sgd_step(net, lr, momentum);
    if (s == STATUS_OK) s = lab_accumulate_loss(b->loss, loss_sum);
    return s;
}
