/* ktools_internal.h: the kernel tools, the simulated GPU's sanitizer and
 * memory profiler (internal; labkit/kernel_sanitizer.h, labkit/kernel_profile.h).
 *
 * How they see a kernel. The translation units that hold kernels (a lab's
 * launcher .c files, which include its .cuh) are compiled a second time with
 * GCC's -fsanitize=thread instrumentation but linked without its runtime: every
 * load and store of the kernel then calls __tsan_readN / __tsan_writeN (and
 * every atomic __tsan_atomicN_*) with its address, and those callbacks are the
 * kit's own (ktools_entry.c), as the Linux kernel's race detector provides its
 * own. __builtin_return_address(0) in a callback is the instruction that made
 * the access; addr2line turns it into the kernel's file and line.
 *
 * Every callback first asks whether a launch is being watched on this OS
 * thread (the coop runtime's hooks say when one begins and ends), then what
 * the address is (ktools_classify):
 *   - a device buffer the launch was given as a pointer argument (a guarded
 *     allocation, whose extent guarded_find knows): global memory;
 *   - a __shared__ array of an instrumented file (a static thread-local variable
 *     found by name in the program's symbol table) or the launch's dynamic
 *     shared memory: shared memory;
 *   - the pages just around such a buffer (the note page before it, its guard
 *     page after), or a red zone beside a shared array: out of bounds;
 *   - anything else (the thread's stack, the indices, a constant table): not
 *     watched.
 * Then the sanitizer (sanitizer.c) and the profiler (profile.c) each take it.
 * When the sanitizer watches alone, sanitizer_quick (below) takes the common
 * access first, a load or store of one word that has nothing to report, in
 * about 100 instructions where the full way took 220 (bench/README.md).
 * Threads of a block run one after the other here, so the order of accesses is
 * known exactly: the sanitizer needs no vector clocks, only the block's
 * barrier count (its epoch) and each warp's. */
#ifndef LABKIT_SIM_KTOOLS_INTERNAL_H
#define LABKIT_SIM_KTOOLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "labkit/cuda_emulation.h"

#define KT_MAX_BUFFERS 16 /* pointer arguments of one launch (LAUNCH takes 16 arguments) */

/* KT_ATOMIC: a read-modify-write or an atomic store; KT_ATOMIC_LOAD: an
 * atomic load (the first half of the emulation's compare-and-swap loops). */
typedef enum kt_access_kind { KT_READ, KT_WRITE, KT_ATOMIC, KT_ATOMIC_LOAD } kt_access_kind;

typedef enum kt_space {
    KT_NOT_WATCHED,
    KT_GLOBAL,     /* in buffer `region` */
    KT_SHARED,     /* in shared array `region` (KT_DYNAMIC_SHARED: the launch's dynamic memory) */
    KT_GLOBAL_OOB, /* near buffer `region`, outside it */
    KT_SHARED_OOB  /* in a red zone beside shared array `region` */
} kt_space;

#define KT_DYNAMIC_SHARED UINT32_MAX
/* A static __shared__ array, not yet looked up: the hot path does not need to
 * know which (ktools_shared_region says, for a report). */
#define KT_STATIC_SHARED (UINT32_MAX - 1)

typedef struct kt_place {
    kt_space space;
    uint32_t region;
} kt_place;

/* What the sanitizer remembers of one access: who made it, when, where. 16
 * bytes: the shadow is 48 bytes per word of memory, and a kernel's accesses
 * walk it as they walk the memory, so its size is the sanitizer's cost. */
typedef struct kt_stamp {
    uint32_t block;  /* + 1 (0: no access): global memory, the block's linear index in the grid;
                        shared memory, its serial number on this OS thread (over every launch) */
    uint16_t thread; /* linear index in the block */
    uint16_t wepoch; /* warp barriers the thread's warp had passed, modulo 2^16 */
    uint32_t epoch;  /* __syncthreads() the block had passed */
    int32_t site;    /* kt_stamp_site: the instruction; odd for a write made by an atomic */
} kt_stamp;

/* Instructions in stamps count from here: a function of the program, whose
 * code is within 1 GiB of every kernel's (statically linked). */
#define KT_CODE_BASE ((uintptr_t)&kt_code_anchor)
void kt_code_anchor(void);
/* The instruction's offset from KT_CODE_BASE, times 2 (the low bit says
 * "atomic": a plain int, where bit fields cost every stamp a mask and a merge). */
static inline int32_t kt_stamp_site(uintptr_t pc)
{
    const intptr_t d = (intptr_t)(pc - KT_CODE_BASE);
    return d > -(1 << 30) && d < (1 << 30) ? (int32_t)(2 * d) : 0; /* 0: no line to name */
}
static inline uintptr_t kt_stamp_pc(const kt_stamp *s)
{
    const int32_t offset = (s->site - (s->site & 1)) / 2;
    return offset ? KT_CODE_BASE + (intptr_t)offset : 0;
}
static inline bool kt_stamp_atomic(const kt_stamp *s) { return s->site & 1; }

/* Per 4-byte word: the last write, and the last two readers (two different
 * threads, so that a write can be checked against a reader other than itself). */
typedef struct kt_word {
    kt_stamp write, read, read2;
} kt_word;

/* A device buffer that the launch was given. */
typedef struct kt_buffer {
    uintptr_t start, end;           /* its bytes */
    uintptr_t near_start, near_end; /* where an access is out of bounds of it, not elsewhere */
    uintptr_t near_span;            /* near_end - near_start */
    uintptr_t origin;               /* the pointer the launch was given: index 0 */
    const char *name;               /* as written at the LAUNCH site */
    unsigned argument;              /* its position in the kernel's parameters, from 1 */
    size_t words;                   /* 4-byte words its bytes span: the shadow words in use */
    kt_word *shadow;                /* the sanitizer's, one per 4-byte word; NULL when off */
    size_t shadow_words;            /* how many it has room for */
} kt_buffer;

/* A buffer as sanitizer_quick reads it: 24 bytes, three to a cache line. */
typedef struct kt_quick_buffer {
    uintptr_t start, bytes;
    kt_word *shadow;
} kt_quick_buffer;

/* A __shared__ array of an instrumented file, from the symbol table. */
typedef struct kt_shared_array {
    uintptr_t offset, size; /* in the program's thread-local block */
    char name[48];          /* as declared: "tile_a" */
} kt_shared_array;

/* The state of one OS thread (a simulated GPU's worker, or the host thread
 * running a launch on the cpu device). */
typedef struct kt_thread {
    bool watching; /* a launch runs and the tools are on */
    bool sanitize, profile;
    bool quick; /* the sanitizer alone: sanitizer_quick takes the common accesses */
    const labkit_launch *launch;
    unsigned buffers;
    kt_buffer buffer[KT_MAX_BUFFERS];
    kt_quick_buffer quick_buffer[KT_MAX_BUFFERS]; /* the same, with their shadows (sanitize only) */
    uintptr_t tls_base;               /* the thread-local block: shared arrays' offsets count from here */
    uintptr_t shared_lo, shared_hi;   /* the arrays and red zones of every instrumented file */
    const uint8_t *shared_redzone;    /* per byte from shared_lo: 1 outside every array */
    uintptr_t dynamic_lo, dynamic_hi; /* the launch's dynamic shared memory */
    /* the sanitizer's shadows of them (sanitizer.c), kept for the thread's life */
    kt_word *shared_shadow, *dynamic_shadow;
    size_t shared_words, dynamic_words;
    /* where execution is, as the last access found it (ktools_follow) */
    dim3 block;
    dim3 thread_seen; /* threadIdx then; x = UINT32_MAX: stamp again (a barrier passed) */
    bool block_started;
    unsigned thread_linear; /* the GPU thread's index in its block */
    /* its stamps (pc 0) in global and in shared memory, made once per thread
     * and epoch rather than at every access */
    kt_stamp stamp_global, stamp_shared;
    bool cooperative;
    uint32_t block_serial; /* of this OS thread, over every launch: numbers blocks uniquely */
    uint32_t block_linear; /* in the grid */
    uint32_t epoch;
    uint32_t warp_epoch[32];
    uintptr_t kernel_start, kernel_end; /* the kernel's code: the profiler's branches */
} kt_thread;

extern _Thread_local kt_thread kt_self;

/* ---- ktools.c --------------------------------------------------------------- */

/* Whether the program has instrumented kernels (their constructors called
 * __tsan_init); in ktools_symbols.c, as ktools_shared_region is. */
bool ktools_instrumented(void);
/* Records that it has; false when that was known already (ktools_symbols.c). */
bool ktools_mark_instrumented(void);
/* Where an address lies, for the running launch; a static shared array's
 * region is KT_STATIC_SHARED (the hot path's answer; ktools_shared_region
 * says which). Inline: every watched access asks. */
static inline kt_place ktools_classify(const kt_thread *t, uintptr_t address)
{
    const uintptr_t in_shared = address - t->shared_lo;
    if (in_shared < t->shared_hi - t->shared_lo)
        return t->shared_redzone[in_shared] ? (kt_place){ KT_SHARED_OOB, KT_STATIC_SHARED }
                                            : (kt_place){ KT_SHARED, KT_STATIC_SHARED };
    if (address - t->dynamic_lo < t->dynamic_hi - t->dynamic_lo)
        return (kt_place){ KT_SHARED, KT_DYNAMIC_SHARED };
    /* a buffer's near pages hold its bytes, and no other buffer's */
    for (unsigned i = 0; i < t->buffers; ++i) {
        const kt_buffer *b = &t->buffer[i];
        if (address - b->near_start < b->near_span)
            return (kt_place){ address - b->start < b->end - b->start ? KT_GLOBAL : KT_GLOBAL_OOB, i };
    }
    /* just past the dynamic shared memory: a buffer of the heap, out of bounds */
    if (t->dynamic_hi > t->dynamic_lo && address - t->dynamic_hi < 256)
        return (kt_place){ KT_SHARED_OOB, KT_DYNAMIC_SHARED };
    return (kt_place){ KT_NOT_WATCHED, 0 };
}
/* The place with a static shared array's region looked up: the array that
 * holds the address, or beside whose red zone it lies. */
kt_place ktools_shared_region(const kt_thread *t, kt_place place, uintptr_t address);
/* The running GPU thread's linear index in its block. */
static inline unsigned ktools_thread(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
/* Called when an access shows that a new block runs. */
void ktools_block_changed(void);
/* Called when an access shows that another GPU thread runs, or that a
 * barrier passed since the last one: the thread's index and stamps again. */
void ktools_moved(kt_thread *t);
/* Whether another GPU thread runs, or a barrier passed, since the last
 * access (ktools_moved says where execution is then): the indices compared
 * 8 and 4 bytes at a time, as every access asks. */
static inline bool ktools_moved_since(const kt_thread *t)
{
    uint64_t thread_xy, block_xy, seen_thread_xy, seen_block_xy;
    memcpy(&thread_xy, &threadIdx, 8), memcpy(&block_xy, &blockIdx, 8);
    memcpy(&seen_thread_xy, &t->thread_seen, 8), memcpy(&seen_block_xy, &t->block, 8);
    return ((thread_xy ^ seen_thread_xy) | (block_xy ^ seen_block_xy) |
            ((threadIdx.z ^ t->thread_seen.z) | (blockIdx.z ^ t->block.z))) != 0;
}
static inline void ktools_follow(kt_thread *t)
{
    if (__builtin_expect(ktools_moved_since(t), 0)) ktools_moved(t);
}

/* ---- ktools_symbols.c --------------------------------------------------------- */

/* The shared arrays of the instrumented files, sorted by offset; `count` of
 * them. Read once from the program's symbol table. */
const kt_shared_array *ktools_shared_arrays(size_t *count);
/* The offset of `threadIdx` in the thread-local block: its address minus this
 * is where the block starts on the calling thread. False without symbols. */
bool ktools_tls_anchor(uintptr_t *offset);
/* The function whose code holds `address` (a kernel's entry): its first and
 * past-the-last byte; false when the symbol table does not say. */
bool ktools_function_range(uintptr_t address, uintptr_t *start, uintptr_t *end);
/* The source file of an instruction ("labs/04_matmul/naive_kernel.cuh": a
 * path shortened to start at labs/, solutions/, common/ or bench/) and its
 * line; "an unknown place ..." and 0 when addr2line cannot say. */
void ktools_where(uintptr_t pc, char *out, size_t size, int *line);

/* ---- sanitizer.c ---------------------------------------------------------------- */

void sanitizer_launch_begin(kt_thread *t);
void sanitizer_launch_end(kt_thread *t);
void sanitizer_launch_failed(const labkit_launch *l, const char *message);
void sanitizer_access(kt_thread *t, kt_place place, uintptr_t address, unsigned size, kt_access_kind kind,
                      uintptr_t pc);

/* Whether an earlier access (stamp s) and the running thread's (now) may
 * happen in either order on a GPU. */
static inline bool kt_concurrent(const kt_stamp *s, const kt_stamp *now, bool shared)
{
    if (!s->block) return false;
    if (s->block != now->block) return !shared; /* shared: another block's copy of the memory */
    if (s->thread == now->thread || s->epoch != now->epoch) return false;
    return s->thread / 32 != now->thread / 32 || s->wepoch == now->wepoch;
}

static inline bool kt_same_thread(const kt_stamp *s, const kt_stamp *now)
{
    return s->block == now->block && s->thread == now->thread;
}

/* The sanitizer's common case, inline in the callback: a load or store within
 * one word of a buffer or static shared array that finds nothing to report.
 * It tests what check_word (sanitizer.c) tests and updates the shadow as it
 * does; false, with the shadow untouched, for anything else (a report, an
 * atomic, out of bounds, memory that is not watched), which the full path
 * (ktools_classify, sanitizer_access) then takes. */
static inline bool sanitizer_quick(kt_thread *t, uintptr_t address, unsigned size, kt_access_kind kind,
                                   uintptr_t pc)
{
    if (kind >= KT_ATOMIC) return false;
    kt_word *w;
    kt_stamp now;
    bool shared;
    const uintptr_t in_shared = address - t->shared_lo;
    if (in_shared < t->shared_hi - t->shared_lo) {
        if (t->shared_redzone[in_shared] || !t->shared_shadow || (in_shared & 3) + size > 4) return false;
        w = &t->shared_shadow[in_shared / 4];
        now = t->stamp_shared;
        shared = true;
    } else {
        const kt_quick_buffer *b = t->quick_buffer, *end = t->quick_buffer + t->buffers;
        while (b < end && address - b->start >= b->bytes) ++b;
        if (b == end || !b->shadow) return false;
        const uintptr_t at = address - b->start;
        if ((at & 3) + size > 4) return false;
        w = &b->shadow[at / 4];
        now = t->stamp_global;
        shared = false;
    }
    now.site = kt_stamp_site(pc);
    if (kind == KT_READ) {
        if ((shared && w->write.block != now.block) || kt_concurrent(&w->write, &now, shared)) return false;
        if (!kt_same_thread(&w->read, &now)) w->read2 = w->read;
        w->read = now;
        return true;
    }
    if (kt_concurrent(&w->write, &now, shared) || kt_concurrent(&w->read, &now, shared) ||
        kt_concurrent(&w->read2, &now, shared))
        return false;
    w->write = now;
    return true;
}

/* ---- profile.c ------------------------------------------------------------------ */

void profile_launch_begin(kt_thread *t);
void profile_launch_end(kt_thread *t);
void profile_block_end(kt_thread *t);
void profile_warp_done(kt_thread *t);
void profile_access(kt_thread *t, kt_place place, uintptr_t address, unsigned size, kt_access_kind kind,
                    uintptr_t pc);
void profile_branch(kt_thread *t, uintptr_t pc);
void profile_barrier(kt_thread *t);
bool profile_enabled(void);

#endif
