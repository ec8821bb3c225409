/* capture.c: which devices capture a graph, and what each has recorded. It
 * calls nothing of the library but fail(), so that every file, device.c
 * included, may ask it without a loop between them. */
#include "capture.h"

#include <stdlib.h>

/* One recording per device, in the registry's order: the CPU, the real GPUs,
 * the simulated ones. NULL while the device runs its work as it comes. */
static recording *active[LABKIT_MAX_DEVICES];

static recording **slot_of(device d)
{
    switch (d.kind) {
    case DEVICE_CPU: return d.index == 0 ? &active[0] : NULL;
    case DEVICE_CUDA: return d.index >= 0 && d.index < LABKIT_MAX_CUDA_DEVICES ? &active[1 + d.index] : NULL;
    case DEVICE_SIM:
        return d.index >= 0 && d.index < LABKIT_MAX_SIM_DEVICES
                   ? &active[1 + LABKIT_MAX_CUDA_DEVICES + d.index]
                   : NULL;
    }
    return NULL;
}

bool capturing(device d)
{
    recording **slot = slot_of(d);
    return slot && *slot;
}

status capture_start(device d)
{
    recording **slot = slot_of(d);
    if (!slot) return fail(STATUS_WRONG_DEVICE, "graph_begin_capture: no such device");
    *slot = calloc(1, sizeof **slot);
    if (!*slot) return fail(STATUS_OUT_OF_MEMORY, "graph_begin_capture: no host memory left for a recording");
    return STATUS_OK;
}

recording *capture_stop(device d)
{
    recording **slot = slot_of(d);
    if (!slot) return NULL;
    recording *r = *slot;
    *slot = NULL;
    return r;
}

void recording_free(recording *r)
{
    if (!r) return;
    free(r->cmds);
    free(r->kept);
    free(r);
}

/* The list with room for one more element (it doubles when full), or NULL when
 * the host has no memory left; the list is then unchanged. */
static void *grow(void *list, size_t *capacity, size_t count, size_t element)
{
    if (count < *capacity) return list;
    const size_t wanted = *capacity ? 2 * *capacity : 64;
    void *larger = realloc(list, wanted * element);
    if (larger) *capacity = wanted;
    return larger;
}

status capture_record(device d, const graph_cmd *cmd, const char *who)
{
    recording **slot = slot_of(d);
    recording *r = slot ? *slot : NULL;
    if (!r) return fail(STATUS_BAD_ARGUMENT, "%s: the device is not capturing a graph", who);
    graph_cmd *cmds = grow(r->cmds, &r->capacity, r->count, sizeof *cmds);
    if (!cmds) return fail(STATUS_OUT_OF_MEMORY, "%s: no host memory left to record it in the graph", who);
    r->cmds = cmds;
    r->cmds[r->count++] = *cmd;
    return STATUS_OK;
}

bool capture_keep(device d, void *ptr, size_t bytes)
{
    recording **slot = slot_of(d);
    recording *r = slot ? *slot : NULL;
    kept_memory *kept = r ? grow(r->kept, &r->kept_capacity, r->nkept, sizeof *kept) : NULL;
    if (!kept) return false;
    r->kept = kept;
    r->kept[r->nkept++] = (kept_memory){ ptr, bytes };
    return true;
}
