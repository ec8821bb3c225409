/* fault.c: the library's knowledge of a crash, in words (labkit/fault.h).
 *
 * Everything here runs inside a signal handler: text is assembled by hand
 * into the caller's buffer, never with snprintf (which may allocate). */
#include "labkit/fault.h"

#include <stdint.h>
#include <string.h>

#include "guarded_memory.h"
#include "sim/sim_fault.h"

/* Appends to a text buffer that never overflows and is always terminated. */
typedef struct text_buffer {
    char *at;
    size_t size, used;
} text_buffer;

static void append(text_buffer *t, const char *s)
{
    while (*s && t->used + 1 < t->size) t->at[t->used++] = *s++;
    if (t->size) t->at[t->used] = '\0';
}

static void append_count(text_buffer *t, size_t n)
{
    char digits[24];
    int i = (int)sizeof digits - 1;
    digits[i] = '\0';
    do digits[--i] = (char)('0' + n % 10), n /= 10;
    while (n && i > 0);
    append(t, digits + i);
}

size_t fault_describe_address(const void *address, const char *access, char *out, size_t size)
{
    size_t bytes, past_end;
    if (!out || size == 0) return 0;
    out[0] = '\0';
    if (sim_fault_description(address, out, size)) return strlen(out);
    if (!guarded_describe(address, &bytes, &past_end)) return 0;
    text_buffer t = { out, size, 0 };
    append(&t, access ? "a " : "an access ");
    if (access) append(&t, access), append(&t, " ");
    append_count(&t, past_end);
    append(&t, past_end == 1 ? " byte past the end of a buffer of " : " bytes past the end of a buffer of ");
    append_count(&t, bytes);
    append(&t, " bytes (a tensor's memory, or a host_alloc array): ");
    append(&t, past_end < 16
                   ? "an index one past the end? (a loop's < written as <=, a missing bound check)"
                   : "an index past the end (a wrong leading dimension, or rows and columns swapped?)");
    return t.used;
}

size_t fault_describe_kernel(char *out, size_t size)
{
    if (!out || size == 0) return 0;
    out[0] = '\0';
    return sim_fault_describe_kernel(out, size);
}
