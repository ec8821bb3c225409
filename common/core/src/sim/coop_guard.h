/* coop_guard.h: how a launch that fails gets back to its launcher's caller
 * (internal).
 *
 * A failure can be found deep inside a kernel (a barrier no other thread will
 * reach), on a fiber. CUDA stops such a launch and keeps the error for the
 * device; so does the simulated GPU: the failing fiber hands control back to
 * the OS thread's own stack, which jumps (longjmp) back to coop_run_guarded,
 * around the launcher that the device's queue called. The fibers left
 * stopped are abandoned, never resumed. The kernels and launchers of the kit
 * own nothing that such a jump would leak. */
#ifndef LABKIT_SIM_COOP_GUARD_H
#define LABKIT_SIM_COOP_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/kernel.h"

/* Runs body(arg). When a launch inside it fails, returns false with the
 * message in out (at most size bytes); true otherwise. */
bool coop_run_guarded(void (*body)(void *arg), void *arg, char *out, size_t size);

/* coop_run_guarded for a kernel's launcher: fn(args, NULL). */
bool coop_run_launcher_guarded(kernel_fn fn, const void *args, char *out, size_t size);

/* Stops the running launch with a message (printf-style): from a fiber by way
 * of the OS thread's own stack. Outside coop_run_guarded (a LAUNCH that no
 * device queued) there is no device to keep the error: it is printed and the
 * program aborts. */
_Noreturn void coop_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* On the OS thread's own stack, resumed after a fiber failed: the jump back. */
_Noreturn void coop_raise(void);

#endif
