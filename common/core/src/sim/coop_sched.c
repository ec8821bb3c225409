/* coop_sched.c: a block turned cooperative, its ready queue, and the switches
 * between its threads (coop_sched.h). */
#include "coop_sched.h"

#include <errno.h>
#include <string.h>

#include "coop_call.h"
#include "coop_describe.h"
#include "coop_guard.h"
#include "coop_hooks.h"

void coop_make_ready(coop_runtime *rt, unsigned index)
{
    unsigned place = rt->ready_head + rt->ready_count;
    if (place >= rt->threads) place -= rt->threads;
    rt->ready[place] = index;
    rt->ready_count++;
    rt->thread[index].state = COOP_READY;
}

static bool next_ready(coop_runtime *rt, unsigned *index)
{
    if (rt->ready_count == 0) return false;
    *index = rt->ready[rt->ready_head];
    rt->ready_head = rt->ready_head + 1 == rt->threads ? 0 : rt->ready_head + 1;
    rt->ready_count--;
    return true;
}

/* Makes thread `next` the running one (its indices too); the caller switches. */
static coop_thread *become(coop_runtime *rt, unsigned next)
{
    coop_thread *to = &rt->thread[next];
    to->state = COOP_RUNNING;
    rt->current = next;
    threadIdx = to->index;
    return to;
}

/* No thread can run, yet some have not returned: they would wait forever. */
_Noreturn static void fail_stuck(coop_runtime *rt)
{
    bool at_block_barrier = false;
    for (unsigned i = 0; i < rt->threads && !at_block_barrier; ++i)
        at_block_barrier = rt->thread[i].state == COOP_AT_BLOCK_BARRIER;
    char launch[256], block[64], threads[640];
    coop_launch_text(launch, sizeof launch, coop_launch_running);
    coop_block_text(block, sizeof block, blockIdx);
    coop_threads_text(threads, sizeof threads, rt, blockDim);
    if (at_block_barrier)
        coop_fail(
            "%s: barrier divergence in %s: %s.\n"
            "  hint: every thread of a block must reach the same __syncthreads(), each time: keep it out of "
            "branches that differ between threads, and return only after the last one (guard the work, "
            "not the barrier)",
            launch, block, threads);
    coop_fail("%s: a warp barrier that some threads of its mask never reach, in %s: %s.\n"
              "  hint: a mask names exactly the threads that call the shuffle or __syncwarp() together "
              "(0xffffffff: the whole warp), and each of them must call it",
              launch, block, threads);
}

void coop_wait(coop_runtime *rt)
{
    coop_thread *self = &rt->thread[rt->current];
    unsigned next;
    if (!next_ready(rt, &next)) fail_stuck(rt);
    if (next == rt->current) {
        self->state = COOP_RUNNING;
        return;
    }
    fiber_switch(&self->fib, &become(rt, next)->fib);
    if (rt->failing) coop_raise();
}

/* The running thread's kernel returned: the next one runs, or, when every
 * thread has returned, the origin finishes the block. Never returns. */
_Noreturn static void fiber_returned(coop_runtime *rt)
{
    coop_thread *self = &rt->thread[rt->current];
    self->state = COOP_RETURNED;
    rt->returned++;
    unsigned next;
    if (next_ready(rt, &next)) {
        fiber_switch_away_for_good(&self->fib, &become(rt, next)->fib);
    } else if (rt->returned == rt->threads) {
        rt->current = rt->origin;
        fiber_switch_away_for_good(&self->fib, &rt->thread[rt->origin].fib);
    }
    fail_stuck(rt);
}

/* Where every thread but the origin starts: the kernel, with LAUNCH's
 * arguments. */
static void fiber_main(void *arg)
{
    (void)arg;
    fiber_entered();
    coop_call_kernel(coop_launch_running);
    fiber_returned(coop_rt);
}

void labkit_block_finish(void)
{
    coop_runtime *rt = coop_rt;
    coop_thread *self = &rt->thread[rt->origin];
    self->state = COOP_RETURNED;
    rt->returned++;
    unsigned next;
    if (next_ready(rt, &next)) {
        fiber_switch(&self->fib, &become(rt, next)->fib);
        if (rt->failing) coop_raise();
    } else if (rt->returned != rt->threads) {
        fail_stuck(rt);
    }
    labkit_block_cooperative = 0;
}

/* ---- turning a block cooperative ------------------------------------------- */

static void start_threads(coop_runtime *rt, unsigned first, const coop_site *site)
{
    const unsigned n = rt->threads;
    for (unsigned i = 0; i < n; ++i) {
        coop_thread *t = &rt->thread[i];
        t->index = coop_thread_index(i, blockDim);
        t->linear = i;
        t->state = i < first ? COOP_RETURNED : COOP_RUNNING;
    }
    fiber_adopt_thread_stack(&rt->thread[first].fib);
    for (unsigned i = first + 1; i < n; ++i) {
        fiber_stack *stack = fiber_stack_get(i);
        if (!stack) {
            char launch[256];
            coop_launch_text(launch, sizeof launch, coop_launch_running);
            coop_fail("%s: no memory for the stack of thread %u, needed by its barrier %s (%s:%d): %s",
                      launch, i, site->what, site->file, site->line, strerror(errno));
        }
        fiber_start(&rt->thread[i].fib, stack, fiber_main, NULL);
        coop_make_ready(rt, i);
    }
}

static coop_runtime *make_cooperative(const coop_site *site)
{
    char launch[256], why[700];
    const labkit_launch *l = coop_launch_running;
    if (!l)
        coop_fail(
            "%s at %s:%d ran outside a kernel launch: call the kernel with LAUNCH (labkit/cuda_emulation.h)",
            site->what, site->file, site->line);
    coop_launch_text(launch, sizeof launch, l);
    coop_runtime *rt = coop_runtime_get();
    if (!rt)
        coop_fail("%s: no memory for the threads of a block that meets %s (%s:%d)", launch, site->what,
                  site->file, site->line);
    if (!coop_call_prepare(l, why, sizeof why))
        coop_fail("%s cannot run its barrier %s (%s:%d): %s", launch, site->what, site->file, site->line,
                  why);
    const unsigned first = coop_linear_thread(threadIdx, blockDim);
    rt->threads = coop_block_threads(blockDim);
    rt->returned = first;
    rt->ready_head = rt->ready_count = 0;
    rt->at_barrier = 0;
    rt->barrier_sites_differ = false;
    rt->failing = false;
    for (unsigned w = 0; w * COOP_WARP_SIZE < rt->threads; ++w) rt->warp[w].groups = 0;
    start_threads(rt, first, site);
    rt->origin = rt->current = first;
    fiber_signal_stack_install(); /* where the host runs the block (cpu): a crash report after an overflow */
    labkit_block_cooperative = 1;
    const coop_hooks *hooks = coop_installed_hooks();
    if (hooks && hooks->block_cooperative) hooks->block_cooperative(hooks->user, blockIdx, first);
    return rt;
}

coop_runtime *coop_cooperative_block(const coop_site *site)
{
    if (labkit_block_cooperative) return coop_rt;
    return make_cooperative(site);
}
