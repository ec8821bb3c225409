/* launch.h: handing one described operation to its device (internal).
 *
 * Shared by the operations (ops.c) and the tensor creators that fill what they
 * make (tensor.c), so that neither needs the other. */
#ifndef LABKIT_LAUNCH_H
#define LABKIT_LAUNCH_H

#include "labkit/tensor.h"
#include "op_call.h"

/* Counts one launch on t's device and hands `call` to its backend: run at once
 * on the CPU, queued on a GPU. The operands were checked by the caller. */
status launch_op(const tensor *on, const op_call *call);

#endif
