/* coop_describe.h: a launch, a block and where its threads are, in words
 * (internal; for the messages of a failed launch). */
#ifndef LABKIT_SIM_COOP_DESCRIBE_H
#define LABKIT_SIM_COOP_DESCRIBE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "coop_internal.h"

/* Whether two barriers are the same place in the source. */
bool coop_same_site(const coop_site *a, const coop_site *b);

/* "tiled_kernel (launched at labs/09_memory/tiled.c:42)" */
void coop_launch_text(char *out, size_t size, const labkit_launch *l);

/* "block (3, 1, 0)" */
void coop_block_text(char *out, size_t size, dim3 block);

/* Where each thread of the cooperative block is, grouped into runs of threads
 * in the same place: "threads 0-15 at __syncthreads() (lab.cuh:31), threads
 * 16-255 returned". Returns the length it wanted (as snprintf). */
size_t coop_threads_text(char *out, size_t size, const coop_runtime *rt, dim3 block);

#endif
