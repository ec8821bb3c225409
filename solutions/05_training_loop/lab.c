/* lab.c: lab 05, a training loop on a device with its log kept on the device,
 * the step captured as one launch, the parameters saved and loaded.
 * Fill in each TODO; README.md explains every step. */
#include "lab.h"

#include <stdio.h>

/* ==== Step 1: The backward pass of one layer (README, "Step 1") ============ */

/* With Z = input W + b, output = relu(Z) and G = dLoss/dZ:
 *   G          = grad_output where output > 0, else 0 (the last layer has no ReLU: G = grad_output)
 *   dW         = input^T G       [in, out]
 *   db         = column sums of G [out]
 *   grad_input = G W^T           [B, in]
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

/* ==== Step 2: A log that stays on the device (README, "Step 2") ============ */

/* One queued addition: the host never sees the value, so it never waits here. */
status lab_accumulate_loss(const tensor *step_loss, tensor *loss_sum)
{
    return op_add(loss_sum, step_loss, loss_sum);
}

/* ==== Step 3: The batch on its way (README, "Step 3") ====================== */

/* The queued copies: they return at once and the device copies when its queue
 * gets there (the blocking ones would wait for the previous step first). */
status lab_upload_batch(mlp_batch *b, const float *images, const int32_t *labels)
{
    status s = tensor_copy_from_host_async(b->x, images, tensor_numel(b->x));
    if (s == STATUS_OK) s = tensor_copy_from_host_async_i32(b->labels, labels, b->rows);
    return s;
}

/* ==== Step 4: The loop body (README, "Step 4") ============================= */

status lab_train_step(mlp *net, mlp_batch *b, float lr, float momentum, tensor *loss_sum)
{
    const int last = net->nlayers - 1;
    status s = mlp_forward(net, b);
    if (s == STATUS_OK) s = op_softmax_cross_entropy(b->out[last], b->labels, b->probs, b->loss);
    if (s == STATUS_OK) s = op_softmax_cross_entropy_backward(b->probs, b->labels, b->grad[last]);
    if (s == STATUS_OK) s = mlp_backward(net, b);
    if (s == STATUS_OK) s = mlp_sgd_step(net, lr, momentum);
    if (s == STATUS_OK) s = lab_accumulate_loss(b->loss, loss_sum);
    return s;
}

/* ==== Step 5: The step as one launch (README, "Step 5") ==================== */

/* The capture is ended whatever the step did: a device left capturing would
 * record, and never run, everything queued on it afterwards. */
status lab_capture_step(mlp *net, mlp_batch *b, float lr, float momentum, tensor *loss_sum, graph **out)
{
    *out = NULL;
    status s = graph_begin_capture(net->dev);
    if (s != STATUS_OK) return s;
    const status step = lab_train_step(net, b, lr, momentum, loss_sum);
    graph *g = NULL;
    s = graph_end_capture(net->dev, &g);
    if (step != STATUS_OK) {
        graph_free(g);
        return step;
    }
    *out = g;
    return s;
}

/* ==== Step 6: Parameters saved and loaded (README, "Step 6") =============== */

#define NAME_SIZE 32

/* "layers.<i>.weight" or "layers.<i>.bias": the names PyTorch's state_dict uses. */
static void parameter_name(char *name, int layer_index, bool bias)
{
    snprintf(name, NAME_SIZE, "layers.%d.%s", layer_index, bias ? "bias" : "weight");
}

static tensor *parameter_of(const mlp *net, int i) /* i = 2 x layer (+ 1 for the bias) */
{
    return i % 2 ? net->layers[i / 2].b : net->layers[i / 2].W;
}

status lab_save_parameters(const mlp *net, const char *path, const char *metadata_json)
{
    char names[2 * MLP_MAX_LAYERS][NAME_SIZE];
    safetensors_entry entries[2 * MLP_MAX_LAYERS];
    for (int i = 0; i < 2 * net->nlayers; ++i) {
        parameter_name(names[i], i / 2, i % 2);
        entries[i] = (safetensors_entry){ names[i], parameter_of(net, i) };
    }
    return safetensors_save(path, entries, 2 * net->nlayers, metadata_json);
}

static bool same_shape(shape a, shape b)
{
    if (a.ndim != b.ndim) return false;
    for (int d = 0; d < a.ndim; ++d)
        if (a.dims[d] != b.dims[d]) return false;
    return true;
}

/* Whether the file's tensor `name` is there with t's dtype and shape. */
static status expect_like(const safetensors_file *f, const char *path, const char *name, const tensor *t)
{
    safetensors_info info;
    status s = safetensors_find(f, name, &info);
    if (s != STATUS_OK) return s;
    if (info.type == tensor_dtype(t) && same_shape(info.shp, tensor_shape(t))) return STATUS_OK;
    char in_file[64], in_net[96];
    return fail(STATUS_BAD_ARGUMENT, "%s: %s is %s %s, but this network's is %s", path, name,
                dtype_name(info.type), shape_format(info.shp, in_file, sizeof in_file),
                tensor_describe(t, in_net, sizeof in_net));
}

/* Every name and shape is checked before anything is copied, so that a file
 * of another network leaves this one as it was. */
status lab_load_parameters(mlp *net, const char *path)
{
    safetensors_file *f = NULL;
    status s = safetensors_open(&f, path);
    if (s != STATUS_OK) return s;
    const int count = 2 * net->nlayers;
    if (safetensors_count(f) != count)
        s = fail(STATUS_BAD_ARGUMENT, "%s holds %d tensors; this network of %d layers has %d", path,
                 safetensors_count(f), net->nlayers, count);
    char name[NAME_SIZE];
    for (int i = 0; s == STATUS_OK && i < count; ++i) {
        parameter_name(name, i / 2, i % 2);
        s = expect_like(f, path, name, parameter_of(net, i));
    }
    for (int i = 0; s == STATUS_OK && i < count; ++i) {
        parameter_name(name, i / 2, i % 2);
        s = safetensors_load_into(f, name, parameter_of(net, i));
    }
    safetensors_close(f);
    return s;
}
