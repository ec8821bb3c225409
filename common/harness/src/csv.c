/* csv.c: results as comma-separated values, written under a temporary name.
 *
 * The rows go to a temporary file beside the destination (files.h: a short
 * ".labkit-XXXXXX", so a long destination name still fits); csv_close renames
 * that file onto the destination. A rename within one directory is atomic, so a
 * reader (a plotting script, a spreadsheet) sees the old file or the whole new
 * one, never half of it, even when the program crashes halfway. The destination
 * must be absent or a regular file (output_check): a device, a FIFO, a
 * directory or a symbolic link is refused before anything is written. "-"
 * writes to standard output.
 *
 * Numbers are written with "%.9g": nine significant digits hold every float32
 * exactly, and the labs measure nothing more precisely than that. Text cells
 * follow RFC 4180: a cell holding a comma, a double quote or a line break is
 * put in double quotes, and a double quote inside it is doubled. Lines end
 * with "\n", which every tool on Linux (and pandas, and gnuplot) reads. */
#include "labkit/csv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/files.h"

struct csv_file {
    output_file out; /* the stream, the destination and the temporary file */
    FILE *stream;    /* out.stream, or standard output for "-" */
    int ncolumns;
};

/* ---- writing cells ---------------------------------------------------------- */

static bool needs_quotes(const char *text) { return strpbrk(text, ",\"\r\n") != NULL; }

/* Writes one cell; returns false when the stream failed. */
static bool write_text_cell(FILE *stream, const char *text)
{
    if (!needs_quotes(text)) {
        return fputs(text, stream) != EOF;
    }
    if (fputc('"', stream) == EOF) {
        return false;
    }
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '"' && fputc('"', stream) == EOF) { /* "" stands for one " */
            return false;
        }
        if (fputc(*c, stream) == EOF) {
            return false;
        }
    }
    return fputc('"', stream) != EOF;
}

static bool write_text_row(FILE *stream, const char *const *cells, int ncells)
{
    for (int i = 0; i < ncells; i++) {
        if (i > 0 && fputc(',', stream) == EOF) {
            return false;
        }
        if (!write_text_cell(stream, cells[i])) {
            return false;
        }
    }
    return fputc('\n', stream) != EOF;
}

static bool write_number_row(FILE *stream, const double *values, int nvalues)
{
    for (int i = 0; i < nvalues; i++) {
        if (fprintf(stream, i > 0 ? ",%.9g" : "%.9g", values[i]) < 0) {
            return false;
        }
    }
    return fputc('\n', stream) != EOF;
}

/* ---- checking arguments -------------------------------------------------------- */

/* The index of the first NULL among `n` strings, or -1 when there is none. */
static int first_null(const char *const *strings, int n)
{
    for (int i = 0; i < n; i++) {
        if (strings[i] == NULL) {
            return i;
        }
    }
    return -1;
}

static status check_row(const char *function, const csv_file *f, const void *cells, int ncells,
                        const char *what)
{
    if (f == NULL) {
        return fail(STATUS_BAD_ARGUMENT, "%s: the file is NULL; open it with csv_open first", function);
    }
    if (ncells != f->ncolumns) {
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: the row has %d %s but %s has %d columns; give one per column "
                    "(nothing was written)",
                    function, ncells, what, f->out.path, f->ncolumns);
    }
    if (cells == NULL) {
        return fail(STATUS_BAD_ARGUMENT, "%s: the %s pointer is NULL (writing to %s)", function, what,
                    f->out.path);
    }
    return STATUS_OK;
}

static status write_failed(const char *function, const csv_file *f)
{
    return fail(STATUS_IO_FAILED, "%s: cannot write to %s: %s (is the disk full?)", function,
                f->out.temp_path ? f->out.temp_path : "standard output", strerror(errno));
}

/* ---- the public functions ------------------------------------------------------ */

status csv_open(csv_file **out, const char *path, const char *const *columns, int ncolumns)
{
    if (out == NULL) {
        return fail(STATUS_BAD_ARGUMENT, "csv_open: out is NULL; pass the address of a csv_file *");
    }
    *out = NULL;
    if (path == NULL || path[0] == '\0') {
        return fail(STATUS_BAD_ARGUMENT,
                    "csv_open: the path is %s; give a file name such as "
                    "\"results.csv\"",
                    path == NULL ? "NULL" : "empty");
    }
    if (columns == NULL || ncolumns < 1) {
        return fail(STATUS_BAD_ARGUMENT,
                    "csv_open(%s): %s; give the column names and their "
                    "number (at least 1)",
                    path, columns == NULL ? "the column names are NULL" : "ncolumns is less than 1");
    }
    int missing = first_null(columns, ncolumns);
    if (missing >= 0) {
        return fail(STATUS_BAD_ARGUMENT, "csv_open(%s): column name %d of %d is NULL", path, missing,
                    ncolumns);
    }

    csv_file *f = calloc(1, sizeof *f);
    if (f == NULL) {
        return fail(STATUS_OUT_OF_MEMORY, "csv_open(%s): out of host memory", path);
    }
    f->ncolumns = ncolumns;
    status opened = output_begin(&f->out, path);
    if (opened != STATUS_OK) {
        free(f);
        return opened;
    }
    f->stream = f->out.stream != NULL ? f->out.stream : output_stdout();
    if (!write_text_row(f->stream, columns, ncolumns)) {
        status s = write_failed("csv_open", f);
        csv_discard(f);
        return s;
    }
    *out = f;
    return STATUS_OK;
}

status csv_row(csv_file *f, const double *values, int nvalues)
{
    status s = check_row("csv_row", f, values, nvalues, "values");
    if (s != STATUS_OK) {
        return s;
    }
    if (!write_number_row(f->stream, values, nvalues)) {
        return write_failed("csv_row", f);
    }
    return STATUS_OK;
}

status csv_row_text(csv_file *f, const char *const *cells, int ncells)
{
    status s = check_row("csv_row_text", f, cells, ncells, "cells");
    if (s != STATUS_OK) {
        return s;
    }
    int missing = first_null(cells, ncells);
    if (missing >= 0) {
        return fail(STATUS_BAD_ARGUMENT,
                    "csv_row_text: cell %d is NULL (writing to %s); "
                    "use \"\" for an empty cell (nothing was written)",
                    missing, f->out.path);
    }
    if (!write_text_row(f->stream, cells, ncells)) {
        return write_failed("csv_row_text", f);
    }
    return STATUS_OK;
}

status csv_close(csv_file *f)
{
    if (f == NULL) {
        return fail(STATUS_BAD_ARGUMENT, "csv_close: the file is NULL; open it with csv_open");
    }
    /* output_commit catches a write that failed earlier and the last buffer that
     * could not be written; an incomplete file never replaces the destination. */
    status s = output_commit(&f->out);
    free(f);
    return s;
}

void csv_discard(csv_file *f)
{
    if (f == NULL) {
        return;
    }
    output_discard(&f->out);
    free(f);
}
