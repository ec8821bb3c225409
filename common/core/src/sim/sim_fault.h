/* sim_fault.h: what a crash handler can ask about a fault on a simulated GPU
 * or the CPU device (internal; labkit/fault.h is the public side): which
 * kernel, block and thread was running, and whether the fault is a GPU
 * thread's stack overflowing.
 *
 * The threads of a block with barriers run on stacks of their own, 64 KiB
 * each, with an inaccessible guard below (labkit/cuda_emulation.h). A kernel
 * that needs more (a large local array, deep recursion) faults in the guard:
 * the crash is the kernel's, not the kit's, and the report should say so. */
#ifndef LABKIT_SIM_FAULT_H
#define LABKIT_SIM_FAULT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether fault_address (a SIGSEGV's si_addr) lies in the guard of a GPU
 * thread's stack of the calling OS thread (the one that faulted); if so,
 * writes into out (at most size bytes, always terminated) which kernel,
 * launch site, block and thread overflowed, and what to do. Async-signal-safe:
 * it only reads memory and formats by hand. Each simulated GPU's worker thread
 * has an alternate signal stack (sigaltstack), and so has a host thread once
 * it ran such a block, for a handler installed with SA_ONSTACK. */
bool sim_fault_description(const void *fault_address, char *out, size_t size);

/* Writes "K, block (x, y, z), thread (x, y, z) (launched at file:line)" for the
 * kernel the calling OS thread is running, and returns its length; 0 when it
 * runs none. Async-signal-safe. */
size_t sim_fault_describe_kernel(char *out, size_t size);

#endif
