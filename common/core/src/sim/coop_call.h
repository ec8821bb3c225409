/* coop_call.h: a kernel called with the arguments its LAUNCH kept (internal).
 *
 * A fiber cannot run the LAUNCH site's own call: it calls the kernel through
 * libffi, given the kept values and their kinds, the way cudaLaunchKernel
 * takes a kernel's arguments (an array of pointers to them). That needs each
 * argument to have its parameter's very type, which LAUNCH checked at compile
 * time (labkit/cuda_emulation_args.h), and numbers or pointers only. */
#ifndef LABKIT_SIM_COOP_CALL_H
#define LABKIT_SIM_COOP_CALL_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/cuda_emulation.h"

/* Prepares the calls of l's kernel on this OS thread; false (with why) for
 * arguments libffi cannot pass as the kernel expects. */
bool coop_call_prepare(const labkit_launch *l, char *why, size_t size);

/* kernel(args...) as LAUNCH kept them; coop_call_prepare said yes first. */
void coop_call_kernel(const labkit_launch *l);

#endif
