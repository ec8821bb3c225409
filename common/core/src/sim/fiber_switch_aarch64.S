/* fiber_switch_aarch64.S: the switch between two fibers on aarch64 (AAPCS64).
 *
 * As on x86-64 (fiber_switch_x86_64.S): save what a call preserves (x19-x28,
 * the frame pointer x29, the link register x30, the low halves d8-d15 of
 * v8-v15, and the FP control register fpcr) on the running stack, store sp
 * into `from`, load `to`'s and restore the same set from there; the return
 * then goes to wherever `to` stopped. No system call. */

    .text

/* void labkit_fiber_switch(fiber_context *from, fiber_context *to) */
    .globl  labkit_fiber_switch
    .type   labkit_fiber_switch, %function
    .p2align 4
labkit_fiber_switch:
    .cfi_startproc
    sub     sp, sp, #176
    stp     x19, x20, [sp, #0]
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    stp     x29, x30, [sp, #80]
    stp     d8, d9, [sp, #96]
    stp     d10, d11, [sp, #112]
    stp     d12, d13, [sp, #128]
    stp     d14, d15, [sp, #144]
    mrs     x9, fpcr
    str     x9, [sp, #160]
    mov     x9, sp
    str     x9, [x0]
    ldr     x9, [x1]
    mov     sp, x9
    ldp     x19, x20, [sp, #0]
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x29, x30, [sp, #80]
    ldp     d8, d9, [sp, #96]
    ldp     d10, d11, [sp, #112]
    ldp     d12, d13, [sp, #128]
    ldp     d14, d15, [sp, #144]
    ldr     x9, [sp, #160]
    msr     fpcr, x9
    add     sp, sp, #176
    ret
    .cfi_endproc
    .size   labkit_fiber_switch, .-labkit_fiber_switch

/* void labkit_fiber_make(fiber_context *ctx, void *low, size_t size,
 *                        void (*entry)(void *), void *arg)
 * The frame labkit_fiber_switch restores: entry in x19, arg in x20, the
 * trampoline as the link register, the caller's fpcr; sp 16-byte aligned. */
    .globl  labkit_fiber_make
    .type   labkit_fiber_make, %function
    .p2align 4
labkit_fiber_make:
    .cfi_startproc
    add     x9, x1, x2
    and     x9, x9, #-16
    sub     x9, x9, #176
    stp     x3, x4, [x9, #0]
    stp     xzr, xzr, [x9, #16]
    stp     xzr, xzr, [x9, #32]
    stp     xzr, xzr, [x9, #48]
    stp     xzr, xzr, [x9, #64]
    adr     x10, labkit_fiber_trampoline
    stp     xzr, x10, [x9, #80]
    stp     xzr, xzr, [x9, #96]
    stp     xzr, xzr, [x9, #112]
    stp     xzr, xzr, [x9, #128]
    stp     xzr, xzr, [x9, #144]
    mrs     x10, fpcr
    str     x10, [x9, #160]
    str     x9, [x0]
    ret
    .cfi_endproc
    .size   labkit_fiber_make, .-labkit_fiber_make

/* The first code a fiber runs: entry(arg), which never returns. */
    .type   labkit_fiber_trampoline, %function
    .p2align 4
labkit_fiber_trampoline:
    .cfi_startproc
    .cfi_undefined x30
    mov     x0, x20
    blr     x19
    brk     #0
    .cfi_endproc
    .size   labkit_fiber_trampoline, .-labkit_fiber_trampoline

    .section .note.GNU-stack,"",%progbits
