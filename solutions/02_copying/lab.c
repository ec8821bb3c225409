/* lab.c: lab 02, copying (the reference solution). Each function is one step of
 * README.md; lab.h says what each must do. Run: ./lab run 02; check: ./lab check 02. */
#include "lab.h"

#include <stdio.h>

/* ==== Step 1: the same-device rule (README, "Step 1") ======================= */

/* Step 1: op_add refuses operands on two devices with STATUS_WRONG_DEVICE;
 * only that status is a refusal, and its message is last_error()'s. */
status lab_try_add(const tensor *a, const tensor *b, tensor *out, bool *refused, char *message,
                   size_t message_size)
{
    if (!refused || !message || message_size == 0)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_try_add: refused and message must be given, with room for a message");
    const status s = op_add(a, b, out);
    *refused = s == STATUS_WRONG_DEVICE;
    snprintf(message, message_size, "%s", *refused ? last_error() : "");
    return *refused ? STATUS_OK : s;
}

/* ==== Step 2: copying on purpose (README, "Step 2") ========================= */

/* Step 2: tensor_to hands back b itself when it is on a's device already, or
 * a new copy there; either way one reference that is ours to release. */
status lab_add_across(const tensor *a, tensor *b, tensor *out)
{
    if (!a || !b) return fail(STATUS_BAD_ARGUMENT, "lab_add_across: a and b must be given");
    tensor *moved = NULL;
    status s = tensor_to(b, tensor_device(a), &moved);
    if (s == STATUS_OK) s = op_add(a, moved, out);
    tensor_free(moved); /* one reference less: frees a copy, keeps b itself */
    return s;
}

/* ==== Step 3: moving a whole layer (README, "Step 3") ======================= */

/* Step 3: tensor_to each parameter, then release the old reference: the old
 * tensor when it was copied, only the extra reference when it was already on d. */
status lab_linear_to(lab_linear *layer, device d)
{
    if (!layer || !layer->weight || !layer->bias)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_linear_to: the layer is NULL or empty; give it a weight and a bias");
    tensor **parameters[] = { &layer->weight, &layer->bias };
    for (size_t i = 0; i < sizeof parameters / sizeof parameters[0]; ++i) {
        tensor *moved = NULL;
        const status s = tensor_to(*parameters[i], d, &moved);
        if (s != STATUS_OK) return s; /* this parameter stays where it was */
        tensor_free(*parameters[i]);
        *parameters[i] = moved;
    }
    return STATUS_OK;
}

/* ==== Step 4: keeping the log on the device (README, "Step 4") ============== */

/* Step 4: norms_logged_on_host's loop, with each norm copied into slot i of a
 * log on the device (queued: the host does not wait) instead of read, and the
 * whole log read once after the loop. */
status lab_norms_logged_on_device(const tensor *x, const tensor *w, int steps, float *norms)
{
    if (!x || !w || !norms || steps < 1)
        return fail(
            STATUS_BAD_ARGUMENT,
            "lab_norms_logged_on_device: x, w and norms must be given and steps at least 1 (steps: %d)",
            steps);
    const device d = tensor_device(x);
    tensor *p[2] = { NULL, NULL }, *norm = NULL, *norm_log = NULL; /* norm_log: [steps], one slot a step */
    status s = tensor_empty(&p[0], d, DTYPE_F32, tensor_shape(x));
    if (s == STATUS_OK) s = tensor_empty(&p[1], d, DTYPE_F32, tensor_shape(x));
    if (s == STATUS_OK) s = tensor_empty(&norm, d, DTYPE_F32, shape1(1));
    if (s == STATUS_OK) s = tensor_empty(&norm_log, d, DTYPE_F32, shape1(steps));
    const tensor *y = x;
    for (int i = 0; i < steps && s == STATUS_OK; ++i) {
        s = op_matmul(y, false, w, false, NULL, p[i % 2]);
        if (s == STATUS_OK) s = op_norm(p[i % 2], norm);
        if (s == STATUS_OK)
            s = tensor_copy_slice(norm_log, i, norm, 0, 1); /* queued: the host does not wait */
        y = p[i % 2];
    }
    if (s == STATUS_OK) s = tensor_to_host(norm_log, norms, steps); /* the only read: one wait, one copy */
    tensor_free(p[0]), tensor_free(p[1]), tensor_free(norm), tensor_free(norm_log);
    return s;
}
