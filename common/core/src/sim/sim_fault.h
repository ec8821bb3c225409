/* sim_fault.h: which kernel a thread was running, for a crash report
 * (internal; labkit/fault.h). */
#ifndef LABKIT_SIM_FAULT_H
#define LABKIT_SIM_FAULT_H

#include <stddef.h>

/* Writes "kernel K, block (x,y,z), thread (x,y,z), launched at file:line" for
 * the kernel the calling OS thread is running, and returns its length; 0 when
 * it runs none. Async-signal-safe. */
size_t sim_fault_describe_kernel(char *out, size_t size);

#endif
