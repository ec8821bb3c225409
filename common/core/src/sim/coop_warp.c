/* coop_warp.c: __syncwarp() and the shuffles on the simulated GPU and the CPU
 * device.
 *
 * A warp is 32 threads of consecutive linear index. The threads of a warp that
 * call a warp operation with one mask form a group; when every thread of the
 * mask has arrived, each shuffle's result is read from the values the group
 * gave (each thread keeps what it gave apart from what it receives, so that a
 * thread released first cannot overwrite a value another has yet to read),
 * and the group's threads go on, lowest lane first. Two groups of one warp
 * with overlapping masks are an error, as is a mask that leaves out the
 * calling thread; a mask naming a thread that never comes leaves the block
 * with no thread to run (coop_wait fails the launch). Lanes beyond the end of
 * a block that is not a multiple of 32 threads count as absent from every
 * mask. A lane that reads from a lane outside the mask, which a GPU leaves
 * undefined, receives its own value. */
#include "coop_describe.h"
#include "coop_guard.h"
#include "coop_hooks.h"
#include "coop_sched.h"

static const char *const shuffle_names[] = { "__shfl_sync()", "__shfl_up_sync()", "__shfl_down_sync()",
                                             "__shfl_xor_sync()" };

/* The lanes of warp w that exist in the block. */
static unsigned lanes_present(const coop_runtime *rt, unsigned w)
{
    const unsigned in_warp = rt->threads - w * COOP_WARP_SIZE;
    return in_warp >= COOP_WARP_SIZE ? 0xffffffffu : (1u << in_warp) - 1u;
}

static void tell_hooks(const coop_runtime *rt, unsigned w, unsigned mask, const coop_site *site, bool release)
{
    const coop_hooks *hooks = coop_installed_hooks();
    if (!hooks) return;
    const coop_barrier_event e = { COOP_BARRIER_WARP, rt->current, w, mask, site->file, site->line };
    if (release && hooks->barrier_release)
        hooks->barrier_release(hooks->user, &e);
    else if (!release && hooks->barrier_arrive)
        hooks->barrier_arrive(hooks->user, &e);
}

_Noreturn static void fail_in_warp(const coop_runtime *rt, const char *what, const coop_site *site,
                                   unsigned mask, const char *hint)
{
    char launch[256], block[64];
    coop_launch_text(launch, sizeof launch, coop_launch_running);
    coop_block_text(block, sizeof block, blockIdx);
    const unsigned t = rt->current;
    coop_fail(
        "%s: %s (%s:%d) with mask 0x%08x in %s, called by thread %u (lane %u of warp %u): %s.\n  hint: %s",
        launch, site->what, site->file, site->line, mask, block, t, t % COOP_WARP_SIZE, t / COOP_WARP_SIZE,
        what, hint);
}

static coop_warp_group *group_of(coop_runtime *rt, unsigned w, unsigned mask, unsigned given_mask,
                                 const coop_site *site)
{
    coop_warp *warp = &rt->warp[w];
    for (unsigned g = 0; g < warp->groups; ++g) {
        if (warp->group[g].mask == mask) return &warp->group[g];
        if (warp->group[g].mask & mask)
            fail_in_warp(rt, "other threads of its mask wait at a warp operation with another mask", site,
                         given_mask, "threads that call warp operations together must pass the same mask");
    }
    coop_warp_group *made = &warp->group[warp->groups++];
    made->mask = mask;
    made->arrived = 0;
    return made;
}

/* The lane whose value `lane` receives, as CUDA's shuffles define it within
 * segments of `width` lanes; the lane itself where it would read past its
 * segment. */
static unsigned source_lane(const coop_thread *t, unsigned lane)
{
    const unsigned width = (unsigned)t->width, base = lane & ~(width - 1u), arg = (unsigned)t->lane_arg;
    switch (t->mode) {
    case LABKIT_SHUFFLE_IDX: return base + (arg & (width - 1u));
    case LABKIT_SHUFFLE_UP: return lane - base >= arg ? lane - arg : lane;
    case LABKIT_SHUFFLE_DOWN: return arg < width && lane - base + arg < width ? lane + arg : lane;
    case LABKIT_SHUFFLE_XOR: {
        const unsigned source = lane ^ arg;
        return source < base + width ? source : lane;
    }
    }
    return lane;
}

/* Every thread of the group arrived: results, then release. */
static void complete(coop_runtime *rt, unsigned w, coop_warp_group *g, const coop_site *site)
{
    coop_thread *lanes = &rt->thread[w * COOP_WARP_SIZE];
    const unsigned first = (unsigned)__builtin_ctz(g->mask);
    for (unsigned lane = first; lane < COOP_WARP_SIZE; ++lane) {
        if (!(g->mask >> lane & 1u)) continue;
        coop_thread *t = &lanes[lane];
        if (t->shuffles != lanes[first].shuffles) {
            char threads[640];
            coop_threads_text(threads, sizeof threads, rt, blockDim);
            fail_in_warp(
                rt, threads, site, t->mask,
                "the threads of a mask must all call the same warp operation, __syncwarp() or a shuffle");
        }
        if (!t->shuffles) continue;
        const unsigned source = source_lane(t, lane);
        t->received = g->mask >> source & 1u ? lanes[source].given : t->given;
    }
    const unsigned mask = g->mask;
    coop_warp *warp = &rt->warp[w];
    *g = warp->group[--warp->groups];
    for (unsigned lane = first; lane < COOP_WARP_SIZE; ++lane)
        if (mask >> lane & 1u) coop_make_ready(rt, w * COOP_WARP_SIZE + lane);
    tell_hooks(rt, w, mask, site, true);
}

static uint32_t arrive(unsigned mask, bool shuffles, enum labkit_shuffle_mode mode, uint32_t value,
                       int lane_arg, int width, const coop_site *site)
{
    coop_runtime *rt = coop_cooperative_block(site);
    coop_thread *self = &rt->thread[rt->current];
    const unsigned lane = self->linear % COOP_WARP_SIZE, w = self->linear / COOP_WARP_SIZE;
    if (!(mask >> lane & 1u))
        fail_in_warp(rt, "the mask leaves out the calling thread", site, mask,
                     "a thread passes a mask with its own lane's bit set (0xffffffff: the whole warp)");
    if (shuffles && (width < 1 || width > COOP_WARP_SIZE || (width & (width - 1)) != 0))
        fail_in_warp(rt, "its width is not a power of two from 1 to 32", site, mask,
                     "leave the width out (32)");
    const unsigned effective = mask & lanes_present(rt, w);
    coop_warp_group *g = group_of(rt, w, effective, mask, site);
    self->state = COOP_AT_WARP_BARRIER;
    self->site = *site;
    self->mask = mask;
    self->shuffles = shuffles;
    self->mode = mode;
    self->lane_arg = lane_arg;
    self->width = width;
    self->given = value;
    self->received = value;
    g->arrived |= 1u << lane;
    tell_hooks(rt, w, effective, site, false);
    if (g->arrived == g->mask) complete(rt, w, g, site);
    coop_wait(rt);
    return self->received;
}

void labkit_syncwarp(unsigned mask, const char *file, int line)
{
    const coop_site site = { file, line, "__syncwarp()" };
    arrive(mask, false, LABKIT_SHUFFLE_IDX, 0, 0, COOP_WARP_SIZE, &site);
}

uint32_t labkit_shuffle(enum labkit_shuffle_mode mode, unsigned mask, uint32_t value, int lane_arg, int width,
                        const char *file, int line)
{
    const coop_site site = { file, line, (unsigned)mode < 4 ? shuffle_names[mode] : "a shuffle" };
    return arrive(mask, true, mode, value, lane_arg, width, &site);
}
