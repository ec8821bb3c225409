/* mlp_backward.c: the MLP's backward pass, layer by layer from the last, each
 * layer through lab 05's step 1 (lab_layer_backward, the student's: in the
 * programs of lab 05, and of lab 08, which trains lab 05's network with the
 * student's lab 05). Apart from mlp.c, so that a lab that never runs it
 * (lab 06, whose products are its own) links none of lab 05's code. */
#include "mlp.h"

#include <stdio.h>

status mlp_backward(mlp *net, mlp_batch *b)
{
    if (!net || !b) return fail(STATUS_BAD_ARGUMENT, "mlp_backward: give a network and its batch");
    for (int i = net->nlayers - 1; i >= 0; --i) {
        const tensor *input = i == 0 ? b->x : b->out[i - 1];
        /* The first layer's input is the data: no gradient is needed for it. */
        tensor *grad_input = i == 0 ? NULL : b->grad[i - 1];
        const status s = lab_layer_backward(&net->layers[i], input, b->out[i], b->grad[i], grad_input);
        /* An operation handed the NULL grad_input refuses it as a bad argument
         * and says to create it: for the first layer the way out is rather not
         * to compute it, which the library cannot know. */
        if (s == STATUS_BAD_ARGUMENT && !grad_input) {
            char said[1024];
            snprintf(said, sizeof said, "%s", last_error()); /* fail() writes where last_error() reads */
            return fail(s,
                        "%s\n  hint: this was the first layer, whose grad_input is NULL on purpose: no "
                        "gradient of the data is needed; if your step 1 gave it to an operation, skip that "
                        "product when grad_input is NULL (lab.h, step 1)",
                        said);
        }
        if (s != STATUS_OK) return s;
    }
    return STATUS_OK;
}
