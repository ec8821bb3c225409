/* lab.c: lab 02_copying, your part. Read the README first; each function below
 * is one of its steps. `./lab check 02` says which step is next. */
#include <stdio.h>

#include "lab.h"

/* ---- Step 1: the same-device rule ------------------------------------------ */

/* Step 1 (README, "The same-device rule"): try out = a + b with op_add. When a
 * and b live on different devices the library refuses with STATUS_WRONG_DEVICE
 * and a message naming both devices (last_error()). Handle that case: set
 * *refused to true, copy the message into `message` (snprintf) and return
 * STATUS_OK. When the sum works, set *refused to false and message to "".
 * Return any other failure unchanged. */
status lab_try_add(const tensor *a, const tensor *b, tensor *out, bool *refused, char *message,
                   size_t message_size)
{
    (void)a, (void)b, (void)out, (void)refused, (void)message, (void)message_size;
    /* TODO: your code here */
    return todo("step 1 (lab_try_add)");
}

/* ---- Step 2: copying on purpose ---------------------------------------------- */

/* Step 2 (README, "Copying on purpose"): bring b to a's device with
 * tensor_to(b, tensor_device(a), &moved) (it hands back b itself, copying
 * nothing, when b is already there), add with op_add(a, moved, out), then
 * tensor_free(moved) so the copy does not stay in device memory. */
status lab_add_across(const tensor *a, tensor *b, tensor *out)
{
    (void)a, (void)b, (void)out;
    /* TODO: your code here */
    return todo("step 2 (lab_add_across)");
}

/* ---- Step 3: moving a whole layer -------------------------------------------- */

/* Step 3 (README, "Moving a whole layer"): for each parameter p (weight, then
 * bias): tensor_to(p, d, &moved), then tensor_free(p) and store `moved` in the
 * layer. Freeing the old one is what makes the move "in place"; when p was
 * already on d, tensor_to handed back p itself and the free only drops the
 * extra reference. */
status lab_linear_to(lab_linear *layer, device d)
{
    (void)layer, (void)d;
    /* TODO: your code here */
    return todo("step 3 (lab_linear_to)");
}

/* ---- Step 4: keeping the log on the device ----------------------------------- */

/* Given: the slow way. Read it, then write the fast way below it. */
status lab_norms_logged_on_host(const tensor *x, const tensor *w, int steps, float *norms)
{
    const device d = tensor_device(x);
    tensor *p[2] = { NULL, NULL }, *norm = NULL; /* p: two [n, n] products, used in turn; norm: [1] */
    status s = tensor_empty(&p[0], d, DTYPE_F32, tensor_shape(x));
    if (s == STATUS_OK) s = tensor_empty(&p[1], d, DTYPE_F32, tensor_shape(x));
    if (s == STATUS_OK) s = tensor_empty(&norm, d, DTYPE_F32, shape1(1));
    const tensor *y = x;
    for (int i = 0; i < steps && s == STATUS_OK; ++i) {
        s = op_matmul(y, false, w, false, NULL, p[i % 2]); /* p = y w */
        if (s == STATUS_OK) s = op_norm(p[i % 2], norm);
        /* The read that hurts: the host waits here for the device, every step. */
        if (s == STATUS_OK) s = tensor_item(norm, &norms[i]);
        y = p[i % 2]; /* this product is the next step's y */
    }
    tensor_free(p[0]), tensor_free(p[1]), tensor_free(norm);
    return s;
}

/* Step 4 (README, "Keeping the log on the device"): the same loop as above, but
 * the log stays on the device. Create norm_log, a tensor of `steps` elements on
 * x's device (tensor_empty with shape1(steps)). Instead of reading each step's
 * norm, write it into element i of the log with
 * tensor_copy_slice(norm_log, i, norm, 0, 1): queued on the device like an
 * operation, so the host does not wait. After the loop, read the whole log once
 * with tensor_to_host(norm_log, norms, steps). Free every tensor you create. */
status lab_norms_logged_on_device(const tensor *x, const tensor *w, int steps, float *norms)
{
    (void)x, (void)w, (void)steps, (void)norms;
    /* TODO: your code here */
    return todo("step 4 (lab_norms_logged_on_device)");
}
