/* coop_describe.c: a launch, a block and the whereabouts of its threads, in
 * words, for the messages of a failed launch (coop_describe.h). */
#include "coop_describe.h"

#include <stdio.h>
#include <string.h>

/* At most this many groups of threads are named; the rest are counted. */
#define GROUPS_SHOWN 6

bool coop_same_site(const coop_site *a, const coop_site *b)
{
    if (a->line != b->line) return false;
    if (a->what != b->what && (!a->what || !b->what || strcmp(a->what, b->what) != 0)) return false;
    return a->file == b->file || (a->file && b->file && strcmp(a->file, b->file) == 0);
}

void coop_launch_text(char *out, size_t size, const labkit_launch *l)
{
    if (!l) {
        snprintf(out, size, "a kernel");
        return;
    }
    snprintf(out, size, "%s (launched at %s:%d)", l->kernel_name, l->file, l->line);
}

void coop_block_text(char *out, size_t size, dim3 block)
{
    snprintf(out, size, "block (%u, %u, %u)", block.x, block.y, block.z);
}

/* Two threads belong to one group when they are in the same place. */
static bool same_place(const coop_thread *a, const coop_thread *b)
{
    if (a->state != b->state) return false;
    if (a->state == COOP_AT_WARP_BARRIER && a->mask != b->mask) return false;
    if (a->state == COOP_AT_BLOCK_BARRIER || a->state == COOP_AT_WARP_BARRIER)
        return coop_same_site(&a->site, &b->site);
    return true;
}

static size_t append(char *out, size_t size, size_t used, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static size_t append(char *out, size_t size, size_t used, const char *format, ...)
{
    if (used >= size) return used;
    va_list args;
    va_start(args, format);
    const int n = vsnprintf(out + used, size - used, format, args);
    va_end(args);
    return n < 0 ? used : used + (size_t)n;
}

static size_t place_text(char *out, size_t size, size_t used, const coop_thread *t)
{
    switch (t->state) {
    case COOP_RETURNED: return append(out, size, used, "returned");
    case COOP_AT_BLOCK_BARRIER:
        return append(out, size, used, "at %s (%s:%d)", t->site.what, t->site.file, t->site.line);
    case COOP_AT_WARP_BARRIER:
        return append(out, size, used, "at %s with mask 0x%08x (%s:%d)", t->site.what, t->mask, t->site.file,
                      t->site.line);
    case COOP_READY: return append(out, size, used, "not yet run");
    case COOP_RUNNING: return append(out, size, used, "running");
    }
    return used;
}

size_t coop_threads_text(char *out, size_t size, const coop_runtime *rt, dim3 block)
{
    size_t used = 0;
    unsigned groups = 0, first = 0;
    if (size > 0) out[0] = '\0';
    for (unsigned i = 1; i <= rt->threads; ++i) {
        if (i < rt->threads && same_place(&rt->thread[i], &rt->thread[first])) continue;
        if (groups < GROUPS_SHOWN) {
            used = append(out, size, used, "%s", groups ? ", " : "");
            used = first == i - 1 ? append(out, size, used, "thread %u ", first)
                                  : append(out, size, used, "threads %u-%u ", first, i - 1);
            used = place_text(out, size, used, &rt->thread[first]);
        }
        groups++;
        first = i;
    }
    if (groups > GROUPS_SHOWN) used = append(out, size, used, ", and %u more groups", groups - GROUPS_SHOWN);
    if (block.y > 1 || block.z > 1) {
        if (block.z > 1)
            used = append(out, size, used, " (thread = threadIdx.x + %u * threadIdx.y + %u * threadIdx.z)",
                          block.x, block.x * block.y);
        else
            used = append(out, size, used, " (thread = threadIdx.x + %u * threadIdx.y)", block.x);
    }
    return used;
}
