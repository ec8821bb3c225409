/* kernel_profile.h: the simulated GPU's Nsight Compute: what each kernel
 * launch asked of memory, counted as a GPU counts it.
 *
 * A GPU runs the 32 threads of a warp together: one load instruction of a warp
 * is one request to memory, and the request costs as many 32-byte sectors as
 * the warp's addresses touch: 4 when 32 threads read 32 consecutive floats
 * (coalesced), 32 when they read floats 32 apart (a stride of 32). Shared
 * memory has 32 banks of 4 bytes: threads of a warp that touch different words
 * of one bank are served one after the other (a bank conflict). The simulated
 * GPU runs a warp's threads one after the other, so the profiler rebuilds each
 * warp-wide instruction: the k-th execution of one instruction (one load or
 * store of the kernel's code) by each thread of a warp is one instruction of
 * the warp, executed by the threads that got there.
 *
 * The counts and the Nsight Compute metrics they stand for (ncu --metrics ...):
 *   global_load_requests    l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
 *   global_load_sectors     l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
 *   global_store_requests   l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
 *   global_store_sectors    l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
 *   global_atomic_requests  l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum (and _red)
 *   shared_load_requests    smsp__sass_inst_executed_op_shared_ld.sum
 *   shared_store_requests   smsp__sass_inst_executed_op_shared_st.sum
 *   shared_load_wavefronts  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
 *   shared_load_bank_conflicts  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
 *   (and the same for stores: _op_st)
 *   barriers                __syncthreads() completed by whole blocks (a block's
 *                           barrier counts once; ncu counts the barrier
 *                           instruction once per warp: W times for W warps)
 *   divergent_branches      smsp__sass_branch_targets_threads_divergent.sum: the
 *                           times the threads of a warp that ran a basic block
 *                           went on to different blocks (an if that splits a
 *                           warp, a loop whose threads stop at different turns)
 *   atomics                 atomic operations by threads (one atomicAdd per thread)
 * Definitions: a request's sectors are the distinct 32-byte-aligned pieces its
 * threads' bytes lie in; a shared request's wavefronts are the most distinct
 * 4-byte words any one bank serves (at least the request's bytes / 128), and
 * its bank conflicts are its wavefronts beyond that least number.
 *
 * What differs from a real GPU, and why: no caches, so sectors are what the
 * instructions ask for, which ncu's l1tex counts are too (its L2 and DRAM
 * counts are smaller when data is reused); memcpy and memset calls inside a
 * kernel are not seen; a compiler that keeps a value in a register where nvcc
 * reloads it (or the reverse) changes the counts of that instruction; the
 * emulation's atomicAdd on a float is a compare-and-swap loop, counted as one
 * atomic.
 *
 * It works in a program whose kernels were built for the kernel tools
 * (kernel_tools_built(), labkit/kernel_sanitizer.h; cmake/kernel_tools.cmake),
 * when recording: kernel_profile_start(), or LABKIT_KERNEL_PROFILE=1 in the
 * environment (`./lab profile NN` sets it and prints kernel_profile_print's
 * table at the end). Recording is kept out of timed runs by the programs that
 * use it: it makes a kernel several times slower. */
#ifndef LABKIT_KERNEL_PROFILE_H
#define LABKIT_KERNEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kernel_profile {
    char kernel[64]; /* "naive_matmul_kernel" */
    char file[160];  /* the LAUNCH site */
    int line;
    unsigned grid[3], block[3];
    unsigned long long threads, warps; /* launched */
    unsigned long long global_load_requests, global_load_sectors;
    unsigned long long global_store_requests, global_store_sectors;
    unsigned long long global_atomic_requests;
    unsigned long long shared_load_requests, shared_store_requests;
    unsigned long long shared_load_wavefronts, shared_store_wavefronts;
    unsigned long long shared_load_bank_conflicts, shared_store_bank_conflicts;
    unsigned long long barriers;
    unsigned long long divergent_branches;
    unsigned long long atomics;
} kernel_profile;

/* Whether launches are being recorded. */
bool kernel_profile_recording(void);

/* Starts recording every launch from now on, forgetting those recorded so far.
 * STATUS_BAD_ARGUMENT when this program's kernels were not built for the
 * kernel tools (nothing could be counted). */
status kernel_profile_start(void);

/* Stops recording; what was recorded stays. */
void kernel_profile_stop(void);

/* Launches recorded, in the order they ended. */
size_t kernel_profile_count(void);

/* Copies launch i. STATUS_BAD_ARGUMENT for a NULL `out` or an i past the last. */
status kernel_profile_get(size_t i, kernel_profile *out);

/* The last recorded launch of `kernel` (its name as in LAUNCH). STATUS_BAD_ARGUMENT
 * for a NULL argument, or when no launch of it was recorded (the message says
 * which kernels were). */
status kernel_profile_last(const char *kernel, kernel_profile *out);

/* Sectors per request of global loads (0 without a load): 4 coalesced floats, 32 at stride 32. */
double kernel_profile_sectors_per_load(const kernel_profile *p);

/* A table of the launches recorded, one line per kernel and launch shape,
 * summed over launches; nothing when none. STATUS_BAD_ARGUMENT for a NULL file. */
status kernel_profile_print(FILE *to);

#ifdef __cplusplus
}
#endif
#endif
