/* cpu_ops.h: the CPU's plain-C operations (internal). */
#ifndef LABKIT_CPU_OPS_H
#define LABKIT_CPU_OPS_H

#include "../op_call.h"

/* Runs `op` to completion on the calling thread. */
void cpu_run_op(const op_call *op);

#endif
