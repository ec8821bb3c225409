/* text.h: a string that grows as it is written, for the harness's own messages,
 * command lines and CSV header lines (not part of the public API).
 *
 *   text t = { 0 };
 *   text_add(&t, "data='%s'", path);
 *   if (!t.chars) ... out of memory ...
 *   free(t.chars);
 *
 * An allocation that fails frees what was written and leaves chars NULL, so one
 * check at the end covers every call. */
#ifndef LABKIT_HARNESS_TEXT_H
#define LABKIT_HARNESS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct text {
    char *chars; /* NUL-terminated; NULL before the first write or after a failure */
    size_t length;
    size_t capacity;
    bool failed; /* out of memory at some point: chars is NULL for good */
} text;

/* Appends printf-style. */
void text_add(text *t, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Appends `s` as a gnuplot single-quoted string: 'it''s'; control characters
 * become spaces, since a line break would end the command. */
void text_add_gnuplot_string(text *t, const char *s);

/* Appends `s` as one word for sh: as it is when it holds only safe characters,
 * otherwise in single quotes ('it'\''s'). */
void text_add_shell_word(text *t, const char *s);

/* Appends `s` for the inside of a sh double-quoted string: \ " $ ` escaped. */
void text_add_shell_double_quoted(text *t, const char *s);

#endif
