/* lab.h: what you write in lab 02_copying. Each function returns a status and
 * belongs to one step of the README ("Steps"). */
#ifndef LAB02_LAB_H
#define LAB02_LAB_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/labkit.h"

/* Step 1 (README, "The same-device rule"): try out = a + b, where a and b may
 * live on different devices (out lives on a's device). A refusal is an answer,
 * not a crash: set *refused, keep the library's message in message[0..size-1]
 * and return STATUS_OK. Any other failure is returned as it is. */
status lab_try_add(const tensor *a, const tensor *b, tensor *out, bool *refused, char *message,
                   size_t message_size);

/* Step 2 (README, "Copying on purpose"): out = a + b, on a's device, whatever
 * device b lives on: copy b across first, and release the copy afterwards. */
status lab_add_across(const tensor *a, tensor *b, tensor *out);

/* A linear layer y = x W + b: x is [batch, in], weight [in, out], bias [out]. */
typedef struct lab_linear {
    tensor *weight;
    tensor *bias;
} lab_linear;

/* Step 3 (README, "Moving a whole layer"): move every parameter of the layer to
 * device d, in place (the layer then holds the moved tensors; the old ones are
 * released). A parameter already on d stays as it is and is not copied. */
status lab_linear_to(lab_linear *layer, device d);

/* Step 4 (README, "Keeping the log on the device"): the lesson's exercise.
 * Starting from y = x, compute `steps` products y = y w (x and w are [n, n], on
 * one device) and log the Frobenius norm of each product.
 *
 * Given, the slow way: every norm is read on the host at once (norms[steps]). */
status lab_norms_logged_on_host(const tensor *x, const tensor *w, int steps, float *norms);

/* Yours, the fast way: the same products and the same log (norms[steps]), but
 * the log stays on the device, a tensor of `steps` elements that each step
 * writes its norm into, and is read into norms once, at the end. */
status lab_norms_logged_on_device(const tensor *x, const tensor *w, int steps, float *norms);

#endif
