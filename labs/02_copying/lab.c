/* lab.c: lab 02, copying. Each function is one step of README.md; lab.h says
 * what each must do. Run: ./lab run 02; check: ./lab check 02; stuck: ./lab hint 02. */
#include "lab.h"

#include <stdio.h>

/* ==== Step 1: the same-device rule (README, "Step 1") ======================= */

/* Goal: a sum across two devices is refused, and your program takes the
 * refusal as an answer it can print, not as a crash. Tell the refusal apart
 * from every other failure by its status. Look up: op_add (ops.h), the status
 * values and last_error (status.h). */
status lab_try_add(const tensor *a, const tensor *b, tensor *out, bool *refused, char *message,
                   size_t message_size)
{
    /* TODO: your code here */
    (void)a, (void)b, (void)out, (void)refused, (void)message, (void)message_size;
    return todo("step 1: lab_try_add");
}

/* ==== Step 2: copying on purpose (README, "Step 2") ========================= */

/* Goal: the sum of step 1, made to work by copying b to a's device yourself,
 * and nothing left in the device's memory afterwards. Look up: tensor_to,
 * tensor_device and tensor_free (tensor.h): what tensor_to hands back when b
 * is already there, and what freeing it then does. */
status lab_add_across(const tensor *a, tensor *b, tensor *out)
{
    /* TODO: your code here */
    (void)a, (void)b, (void)out;
    return todo("step 2: lab_add_across");
}

/* ==== Step 3: moving a whole layer (README, "Step 3") ======================= */

/* Goal: the lessons' net.to(device): every parameter of the layer ends up on d,
 * each copied at most once, and nothing of the layer is left behind where it
 * was. Look up: tensor_to and tensor_free (tensor.h). */
status lab_linear_to(lab_linear *layer, device d)
{
    /* TODO: your code here */
    (void)layer, (void)d;
    return todo("step 3: lab_linear_to");
}

/* ==== Step 4: keeping the log on the device (README, "Step 4") ============== */

/* Goal: the same products and the same norms as norms_logged_on_host (given.c:
 * read it first), but the host never waits inside the loop: each step's norm
 * goes into its own slot of a log that lives on the device, and the log comes
 * to the host once, after the loop. Free what you create. Look up: tensor_empty,
 * tensor_copy_slice and tensor_to_host (tensor.h). */
status lab_norms_logged_on_device(const tensor *x, const tensor *w, int steps, float *norms)
{
    /* TODO: your code here */
    (void)x, (void)w, (void)steps, (void)norms;
    return todo("step 4: lab_norms_logged_on_device");
}
