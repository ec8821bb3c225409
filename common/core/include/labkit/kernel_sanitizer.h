/* kernel_sanitizer.h: the simulated GPU's compute-sanitizer: races,
 * out-of-bounds accesses, reads of shared memory never written, barrier
 * divergence, each told in the kernel's terms.
 *
 * A real GPU has compute-sanitizer (memcheck, racecheck, initcheck,
 * synccheck). The simulated GPU runs a block's threads one after the other in a
 * fixed order, so a kernel that forgets a __syncthreads() is wrong the same way
 * every run, or right by luck, and an index one past the end may land in memory
 * nobody checks. The kernel sanitizer watches every load, store and atomic of
 * your kernel on the simulated GPU (and on the cpu device, whose launches run
 * the same emulation) and reports:
 *   - a race: two threads touch the same word of shared memory, at least one
 *     writing, with no __syncthreads() between them (nor, in one warp, a
 *     __syncwarp() or shuffle); or the same word of global memory, from two
 *     threads of the grid (atomics never race with each other);
 *   - an access out of bounds of a device buffer the launch was given (any
 *     amount: one past the end lands in the buffer's guard page) or of a
 *     __shared__ array (each has a red zone beside it);
 *   - a read of shared memory that no thread of the block wrote before;
 *   - a launch that failed (barrier divergence, a shuffle's mask): the
 *     emulation's own errors.
 * Each report names the kernel's file and line (the later access's; for a race
 * also the earlier one's), the block and thread, the buffer (the argument as
 * written at LAUNCH, or the shared array's name) and the element's index. An
 * out-of-bounds access of global memory also stops the launch, as on a GPU,
 * with the report as the kernel's error (STATUS_KERNEL_FAILED).
 *
 * It works in a program whose kernels were built for the kernel tools: the
 * files that launch kernels compiled a second time with -fsanitize=thread's
 * instrumentation (cmake/kernel_tools.cmake; `./lab check NN --kernels`). In
 * such a program it is on from the start; LABKIT_KERNEL_SANITIZER=0 turns it off.
 * Elsewhere nothing is watched, and kernel_tools_built() says so. What it
 * cannot see: accesses through memcpy/memset calls (not instrumented), a far
 * index that lands inside another buffer of the same launch, memory a pointer
 * argument reaches that is not a device buffer (a host array). */
#ifndef LABKIT_KERNEL_SANITIZER_H
#define LABKIT_KERNEL_SANITIZER_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kernel_report_kind {
    KERNEL_REPORT_OUT_OF_BOUNDS,      /* memcheck's "Invalid __global__ / __shared__ read/write" */
    KERNEL_REPORT_SHARED_RACE,        /* racecheck's hazards */
    KERNEL_REPORT_GLOBAL_RACE,        /* beyond racecheck, which watches shared memory only */
    KERNEL_REPORT_UNINITIALIZED_READ, /* initcheck, for shared memory */
    KERNEL_REPORT_LAUNCH_FAILED       /* synccheck's barrier errors, and any other failed launch */
} kernel_report_kind;

typedef struct kernel_report {
    kernel_report_kind kind;
    char kernel[64];
    char file[160];       /* the access's source file ("labs/04_matmul/naive_kernel.cuh"); "" when unknown */
    int line;             /* 0 when unknown */
    char other_file[160]; /* a race: the earlier access */
    int other_line;
    unsigned block[3], thread[3]; /* of the access (x, y, z) */
    unsigned other_thread[3];     /* a race: the earlier access's thread (its block: other_block) */
    unsigned other_block[3];
    bool write;               /* the access wrote */
    char buffer[64];          /* "c", "tile_a", "dynamic shared memory" */
    long long index;          /* in elements of the access's size, from the pointer the launch was given */
    unsigned long long count; /* accesses of the launch with this kind, line(s) and buffer */
    char text[1024];          /* the whole report, in words, with a hint */
} kernel_report;

/* Whether this program's kernels were built for the kernel tools. */
bool kernel_tools_built(void);

/* Whether the sanitizer watches the launches that start from now on. */
bool kernel_sanitizer_on(void);

/* Turns the sanitizer on or off for the launches that start from now on.
 * STATUS_BAD_ARGUMENT when this program's kernels were not built for it. */
status kernel_sanitizer_enable(bool on);

/* Reports so far (one per kind, line(s) and buffer in each launch), and the
 * launches watched. */
size_t kernel_sanitizer_count(void);
unsigned long long kernel_sanitizer_launches(void);

/* Copies report i (in the order they were found). STATUS_BAD_ARGUMENT for a
 * NULL `out` or an i past the last. */
status kernel_sanitizer_report(size_t i, kernel_report *out);

/* Forgets the reports and the count of launches. */
void kernel_sanitizer_clear(void);

#ifdef __cplusplus
}
#endif
#endif
