/* coop_barrier.c: __syncthreads() on the simulated GPU and the CPU device.
 *
 * The block barrier counts its arrivals; the last of the block's threads to
 * arrive releases them all, lowest index first. A thread that returned never
 * arrives, so a block in which some threads returned and others wait is left
 * with no thread to run: coop_wait then fails the launch naming where each
 * thread is (barrier divergence). So does a block whose threads all arrived,
 * but at __syncthreads() on different lines. */
#include "coop_describe.h"
#include "coop_hooks.h"
#include "coop_sched.h"

static void tell_hooks(const coop_runtime *rt, const coop_site *site, bool release)
{
    const coop_hooks *hooks = coop_installed_hooks();
    if (!hooks) return;
    const coop_barrier_event e = { COOP_BARRIER_BLOCK, rt->current, 0, 0, site->file, site->line };
    if (release && hooks->barrier_release)
        hooks->barrier_release(hooks->user, &e);
    else if (!release && hooks->barrier_arrive)
        hooks->barrier_arrive(hooks->user, &e);
}

void labkit_syncthreads(const char *file, int line)
{
    const coop_site site = { file, line, "__syncthreads()" };
    coop_runtime *rt = coop_cooperative_block(&site);
    coop_thread *self = &rt->thread[rt->current];
    self->state = COOP_AT_BLOCK_BARRIER;
    self->site = site;
    if (rt->at_barrier == 0)
        rt->barrier_site = site;
    else if (!rt->barrier_sites_differ && !coop_same_site(&site, &rt->barrier_site))
        rt->barrier_sites_differ = true;
    rt->at_barrier++;
    tell_hooks(rt, &site, false);
    if (rt->at_barrier == rt->threads && !rt->barrier_sites_differ) {
        rt->at_barrier = 0;
        for (unsigned i = 0; i < rt->threads; ++i) coop_make_ready(rt, i);
        tell_hooks(rt, &site, true);
    }
    coop_wait(rt);
}
