/* text.c: a growing string, and the quoting that commands and scripts need. */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for `more` characters and the NUL; false (and everything freed) when
 * there is no memory. */
static bool reserve(text *t, size_t more)
{
    if (t->failed) return false;
    if (t->chars && t->length + more < t->capacity) return true;
    size_t capacity = t->capacity ? t->capacity : 64;
    while (capacity <= t->length + more) capacity *= 2;
    char *bigger = realloc(t->chars, capacity);
    if (!bigger) {
        free(t->chars);
        *t = (text){ .failed = true };
        return false;
    }
    if (!t->chars) bigger[0] = '\0';
    t->chars = bigger;
    t->capacity = capacity;
    return true;
}

static void add_char(text *t, char c)
{
    if (!reserve(t, 1)) return;
    t->chars[t->length++] = c;
    t->chars[t->length] = '\0';
}

void text_add(text *t, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int needed = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (needed < 0 || !reserve(t, (size_t)needed)) return;
    va_start(args, format);
    vsnprintf(t->chars + t->length, (size_t)needed + 1, format, args);
    va_end(args);
    t->length += (size_t)needed;
}

void text_add_gnuplot_string(text *t, const char *s)
{
    add_char(t, '\'');
    for (const char *c = s; *c; c++) {
        if (*c == '\'') add_char(t, '\'');
        add_char(t, (unsigned char)*c < ' ' ? ' ' : *c);
    }
    add_char(t, '\'');
}

/* Characters that mean nothing to sh: a word made of these needs no quotes. */
static bool is_shell_safe(const char *s)
{
    return s[0] &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") == strlen(s);
}

void text_add_shell_word(text *t, const char *s)
{
    if (is_shell_safe(s)) {
        text_add(t, "%s", s);
        return;
    }
    add_char(t, '\'');
    for (const char *c = s; *c; c++) {
        if (*c == '\'')
            text_add(t, "'\\''");
        else
            add_char(t, *c);
    }
    add_char(t, '\'');
}

void text_add_shell_double_quoted(text *t, const char *s)
{
    for (const char *c = s; *c; c++) {
        if (strchr("\\\"$`", *c)) add_char(t, '\\');
        add_char(t, *c);
    }
}
