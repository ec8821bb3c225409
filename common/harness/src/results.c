/* results.c: one table of results, printed, saved as CSV and drawn.
 *
 * A lab used to write every result three times: a printf for the table, a
 * CSV row, a plot series. Here it sets each cell once, by its column's name,
 * and the table is printed, saved and drawn from the same cells, so the three
 * can never disagree. The rows stay in memory until the end: nothing is
 * created on disk until the CSV is written whole (files.h).
 *
 * An unknown value is shown as unknown everywhere: "-" on the terminal and an
 * empty cell in the CSV, which gnuplot and pandas read as missing. A 0 would be
 * read as a measurement. */
#include "labkit/results.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "labkit/figure.h"
#include "labkit/files.h"
#include "results_internal.h"
#include "text.h"

#ifndef LABKIT_PLOT_STYLE_DEFAULT
#define LABKIT_PLOT_STYLE_DEFAULT NULL
#endif

/* ---- checking the columns ---------------------------------------------------------- */

static bool is_identifier(const char *name)
{
    if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_')) return false;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_') return false;
    return true;
}

/* Whether `format` has exactly one conversion, one of `conversions`, with
 * only flags, a width and a precision: what printf may be given one value of
 * that kind with. "%%" is text. */
static bool is_one_conversion(const char *format, const char *conversions)
{
    int found = 0;
    for (const char *c = format; *c; c++) {
        if (*c != '%') continue;
        if (c[1] == '%') {
            c++;
            continue;
        }
        c++;
        c += strspn(c, "-+ 0#");
        c += strspn(c, "0123456789");
        if (*c == '.') c += 1 + strspn(c + 1, "0123456789");
        if (!*c || !strchr(conversions, *c)) return false;
        found++;
    }
    return found == 1;
}

static status check_column(const results_column *columns, int i)
{
    const results_column *c = &columns[i];
    if (!is_identifier(c->name))
        return fail(STATUS_BAD_ARGUMENT,
                    "results_create: column %d's name \"%s\" is not letters, digits and _ (starting with a "
                    "letter); gnuplot and pandas read columns by such names",
                    i, c->name ? c->name : "(NULL)");
    for (int k = 0; k < i; k++)
        if (strcmp(columns[k].name, c->name) == 0)
            return fail(STATUS_BAD_ARGUMENT, "results_create: two columns are named \"%s\"", c->name);
    if ((int)c->kind < (int)RESULTS_TEXT || (int)c->kind > (int)RESULTS_BYTES)
        return fail(STATUS_BAD_ARGUMENT,
                    "results_create: column \"%s\" has kind %d; use RESULTS_TEXT, RESULTS_NUMBER or "
                    "RESULTS_BYTES",
                    c->name, (int)c->kind);
    if (c->width < 0 || c->width > 200)
        return fail(STATUS_BAD_ARGUMENT, "results_create: column \"%s\" has width %d; give 0 to 200", c->name,
                    c->width);
    if (c->kind == RESULTS_BYTES && c->format)
        return fail(
            STATUS_BAD_ARGUMENT,
            "results_create: column \"%s\" holds bytes, printed as \"4 KiB\" or \"256 MiB\"; leave its "
            "format NULL",
            c->name);
    if (c->format && c->kind == RESULTS_NUMBER && !is_one_conversion(c->format, "feEgG"))
        return fail(
            STATUS_BAD_ARGUMENT,
            "results_create: column \"%s\": \"%s\" is not a format for one number; use one %%f, %%e or "
            "%%g conversion, such as \"%%.1f\" or \"%%.2fx\"",
            c->name, c->format);
    if (c->format && c->kind == RESULTS_TEXT && !is_one_conversion(c->format, "s"))
        return fail(STATUS_BAD_ARGUMENT,
                    "results_create: column \"%s\": \"%s\" is not a format for one text; use one %%s "
                    "conversion",
                    c->name, c->format);
    return STATUS_OK;
}

/* ---- making and freeing ---------------------------------------------------------------- */

static char *copy(const char *s) { return s ? strdup(s) : NULL; }

/* "lab04-solution --quick --device sim:0": the program's base name and its
 * arguments, each quoted for sh when it needs it. */
static char *command_line(int argc, char **argv)
{
    text t = { 0 };
    for (int i = 0; argv && i < argc; i++) {
        const char *word = argv[i] ? argv[i] : "";
        if (i == 0 && strrchr(word, '/')) word = strrchr(word, '/') + 1;
        if (i > 0) text_add(&t, " ");
        text_add_shell_word(&t, word);
    }
    return t.chars ? t.chars : strdup("");
}

static void utc_now(char *buffer, size_t size)
{
    time_t now = time(NULL);
    struct tm utc;
    if (!gmtime_r(&now, &utc) || !strftime(buffer, size, "%Y-%m-%dT%H:%M:%SZ", &utc))
        snprintf(buffer, size, "unknown");
}

/* What the table needs of the command line. */
static status take_args(results *r, const cli_args *args)
{
    if (!args) return STATUS_OK;
    r->lab = copy(args->program_name);
    r->command = command_line(args->argc, args->argv);
    if ((args->program_name && !r->lab) || !r->command)
        return fail(STATUS_OUT_OF_MEMORY, "results_create: out of host memory");
    if (args->nplots < 0 || args->nplots > CLI_MAX_PLOTS)
        return fail(STATUS_BAD_ARGUMENT, "results_create: args->nplots is %d; it must be 0 to %d",
                    args->nplots, CLI_MAX_PLOTS);
    r->csv_path = args->csv_path;
    r->nplots = args->nplots;
    for (int i = 0; i < args->nplots; i++) r->plot_paths[i] = args->plot_paths[i];
    return STATUS_OK;
}

/* With --plot, the script and the style must be there now, before the work. */
static status check_plot_files(const results *r)
{
    if (r->nplots == 0) return STATUS_OK;
    FILE *f = NULL;
    if (!r->plot_script)
        return fail(STATUS_BAD_ARGUMENT,
                    "--plot %s: this program has no plot script (LAB_PLOT_SCRIPT is not defined when it is "
                    "compiled); labs/CMakeLists.txt defines it for every lab",
                    r->plot_paths[0]);
    if (input_open(r->plot_script, &f, NULL) != STATUS_OK)
        return fail(STATUS_IO_FAILED,
                    "--plot %s needs the lab's plot script %s, which cannot be read; write it "
                    "beside main.c (common/tests/plot_example.gp shows one)",
                    r->plot_paths[0], r->plot_script);
    fclose(f);
    if (!r->plot_style || input_open(r->plot_style, &f, NULL) != STATUS_OK)
        return fail(STATUS_IO_FAILED, "--plot %s needs the shared style file %s, which cannot be read",
                    r->plot_paths[0], r->plot_style ? r->plot_style : "(none was compiled in)");
    fclose(f);
    return STATUS_OK;
}

status results_create_for(results **out, const cli_args *args, const results_column *columns, int ncolumns,
                          const char *plot_script, const char *plot_style)
{
    if (!out)
        return fail(STATUS_BAD_ARGUMENT, "results_create: out is NULL; pass the address of a results *");
    *out = NULL;
    if (!columns || ncolumns < 1 || ncolumns > 64)
        return fail(STATUS_BAD_ARGUMENT,
                    "results_create: %s; give an array of 1 to 64 columns and its length",
                    !columns ? "the columns are NULL" : "ncolumns is out of range");
    for (int i = 0; i < ncolumns; i++) {
        status s = check_column(columns, i);
        if (s != STATUS_OK) return s;
    }
    results *r = calloc(1, sizeof *r);
    if (r) r->columns = malloc((size_t)ncolumns * sizeof *columns);
    if (!r || !r->columns) {
        free(r);
        return fail(STATUS_OUT_OF_MEMORY, "results_create: out of host memory");
    }
    memcpy(r->columns, columns, (size_t)ncolumns * sizeof *columns);
    r->ncolumns = ncolumns;
    r->plot_script = plot_script;
    r->plot_style = plot_style ? plot_style : LABKIT_PLOT_STYLE_DEFAULT;
    utc_now(r->date, sizeof r->date);
    load_now(&r->started);
    status s = take_args(r, args);
    if (s == STATUS_OK) s = check_plot_files(r);
    if (s != STATUS_OK) {
        results_free(r);
        return s;
    }
    *out = r;
    return STATUS_OK;
}

void results_free(results *r)
{
    if (r) free(r->plot_line);
    if (!r) return;
    for (int i = 0; i < r->nrows * r->ncolumns; i++) free(r->cells[i].text);
    free(r->cells);
    free(r->columns);
    free(r->lab);
    free(r->command);
    free(r);
}

/* ---- filling the table ------------------------------------------------------------------ */

/* Records the first mistake (a copy of its message) and returns its status. */
static status remember(results *r, status s)
{
    if (r->mistake == STATUS_OK) {
        r->mistake = s;
        snprintf(r->mistake_message, sizeof r->mistake_message, "%s", last_error());
    }
    return s;
}

static status grow(results *r)
{
    if (r->nrows < r->capacity) return STATUS_OK;
    int capacity = r->capacity ? 2 * r->capacity : 16;
    cell *bigger = realloc(r->cells, (size_t)capacity * (size_t)r->ncolumns * sizeof *bigger);
    if (!bigger) return fail(STATUS_OUT_OF_MEMORY, "results_row: out of host memory for %d rows", capacity);
    r->cells = bigger;
    r->capacity = capacity;
    return STATUS_OK;
}

status results_row(results *r)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_row: the table is NULL; make it with results_create");
    if (r->echo && r->nrows > r->echoed) {
        int widths[64];
        results_echo_widths(r, widths);
        results_print_rows(r, r->echoed, r->nrows, widths);
        r->echoed = r->nrows;
    }
    status s = grow(r);
    if (s != STATUS_OK) return remember(r, s);
    cell *row = &r->cells[r->nrows * r->ncolumns];
    for (int c = 0; c < r->ncolumns; c++) row[c] = (cell){ .number = NAN, .text = NULL };
    r->nrows++;
    return STATUS_OK;
}

static int find_column(const results *r, const char *name)
{
    for (int c = 0; name && c < r->ncolumns; c++)
        if (strcmp(r->columns[c].name, name) == 0) return c;
    return -1;
}

/* The current row's cell in `column`, which must be of the kind asked for. */
static status current_cell(results *r, const char *function, const char *column, bool wants_text, cell **out)
{
    if (r->nrows == 0)
        return remember(r, fail(STATUS_BAD_ARGUMENT, "%s(\"%s\"): no row yet; call results_row first",
                                function, column ? column : "(NULL)"));
    int c = find_column(r, column);
    if (c < 0) {
        text names = { 0 };
        for (int k = 0; k < r->ncolumns; k++) text_add(&names, "%s%s", k ? ", " : "", r->columns[k].name);
        status s = fail(STATUS_BAD_ARGUMENT, "%s: there is no column \"%s\"; the columns are: %s", function,
                        column ? column : "(NULL)", names.chars ? names.chars : "?");
        free(names.chars);
        return remember(r, s);
    }
    bool is_text = r->columns[c].kind == RESULTS_TEXT;
    if (is_text != wants_text)
        return remember(r, fail(STATUS_BAD_ARGUMENT, "%s: column \"%s\" holds %s; use %s", function, column,
                                is_text ? "text" : "numbers", is_text ? "results_text" : "results_number"));
    *out = &r->cells[(r->nrows - 1) * r->ncolumns + c];
    return STATUS_OK;
}

status results_text(results *r, const char *column, const char *value)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_text: the table is NULL; make it with results_create");
    cell *target = NULL;
    status s = current_cell(r, "results_text", column, true, &target);
    if (s != STATUS_OK) return s;
    char *copied = value ? strdup(value) : NULL;
    if (value && !copied) return remember(r, fail(STATUS_OUT_OF_MEMORY, "results_text: out of host memory"));
    free(target->text);
    target->text = copied; /* NULL: unknown */
    return STATUS_OK;
}

status results_number(results *r, const char *column, double value)
{
    if (!r)
        return fail(STATUS_BAD_ARGUMENT, "results_number: the table is NULL; make it with results_create");
    cell *target = NULL;
    status s = current_cell(r, "results_number", column, false, &target);
    if (s != STATUS_OK) return s;
    target->number = isfinite(value) ? value : NAN;
    return STATUS_OK;
}

status results_mention_device(results *r, device d)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_mention_device: the table is NULL");
    if (!device_exists(d))
        return remember(
            r, fail(STATUS_WRONG_DEVICE, "results_mention_device: %s does not exist here", device_name(d)));
    for (int i = 0; i < r->nmentioned; i++)
        if (device_equal(r->mentioned[i], d)) return STATUS_OK;
    if (r->nmentioned < LABKIT_MAX_DEVICES) r->mentioned[r->nmentioned++] = d;
    return STATUS_OK;
}

status results_echo(results *r, bool on)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_echo: the table is NULL");
    r->echo = on;
    return STATUS_OK;
}

int results_count(const results *r) { return r ? r->nrows : 0; }

double results_get(const results *r, int row, const char *column)
{
    if (!r || row < 0 || row >= r->nrows) return NAN;
    int c = find_column(r, column);
    if (c < 0 || r->columns[c].kind == RESULTS_TEXT) return NAN;
    return r->cells[row * r->ncolumns + c].number;
}

double results_busy_frozen(results *r)
{
    if (!r->busy_known) {
        r->busy_cores = load_busy_elsewhere(&r->started, NULL);
        r->busy_known = true;
    }
    return r->busy_cores;
}

double results_busy_elsewhere(results *r) { return r ? results_busy_frozen(r) : -1.0; }
