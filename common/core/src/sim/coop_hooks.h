/* coop_hooks.h: what a tool watching kernels on the simulated GPU can learn
 * (internal; for the kernel sanitizer and memory profiler to come).
 *
 * A tool installs its hooks once, before any launch; each is called on the OS
 * thread that runs the launch (a simulated GPU's worker, or the host for the
 * cpu device), with the GPU thread concerned running or about to run. A NULL
 * hook is not called. Between the hooks, the indices (blockIdx, threadIdx),
 * coop_current_thread and coop_dynamic_shared_range say where execution is.
 * Nothing is called per thread of a block without barriers: such a block runs
 * its threads in order, 0 to n-1, each to its end. */
#ifndef LABKIT_SIM_COOP_HOOKS_H
#define LABKIT_SIM_COOP_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/cuda_emulation.h"

typedef enum coop_barrier_kind { COOP_BARRIER_BLOCK, COOP_BARRIER_WARP } coop_barrier_kind;

typedef struct coop_barrier_event {
    coop_barrier_kind kind;
    unsigned thread; /* arrive: the arriving thread (linear index in its block) */
    unsigned warp;   /* a warp barrier: the warp, and the lanes of its mask */
    unsigned mask;
    const char *file; /* the barrier's site (arrive) */
    int line;
} coop_barrier_event;

typedef struct coop_hooks {
    void *user; /* handed back to every hook */
    void (*launch_begin)(void *user, const labkit_launch *launch);
    void (*launch_end)(void *user, const labkit_launch *launch);
    /* a block's thread `first` met the block's first barrier: threads below
     * it have returned, the others will run as fibers */
    void (*block_cooperative)(void *user, dim3 block, unsigned first);
    void (*barrier_arrive)(void *user, const coop_barrier_event *event);
    /* every thread of the barrier arrived; they go on, lowest index first */
    void (*barrier_release)(void *user, const coop_barrier_event *event);
    /* the launch failed with `message` (before launch_end) */
    void (*launch_failed)(void *user, const labkit_launch *launch, const char *message);
} coop_hooks;

/* Installs `hooks` (copied) for every launch from now on; NULL removes them. */
void coop_set_hooks(const coop_hooks *hooks);

/* The hooks installed, or NULL. */
const coop_hooks *coop_installed_hooks(void);

/* The running GPU thread's linear index in its block. */
unsigned coop_current_thread(void);

/* The running launch's dynamic shared memory; false outside a launch. */
bool coop_dynamic_shared_range(void **base, size_t *bytes);

#endif
