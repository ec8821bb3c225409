/* coop_sched.h: the threads of a cooperative block, and who runs next
 * (internal).
 *
 * A block turns cooperative when one of its threads first meets a barrier in
 * a launch that ran its threads one by one: that thread (the origin) stays on
 * the OS thread's own stack, the threads before it have returned, the threads
 * after it become fibers, queued in index order. From then on a thread runs
 * until it waits at a barrier or returns; then the first thread of the ready
 * queue runs. A barrier that every thread it needs has reached puts them back
 * in the queue, lowest index first. When no thread can run although some have
 * not returned, they wait for each other forever: the launch fails, saying
 * where each thread is. */
#ifndef LABKIT_SIM_COOP_SCHED_H
#define LABKIT_SIM_COOP_SCHED_H

#include "coop_internal.h"

/* The runtime of the running block, made cooperative first if it was not:
 * called by every barrier, with its site for the messages. */
coop_runtime *coop_cooperative_block(const coop_site *site);

/* Queues thread `index` (released by a barrier). */
void coop_make_ready(coop_runtime *rt, unsigned index);

/* The running thread has noted where it waits: the next ready thread runs.
 * Returns when the running thread is resumed (at once when it is itself the
 * next); fails the launch when no thread can run. */
void coop_wait(coop_runtime *rt);

#endif
