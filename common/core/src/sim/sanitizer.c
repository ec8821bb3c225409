/* sanitizer.c: the kernel sanitizer (labkit/kernel_sanitizer.h): races,
 * out-of-bounds accesses and reads of unwritten shared memory, found from the
 * accesses that ktools.c hands over.
 *
 * Races without vector clocks. The threads of a block run one after the
 * other, so "no barrier between two accesses" is a comparison of numbers: each
 * access is stamped with its block, thread, the block's count of
 * __syncthreads() passed (its epoch) and its warp's count of warp barriers.
 * Two accesses of different threads are concurrent when they are in one block
 * and one epoch (and, in one warp, one warp epoch), or, in global memory, in
 * two blocks of the launch, which nothing orders. Each 4-byte word keeps its
 * last write and its last two readers (two different threads, so that a
 * thread that reads and then writes a word is still checked against another
 * reader). Shared memory keeps its stamps across blocks and launches: a stamp
 * from another block means "not written in this block". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/kernel_sanitizer.h"
#include "coop_guard.h"
#include "coop_internal.h"
#include "ktools_internal.h"

#define MAX_SEEN 64 /* distinct reports of one launch; past that they are counted into the last */

/* ---- the reports ------------------------------------------------------------------ */

static pthread_mutex_t reports_lock = PTHREAD_MUTEX_INITIALIZER;
static kernel_report *reports;
static size_t report_count, report_capacity;
static unsigned long long launches;
static int enabled = -1; /* -1: not yet read from LABKIT_KERNEL_SANITIZER */

bool kernel_tools_built(void) { return ktools_instrumented(); }

bool kernel_sanitizer_on(void)
{
    if (!ktools_instrumented()) return false;
    int on = __atomic_load_n(&enabled, __ATOMIC_ACQUIRE);
    if (on < 0) {
        const char *env = getenv("LABKIT_KERNEL_SANITIZER");
        on = !(env && strcmp(env, "0") == 0);
        __atomic_store_n(&enabled, on, __ATOMIC_RELEASE);
    }
    return on;
}

status kernel_sanitizer_enable(bool on)
{
    if (!ktools_instrumented())
        return fail(STATUS_BAD_ARGUMENT,
                    "kernel_sanitizer_enable: this program's kernels were not built for the kernel tools.\n"
                    "  hint: build it with labkit_kernel_tools_program (cmake/kernel_tools.cmake), or run "
                    "./lab check NN --kernels");
    __atomic_store_n(&enabled, on ? 1 : 0, __ATOMIC_RELEASE);
    return STATUS_OK;
}

size_t kernel_sanitizer_count(void)
{
    pthread_mutex_lock(&reports_lock);
    const size_t n = report_count;
    pthread_mutex_unlock(&reports_lock);
    return n;
}

unsigned long long kernel_sanitizer_launches(void)
{
    pthread_mutex_lock(&reports_lock);
    const unsigned long long n = launches;
    pthread_mutex_unlock(&reports_lock);
    return n;
}

status kernel_sanitizer_report(size_t i, kernel_report *out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "kernel_sanitizer_report: out is NULL");
    pthread_mutex_lock(&reports_lock);
    const size_t n = report_count;
    if (i < n) *out = reports[i];
    pthread_mutex_unlock(&reports_lock);
    if (i >= n)
        return fail(STATUS_BAD_ARGUMENT,
                    "kernel_sanitizer_report: no report %zu; there are %zu (kernel_sanitizer_count)", i, n);
    return STATUS_OK;
}

void kernel_sanitizer_clear(void)
{
    pthread_mutex_lock(&reports_lock);
    report_count = 0;
    launches = 0;
    pthread_mutex_unlock(&reports_lock);
}

/* Keeps a report; returns its index, or SIZE_MAX when there is no memory. */
static size_t publish(const kernel_report *r)
{
    pthread_mutex_lock(&reports_lock);
    size_t at = SIZE_MAX;
    if (report_count == report_capacity) {
        const size_t capacity = report_capacity ? 2 * report_capacity : 16;
        kernel_report *grown = realloc(reports, capacity * sizeof *grown);
        if (grown) reports = grown, report_capacity = capacity;
    }
    if (report_count < report_capacity) {
        reports[report_count] = *r;
        at = report_count++;
    }
    pthread_mutex_unlock(&reports_lock);
    fprintf(stderr, "kernel sanitizer: %s\n", r->text);
    return at;
}

/* ---- this OS thread's launch -------------------------------------------------------- */

/* A report of this launch: its key, and where it is kept. */
typedef struct seen_report {
    kernel_report_kind kind;
    uintptr_t pc, other_pc;
    uint32_t region;
    size_t index;
    unsigned long long count;
} seen_report;

typedef struct sanitizer_state {
    seen_report seen[MAX_SEEN];
    unsigned seen_count;
    bool failing; /* the sanitizer stops the launch: its failure is already reported */
} sanitizer_state;

static _Thread_local sanitizer_state me;

/* Buffers' shadows of earlier launches, kept for the next ones: a fresh
 * shadow's pages fault in one by one as the kernel first touches them, which
 * cost the small launches of a check more than their accesses did (9% of the
 * naive product's time at 64 x 64). Up to SHADOW_KEEP_BYTES each, room for
 * lab 09's check sizes (100003 floats: 4.8 MB of shadow; at 4 MiB its copy's
 * two shadows faulted in at every launch, 5x the time of its accesses); a
 * larger one comes from calloc, whose untouched pages cost nothing. */
#define SHADOW_KEEP_BYTES ((size_t)8 << 20)
#define SHADOWS_KEPT 4 /* a product's three buffers and one more: at most 32 MiB a worker */
static _Thread_local struct kept_shadow {
    kt_word *words;
    size_t count;
} kept[SHADOWS_KEPT];

static void take_shadow(kt_buffer *b)
{
    const size_t need = (b->end - b->start + 3) / 4 + 1;
    struct kept_shadow *best = NULL;
    if (need * sizeof(kt_word) <= SHADOW_KEEP_BYTES)
        for (unsigned i = 0; i < SHADOWS_KEPT; ++i)
            if (kept[i].words && kept[i].count >= need && (!best || kept[i].count < best->count))
                best = &kept[i];
    if (best) {
        b->shadow = best->words, b->shadow_words = best->count;
        best->words = NULL;
        memset(b->shadow, 0, need * sizeof(kt_word));
        return;
    }
    b->shadow = calloc(need, sizeof(kt_word));
    b->shadow_words = b->shadow ? need : 0;
}

static void give_back_shadow(kt_buffer *b)
{
    /* an empty slot, else the one that keeps the smallest shadow */
    struct kept_shadow *slot = &kept[0];
    for (unsigned i = 1; i < SHADOWS_KEPT && slot->words; ++i)
        if (!kept[i].words || kept[i].count < slot->count) slot = &kept[i];
    if (b->shadow && b->shadow_words * sizeof(kt_word) <= SHADOW_KEEP_BYTES &&
        (!slot->words || slot->count < b->shadow_words)) {
        free(slot->words);
        slot->words = b->shadow, slot->count = b->shadow_words;
    } else {
        free(b->shadow);
    }
    b->shadow = NULL, b->shadow_words = 0;
}

void sanitizer_launch_begin(kt_thread *t)
{
    me.seen_count = 0;
    me.failing = false;
    for (unsigned i = 0; i < t->buffers; ++i) take_shadow(&t->buffer[i]);
    const size_t shared_words = (t->shared_hi - t->shared_lo) / 4;
    if (shared_words > t->shared_words) {
        free(t->shared_shadow);
        t->shared_shadow = calloc(shared_words, sizeof(kt_word));
        t->shared_words = t->shared_shadow ? shared_words : 0;
    }
    const size_t dynamic_words = (t->dynamic_hi - t->dynamic_lo + 3) / 4;
    if (dynamic_words > t->dynamic_words) {
        free(t->dynamic_shadow);
        t->dynamic_shadow = calloc(dynamic_words, sizeof(kt_word));
        t->dynamic_words = t->dynamic_shadow ? dynamic_words : 0;
    } else if (dynamic_words > 0) {
        /* another launch's dynamic memory may start elsewhere: its stamps mean nothing here */
        memset(t->dynamic_shadow, 0, dynamic_words * sizeof(kt_word));
    }
}

void sanitizer_launch_end(kt_thread *t)
{
    for (unsigned i = 0; i < t->buffers; ++i) give_back_shadow(&t->buffer[i]);
    pthread_mutex_lock(&reports_lock);
    launches++;
    for (unsigned i = 0; i < me.seen_count; ++i)
        if (me.seen[i].index < report_count) reports[me.seen[i].index].count = 0;
    for (unsigned i = 0; i < me.seen_count; ++i)
        if (me.seen[i].index < report_count) reports[me.seen[i].index].count += me.seen[i].count;
    pthread_mutex_unlock(&reports_lock);
}

void sanitizer_launch_failed(const labkit_launch *l, const char *message)
{
    if (me.failing) return; /* the sanitizer's own report stopped it */
    kernel_report r;
    memset(&r, 0, sizeof r);
    r.kind = KERNEL_REPORT_LAUNCH_FAILED;
    /* a launch described without its names (a library launcher's) still says what it was */
    snprintf(r.kernel, sizeof r.kernel, "%s", l->kernel_name ? l->kernel_name : "a kernel");
    snprintf(r.file, sizeof r.file, "%s", l->file ? l->file : "");
    r.line = l->line;
    r.count = 1;
    snprintf(r.text, sizeof r.text, "the launch failed: %s", message);
    publish(&r);
}

/* ---- words, in the kernel's terms ----------------------------------------------------- */

static void put3(unsigned out[3], dim3 v) { out[0] = v.x, out[1] = v.y, out[2] = v.z; }

static dim3 thread_index(unsigned linear) { return coop_thread_index(linear, blockDim); }

/* The buffer or array a place names, its start and its size in bytes. */
static void region_of(const kt_thread *t, kt_place place, const char **name, uintptr_t *origin, size_t *bytes,
                      unsigned *argument)
{
    *argument = 0;
    if (place.space == KT_GLOBAL || place.space == KT_GLOBAL_OOB) {
        const kt_buffer *b = &t->buffer[place.region];
        *name = b->name, *origin = b->origin, *bytes = b->end - b->start, *argument = b->argument;
        *bytes -= b->origin - b->start;
    } else if (place.region == KT_DYNAMIC_SHARED) {
        *name = "the dynamic shared memory", *origin = t->dynamic_lo, *bytes = t->dynamic_hi - t->dynamic_lo;
    } else {
        size_t n;
        const kt_shared_array *a = ktools_shared_arrays(&n);
        *name = a[place.region].name, *origin = t->tls_base + a[place.region].offset,
        *bytes = a[place.region].size;
    }
}

static const char *const hints[] = {
    [KERNEL_REPORT_OUT_OF_BOUNDS] =
        "a thread whose index falls outside the data must not touch it: compare the index with the size "
        "before the access (the grid is rounded up to whole blocks). On a real GPU, compute-sanitizer's "
        "memcheck reports it",
    [KERNEL_REPORT_SHARED_RACE] =
        "threads of a block that share memory must wait for each other between writing it and reading it "
        "(or reading it and writing it again): put a __syncthreads() between the two. On a real GPU, "
        "compute-sanitizer --tool racecheck reports it",
    [KERNEL_REPORT_GLOBAL_RACE] =
        "two threads of the grid touch the same element of global memory, one of them writing, and nothing "
        "orders them (blocks never wait for each other): give each thread its own elements, or combine with "
        "atomicAdd",
    [KERNEL_REPORT_UNINITIALIZED_READ] =
        "shared memory starts undefined in every block: write each element (and __syncthreads()) before any "
        "thread reads it. On a real GPU, compute-sanitizer --tool initcheck reports it for global memory",
    [KERNEL_REPORT_LAUNCH_FAILED] = "",
};

static void begin_report(kernel_report *r, const kt_thread *t, kernel_report_kind kind, uintptr_t pc,
                         bool write)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    snprintf(r->kernel, sizeof r->kernel, "%s", t->launch ? t->launch->kernel_name : "a kernel");
    ktools_where(pc, r->file, sizeof r->file, &r->line);
    put3(r->block, blockIdx);
    put3(r->thread, threadIdx);
    put3(r->other_block, blockIdx);
    r->write = write;
    r->count = 1;
}

/* Finds this launch's report with that key, or makes room for a new one:
 * true when it is new and must be written. */
static bool first_time(kernel_report_kind kind, uintptr_t pc, uintptr_t other_pc, uint32_t region,
                       seen_report **slot)
{
    for (unsigned i = 0; i < me.seen_count; ++i) {
        seen_report *s = &me.seen[i];
        if (s->kind == kind && s->pc == pc && s->other_pc == other_pc && s->region == region) {
            s->count++;
            return false;
        }
    }
    if (me.seen_count == MAX_SEEN) {
        me.seen[MAX_SEEN - 1].count++;
        return false;
    }
    *slot = &me.seen[me.seen_count++];
    **slot = (seen_report){ kind, pc, other_pc, region, SIZE_MAX, 1 };
    return true;
}

/* A report of this launch with the same kind, buffer and line(s) as r (two
 * instructions of one line, a load and a store of total[0] += x, say): r is
 * counted into it instead of being kept. True when one was found. */
static bool same_lines_as_earlier(seen_report *slot, const kernel_report *r)
{
    bool found = false;
    pthread_mutex_lock(&reports_lock);
    for (unsigned i = 0; i < me.seen_count && !found; ++i) {
        const seen_report *s = &me.seen[i];
        if (s == slot || s->index >= report_count) continue;
        const kernel_report *x = &reports[s->index];
        if (x->kind == r->kind && x->line == r->line && x->other_line == r->other_line &&
            strcmp(x->buffer, r->buffer) == 0 && strcmp(x->file, r->file) == 0) {
            slot->index = s->index;
            found = true;
        }
    }
    pthread_mutex_unlock(&reports_lock);
    return found;
}

static const char *space_name(kt_place place)
{
    return place.space == KT_GLOBAL || place.space == KT_GLOBAL_OOB ? "global" : "shared";
}

/* "thread (x, y, z)", and " of block (x, y, z)" when `block` is given. */
static void who(char *out, size_t size, const unsigned thread[3], const unsigned *block)
{
    const int n = snprintf(out, size, "thread (%u, %u, %u)", thread[0], thread[1], thread[2]);
    if (block && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, " of block (%u, %u, %u)", block[0], block[1], block[2]);
}

/* The buffer or array an access touched, as a report names it. */
typedef struct touched {
    const char *name;
    size_t bytes;      /* its size */
    unsigned argument; /* its position in the launch's arguments, from 1; 0: a shared array */
    long long offset;  /* of the access from its start, in bytes */
    char who[96];      /* the running thread and its block */
} touched;

/* What every report starts with: kind, kernel, line, the running thread and
 * block, the buffer and the index (rounded down: an access before the start
 * has a negative one), from the place with its static shared array found. */
static void start_report(kernel_report *r, touched *x, const kt_thread *t, kernel_report_kind kind,
                         kt_place place, uintptr_t address, unsigned size, uintptr_t pc, bool write)
{
    uintptr_t origin;
    region_of(t, place, &x->name, &origin, &x->bytes, &x->argument);
    begin_report(r, t, kind, pc, write);
    snprintf(r->buffer, sizeof r->buffer, "%s", x->name);
    x->offset = (long long)(address - origin);
    r->index = x->offset >= 0 ? x->offset / (long long)size
                              : -((-x->offset + (long long)size - 1) / (long long)size);
    who(x->who, sizeof x->who, r->thread, r->block);
}

__attribute__((noinline)) static void report_out_of_bounds(const kt_thread *t, kt_place place,
                                                           uintptr_t address, unsigned size,
                                                           kt_access_kind kind, uintptr_t pc)
{
    place = ktools_shared_region(t, place, address);
    seen_report *slot = NULL;
    const bool is_new = first_time(KERNEL_REPORT_OUT_OF_BOUNDS, pc, 0, place.region, &slot);
    const bool global = place.space == KT_GLOBAL_OOB;
    if (!is_new && !global) return;
    kernel_report r;
    touched x;
    start_report(&r, &x, t, KERNEL_REPORT_OUT_OF_BOUNDS, place, address, size, pc, kind != KT_READ);
    char where_from[96] = "";
    if (x.argument) snprintf(where_from, sizeof where_from, "; argument %u of the launch", x.argument);
    /* Where the access starts: "4 bytes before its start", "just past its end" */
    char how_far[96];
    const long long past = x.offset - (long long)x.bytes;
    if (x.offset < 0)
        snprintf(how_far, sizeof how_far, "%lld bytes before its start", -x.offset);
    else if (past == 0)
        snprintf(how_far, sizeof how_far, "just past its end");
    else
        snprintf(how_far, sizeof how_far, "%lld bytes past its end", past);
    const size_t elements = x.bytes / size;
    snprintf(r.text, sizeof r.text,
             "out-of-bounds %s of %s memory in %s at %s:%d: %s %s %s[%lld] (%u bytes, %s; %s has %zu bytes: "
             "%zu element%s of %u bytes%s).\n  hint: %s",
             kind == KT_READ ? "read" : "write", space_name(place), r.kernel, r.file, r.line, x.who,
             kind == KT_READ ? "reads" : "writes", x.name, r.index, size, how_far, x.name, x.bytes, elements,
             elements == 1 ? "" : "s", size, where_from, hints[KERNEL_REPORT_OUT_OF_BOUNDS]);
    if (is_new) slot->index = publish(&r);
    /* Global memory around a buffer is its guard page (the access would
     * fault) or the note before it: the launch stops here, as a GPU's does. */
    if (global || place.region == KT_DYNAMIC_SHARED) {
        me.failing = true;
        coop_fail("kernel sanitizer: %s", r.text);
    }
}

/* A race, in shared memory (within a block: the other thread is named in
 * it) or in global memory (the other thread may be of another block). */
__attribute__((noinline)) static void report_race(const kt_thread *t, kt_place place, uintptr_t address,
                                                  unsigned size, kt_access_kind kind, uintptr_t pc,
                                                  const kt_stamp *earlier, const kt_stamp *now,
                                                  bool earlier_wrote)
{
    place = ktools_shared_region(t, place, address);
    const bool shared = place.space == KT_SHARED;
    const kernel_report_kind which = shared ? KERNEL_REPORT_SHARED_RACE : KERNEL_REPORT_GLOBAL_RACE;
    seen_report *slot;
    if (!first_time(which, pc, kt_stamp_pc(earlier), place.region, &slot)) return;
    kernel_report r;
    touched x;
    start_report(&r, &x, t, which, place, address, size, pc, kind != KT_READ);
    ktools_where(kt_stamp_pc(earlier), r.other_file, sizeof r.other_file, &r.other_line);
    put3(r.other_thread, thread_index(earlier->thread));
    const bool same_block = earlier->block == now->block;
    if (!same_block) {
        const unsigned b = earlier->block - 1, gx = gridDim.x, gy = gridDim.y;
        put3(r.other_block, (dim3){ b % gx, b / gx % gy, b / (gx * gy) });
    }
    char other[96];
    who(other, sizeof other, r.other_thread, same_block ? NULL : r.other_block);
    const char *verb = kind == KT_READ ? "reads" : kind == KT_ATOMIC ? "updates" : "writes";
    snprintf(r.text, sizeof r.text,
             "race on %s memory in %s at %s:%d: %s %s %s[%lld], which %s %s at %s:%d, and %s.\n  hint: %s",
             space_name(place), r.kernel, r.file, r.line, x.who, verb, x.name, r.index, other,
             !earlier_wrote             ? "read"
             : kt_stamp_atomic(earlier) ? "updated atomically"
                                        : "wrote",
             r.other_file, r.other_line,
             shared ? "no __syncthreads() came between them" : "nothing orders the two", hints[which]);
    if (!same_lines_as_earlier(slot, &r)) slot->index = publish(&r);
}

__attribute__((noinline)) static void report_uninitialized(const kt_thread *t, kt_place place,
                                                           uintptr_t address, unsigned size, uintptr_t pc)
{
    place = ktools_shared_region(t, place, address);
    seen_report *slot;
    if (!first_time(KERNEL_REPORT_UNINITIALIZED_READ, pc, 0, place.region, &slot)) return;
    kernel_report r;
    touched x;
    start_report(&r, &x, t, KERNEL_REPORT_UNINITIALIZED_READ, place, address, size, pc, false);
    snprintf(r.text, sizeof r.text,
             "read of uninitialized shared memory in %s at %s:%d: %s reads %s[%lld], which no thread of this "
             "block wrote before.\n  hint: %s",
             r.kernel, r.file, r.line, x.who, x.name, r.index, hints[KERNEL_REPORT_UNINITIALIZED_READ]);
    slot->index = publish(&r);
}

/* ---- the check of one access ------------------------------------------------------------ */

static inline void check_word(kt_thread *t, kt_word *w, const kt_stamp *now, kt_place place,
                              uintptr_t address, unsigned size, kt_access_kind kind, uintptr_t pc)
{
    const bool shared = place.space == KT_SHARED;
    if (kind == KT_ATOMIC) {
        /* atomics never race with each other; a plain access that meets one still does */
        w->write = *now;
        w->write.site |= 1;
        return;
    }
    if (kind == KT_READ) {
        if (shared && w->write.block != now->block)
            report_uninitialized(t, place, address, size, pc);
        else if (kt_concurrent(&w->write, now, shared))
            report_race(t, place, address, size, kind, pc, &w->write, now, true);
        if (!kt_same_thread(&w->read, now)) w->read2 = w->read;
        w->read = *now;
        return;
    }
    /* the last write, then either reader: the first that is concurrent is reported */
    const kt_stamp *const earlier[3] = { &w->write, &w->read, &w->read2 };
    for (unsigned i = 0; i < 3; ++i)
        if (kt_concurrent(earlier[i], now, shared)) {
            report_race(t, place, address, size, kind, pc, earlier[i], now, i == 0);
            break;
        }
    w->write = *now;
}

void kt_code_anchor(void) {}

/* The full check of an access: what sanitizer_quick (ktools_internal.h)
 * leaves, an access out of bounds, across words, atomic, or one with
 * something to report. */
void sanitizer_access(kt_thread *t, kt_place place, uintptr_t address, unsigned size, kt_access_kind kind,
                      uintptr_t pc)
{
    if (place.space == KT_GLOBAL_OOB || place.space == KT_SHARED_OOB) {
        report_out_of_bounds(t, place, address, size, kind == KT_ATOMIC_LOAD ? KT_READ : kind, pc);
        return;
    }
    kt_word *shadow;
    uintptr_t base;
    size_t words;
    if (place.space == KT_GLOBAL) {
        const kt_buffer *b = &t->buffer[place.region];
        shadow = b->shadow, base = b->start, words = b->words;
    } else if (place.region == KT_DYNAMIC_SHARED) {
        shadow = t->dynamic_shadow, base = t->dynamic_lo, words = t->dynamic_words;
    } else {
        shadow = t->shared_shadow, base = t->shared_lo, words = t->shared_words;
    }
    if (!shadow || kind == KT_ATOMIC_LOAD) return; /* an atomic read changes nothing */
    kt_stamp now = place.space == KT_GLOBAL ? t->stamp_global : t->stamp_shared;
    now.site = kt_stamp_site(pc);
    const size_t first = (address - base) / 4, last = (address + size - 1 - base) / 4;
    for (size_t i = first; i <= last && i < words; ++i)
        check_word(t, &shadow[i], &now, place, address, size, kind, pc);
}
