/* fiber_switch_ucontext.c: the switch between two fibers where the kit has no
 * hand-written one (neither x86-64 nor aarch64): POSIX's ucontext. It works
 * everywhere glibc does, at the price of a system call per switch
 * (swapcontext saves and restores the signal mask): about 40 times slower
 * than fiber_switch_x86_64.S on a barrier-heavy kernel. */
#include <stdint.h>

#include "fiber.h"

void labkit_fiber_switch(fiber_context *from, fiber_context *to);
void labkit_fiber_make(fiber_context *ctx, void *low, size_t size, fiber_entry entry, void *arg);

/* makecontext passes ints only: the context itself, which holds the entry and
 * its argument, travels as two halves of its address. */
static void trampoline(int high, int low)
{
    const uintptr_t address = ((uintptr_t)(unsigned)high << 16 << 16) | (uintptr_t)(unsigned)low;
    fiber_context *ctx = (fiber_context *)address;
    ctx->entry(ctx->arg);
}

void labkit_fiber_make(fiber_context *ctx, void *low, size_t size, fiber_entry entry, void *arg)
{
    const uintptr_t address = (uintptr_t)ctx;
    getcontext(&ctx->uc);
    ctx->uc.uc_stack.ss_sp = low;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_link = NULL;
    ctx->entry = entry;
    ctx->arg = arg;
    makecontext(&ctx->uc, (void (*)(void))trampoline, 2, (int)(unsigned)(address >> 16 >> 16),
                (int)(unsigned)(address & 0xffffffffu));
}

void labkit_fiber_switch(fiber_context *from, fiber_context *to) { swapcontext(&from->uc, &to->uc); }
