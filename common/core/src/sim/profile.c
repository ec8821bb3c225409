/* profile.c: the memory profiler (labkit/kernel_profile.h): warp-wide
 * instructions rebuilt from the threads' accesses, counted as Nsight Compute
 * counts them.
 *
 * Each OS thread keeps a trace of the block it runs: every watched access and
 * every basic block entered in the kernel's code, with its thread. A warp's
 * instructions are rebuilt once the warp is done (in a block without
 * barriers, when the next warp starts; otherwise at the block's end): each
 * thread's k-th execution of one instruction (its address) belongs to one
 * group, the warp's k-th execution of it, whose lanes are the threads that
 * got there. A group of loads is one request; its sectors are the distinct
 * 32-byte pieces its lanes touch. A group of shared accesses is served in as
 * many wavefronts as the busiest bank has distinct words. A group of basic
 * blocks is divergent when its lanes do not all go on to the same next group. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/kernel_profile.h"
#include "labkit/kernel_sanitizer.h"
#include "coop_internal.h"
#include "ktools_internal.h"

enum { GLOBAL_LOAD, GLOBAL_STORE, GLOBAL_ATOMIC, SHARED_LOAD, SHARED_STORE, SHARED_ATOMIC, BRANCH };

typedef struct trace_entry {
    uintptr_t pc, address;
    uint16_t thread;
    uint8_t size, what;
} trace_entry;

/* One warp-wide instruction: the k-th execution of pc by the lanes of `lanes`. */
typedef struct group {
    uintptr_t pc;
    uint32_t k;
    uint8_t what;
    bool divergent;
    uint32_t lanes;
    int32_t next; /* a branch: where its lanes went next (-1: not yet known, -2: the kernel's end) */
    uintptr_t address[32];
    uint8_t size[32];
} group;

typedef struct profile_state {
    trace_entry *trace, *sorted;
    size_t count, capacity;
    int last_warp; /* a block without barriers: the warp the last entry came from */
    kernel_profile p;
    /* the groups of one warp, and a hash from (pc, k) to them */
    group *groups;
    size_t group_count, group_capacity;
    int32_t *table;
    size_t table_size, table_capacity; /* this warp's, and the array's */
    /* one lane's executions so far of each pc */
    uintptr_t *lane_pc;
    uint32_t *lane_count, *lane_stamp, lane_generation;
    size_t lane_size;
    /* the first lane's group of each of its entries, in its order */
    int32_t *first_lane;
    size_t first_lane_capacity;
} profile_state;

static _Thread_local profile_state me;

/* ---- the recorded launches ------------------------------------------------------- */

static pthread_mutex_t launches_lock = PTHREAD_MUTEX_INITIALIZER;
static kernel_profile *launches;
static size_t launch_count, launch_capacity;
static bool recording;

bool profile_enabled(void) { return __atomic_load_n(&recording, __ATOMIC_ACQUIRE); }

bool kernel_profile_recording(void) { return profile_enabled(); }

status kernel_profile_start(void)
{
    if (!ktools_instrumented())
        return fail(STATUS_BAD_ARGUMENT,
                    "kernel_profile_start: this program's kernels were not built for the kernel tools, so "
                    "nothing can be counted.\n  hint: build it with labkit_kernel_tools_program "
                    "(cmake/kernel_tools.cmake), or run ./lab profile NN");
    pthread_mutex_lock(&launches_lock);
    launch_count = 0;
    pthread_mutex_unlock(&launches_lock);
    __atomic_store_n(&recording, true, __ATOMIC_RELEASE);
    return STATUS_OK;
}

void kernel_profile_stop(void) { __atomic_store_n(&recording, false, __ATOMIC_RELEASE); }

size_t kernel_profile_count(void)
{
    pthread_mutex_lock(&launches_lock);
    const size_t n = launch_count;
    pthread_mutex_unlock(&launches_lock);
    return n;
}

status kernel_profile_get(size_t i, kernel_profile *out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "kernel_profile_get: out is NULL");
    pthread_mutex_lock(&launches_lock);
    const size_t n = launch_count;
    if (i < n) *out = launches[i];
    pthread_mutex_unlock(&launches_lock);
    if (i >= n)
        return fail(STATUS_BAD_ARGUMENT,
                    "kernel_profile_get: no launch %zu; %zu were recorded (kernel_profile_count)", i, n);
    return STATUS_OK;
}

status kernel_profile_last(const char *kernel, kernel_profile *out)
{
    if (!kernel || !out)
        return fail(STATUS_BAD_ARGUMENT, "kernel_profile_last: kernel and out must not be NULL");
    char seen[256] = "";
    size_t used = 0;
    bool found = false;
    pthread_mutex_lock(&launches_lock);
    for (size_t i = launch_count; i-- > 0 && !found;) {
        if (strcmp(launches[i].kernel, kernel) == 0) {
            *out = launches[i];
            found = true;
        } else if (used < sizeof seen && !strstr(seen, launches[i].kernel)) {
            used += (size_t)snprintf(seen + used, sizeof seen - used, "%s%s", used ? ", " : "",
                                     launches[i].kernel);
        }
    }
    const bool was_recording = recording;
    pthread_mutex_unlock(&launches_lock);
    if (found) return STATUS_OK;
    return fail(STATUS_BAD_ARGUMENT, "kernel_profile_last: no launch of %s was recorded (%s%s)%s", kernel,
                used ? "recorded: " : "none was", seen,
                was_recording ? "" : ".\n  hint: kernel_profile_start() before the launches");
}

double kernel_profile_sectors_per_load(const kernel_profile *p)
{
    return p && p->global_load_requests ? (double)p->global_load_sectors / (double)p->global_load_requests
                                        : 0.0;
}

static void keep(const kernel_profile *p)
{
    pthread_mutex_lock(&launches_lock);
    if (launch_count == launch_capacity) {
        const size_t capacity = launch_capacity ? 2 * launch_capacity : 64;
        kernel_profile *grown = realloc(launches, capacity * sizeof *grown);
        if (grown) launches = grown, launch_capacity = capacity;
    }
    if (launch_count < launch_capacity) launches[launch_count++] = *p;
    pthread_mutex_unlock(&launches_lock);
}

/* ---- rebuilding a warp's instructions ------------------------------------------------- */

static bool grow(void **array, size_t *capacity, size_t need, size_t each)
{
    if (need <= *capacity) return true;
    size_t c = *capacity ? *capacity : 1024;
    while (c < need) c *= 2;
    void *grown = realloc(*array, c * each);
    if (!grown) return false;
    *array = grown;
    *capacity = c;
    return true;
}

/* Mixed into the low bits the tables use: k spread over every bit first
 * (k << 40 reached only the product's bits from 40 up, so in a table of
 * fewer than 2^11 entries a pc's executions all probed one run), then the
 * product's well-mixed high half brought down. */
static inline size_t hash2(uintptr_t pc, uint32_t k)
{
    const uint64_t h = ((uint64_t)pc + (uint64_t)k * 0xc2b2ae3d27d4eb4full) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32 | h << 32);
}

/* The k-th execution of pc by a lane: its lane count of pc so far. */
static uint32_t lane_execution(uintptr_t pc)
{
    size_t i = hash2(pc, 0) & (me.lane_size - 1), probes = 0;
    while (me.lane_stamp[i] == me.lane_generation && me.lane_pc[i] != pc) {
        if (++probes == me.lane_size) return 0; /* full: such a kernel's counts are approximate */
        i = (i + 1) & (me.lane_size - 1);
    }
    if (me.lane_stamp[i] != me.lane_generation) {
        me.lane_stamp[i] = me.lane_generation;
        me.lane_pc[i] = pc;
        me.lane_count[i] = 0;
    }
    return me.lane_count[i]++;
}

static group *group_of(uintptr_t pc, uint32_t k, uint8_t what)
{
    size_t i = hash2(pc, k) & (me.table_size - 1);
    while (me.table[i] >= 0) {
        group *g = &me.groups[me.table[i]];
        if (g->pc == pc && g->k == k) return g;
        i = (i + 1) & (me.table_size - 1);
    }
    group *g = &me.groups[me.group_count];
    me.table[i] = (int32_t)me.group_count++;
    g->pc = pc, g->k = k, g->what = what, g->divergent = false, g->lanes = 0, g->next = -1;
    return g;
}

/* The distinct values among n (at most 128), and the most of them that fall
 * in one of 32 banks (value modulo 32: for words, the bank). A small hash set:
 * sorting a warp's pieces cost the profiler a third of its time (the two
 * half-warps' rows of a 16 x 16 tile interleave). */
static unsigned distinct(const uintptr_t *v, unsigned n, unsigned *busiest_bank)
{
    uintptr_t seen[256];
    uint8_t used[256] = { 0 };
    unsigned per_bank[32] = { 0 }, d = 0, most = 0;
    for (unsigned i = 0; i < n; ++i) {
        const uintptr_t x = v[i];
        if (i > 0 && x == v[i - 1]) continue; /* a broadcast: lanes on one word */
        size_t h = (size_t)((uint64_t)x * 0x9e3779b97f4a7c15ull >> 56);
        while (used[h] && seen[h] != x) h = (h + 1) & 255u;
        if (used[h]) continue;
        used[h] = 1, seen[h] = x, d++;
        if (++per_bank[x & 31u] > most) most = per_bank[x & 31u];
    }
    *busiest_bank = most;
    return d;
}

static void count_group(const group *g, kernel_profile *p)
{
    uintptr_t pieces[128];
    unsigned n = 0;
    if (g->what == BRANCH) {
        p->divergent_branches += g->divergent;
        return;
    }
    if (g->what == GLOBAL_ATOMIC) {
        p->global_atomic_requests++;
        return;
    }
    if (g->what == SHARED_ATOMIC) return;
    const bool global = g->what == GLOBAL_LOAD || g->what == GLOBAL_STORE;
    const unsigned shift = global ? 5 : 2; /* 32-byte sectors, 4-byte words */
    for (unsigned lane = 0; lane < 32; ++lane) {
        if (!(g->lanes >> lane & 1u)) continue;
        const uintptr_t first = g->address[lane] >> shift,
                        last = (g->address[lane] + g->size[lane] - 1) >> shift;
        for (uintptr_t piece = first; piece <= last && n < 128; ++piece) pieces[n++] = piece;
    }
    unsigned busiest;
    const unsigned d = distinct(pieces, n, &busiest);
    if (global) {
        if (g->what == GLOBAL_LOAD)
            p->global_load_requests++, p->global_load_sectors += d;
        else
            p->global_store_requests++, p->global_store_sectors += d;
        return;
    }
    /* distinct words per bank: the busiest bank sets the wavefronts */
    const unsigned wavefronts = busiest > 1 ? busiest : 1;
    const unsigned least = (d + 31) / 32 ? (d + 31) / 32 : 1;
    const unsigned conflicts = wavefronts > least ? wavefronts - least : 0;
    if (g->what == SHARED_LOAD)
        p->shared_load_requests++, p->shared_load_wavefronts += wavefronts,
            p->shared_load_bank_conflicts += conflicts;
    else
        p->shared_store_requests++, p->shared_store_wavefronts += wavefronts,
            p->shared_store_bank_conflicts += conflicts;
}

/* Room in this warp's table for `groups` groups in all, at most half full: a
 * larger table (a power of two) holds the groups so far again. */
static bool table_room(size_t groups)
{
    if (me.table_size >= 2 * groups && me.table_size > 0) return true;
    size_t size = 64;
    while (size < 2 * groups) size *= 2;
    if (size > me.table_capacity) {
        int32_t *t = realloc(me.table, size * sizeof *t);
        if (!t) return false;
        me.table = t, me.table_capacity = size;
    }
    me.table_size = size;
    memset(me.table, 0xff, size * sizeof *me.table);
    for (size_t g = 0; g < me.group_count; ++g) {
        size_t i = hash2(me.groups[g].pc, me.groups[g].k) & (size - 1);
        while (me.table[i] >= 0) i = (i + 1) & (size - 1);
        me.table[i] = (int32_t)g;
    }
    return true;
}

/* A branch group's lanes went on to `to` (a group index, or -2: the end). */
static void went(int32_t from, int32_t to)
{
    if (from < 0) return;
    group *g = &me.groups[from];
    if (g->next == -1)
        g->next = to;
    else if (g->next != to)
        g->divergent = true;
}

/* The warp whose lanes' entries are entries[from[lane] .. to[lane]). */
static void rebuild_warp(const trace_entry *entries, const size_t *from, const size_t *to, kernel_profile *p)
{
    size_t total = 0;
    for (unsigned lane = 0; lane < 32; ++lane) total += to[lane] - from[lane];
    if (total == 0) return;
    me.group_count = 0;
    if (!grow((void **)&me.groups, &me.group_capacity, total, sizeof(group))) return;
    /* The lanes of a warp mostly run the same instructions in the same
     * order: a lane's entries that follow the first lane's, pc for pc, join
     * the first lane's groups in turn (the same k-th executions), without a
     * look-up; from its first difference on, a lane counts its executions
     * (lane_execution, its matched entries first) and looks its groups up. */
    unsigned first = 32;
    for (unsigned lane = 0; lane < 32 && first == 32; ++lane)
        if (from[lane] != to[lane]) first = lane;
    const size_t first_count = to[first] - from[first];
    if (!grow((void **)&me.first_lane, &me.first_lane_capacity, first_count, sizeof(int32_t))) return;
    /* this warp's table: room for the first lane's groups; a lane that
     * leaves the first lane's path makes room for its own (table_room).
     * Sized for every entry of the warp, it was cleared for 30 times more
     * groups than a warp of lanes in step has: 5% of the profiler's time */
    me.table_size = 0;
    if (!table_room(first_count)) return;
    for (unsigned lane = first; lane < 32; ++lane) {
        if (from[lane] == to[lane]) continue;
        int32_t previous = -1;
        size_t e = from[lane];
        if (lane != first) {
            const size_t same = to[lane] - e < first_count ? to[lane] - e : first_count;
            size_t i = 0;
            for (; i < same && entries[e + i].pc == entries[from[first] + i].pc; ++i) {
                const trace_entry *x = &entries[e + i];
                group *g = &me.groups[me.first_lane[i]];
                g->lanes |= 1u << lane;
                if (x->what == BRANCH) {
                    went(previous, me.first_lane[i]);
                    previous = me.first_lane[i];
                } else {
                    g->address[lane] = x->address;
                    g->size[lane] = x->size;
                }
            }
            me.lane_generation++;
            if (e + i < to[lane]) {
                if (!table_room(me.group_count + (to[lane] - e - i))) return;
                for (size_t j = 0; j < i; ++j) (void)lane_execution(entries[e + j].pc);
            }
            e += i;
        } else {
            me.lane_generation++;
        }
        for (; e < to[lane]; ++e) {
            const trace_entry *x = &entries[e];
            group *g = group_of(x->pc, lane_execution(x->pc), x->what);
            g->lanes |= 1u << lane;
            if (lane == first) me.first_lane[e - from[lane]] = (int32_t)(g - me.groups);
            if (x->what == BRANCH) {
                const int32_t index = (int32_t)(g - me.groups);
                went(previous, index);
                previous = index;
            } else {
                g->address[lane] = x->address;
                g->size[lane] = x->size;
            }
        }
        went(previous, -2);
    }
    for (size_t i = 0; i < me.group_count; ++i) count_group(&me.groups[i], p);
}

/* Every entry of the trace, warp by warp; the trace is then empty. */
static void rebuild(kt_thread *t)
{
    if (me.count == 0) return;
    (void)t;
    /* a stable counting sort by thread: each lane's entries in its own order */
    static _Thread_local size_t start[COOP_MAX_THREADS + 1];
    memset(start, 0, sizeof start);
    for (size_t i = 0; i < me.count; ++i) start[me.trace[i].thread + 1]++;
    for (unsigned i = 0; i < COOP_MAX_THREADS; ++i) start[i + 1] += start[i];
    size_t capacity = me.capacity;
    if (!me.sorted) me.sorted = malloc(capacity * sizeof *me.sorted);
    if (!me.sorted) {
        me.count = 0;
        return;
    }
    size_t place[COOP_MAX_THREADS];
    memcpy(place, start, sizeof place);
    for (size_t i = 0; i < me.count; ++i) me.sorted[place[me.trace[i].thread]++] = me.trace[i];
    if (me.lane_size == 0) {
        me.lane_size = 1 << 14; /* more than the instructions of any kernel of the kit */
        me.lane_pc = malloc(me.lane_size * sizeof *me.lane_pc);
        me.lane_count = malloc(me.lane_size * sizeof *me.lane_count);
        me.lane_stamp = calloc(me.lane_size, sizeof *me.lane_stamp);
        if (!me.lane_pc || !me.lane_count || !me.lane_stamp) {
            me.count = 0, me.lane_size = 0;
            return;
        }
    }
    for (unsigned w = 0; w < COOP_MAX_WARPS; ++w) {
        size_t from[32], to[32];
        for (unsigned lane = 0; lane < 32; ++lane)
            from[lane] = start[w * 32 + lane], to[lane] = start[w * 32 + lane + 1];
        rebuild_warp(me.sorted, from, to, &me.p);
    }
    me.count = 0;
}

/* ---- the hooks' side ---------------------------------------------------------------------- */

void profile_launch_begin(kt_thread *t)
{
    const labkit_launch *l = t->launch;
    memset(&me.p, 0, sizeof me.p);
    snprintf(me.p.kernel, sizeof me.p.kernel, "%s", l->kernel_name);
    snprintf(me.p.file, sizeof me.p.file, "%s", l->file);
    me.p.line = l->line;
    me.p.grid[0] = l->grid.x, me.p.grid[1] = l->grid.y, me.p.grid[2] = l->grid.z;
    me.p.block[0] = l->block.x, me.p.block[1] = l->block.y, me.p.block[2] = l->block.z;
    const unsigned long long blocks = (unsigned long long)l->grid.x * l->grid.y * l->grid.z,
                             per_block = (unsigned long long)l->block.x * l->block.y * l->block.z;
    me.p.threads = blocks * per_block;
    me.p.warps = blocks * ((per_block + 31) / 32);
    me.count = 0;
    me.last_warp = -1;
    t->kernel_start = t->kernel_end = 0;
    if (!ktools_function_range((uintptr_t)l->kernel, &t->kernel_start, &t->kernel_end))
        t->kernel_start = t->kernel_end = 0;
}

void profile_launch_end(kt_thread *t)
{
    rebuild(t);
    keep(&me.p);
}

void profile_block_end(kt_thread *t)
{
    rebuild(t);
    me.last_warp = -1;
}

void profile_barrier(kt_thread *t)
{
    (void)t;
    me.p.barriers++;
}

static void append(kt_thread *t, uintptr_t pc, uintptr_t address, unsigned size, uint8_t what)
{
    const unsigned thread = t->thread_linear;
    const int warp = (int)(thread / 32);
    /* without barriers, threads run in order: the warps before this one are done */
    if (!t->cooperative && warp != me.last_warp) {
        rebuild(t);
        me.last_warp = warp;
    }
    if (me.count == me.capacity) {
        const size_t old = me.capacity;
        if (!grow((void **)&me.trace, &me.capacity, me.count + 1, sizeof(trace_entry))) return;
        if (me.capacity != old) {
            free(me.sorted);
            me.sorted = NULL;
        }
    }
    me.trace[me.count++] =
        (trace_entry){ pc, address, (uint16_t)thread, (uint8_t)(size > 255 ? 255 : size), what };
}

void profile_access(kt_thread *t, kt_place place, uintptr_t address, unsigned size, kt_access_kind kind,
                    uintptr_t pc)
{
    if (kind == KT_ATOMIC_LOAD)
        return; /* inside the emulation's compare-and-swap loop: not an instruction of its own */
    if (kind == KT_ATOMIC) me.p.atomics++;
    const bool global = place.space == KT_GLOBAL || place.space == KT_GLOBAL_OOB;
    const uint8_t what = kind == KT_ATOMIC ? (global ? GLOBAL_ATOMIC : SHARED_ATOMIC)
                         : kind == KT_READ ? (global ? GLOBAL_LOAD : SHARED_LOAD)
                                           : (global ? GLOBAL_STORE : SHARED_STORE);
    append(t, pc, address, size, what);
}

void profile_branch(kt_thread *t, uintptr_t pc)
{
    if (pc - t->kernel_start >= t->kernel_end - t->kernel_start) return;
    append(t, pc, 0, 0, BRANCH);
}

/* ---- the table ------------------------------------------------------------------------------- */

status kernel_profile_print(FILE *to)
{
    if (!to) return fail(STATUS_BAD_ARGUMENT, "kernel_profile_print: the file is NULL");
    pthread_mutex_lock(&launches_lock);
    const size_t n = launch_count;
    kernel_profile *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (copy) memcpy(copy, launches, n * sizeof *copy);
    pthread_mutex_unlock(&launches_lock);
    if (n == 0) return STATUS_OK;
    if (!copy) return fail(STATUS_OUT_OF_MEMORY, "kernel_profile_print: no memory for %zu launches", n);
    bool *done = calloc(n, sizeof *done);
    if (!done) {
        free(copy);
        return fail(STATUS_OUT_OF_MEMORY, "kernel_profile_print: no memory for %zu launches", n);
    }
    fprintf(to,
            "kernel profile (simulated GPU; the metrics are Nsight Compute's, labkit/kernel_profile.h):\n"
            "%-26s %8s %11s %13s %7s %12s %7s %10s %10s %9s %8s %9s %9s\n",
            "kernel", "launches", "block", "global loads", "sect/req", "global stores", "sect/req",
            "shared ld", "shared st", "conflicts", "barriers", "divergent", "atomics");
    for (size_t i = 0; i < n; ++i) {
        if (done[i]) continue;
        kernel_profile sum = copy[i];
        unsigned long long count = 1;
        for (size_t j = i + 1; j < n; ++j) {
            const kernel_profile *q = &copy[j];
            if (done[j] || strcmp(q->kernel, sum.kernel) != 0 ||
                memcmp(q->block, sum.block, sizeof q->block) != 0)
                continue;
            done[j] = true;
            count++;
            sum.global_load_requests += q->global_load_requests,
                sum.global_load_sectors += q->global_load_sectors;
            sum.global_store_requests += q->global_store_requests,
                sum.global_store_sectors += q->global_store_sectors;
            sum.shared_load_requests += q->shared_load_requests,
                sum.shared_store_requests += q->shared_store_requests;
            sum.shared_load_bank_conflicts += q->shared_load_bank_conflicts;
            sum.shared_store_bank_conflicts += q->shared_store_bank_conflicts;
            sum.barriers += q->barriers, sum.divergent_branches += q->divergent_branches,
                sum.atomics += q->atomics;
        }
        char block[32];
        snprintf(block, sizeof block, "%ux%ux%u", sum.block[0], sum.block[1], sum.block[2]);
        fprintf(to, "%-26s %8llu %11s %13llu %7.1f %12llu %8.1f %10llu %10llu %9llu %8llu %9llu %9llu\n",
                sum.kernel, count, block, sum.global_load_requests, kernel_profile_sectors_per_load(&sum),
                sum.global_store_requests,
                sum.global_store_requests
                    ? (double)sum.global_store_sectors / (double)sum.global_store_requests
                    : 0.0,
                sum.shared_load_requests, sum.shared_store_requests,
                sum.shared_load_bank_conflicts + sum.shared_store_bank_conflicts, sum.barriers,
                sum.divergent_branches, sum.atomics);
    }
    free(done);
    free(copy);
    return STATUS_OK;
}
