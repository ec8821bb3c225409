/* launch.c: one described operation to its device, counted. */
#include "launch.h"

#include "backend.h"
#include "tensor_internal.h"

status launch_op(const tensor *on, const op_call *call)
{
    counters_of(on->dev)->launches++;
    return backend_of(on->dev)->run(on->dev.index, call);
}
