/* cpu_ops.h: the CPU's plain-C operations (internal). */
#ifndef LABKIT_CPU_OPS_H
#define LABKIT_CPU_OPS_H

#include "../op_call.h"
#include "labkit/status.h"

/* Runs `op` to completion on the calling thread. Fails only when a matrix
 * product of low-precision inputs finds no host memory to widen them into. */
status cpu_run_op(const op_call *op);

#endif
