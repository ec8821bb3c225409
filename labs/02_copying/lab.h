/* lab.h: what you write in lab 02 (copying). Each function belongs to one step
 * of README.md; your code goes in lab.c.
 *
 * Every function returns a status: STATUS_OK, or a failure with a message made
 * by fail() (labkit/status.h). The untouched lab.c returns todo(...) everywhere,
 * so the programs tell you which step comes next instead of crashing. What is
 * given (the slow loop of step 4, the layer's forward pass) is in given.h. */
#ifndef LAB02_LAB_H
#define LAB02_LAB_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/labkit.h"

/* ==== Step 1: the same-device rule (README, "Step 1") ======================= */

/* Tries out = a + b, where a and b may live on different devices (out lives on
 * a's device). A refusal by the same-device rule is an answer, not a crash:
 * *refused = true, the library's message in message[0..message_size-1] (cut
 * to fit: its first message_size - 1 characters, always ending in a NUL,
 * nothing written past it), and STATUS_OK. A sum that works: *refused = false, message "" and STATUS_OK. Any
 * other failure (shapes that do not match, say) is no refusal: *refused =
 * false, and that failure is returned as it is. */
status lab_try_add(const tensor *a, const tensor *b, tensor *out, bool *refused, char *message,
                   size_t message_size);

/* ==== Step 2: copying on purpose (README, "Step 2") ========================= */

/* out = a + b on a's device, wherever b lives: b is copied to a's device first
 * (only when it is not there already), and that copy is released before
 * returning, so that nothing is left behind in the device's memory. A failure
 * (of the copy, or of the sum) is returned as it is, with the copy released
 * all the same. */
status lab_add_across(const tensor *a, tensor *b, tensor *out);

/* ==== Step 3: moving a whole layer (README, "Step 3") ======================= */

/* A fully connected layer y = x W^T + b, stored the way nn.Linear(in, out)
 * stores it (as in lab 01). given.h's linear_forward computes y. */
typedef struct lab_linear {
    tensor *weight; /* [out_features, in_features] */
    tensor *bias;   /* [out_features] */
} lab_linear;

/* Moves every parameter of the layer to device d, in place: the layer then
 * holds the moved tensors, and the old ones are released, so that nothing of
 * the layer is left on the device it came from. A parameter already on d is
 * kept as it is: not copied, not replaced. If a copy fails (no room on d), that
 * failure is returned and the layer still holds both its parameters, each on
 * its old device or on d. */
status lab_linear_to(lab_linear *layer, device d);

/* ==== Step 4: keeping the log on the device (README, "Step 4") ============== */

/* The lesson's exercise, the fast way. Starting from y = x, computes `steps`
 * products y = y w (x and w are [n, n], on one device) and logs the Frobenius
 * norm of each product into norms[0..steps-1], like given.h's
 * norms_logged_on_host; but the log stays on the device (a tensor of `steps`
 * elements, one slot a step) and is read to the host once, whole, at the end.
 * Every tensor it makes is released before it returns, also when one of them
 * cannot be made (no room on the device): that failure is then returned. */
status lab_norms_logged_on_device(const tensor *x, const tensor *w, int steps, float *norms);

#endif
