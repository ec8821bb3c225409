/* collective.c: the all-reduce (labkit/collective.h), checked and counted. */
#include "labkit/collective.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "capture.h"
#include "queues.h"
#include "tensor_internal.h"

static status check_tensors(tensor *const *tensors, int n)
{
    const char *op = "all_reduce_sum";
    char a[128], b[128];
    if (!tensors) return fail(STATUS_BAD_ARGUMENT, "%s: tensors is NULL; pass an array of n tensors", op);
    if (n < 1 || n > LABKIT_MAX_DEVICES)
        return fail(STATUS_BAD_ARGUMENT, "%s: n is %d; give 1 to %d tensors, one per device", op, n,
                    LABKIT_MAX_DEVICES);
    for (int i = 0; i < n; ++i) {
        const tensor *t = tensors[i];
        if (!t) return fail(STATUS_BAD_ARGUMENT, "%s: tensors[%d] is NULL", op, i);
        if (t->type != DTYPE_F32)
            return fail(STATUS_BAD_ARGUMENT, "%s: tensors[%d] is %s; the sum is of float32 tensors", op, i,
                        describe(t, a, sizeof a));
        if (capturing(t->dev))
            return capture_refuse(t->dev, op, "waits for every device and copies through the host",
                                  "reduce after graph_launch, outside the capture");
        if (copy_queue_is_open(t->dev))
            return copy_queue_refuse(t->dev, op, "waits for every device and copies through the host");
        if (i == 0) continue;
        const tensor *first = tensors[0];
        if (t->shp.ndim != first->shp.ndim || memcmp(t->shp.dims, first->shp.dims, sizeof t->shp.dims) != 0)
            return fail(STATUS_BAD_ARGUMENT,
                        "%s: tensors[0] is %s but tensors[%d] is %s; every replica has one shape", op,
                        describe(first, a, sizeof a), i, describe(t, b, sizeof b));
        for (int j = 0; j < i; ++j)
            if (device_equal(tensors[j]->dev, t->dev))
                return fail(STATUS_BAD_ARGUMENT,
                            "%s: tensors[%d] and tensors[%d] are both on %s; give one tensor per device", op,
                            j, i, device_name(t->dev));
    }
    return STATUS_OK;
}

/* One backend for all, and it has a collective of its own. */
static const backend *common_collective(tensor *const *tensors, int n)
{
    const backend *b = backend_of(tensors[0]->dev);
    for (int i = 1; i < n; ++i)
        if (backend_of(tensors[i]->dev) != b) return NULL;
    return b && b->all_reduce_sum ? b : NULL;
}

bool all_reduce_uses_nccl(tensor *const *tensors, int n)
{
    return n > 1 && check_tensors(tensors, n) == STATUS_OK && common_collective(tensors, n);
}

/* Every tensor to the host, their sum in device order, the sum back to every
 * device: blocking copies, counted like any. */
static status reduce_through_host(tensor *const *tensors, int n)
{
    const int64_t numel = tensors[0]->numel;
    float *sum = malloc((size_t)numel * sizeof *sum), *part = malloc((size_t)numel * sizeof *part);
    status s = sum && part
                   ? STATUS_OK
                   : fail(STATUS_OUT_OF_MEMORY,
                          "all_reduce_sum: no host memory for two buffers of %" PRId64 " floats", numel);
    for (int i = 0; i < n && s == STATUS_OK; ++i) {
        s = tensor_to_host(tensors[i], i == 0 ? sum : part, numel);
        for (int64_t k = 0; i > 0 && s == STATUS_OK && k < numel; ++k) sum[k] += part[k];
    }
    for (int i = 0; i < n && s == STATUS_OK; ++i) s = tensor_copy_from_host(tensors[i], sum, numel);
    free(sum);
    free(part);
    return s;
}

status all_reduce_sum(tensor *const *tensors, int n)
{
    status s = check_tensors(tensors, n);
    if (s != STATUS_OK || n == 1) return s;
    const backend *b = common_collective(tensors, n);
    if (!b) return reduce_through_host(tensors, n);
    int indices[LABKIT_MAX_DEVICES];
    float *data[LABKIT_MAX_DEVICES];
    for (int i = 0; i < n; ++i) {
        indices[i] = tensors[i]->dev.index;
        data[i] = tensors[i]->data;
        counters_of(tensors[i]->dev)->launches++;
    }
    return b->all_reduce_sum(indices, data, n, (size_t)tensors[0]->numel);
}
