/* fiber.h: small stacks of one's own and the switch between them (internal).
 *
 * A fiber is a place where a GPU thread can stop (at a barrier) and resume
 * later, on the same OS thread: its own stack, and the registers saved when it
 * stopped. The switch is hand-written for x86-64 and aarch64 (about ten
 * instructions: the callee-saved registers, the stack pointer and the FP
 * control words; fiber_switch_*.S), with ucontext's swapcontext, which makes a
 * system call per switch, elsewhere (fiber_switch_ucontext.c).
 *
 * Stacks come from a pool per OS thread: stack i is made (mmap) the first time
 * it is asked for and kept for the thread's life, so a block of 256 threads
 * pays for its stacks once per simulated GPU, not once per block. Each has a
 * PROT_NONE guard below it, so that an overflow faults at once
 * (fiber_guard_lookup names it for the crash report). AddressSanitizer and
 * valgrind are told of every stack and every switch. */
#ifndef LABKIT_SIM_FIBER_H
#define LABKIT_SIM_FIBER_H

#include <stdbool.h>
#include <stddef.h>

#ifdef LABKIT_FIBER_UCONTEXT
#include <ucontext.h>
typedef struct fiber_context {
    ucontext_t uc;
    void (*entry)(void *arg); /* what a new fiber calls first */
    void *arg;
} fiber_context;
#else
typedef struct fiber_context {
    void *sp; /* the stack pointer it stopped at; the rest is saved on its stack */
} fiber_context;
#endif

typedef struct fiber_stack {
    unsigned char *mapping; /* guard then stack, as mmap gave them */
    unsigned char *low;     /* the usable stack: [low, low + size) */
    size_t size;
    size_t mapping_size;
    unsigned valgrind_id;
    /* AddressSanitizer: how deep the frames went that were still live when it
     * last switched away. A fiber never returns (it is started afresh, or
     * abandoned after a failure), so their redzones stay marked: cleared
     * before the stack's next use. */
    unsigned char *asan_live_low;
} fiber_stack;

/* A context that can be switched away from and back to: a fiber on a pool
 * stack, or the OS thread's own stack (stack NULL) that a block starts on. */
typedef struct fiber {
    fiber_context ctx;
    fiber_stack *stack;
    /* AddressSanitizer's view of the stack: its bounds (learned on the first
     * switch away from the OS thread's own stack) and its fake frames. */
    const void *asan_bottom;
    size_t asan_size;
    void *asan_fake_stack;
} fiber;

typedef void (*fiber_entry)(void *arg);

/* The usable size of each pool stack (larger under AddressSanitizer, whose
 * redzones make frames bigger). */
size_t fiber_stack_size(void);

/* Pool stack `index` of the calling OS thread, made on first use; NULL when
 * the system has no memory for it (errno says why). */
fiber_stack *fiber_stack_get(unsigned index);

/* Makes f a fresh fiber on `stack` that will call entry(arg) when it is first
 * switched to. entry must never return: a fiber that is done switches away
 * with fiber_switch_away_for_good. */
void fiber_start(fiber *f, fiber_stack *stack, fiber_entry entry, void *arg);

/* Makes f stand for the calling OS thread's own stack (nothing to prepare). */
void fiber_adopt_thread_stack(fiber *f);

/* Saves the running context into `from` and resumes `to`; returns when some
 * other fiber switches back to `from`. */
void fiber_switch(fiber *from, fiber *to);

/* Like fiber_switch, for a fiber that will never be resumed (it will be
 * started afresh, if at all). */
void fiber_switch_away_for_good(fiber *from, fiber *to);

/* What a fiber's entry calls first (tells AddressSanitizer the switch ended). */
void fiber_entered(void);

/* Async-signal-safe: whether `address` lies in the guard below one of the
 * calling OS thread's pool stacks, or less than a guard's size below it (a
 * frame too large to touch the guard first); *index says which stack. */
bool fiber_guard_lookup(const void *address, unsigned *index);

/* An alternate signal stack for the calling OS thread, so that a crash
 * handler can run after a stack overflow; installed only where the thread has
 * none. fiber_signal_stack_remove undoes what fiber_signal_stack_install did
 * (for a thread about to end). */
void fiber_signal_stack_install(void);
void fiber_signal_stack_remove(void);

#endif
