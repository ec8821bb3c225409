/* results_print.c: a results table on the terminal, aligned; unknown cells as
 * "-", bytes as KiB/MiB/GiB (results.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "results_internal.h"
#include "text.h"

/* The first mistake of a cell call again, as the current failure: printing,
 * saving and drawing all refuse a table that a mistake left incomplete. */
status results_mistake_again(const results *r, const char *function)
{
    return fail(r->mistake, "%s: an earlier call failed: %s", function, r->mistake_message);
}

/* ---- the terminal ------------------------------------------------------------------------- */

/* "4 KiB", "1.5 MiB", "512 B": bytes in the unit people read. */
static void format_bytes(double bytes, char *buffer, size_t size)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (u < 4 && fabs(bytes) >= 1024) bytes /= 1024, u++;
    snprintf(buffer, size, bytes == floor(bytes) ? "%.0f %s" : "%.1f %s", bytes, units[u]);
}

/* The terminal's text of one cell. */
static void format_cell(const results_column *column, const cell *c, char *buffer, size_t size)
{
    if (column->kind == RESULTS_TEXT) {
        if (!c->text)
            snprintf(buffer, size, "-");
        else
            snprintf(buffer, size, column->format ? column->format : "%s", c->text);
    } else if (isnan(c->number)) {
        snprintf(buffer, size, "-");
    } else if (column->kind == RESULTS_BYTES) {
        format_bytes(c->number, buffer, size);
    } else {
        snprintf(buffer, size, column->format ? column->format : "%.4g", c->number);
    }
}

/* Characters on the screen, not bytes: "µs" is 2 wide, not 3. */
static int display_width(const char *s)
{
    int width = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) width += (*c & 0xC0) != 0x80;
    return width;
}

static const char *heading_of(const results_column *c) { return c->heading ? c->heading : c->name; }

void results_echo_widths(const results *r, int *widths)
{
    for (int c = 0; c < r->ncolumns; c++) {
        int heading = display_width(heading_of(&r->columns[c]));
        widths[c] = r->columns[c].width > heading ? r->columns[c].width : heading;
    }
}

/* Wide enough for every value too: the widths of a whole table printed at once. */
static void table_widths(const results *r, int *widths)
{
    results_echo_widths(r, widths);
    char buffer[256];
    for (int row = 0; row < r->nrows; row++)
        for (int c = 0; c < r->ncolumns; c++) {
            format_cell(&r->columns[c], &r->cells[row * r->ncolumns + c], buffer, sizeof buffer);
            int width = display_width(buffer);
            if (width > widths[c]) widths[c] = width;
        }
}

/* Text to the left of its column, numbers to the right; two spaces between. */
static void print_aligned(const char *const *cells, const results *r, const int *widths)
{
    for (int c = 0; c < r->ncolumns; c++) {
        int pad = widths[c] - display_width(cells[c]);
        bool left = r->columns[c].kind == RESULTS_TEXT;
        if (c > 0) fputs("  ", stdout);
        if (!left) printf("%*s", pad > 0 ? pad : 0, "");
        fputs(cells[c], stdout);
        if (left && c + 1 < r->ncolumns) printf("%*s", pad > 0 ? pad : 0, "");
    }
    fputc('\n', stdout);
}

static void print_heading(const results *r, const int *widths)
{
    const char *headings[64];
    for (int c = 0; c < r->ncolumns; c++) headings[c] = heading_of(&r->columns[c]);
    print_aligned(headings, r, widths);
}

void results_print_rows(results *r, int from, int to, const int *widths)
{
    if (!r->heading_printed || !r->echo) print_heading(r, widths);
    r->heading_printed = true;
    char buffers[64][256];
    const char *cells[64];
    for (int row = from; row < to; row++) {
        for (int c = 0; c < r->ncolumns; c++) {
            format_cell(&r->columns[c], &r->cells[row * r->ncolumns + c], buffers[c], sizeof buffers[c]);
            cells[c] = buffers[c];
        }
        print_aligned(cells, r, widths);
    }
    fflush(stdout);
}

status results_print(results *r)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_print: the table is NULL; make it with results_create");
    int widths[64];
    if (r->echo) {
        results_echo_widths(r, widths);
        if (r->nrows > r->echoed || !r->heading_printed) results_print_rows(r, r->echoed, r->nrows, widths);
        r->echoed = r->nrows;
    } else {
        table_widths(r, widths);
        results_print_rows(r, 0, r->nrows, widths);
    }
    return r->mistake != STATUS_OK ? results_mistake_again(r, "results_print") : STATUS_OK;
}
