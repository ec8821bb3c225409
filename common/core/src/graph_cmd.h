/* graph_cmd.h: one piece of recorded work, as plain data (internal).
 *
 * While a device captures a graph (labkit/graph.h), the front end records what
 * it would have queued there as a list of these; when the capture ends, the
 * device's backend turns the list into what it replays: a list of its own
 * queue's items (sim), the list itself (cpu), a CUDA graph (cuda). Read by C
 * and by nvcc's C++, so it stays plain. */
#ifndef LABKIT_GRAPH_CMD_H
#define LABKIT_GRAPH_CMD_H

#include <stddef.h>

#include "labkit/kernel.h"
#include "op_call.h"

typedef enum graph_cmd_kind {
    GRAPH_CMD_OP,     /* an operation (ops.h, the fills of tensor.h)              */
    GRAPH_CMD_KERNEL, /* a kernel of one's own: kernel(args, stream)              */
    GRAPH_CMD_COPY,   /* bytes from src to dst, both on the device                */
    GRAPH_CMD_UPLOAD  /* bytes from host memory src to dst on the device, queued  */
} graph_cmd_kind;

typedef struct graph_cmd {
    graph_cmd_kind kind;
    op_call op;       /* GRAPH_CMD_OP */
    kernel_fn kernel; /* GRAPH_CMD_KERNEL, with a copy of its arguments */
    unsigned char args[KERNEL_MAX_ARGS];
    void *dst; /* GRAPH_CMD_COPY, GRAPH_CMD_UPLOAD */
    const void *src;
    size_t bytes;
} graph_cmd;

#endif
