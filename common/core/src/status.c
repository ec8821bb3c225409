/* status.c: the per-thread error message behind every failed call. */
#include "labkit/status.h"

#include <stdarg.h>
#include <stdio.h>

/* Long enough for a message that names two tensors, their shapes and a hint,
 * or a failed kernel's launch site, barrier, block and threads. */
#define MESSAGE_CAPACITY 2048

static _Thread_local char message[MESSAGE_CAPACITY];

const char *last_error(void) { return message; }

void clear_error(void) { message[0] = '\0'; }

const char *status_name(status s)
{
    switch (s) {
    case STATUS_OK: return "STATUS_OK";
    case STATUS_BAD_ARGUMENT: return "STATUS_BAD_ARGUMENT";
    case STATUS_WRONG_DEVICE: return "STATUS_WRONG_DEVICE";
    case STATUS_OUT_OF_MEMORY: return "STATUS_OUT_OF_MEMORY";
    case STATUS_NOT_READY: return "STATUS_NOT_READY";
    case STATUS_BACKEND_FAILED: return "STATUS_BACKEND_FAILED";
    case STATUS_IO_FAILED: return "STATUS_IO_FAILED";
    case STATUS_TODO: return "STATUS_TODO";
    case STATUS_KERNEL_FAILED: return "STATUS_KERNEL_FAILED";
    }
    return "STATUS_UNKNOWN";
}

status fail(status s, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    return s;
}

status todo_at(const char *file, int line, const char *what)
{
    return fail(STATUS_TODO, "TODO: %s is not written yet (%s:%d)", what ? what : "this step",
                file ? file : "?", line);
}
