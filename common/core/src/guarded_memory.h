/* guarded_memory.h: memory whose last byte touches a page nobody may read or
 * write (internal).
 *
 * The tensors of the CPU and of the simulated GPUs, and host_alloc's arrays,
 * come from here. An index one past the end of such a buffer, the most common
 * mistake in a loop or a kernel, then stops the program at the very line that
 * made it (the crash report names it), instead of corrupting the C library's
 * heap and failing much later, somewhere else. A real GPU's compute-sanitizer
 * finds the same mistake; a plain malloc'd array would not.
 *
 * Layout of one mapping, in pages: [note][data ...][guard]. The data ends
 * exactly at the guard (its size rounded up to 4 bytes, a float); the note
 * says how large the buffer is, for guarded_free and the crash report.
 *
 * In a build with AddressSanitizer these are plain aligned allocations: its own
 * red zones find the same mistakes, and more. */
#ifndef LABKIT_GUARDED_MEMORY_H
#define LABKIT_GUARDED_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

/* `bytes` of memory (0 is allowed) whose end touches a guard page; NULL when
 * the host has no memory left. Freed mappings of the same size are reused. */
void *guarded_alloc(size_t bytes);

/* Gives back what guarded_alloc returned (NULL does nothing). */
void guarded_free(void *data);

/* When `address` lies in the guard page of a live guarded buffer, writes the
 * buffer's size to *bytes and how far past its end the address is to
 * *past_end, and returns true. Async-signal-safe: the crash report calls it. */
bool guarded_describe(const void *address, size_t *bytes, size_t *past_end);

/* When `address` lies in a live guarded buffer or in its guard page, writes
 * where the buffer starts to *data and its size to *bytes, and returns true.
 * For the kernel sanitizer, which asks once per pointer a launch is given (it
 * looks through every buffer in use); false in a build with AddressSanitizer. */
bool guarded_find(const void *address, void **data, size_t *bytes);

#endif
