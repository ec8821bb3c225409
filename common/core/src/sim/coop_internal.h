/* coop_internal.h: the state of cooperative blocks on one OS thread (internal).
 *
 * The runtime behind LAUNCH's barriers (labkit/cuda_emulation.h), in files of
 * one concept each, from the bottom up:
 *   coop_state.c     the thread-local state below, and the GPU indices
 *   coop_describe.c  where the threads of a block are, in words
 *   coop_guard.c     a launch's failure: the message, and the way back to the
 *                    launcher's caller (setjmp/longjmp around the launcher)
 *   coop_call.c      a kernel called with LAUNCH's kept arguments (libffi)
 *   coop_sched.c     fibers, the ready queue, a block turned cooperative
 *   coop_barrier.c   __syncthreads()
 *   coop_warp.c      __syncwarp() and the shuffles
 *   coop_launch.c    a launch checked, begun and ended
 * sim_fault.c answers the crash handler. */
#ifndef LABKIT_SIM_COOP_INTERNAL_H
#define LABKIT_SIM_COOP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "labkit/cuda_emulation.h"
#include "fiber.h"

#define COOP_MAX_THREADS 1024 /* per block, as CUDA */
#define COOP_WARP_SIZE 32
#define COOP_MAX_WARPS (COOP_MAX_THREADS / COOP_WARP_SIZE)
#define COOP_SHARED_LIMIT ((size_t)48 << 10) /* dynamic shared memory per block, as CUDA by default */
#define COOP_MESSAGE_CAPACITY 1024

/* The crash handler reads some of the state: no lazy TLS allocation there. */
#define COOP_SIGNAL_SAFE_TLS __attribute__((tls_model("initial-exec")))

typedef enum coop_state {
    COOP_READY,            /* in the ready queue (not yet started, or released) */
    COOP_RUNNING,          /* the one running */
    COOP_AT_BLOCK_BARRIER, /* waits at __syncthreads() */
    COOP_AT_WARP_BARRIER,  /* waits at __syncwarp() or a shuffle */
    COOP_RETURNED          /* its kernel returned */
} coop_state;

/* A barrier's place in the kernel's source. */
typedef struct coop_site {
    const char *file;
    int line;
    const char *what; /* "__syncthreads()", "__shfl_down_sync()", ... */
} coop_site;

typedef struct coop_thread {
    fiber fib;
    dim3 index;      /* its threadIdx */
    unsigned linear; /* x + y * blockDim.x + z * blockDim.x * blockDim.y */
    coop_state state;
    coop_site site; /* where it waits */
    /* at a warp barrier: its mask, and for a shuffle what it gives and asks */
    unsigned mask;
    bool shuffles;
    enum labkit_shuffle_mode mode;
    int lane_arg, width;
    uint32_t given, received;
} coop_thread;

/* The threads of a warp that wait at warp barriers with one mask. */
typedef struct coop_warp_group {
    unsigned mask, arrived;
} coop_warp_group;

typedef struct coop_warp {
    unsigned groups; /* in use: group[0 .. groups-1] (disjoint masks) */
    coop_warp_group group[COOP_WARP_SIZE];
} coop_warp;

/* The cooperative block that an OS thread runs (one at a time). */
typedef struct coop_runtime {
    unsigned threads; /* of the block */
    unsigned current; /* the running thread */
    unsigned origin;  /* the thread that runs on the OS thread's own stack */
    unsigned returned;
    bool failing; /* a fiber failed: the origin raises the error when resumed */
    /* the ready queue: thread indices, a ring of `threads` places */
    unsigned ready_head, ready_count;
    /* the block barrier: arrivals so far, and whether all came from one site */
    unsigned at_barrier;
    coop_site barrier_site;
    bool barrier_sites_differ;
    unsigned ready[COOP_MAX_THREADS];
    coop_thread thread[COOP_MAX_THREADS];
    coop_warp warp[COOP_MAX_WARPS];
} coop_runtime;

/* ---- coop_state.c ---------------------------------------------------------- */

/* The launch this OS thread runs (NULL outside LAUNCH). */
extern _Thread_local const labkit_launch *coop_launch_running COOP_SIGNAL_SAFE_TLS;
/* Its cooperative state, made when its first block turns cooperative. */
extern _Thread_local coop_runtime *coop_rt COOP_SIGNAL_SAFE_TLS;

/* This OS thread's runtime, made on first use; NULL when there is no memory. */
coop_runtime *coop_runtime_get(void);

static inline unsigned coop_block_threads(dim3 block) { return block.x * block.y * block.z; }

static inline unsigned coop_linear_thread(dim3 t, dim3 block)
{
    return t.x + block.x * (t.y + block.y * t.z);
}

static inline dim3 coop_thread_index(unsigned linear, dim3 block)
{
    const dim3 t = { linear % block.x, linear / block.x % block.y, linear / (block.x * block.y) };
    return t;
}

#endif
