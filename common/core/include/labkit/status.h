/* status.h: how every library call reports success or failure.
 *
 * A call returns a status; when it is not STATUS_OK the library keeps a message
 * that says what was wrong (with the devices, shapes and values involved) and how
 * to fix it. The message belongs to the calling thread and stays until the next
 * failure on that thread. The library never aborts on a user's mistake. */
#ifndef LABKIT_STATUS_H
#define LABKIT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum status {
    STATUS_OK = 0,
    STATUS_BAD_ARGUMENT,   /* a NULL, a wrong shape, a value out of range */
    STATUS_WRONG_DEVICE,   /* operands on different devices, or no such device */
    STATUS_OUT_OF_MEMORY,  /* the device (or the host) has no room left */
    STATUS_NOT_READY,      /* asked for a result the device has not produced yet */
    STATUS_BACKEND_FAILED, /* CUDA, cuBLAS or the operating system said no */
    STATUS_IO_FAILED,      /* a file could not be read or written */
    STATUS_TODO,           /* a lab step the student has not written yet */
    STATUS_KERNEL_FAILED /* a kernel's launch failed on the device (a barrier not every thread reached, ...) */
} status;

/* The message of the last failure on this thread ("" if none). */
const char *last_error(void);

/* A short name for a status ("STATUS_WRONG_DEVICE"). */
const char *status_name(status s);

/* Records a failure message (printf-style) and returns `s`, so that a function
 * can write `return fail(STATUS_BAD_ARGUMENT, "...", ...);`. */
status fail(status s, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* TRY(call): the calling function returns the status of `call` when it is not
 * STATUS_OK, with its message as it was recorded; else it goes on. For a
 * chain of calls with nothing to undo when one fails:
 *     TRY(tensor_zeros(&l->b, d, shape1(out)));
 *     TRY(tensor_zeros(&l->db, d, shape1(out)));
 *     return STATUS_OK;
 * rather than `if (s == STATUS_OK) s = ...;` on every line. */
#define TRY(call)                                         \
    do {                                                  \
        const status try_status_ = (call);                \
        if (try_status_ != STATUS_OK) return try_status_; \
    } while (0)

/* What an unwritten lab step returns: STATUS_TODO with the message
 * "TODO: <what> is not written yet (<file>:<line>)", naming the place in lab.c
 * where the step is to be written. */
#define todo(what) todo_at(__FILE__, __LINE__, (what))
status todo_at(const char *file, int line, const char *what);

/* Forgets the last message (tests use it to see that a call set a new one). */
void clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
