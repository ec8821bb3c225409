/* host_copy.c: a tensor's values in a new host array (host_copy.h). */
#include "host_copy.h"

#include <stdlib.h>

status host_copy(const tensor *t, float **out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "host_copy: out is NULL");
    *out = NULL;
    if (!t) return fail(STATUS_BAD_ARGUMENT, "host_copy: t is NULL");
    float *data = malloc((size_t)tensor_numel(t) * sizeof *data);
    if (!data)
        return fail(STATUS_OUT_OF_MEMORY, "host_copy: no host memory for %lld floats",
                    (long long)tensor_numel(t));
    const status s = tensor_to_host(t, data, tensor_numel(t));
    if (s != STATUS_OK) {
        free(data);
        return s;
    }
    *out = data;
    return STATUS_OK;
}
