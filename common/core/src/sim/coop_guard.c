/* coop_guard.c: a failed launch's message and the jump back to the launcher's
 * caller (coop_guard.h). */
#include "coop_guard.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "coop_hooks.h"
#include "coop_internal.h"

static _Thread_local jmp_buf *armed;
static _Thread_local char message[COOP_MESSAGE_CAPACITY];

/* After the jump: nothing of the failed launch may be resumed. */
static void abandon_launch(void)
{
    coop_runtime *rt = coop_rt;
    if (rt) rt->failing = false; /* its fibers are started afresh by the next cooperative block */
    labkit_block_cooperative = 0;
    const coop_hooks *hooks = coop_installed_hooks();
    if (hooks && hooks->launch_failed && coop_launch_running)
        hooks->launch_failed(hooks->user, coop_launch_running, message);
    if (hooks && hooks->launch_end && coop_launch_running)
        hooks->launch_end(hooks->user, coop_launch_running);
    free(labkit_dynamic_shared);
    labkit_dynamic_shared = NULL;
    coop_launch_running = NULL;
}

bool coop_run_guarded(void (*body)(void *arg), void *arg, char *out, size_t size)
{
    jmp_buf here;
    jmp_buf *volatile outer = armed;
    armed = &here;
    if (setjmp(here) == 0) {
        body(arg);
        armed = outer;
        return true;
    }
    armed = outer;
    abandon_launch();
    snprintf(out, size, "%s", message);
    return false;
}

typedef struct launcher_call {
    kernel_fn fn;
    const void *args;
} launcher_call;

static void call_launcher(void *p)
{
    const launcher_call *c = p;
    c->fn(c->args, NULL);
}

bool coop_run_launcher_guarded(kernel_fn fn, const void *args, char *out, size_t size)
{
    launcher_call c = { fn, args };
    return coop_run_guarded(call_launcher, &c, out, size);
}

void coop_raise(void)
{
    if (armed) longjmp(*armed, 1);
    fprintf(
        stderr,
        "labkit: %s\n  (this LAUNCH did not run under device_launch or device_enqueue, so no device could "
        "keep the error)\n",
        message);
    abort();
}

void coop_fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    coop_runtime *rt = coop_rt;
    if (labkit_block_cooperative && rt && rt->current != rt->origin) {
        rt->failing = true;
        fiber_switch_away_for_good(&rt->thread[rt->current].fib, &rt->thread[rt->origin].fib);
    }
    coop_raise();
}
