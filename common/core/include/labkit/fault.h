/* fault.h: what the library knows about a program that has just crashed.
 *
 * A crash report (labkit/crash.h) runs inside a signal handler, where almost
 * nothing may be called: no malloc, no stdio, no lock that the crashed thread
 * may hold. These functions only read and format, so the handler may call them.
 *
 * The library knows two things a debugger would not say in a student's terms:
 * that an address is just past the end of one of its buffers (a tensor's memory
 * or a host_alloc array ends at a guard page), and, on a simulated GPU, which
 * kernel, block and thread was running. */
#ifndef LABKIT_FAULT_H
#define LABKIT_FAULT_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One line about the faulting `address` into out (NUL-terminated, cut to
 * size): "a write 4 bytes past the end of a buffer of 1024 bytes (a tensor, or
 * a host_alloc array): an index one past the end?", or that a GPU thread of a
 * simulated GPU overflowed its stack. `access` is "read",
 * "write" or NULL when unknown. Returns the line's length, 0 when the library
 * knows nothing of the address. Async-signal-safe. */
size_t fault_describe_address(const void *address, const char *access, char *out, size_t size);

/* One line about the kernel that the calling thread was running on a simulated
 * GPU (or the CPU device), with its block and thread; 0 when none was running.
 * Async-signal-safe. */
size_t fault_describe_kernel(char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif
