/* ktools.c: the kernel tools' side of the instrumentation: the callbacks that
 * GCC's -fsanitize=thread puts into an instrumented kernel (every one it can
 * call: tools/kernel_tools_symbols.sh checks them against `nm -u` of an
 * instrumented file), the launch and block the OS thread runs, and where an
 * address lies (ktools_internal.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/kernel_profile.h"
#include "labkit/kernel_sanitizer.h"

#include "../guarded_memory.h"
#include "coop_hooks.h"
#include "coop_internal.h"
#include "ktools_internal.h"

_Thread_local kt_thread kt_self COOP_SIGNAL_SAFE_TLS;

/* ---- the launch ------------------------------------------------------------------ */

/* The thread-local block's start on this OS thread, and the span of the
 * shared arrays in it (their red zones included). */
static void find_shared(kt_thread *t)
{
    if (t->tls_base) return;
    uintptr_t anchor;
    size_t n;
    const kt_shared_array *a = ktools_shared_arrays(&n);
    if (!ktools_tls_anchor(&anchor) || n == 0) return;
    const uintptr_t base = (uintptr_t)&threadIdx - anchor, lo = a[0].offset,
                    hi = a[n - 1].offset + a[n - 1].size;
    const uintptr_t shared_lo =
                        base + (lo > LABKIT_SHARED_REDZONE_BYTES ? lo - LABKIT_SHARED_REDZONE_BYTES : 0),
                    shared_hi = base + hi + LABKIT_SHARED_REDZONE_BYTES;
    /* which bytes of the span lie outside every array: one load per access
     * instead of a search (the span is the shared arrays of the program, a
     * few KiB; kept for the thread's life, as the TLS block is) */
    uint8_t *redzone = malloc(shared_hi - shared_lo);
    if (!redzone) return; /* shared memory goes unwatched */
    memset(redzone, 1, shared_hi - shared_lo);
    for (size_t i = 0; i < n; ++i) memset(redzone + (base + a[i].offset - shared_lo), 0, a[i].size);
    t->tls_base = base, t->shared_lo = shared_lo, t->shared_hi = shared_hi, t->shared_redzone = redzone;
}

/* "p->c" is "c": a launcher's field is named after the kernel's parameter it
 * feeds, and the parameter is what the kernel's author reads. Anything else
 * ("x + offset") stays as written. */
static const char *member_name(const char *expression)
{
    const char *arrow = strrchr(expression, '>'), *dot = strrchr(expression, '.');
    const char *after = arrow && arrow > expression && arrow[-1] == '-' ? arrow + 1 : NULL;
    if (dot && (!after || dot + 1 > after)) after = dot + 1;
    if (!after || !*after) return expression;
    for (const char *c = after; *c; ++c)
        if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
            return expression;
    return after;
}

/* The launch's pointer arguments that point into device buffers. */
static void find_buffers(kt_thread *t, const labkit_launch *l)
{
    t->buffers = 0;
    const size_t page = 4096;
    for (unsigned i = 0; i < l->argc && t->buffers < KT_MAX_BUFFERS; ++i) {
        if (l->kinds[i] != LABKIT_ARG_POINTER) continue;
        void *pointer = *(void *const *)l->values[i], *data;
        size_t bytes;
        if (!pointer || !guarded_find(pointer, &data, &bytes)) continue;
        bool seen = false;
        for (unsigned b = 0; b < t->buffers && !seen; ++b) seen = t->buffer[b].start == (uintptr_t)data;
        if (seen) continue; /* a second argument into the same buffer: the first names it */
        kt_buffer *b = &t->buffer[t->buffers++];
        b->start = (uintptr_t)data;
        b->end = b->start + bytes;
        /* the note page before the data's page, the guard page after its end */
        b->near_start = b->start / page * page - page;
        b->near_end = (b->start + (bytes + 3) / 4 * 4 + page - 1) / page * page + page;
        b->near_span = b->near_end - b->near_start;
        b->origin = (uintptr_t)pointer;
        b->name = l->names ? member_name(l->names[i]) : "a buffer";
        b->argument = i + 1;
        b->words = (bytes + 3) / 4;
        b->shadow = NULL;
    }
}

static void launch_begin(void *user, const labkit_launch *l)
{
    (void)user;
    kt_thread *t = &kt_self;
    /* a launch of the library's own kernels, or of any file not built for the tools, shows nothing */
    t->sanitize = l->instrumented && kernel_sanitizer_on();
    t->profile = l->instrumented && profile_enabled();
    if (!t->sanitize && !t->profile) return;
    t->launch = l;
    find_shared(t);
    find_buffers(t, l);
    void *base;
    size_t bytes;
    t->dynamic_lo = t->dynamic_hi = 0;
    if (coop_dynamic_shared_range(&base, &bytes) && base && bytes > 0) {
        t->dynamic_lo = (uintptr_t)base;
        t->dynamic_hi = t->dynamic_lo + bytes;
    }
    t->block_started = false;
    t->thread_seen.x = UINT32_MAX; /* the first access stamps its thread */
    t->cooperative = false;
    if (t->sanitize) sanitizer_launch_begin(t);
    if (t->profile) profile_launch_begin(t);
    t->quick = t->sanitize && !t->profile;
    for (unsigned i = 0; i < t->buffers; ++i) {
        const kt_buffer *b = &t->buffer[i];
        t->quick_buffer[i] = (kt_quick_buffer){ b->start, b->end - b->start, b->shadow };
    }
    t->watching = true;
}

static void launch_end(void *user, const labkit_launch *l)
{
    (void)user, (void)l;
    kt_thread *t = &kt_self;
    if (!t->watching) return;
    t->watching = false;
    if (t->profile) {
        if (t->block_started) profile_block_end(t);
        profile_launch_end(t);
    }
    if (t->sanitize) sanitizer_launch_end(t);
    t->launch = NULL;
    t->buffers = 0;
}

static void launch_failed(void *user, const labkit_launch *l, const char *message)
{
    (void)user;
    if (kt_self.watching && kt_self.sanitize) sanitizer_launch_failed(l, message);
}

void ktools_block_changed(void)
{
    kt_thread *t = &kt_self;
    if (t->profile && t->block_started) profile_block_end(t);
    t->block = blockIdx;
    t->block_started = true;
    t->block_serial++;
    t->block_linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    t->epoch = 0;
    memset(t->warp_epoch, 0, sizeof t->warp_epoch);
    t->cooperative = false;
}

void ktools_moved(kt_thread *t)
{
    if (!t->block_started || t->block.x != blockIdx.x || t->block.y != blockIdx.y || t->block.z != blockIdx.z)
        ktools_block_changed();
    t->thread_seen = threadIdx;
    const unsigned thread = ktools_thread();
    t->thread_linear = thread;
    const uint16_t wepoch = (uint16_t)t->warp_epoch[(thread / 32) & 31];
    t->stamp_global = (kt_stamp){ t->block_linear + 1, (uint16_t)thread, wepoch, t->epoch, 0 };
    t->stamp_shared = t->stamp_global;
    t->stamp_shared.block = t->block_serial + 1;
}

static void block_cooperative(void *user, dim3 block, unsigned first)
{
    (void)user, (void)block, (void)first;
    kt_thread *t = &kt_self;
    if (!t->watching) return;
    ktools_follow(t);
    t->cooperative = true;
}

static void barrier_release(void *user, const coop_barrier_event *e)
{
    (void)user;
    kt_thread *t = &kt_self;
    if (!t->watching) return;
    ktools_follow(t);
    if (e->kind == COOP_BARRIER_BLOCK) {
        t->epoch++;
        if (t->profile) profile_barrier(t);
    } else if (e->warp < 32) {
        t->warp_epoch[e->warp]++;
    }
    t->thread_seen.x = UINT32_MAX; /* the stamps hold the epochs: make them again */
}

/* ---- the callbacks ------------------------------------------------------------------ */

/* A watched launch's access, when sanitizer_quick cannot take it. */
__attribute__((noinline)) static void watched_access_full(kt_thread *t, uintptr_t address, unsigned size,
                                                          kt_access_kind kind, uintptr_t pc)
{
    const kt_place place = ktools_classify(t, address);
    if (place.space == KT_NOT_WATCHED) return;
    if (t->profile) profile_access(t, place, address, size, kind, pc);
    if (t->sanitize) sanitizer_access(t, place, address, size, kind, pc);
}

/* An access that finds another GPU thread running, or a barrier passed. */
__attribute__((noinline)) static void watched_access_moved(kt_thread *t, uintptr_t address, unsigned size,
                                                           kt_access_kind kind, uintptr_t pc)
{
    ktools_moved(t);
    if (t->quick && sanitizer_quick(t, address, size, kind, pc)) return;
    watched_access_full(t, address, size, kind, pc);
}

/* A watched launch's access; out of line, so that the callbacks of a program
 * that watches nothing now are a test and a return. The sanitizer alone takes
 * most accesses on its quick path, with nothing called (the rest are tail
 * calls: no register kept across a call); the profiler records every one. */
__attribute__((noinline)) static void watched_access(uintptr_t address, unsigned size, kt_access_kind kind,
                                                     uintptr_t pc)
{
    kt_thread *t = &kt_self;
    if (__builtin_expect(ktools_moved_since(t), 0)) {
        watched_access_moved(t, address, size, kind, pc);
        return;
    }
    if (t->quick && sanitizer_quick(t, address, size, kind, pc)) return;
    watched_access_full(t, address, size, kind, pc);
}

static inline void on_access(uintptr_t address, unsigned size, kt_access_kind kind, uintptr_t pc)
{
    if (__builtin_expect(kt_self.watching, 0)) watched_access(address, size, kind, pc);
}

#define PC() ((uintptr_t)__builtin_return_address(0))
#define ACCESS(name, size, kind) \
    void name(void *address) { on_access((uintptr_t)address, size, kind, PC()); }

/* Declared here: they have no header (GCC calls them by name). */
#define DECLARE_ACCESS(name, size, kind) void name(void *address);
#define SIZES(M, prefix, kind) \
    M(prefix##1, 1, kind)      \
    M(prefix##2, 2, kind) M(prefix##4, 4, kind) M(prefix##8, 8, kind) M(prefix##16, 16, kind)
SIZES(DECLARE_ACCESS, __tsan_read, KT_READ)
SIZES(DECLARE_ACCESS, __tsan_write, KT_WRITE)
SIZES(DECLARE_ACCESS, __tsan_unaligned_read, KT_READ)
SIZES(DECLARE_ACCESS, __tsan_unaligned_write, KT_WRITE)
SIZES(DECLARE_ACCESS, __tsan_volatile_read, KT_READ)
SIZES(DECLARE_ACCESS, __tsan_volatile_write, KT_WRITE)
SIZES(ACCESS, __tsan_read, KT_READ)
SIZES(ACCESS, __tsan_write, KT_WRITE)
SIZES(ACCESS, __tsan_unaligned_read, KT_READ)
SIZES(ACCESS, __tsan_unaligned_write, KT_WRITE)
SIZES(ACCESS, __tsan_volatile_read, KT_READ)
SIZES(ACCESS, __tsan_volatile_write, KT_WRITE)

void __tsan_read_range(void *address, size_t size);
void __tsan_write_range(void *address, size_t size);
void __tsan_read_range(void *address, size_t size)
{
    for (size_t at = 0; at < size; at += 4)
        on_access((uintptr_t)address + at, size - at < 4 ? (unsigned)(size - at) : 4, KT_READ, PC());
}
void __tsan_write_range(void *address, size_t size)
{
    for (size_t at = 0; at < size; at += 4)
        on_access((uintptr_t)address + at, size - at < 4 ? (unsigned)(size - at) : 4, KT_WRITE, PC());
}

/* Function entry and exit are left out at compile time
 * (--param tsan-instrument-func-entry-exit=0); these serve a file built without it. */
void __tsan_func_entry(void *caller);
void __tsan_func_exit(void);
void __tsan_func_entry(void *caller) { (void)caller; }
void __tsan_func_exit(void) {}

void __sanitizer_cov_trace_pc(void);
__attribute__((noinline)) static void watched_branch(uintptr_t pc)
{
    kt_thread *t = &kt_self;
    ktools_follow(t);
    profile_branch(t, pc);
}

void __sanitizer_cov_trace_pc(void)
{
    if (__builtin_expect(kt_self.watching && kt_self.profile, 0)) watched_branch(PC());
}

/* ---- atomics: the operation itself (sequentially consistent, stronger than
 * asked), and an access of kind KT_ATOMIC (never a race with another atomic) -- */

typedef unsigned char a8;
typedef unsigned short a16;
typedef unsigned int a32;
typedef unsigned long long a64;
__extension__ typedef unsigned __int128 a128;

#define SEQ __ATOMIC_SEQ_CST
#define ATOMIC_OPS(bits, T)                                                                       \
    T __tsan_atomic##bits##_load(const volatile T *a, int mo);                                    \
    void __tsan_atomic##bits##_store(volatile T *a, T v, int mo);                                 \
    T __tsan_atomic##bits##_exchange(volatile T *a, T v, int mo);                                 \
    T __tsan_atomic##bits##_fetch_add(volatile T *a, T v, int mo);                                \
    T __tsan_atomic##bits##_fetch_sub(volatile T *a, T v, int mo);                                \
    T __tsan_atomic##bits##_fetch_and(volatile T *a, T v, int mo);                                \
    T __tsan_atomic##bits##_fetch_or(volatile T *a, T v, int mo);                                 \
    T __tsan_atomic##bits##_fetch_xor(volatile T *a, T v, int mo);                                \
    T __tsan_atomic##bits##_fetch_nand(volatile T *a, T v, int mo);                               \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo); \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo);   \
    T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo);       \
    T __tsan_atomic##bits##_load(const volatile T *a, int mo)                                     \
    {                                                                                             \
        (void)mo;                                                                                 \
        on_access((uintptr_t)a, sizeof(T), KT_ATOMIC_LOAD, PC());                                 \
        return LOAD(a);                                                                           \
    }                                                                                             \
    void __tsan_atomic##bits##_store(volatile T *a, T v, int mo)                                  \
    {                                                                                             \
        (void)mo;                                                                                 \
        on_access((uintptr_t)a, sizeof(T), KT_ATOMIC, PC());                                      \
        STORE(a, v);                                                                              \
    }                                                                                             \
    T __tsan_atomic##bits##_exchange(volatile T *a, T v, int mo)                                  \
    {                                                                                             \
        (void)mo;                                                                                 \
        on_access((uintptr_t)a, sizeof(T), KT_ATOMIC, PC());                                      \
        return RMW(a, v, __atomic_exchange_n, =);                                                 \
    }                                                                                             \
    FETCH(bits, T, add, +=, __atomic_fetch_add)                                                   \
    FETCH(bits, T, sub, -=, __atomic_fetch_sub)                                                   \
    FETCH(bits, T, and, &=, __atomic_fetch_and)                                                   \
    FETCH(bits, T, or, |=, __atomic_fetch_or)                                                     \
    FETCH(bits, T, xor, ^=, __atomic_fetch_xor)                                                   \
    T __tsan_atomic##bits##_fetch_nand(volatile T *a, T v, int mo)                                \
    {                                                                                             \
        (void)mo;                                                                                 \
        on_access((uintptr_t)a, sizeof(T), KT_ATOMIC, PC());                                      \
        return NAND(a, v);                                                                        \
    }                                                                                             \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo)  \
    {                                                                                             \
        (void)mo, (void)fmo;                                                                      \
        on_access((uintptr_t)a, sizeof(T), KT_ATOMIC, PC());                                      \
        return CAS(a, c, v);                                                                      \
    }                                                                                             \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo)    \
    {                                                                                             \
        (void)mo, (void)fmo;                                                                      \
        on_access((uintptr_t)a, sizeof(T), KT_ATOMIC, PC());                                      \
        return CAS(a, c, v);                                                                      \
    }                                                                                             \
    T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo)        \
    {                                                                                             \
        (void)mo, (void)fmo;                                                                      \
        on_access((uintptr_t)a, sizeof(T), KT_ATOMIC, PC());                                      \
        CAS(a, &c, v);                                                                            \
        return c;                                                                                 \
    }

#define FETCH(bits, T, op, assign, builtin)                        \
    T __tsan_atomic##bits##_fetch_##op(volatile T *a, T v, int mo) \
    {                                                              \
        (void)mo;                                                  \
        on_access((uintptr_t)a, sizeof(T), KT_ATOMIC, PC());       \
        return RMW(a, v, builtin, assign);                         \
    }

/* 8 to 64 bits: the hardware's own atomic operations. */
#define LOAD(a) __atomic_load_n(a, SEQ)
#define STORE(a, v) __atomic_store_n(a, v, SEQ)
#define RMW(a, v, builtin, assign) builtin(a, v, SEQ)
#define NAND(a, v) __atomic_fetch_nand(a, v, SEQ)
#define CAS(a, c, v) __atomic_compare_exchange_n(a, c, v, false, SEQ, SEQ)
ATOMIC_OPS(8, a8)
ATOMIC_OPS(16, a16)
ATOMIC_OPS(32, a32)
ATOMIC_OPS(64, a64)
#undef LOAD
#undef STORE
#undef RMW
#undef NAND
#undef CAS

/* 128 bits: under a lock (x86-64 needs -mcx16 and libatomic otherwise); no
 * kernel of the kit uses them, but an instrumented file may call them. */
static pthread_mutex_t wide_lock = PTHREAD_MUTEX_INITIALIZER;
static a128 wide_rmw(volatile a128 *a, a128 v, int op)
{
    pthread_mutex_lock(&wide_lock);
    const a128 old = *a;
    switch (op) {
    case 0: *a = v; break;
    case 1: *a = old + v; break;
    case 2: *a = old - v; break;
    case 3: *a = old & v; break;
    case 4: *a = old | v; break;
    case 5: *a = old ^ v; break;
    case 6: *a = ~(old & v); break;
    default: break;
    }
    pthread_mutex_unlock(&wide_lock);
    return old;
}
static int wide_cas(volatile a128 *a, a128 *c, a128 v)
{
    pthread_mutex_lock(&wide_lock);
    const bool same = *a == *c;
    if (same)
        *a = v;
    else
        *c = *a;
    pthread_mutex_unlock(&wide_lock);
    return same;
}
#define LOAD(a) wide_rmw((volatile a128 *)(a), 0, 7)
#define STORE(a, v) (void)wide_rmw(a, v, 0)
#define RMW(a, v, builtin, assign) wide_rmw(a, v, WIDE_##builtin)
#define WIDE___atomic_exchange_n 0
#define WIDE___atomic_fetch_add 1
#define WIDE___atomic_fetch_sub 2
#define WIDE___atomic_fetch_and 3
#define WIDE___atomic_fetch_or 4
#define WIDE___atomic_fetch_xor 5
#define NAND(a, v) wide_rmw(a, v, 6)
#define CAS(a, c, v) wide_cas(a, c, v)
ATOMIC_OPS(128, a128)

void __tsan_atomic_thread_fence(int mo);
void __tsan_atomic_signal_fence(int mo);
void __tsan_atomic_thread_fence(int mo)
{
    (void)mo;
    __atomic_thread_fence(SEQ);
}
void __tsan_atomic_signal_fence(int mo)
{
    (void)mo;
    __atomic_signal_fence(SEQ);
}

/* At the end of a program whose kernels were watched: the sanitizer's
 * summary (as compute-sanitizer ends with its ERROR SUMMARY) and, when asked
 * for with LABKIT_KERNEL_PROFILE=1, the profiler's table; on stderr, so that
 * a program's own output (a CSV on stdout) stays as it is. */
static void summary_at_exit(void)
{
    const unsigned long long watched = kernel_sanitizer_launches();
    if (watched > 0)
        fprintf(stderr, "kernel sanitizer: %zu reports in %llu launches watched\n", kernel_sanitizer_count(),
                watched);
    if (kernel_profile_recording()) kernel_profile_print(stderr);
}

/* Each instrumented file's constructor calls it: the kernel tools watch from
 * now on. */
void __tsan_init(void);
void __tsan_init(void)
{
    if (!ktools_mark_instrumented()) return; /* another file's constructor did this */
    static const coop_hooks hooks = { NULL, launch_begin,    launch_end,   block_cooperative,
                                      NULL, barrier_release, launch_failed };
    coop_set_hooks(&hooks);
    const char *profile = getenv("LABKIT_KERNEL_PROFILE");
    if (profile && strcmp(profile, "1") == 0) kernel_profile_start();
    atexit(summary_at_exit);
}
