/* sim_ops.h: the simulated GPU's operations (internal). */
#ifndef LABKIT_SIM_OPS_H
#define LABKIT_SIM_OPS_H

#include <stddef.h>

#include "../op_call.h"

/* The scratch space (in doubles) that sim_run_op needs for reductions. */
size_t sim_scratch_doubles(void);

/* Runs `op` through the GPU kernels, on the calling (worker) thread. */
void sim_run_op(double *scratch, const op_call *op);

#endif
