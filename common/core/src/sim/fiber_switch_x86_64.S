/* fiber_switch_x86_64.S: the switch between two fibers on x86-64 (System V).
 *
 * A switch is a function call that returns on another stack: it pushes what
 * the caller expects a call to preserve (rbx, rbp, r12-r15, and the SSE and
 * x87 control words: rounding mode, exceptions masked), stores the stack
 * pointer into `from`, loads the one saved in `to` and pops the same set from
 * there. The other registers are the caller's to save, so nothing else is
 * needed: about 20 instructions and no system call (swapcontext makes one to
 * save the signal mask, which fibers of one OS thread share anyway). */

    .text

/* void labkit_fiber_switch(fiber_context *from, fiber_context *to) */
    .globl  labkit_fiber_switch
    .type   labkit_fiber_switch, @function
    .p2align 4
labkit_fiber_switch:
    .cfi_startproc
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    subq    $8, %rsp
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    movq    %rsp, (%rdi)
    movq    (%rsi), %rsp
    ldmxcsr (%rsp)
    fldcw   4(%rsp)
    addq    $8, %rsp
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
    ret
    .cfi_endproc
    .size   labkit_fiber_switch, .-labkit_fiber_switch

/* void labkit_fiber_make(fiber_context *ctx, void *low, size_t size,
 *                        void (*entry)(void *), void *arg)
 * Lays out on the new stack what labkit_fiber_switch pops: the caller's
 * control words, entry in r12 and arg in r13, and a return address that is
 * the trampoline below. The trampoline then starts with rsp 16-byte aligned,
 * so that entry sees the alignment the ABI promises after a call. */
    .globl  labkit_fiber_make
    .type   labkit_fiber_make, @function
    .p2align 4
labkit_fiber_make:
    .cfi_startproc
    leaq    (%rsi,%rdx), %rax
    andq    $-16, %rax
    subq    $80, %rax
    stmxcsr (%rax)
    fnstcw  4(%rax)
    movq    $0, 8(%rax)
    movq    $0, 16(%rax)
    movq    %r8, 24(%rax)
    movq    %rcx, 32(%rax)
    movq    $0, 40(%rax)
    movq    $0, 48(%rax)
    leaq    labkit_fiber_trampoline(%rip), %r9
    movq    %r9, 56(%rax)
    movq    %rax, (%rdi)
    ret
    .cfi_endproc
    .size   labkit_fiber_make, .-labkit_fiber_make

/* The first code a fiber runs: entry(arg), which never returns. Its return
 * address is undefined, so that debuggers and backtraces stop here. */
    .type   labkit_fiber_trampoline, @function
    .p2align 4
labkit_fiber_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    movq    %r13, %rdi
    callq   *%r12
    ud2
    .cfi_endproc
    .size   labkit_fiber_trampoline, .-labkit_fiber_trampoline

    .section .note.GNU-stack,"",@progbits
