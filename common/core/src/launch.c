/* launch.c: one described operation to its device, counted; or, while the
 * device captures a graph, recorded (counted when the graph is launched). */
#include "launch.h"

#include "backend.h"
#include "capture.h"
#include "queues.h"
#include "tensor_internal.h"

status launch_op(const tensor *on, const op_call *call)
{
    if (capturing(on->dev)) {
        const graph_cmd cmd = { .kind = GRAPH_CMD_OP, .op = *call };
        return capture_record(on->dev, &cmd, "an operation");
    }
    if (copy_queue_is_open(on->dev))
        return copy_queue_refuse(on->dev, "an operation", "queues work on the compute queue");
    counters_of(on->dev)->launches++;
    return backend_of(on->dev)->run(on->dev.index, call);
}
