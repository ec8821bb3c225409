/* kernel.c: your own kernel on a device's queue (labkit/kernel.h). */
#include "labkit/kernel.h"

#include <string.h>

#include "backend.h"
#include "capture.h"
#include "queues.h"
#include "tensor_internal.h"

status device_enqueue(device d, kernel_fn fn, const void *args, size_t args_size)
{
    if (!fn)
        return fail(STATUS_BAD_ARGUMENT,
                    "device_enqueue: fn is NULL; pass the function that launches your kernel");
    if (!args && args_size > 0)
        return fail(STATUS_BAD_ARGUMENT, "device_enqueue: args is NULL but args_size is %zu", args_size);
    if (args_size > KERNEL_MAX_ARGS)
        return fail(STATUS_BAD_ARGUMENT,
                    "device_enqueue: args_size is %zu bytes but at most %d are copied; "
                    "pass pointers to larger data instead",
                    args_size, KERNEL_MAX_ARGS);
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    if (capturing(d)) { /* recorded with its own copy of the arguments */
        graph_cmd cmd = { .kind = GRAPH_CMD_KERNEL, .kernel = fn };
        if (args_size > 0) memcpy(cmd.args, args, args_size);
        return capture_record(d, &cmd, "device_enqueue");
    }
    if (copy_queue_is_open(d)) return copy_queue_refuse(d, "device_enqueue", "launches a kernel");
    counters_of(d)->launches++;
    return backend_of(d)->enqueue(d.index, fn, args, args_size);
}

status device_launch(device d, const kernel_launchers *k, const void *args, size_t args_size)
{
    if (!k) return fail(STATUS_BAD_ARGUMENT, "device_launch: k is NULL; pass the kernel's launchers");
    const char *name = k->name ? k->name : "the kernel";
    status s = device_check(d);
    if (s != STATUS_OK) return s;
    if (d.kind == DEVICE_CUDA && !k->on_cuda) {
#ifdef LABKIT_WITH_CUDA
        const char *why = "its kernel_launchers has no on_cuda",
                   *hint = "give it the launcher of its .cu file";
#else
        const char *why = "the kit was built without CUDA",
                   *hint = "install a CUDA toolkit, then configure again (rm -rf build; README, \"CUDA\"); "
                           "or run it on sim:N";
#endif
        return fail(
            STATUS_BACKEND_FAILED,
            "device_launch: %s has no launcher for %s: nvcc never compiled it for this program (%s).\n"
            "  hint: %s",
            name, device_name(d), why, hint);
    }
    kernel_fn fn = d.kind == DEVICE_CUDA ? k->on_cuda : k->on_sim;
    if (!fn)
        return fail(STATUS_BAD_ARGUMENT, "device_launch: %s has no launcher for %s (on_sim is NULL)", name,
                    device_name(d));
    return device_enqueue(d, fn, args, args_size);
}

void *tensor_data(tensor *t) { return t ? t->data : NULL; }
const void *tensor_data_const(const tensor *t) { return t ? t->data : NULL; }
