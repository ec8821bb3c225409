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
#include "labkit/properties.h"
#include "text.h"

#ifndef LABKIT_PLOT_STYLE_DEFAULT
#define LABKIT_PLOT_STYLE_DEFAULT NULL
#endif

/* A cell: a number (NaN when unknown) or a text (NULL when unknown). */
typedef struct cell {
    double number;
    char *text;
} cell;

struct results {
    results_column *columns;
    int ncolumns;
    cell *cells; /* row r, column c: cells[r * ncolumns + c] */
    int nrows, capacity;

    bool echo;
    bool heading_printed;
    int echoed; /* rows printed by the echo */

    device mentioned[LABKIT_MAX_DEVICES];
    int nmentioned;

    /* The run, for the CSV's header and the outputs. */
    char *lab;     /* "04_matmul"; NULL without args */
    char *command; /* "lab04-solution --quick"; NULL without args */
    char date[32]; /* when the table was made, UTC */
    const char *csv_path;
    const char *plot_paths[CLI_MAX_PLOTS];
    int nplots;
    const char *plot_script, *plot_style;

    /* The first mistake in a cell call, reported again by print and finish. */
    status mistake;
    char mistake_message[512];
};

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

/* The first mistake again, as the current failure. */
static status mistake_again(const results *r, const char *function)
{
    return fail(r->mistake, "%s: an earlier call failed: %s", function, r->mistake_message);
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

static void print_rows(results *r, int from, int to, const int *widths);
static void echo_widths(const results *r, int *widths);

status results_row(results *r)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_row: the table is NULL; make it with results_create");
    if (r->echo && r->nrows > r->echoed) {
        int widths[64];
        echo_widths(r, widths);
        print_rows(r, r->echoed, r->nrows, widths);
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

static void echo_widths(const results *r, int *widths)
{
    for (int c = 0; c < r->ncolumns; c++) {
        int heading = display_width(heading_of(&r->columns[c]));
        widths[c] = r->columns[c].width > heading ? r->columns[c].width : heading;
    }
}

/* Wide enough for every value too: the widths of a whole table printed at once. */
static void table_widths(const results *r, int *widths)
{
    echo_widths(r, widths);
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

static void print_rows(results *r, int from, int to, const int *widths)
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
        echo_widths(r, widths);
        if (r->nrows > r->echoed || !r->heading_printed) print_rows(r, r->echoed, r->nrows, widths);
        r->echoed = r->nrows;
    } else {
        table_widths(r, widths);
        print_rows(r, 0, r->nrows, widths);
    }
    return r->mistake != STATUS_OK ? mistake_again(r, "results_print") : STATUS_OK;
}

/* ---- the devices the results name ------------------------------------------------------------ */

/* Whether `d` is mentioned, or named by a text cell. */
static bool names_device(const results *r, device d)
{
    for (int i = 0; i < r->nmentioned; i++)
        if (device_equal(r->mentioned[i], d)) return true;
    const char *name = device_name(d);
    for (int i = 0; i < r->nrows * r->ncolumns; i++)
        if (r->cells[i].text && strcmp(r->cells[i].text, name) == 0) return true;
    return false;
}

/* The devices the results name, in device_list's order (the CPU first). */
static int named_devices(const results *r, device *out)
{
    device all[LABKIT_MAX_DEVICES];
    int n = device_list(all, LABKIT_MAX_DEVICES), count = 0;
    for (int i = 0; i < n; i++)
        if (names_device(r, all[i])) out[count++] = all[i];
    return count;
}

/* A device's name short enough for a title: "Intel(R) Xeon(R) CPU E5-2680 v4 @
 * 2.40GHz" becomes "Intel Xeon E5-2680 v4"; a simulated GPU says it is one. */
static void short_name(device d, char *out, size_t size)
{
    static const char *const noise[] = { "(R)", "(TM)", " CPU", " Processor" };
    device_properties p;
    if (d.kind == DEVICE_SIM || device_get_properties(d, &p) != STATUS_OK) {
        snprintf(out, size, d.kind == DEVICE_SIM ? "simulated GPU" : "%s", device_name(d));
        return;
    }
    char *at = strstr(p.name, " @");
    if (at) *at = '\0';
    for (size_t i = 0; i < sizeof noise / sizeof noise[0]; i++)
        for (char *hit; (hit = strstr(p.name, noise[i])) != NULL;)
            memmove(hit, hit + strlen(noise[i]), strlen(hit + strlen(noise[i])) + 1);
    snprintf(out, size, "%s", p.name);
}

/* ---- the CSV ------------------------------------------------------------------------------------ */

/* A comment line's value: one line, whatever the text holds. */
static void write_comment(FILE *f, const char *key, const char *value)
{
    fprintf(f, "# %s: ", key);
    for (const char *c = value; *c; c++) fputc((unsigned char)*c < ' ' ? ' ' : *c, f);
    fputc('\n', f);
}

static void write_devices_comment(const results *r, FILE *f)
{
    device devices[LABKIT_MAX_DEVICES];
    int n = named_devices(r, devices);
    if (n == 0) return;
    text t = { 0 };
    for (int i = 0; i < n; i++) {
        device_properties p;
        text_add(&t, "%s%s", i ? "; " : "", device_name(devices[i]));
        if (devices[i].kind != DEVICE_CPU && device_get_properties(devices[i], &p) == STATUS_OK)
            text_add(&t, " (%s)", p.name);
    }
    if (t.chars) write_comment(f, "devices", t.chars);
    free(t.chars);
}

static void write_header(const results *r, FILE *f)
{
    if (r->lab) write_comment(f, "lab", r->lab);
    write_comment(f, "date", r->date);
    device_properties cpu;
    if (device_get_properties(device_cpu(), &cpu) == STATUS_OK)
        fprintf(f, "# cpu: %s, %d cores\n", cpu.name, cpu.multiprocessors);
    write_devices_comment(r, f);
    if (r->command) write_comment(f, "command", r->command);
    text t = { 0 };
    for (int c = 0; c < r->ncolumns; c++) {
        const results_column *column = &r->columns[c];
        text_add(&t, "%s%s", c ? "; " : "", column->name);
        if (column->heading && strcmp(column->heading, column->name) != 0)
            text_add(&t, " = %s", column->heading);
        if (column->kind == RESULTS_BYTES) text_add(&t, " (bytes)");
    }
    if (t.chars) write_comment(f, "columns", t.chars);
    free(t.chars);
    for (int c = 0; c < r->ncolumns; c++) fprintf(f, "%s%s", c ? "," : "", r->columns[c].name);
    fputc('\n', f);
}

/* RFC 4180: a cell holding a comma, a quote or a line break goes in quotes,
 * and a quote inside it is doubled. */
static void write_text_cell(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const char *c = s; *c; c++) {
        if (*c == '"') fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

/* A whole number exactly (a size of 4 GiB has 10 digits), anything else with
 * nine significant digits, which hold every float32 exactly. */
static void write_number_cell(FILE *f, double x)
{
    if (isnan(x)) return;
    if (x == floor(x) && fabs(x) < 1e15)
        fprintf(f, "%.0f", x);
    else
        fprintf(f, "%.9g", x);
}

static void write_rows(const results *r, FILE *f)
{
    for (int row = 0; row < r->nrows; row++) {
        for (int c = 0; c < r->ncolumns; c++) {
            const cell *x = &r->cells[row * r->ncolumns + c];
            if (c > 0) fputc(',', f);
            if (r->columns[c].kind == RESULTS_TEXT) {
                if (x->text) write_text_cell(f, x->text);
            } else {
                write_number_cell(f, x->number);
            }
        }
        fputc('\n', f);
    }
}

status results_save_csv(results *r, const char *path)
{
    if (!r)
        return fail(STATUS_BAD_ARGUMENT, "results_save_csv: the table is NULL; make it with results_create");
    if (r->mistake != STATUS_OK) return mistake_again(r, "results_save_csv");
    output_file o;
    status s = output_begin(&o, path);
    if (s != STATUS_OK) return s;
    FILE *f = o.stream ? o.stream : output_stdout();
    write_header(r, f);
    write_rows(r, f);
    return output_commit(&o);
}

/* ---- figures -------------------------------------------------------------------------------------- */

/* devices='cpu sim:0' and device_names='cpu: AMD EPYC, sim:0: simulated GPU',
 * then the lab's own, into one NULL-terminated list of "name=value". */
static status plot_vars(const results *r, const char *const *vars, text *devices, text *names,
                        const char **all, int capacity)
{
    device found[LABKIT_MAX_DEVICES];
    int n = named_devices(r, found);
    text_add(devices, "devices=");
    text_add(names, "device_names=");
    for (int i = 0; i < n; i++) {
        char name[128];
        short_name(found[i], name, sizeof name);
        text_add(devices, "%s%s", i ? " " : "", device_name(found[i]));
        text_add(names, "%s%s: %s", i ? ", " : "", device_name(found[i]), name);
    }
    if (!devices->chars || !names->chars)
        return fail(STATUS_OUT_OF_MEMORY, "results_draw: out of host memory");
    int count = 0;
    all[count++] = devices->chars;
    all[count++] = names->chars;
    for (int i = 0; vars && vars[i]; i++) {
        if (count == capacity - 1)
            return fail(STATUS_BAD_ARGUMENT, "results_draw: more than %d plot variables", capacity - 3);
        all[count++] = vars[i];
    }
    all[count] = NULL;
    return STATUS_OK;
}

status results_draw(results *r, const char *figure, const char *data, const char *const *vars)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_draw: the table is NULL; make it with results_create");
    if (!r->plot_script)
        return fail(STATUS_BAD_ARGUMENT,
                    "results_draw(%s): this program has no plot script (LAB_PLOT_SCRIPT)",
                    figure ? figure : "(NULL)");
    text devices = { 0 }, names = { 0 };
    const char *all[34];
    status s = plot_vars(r, vars, &devices, &names, all, 34);
    if (s == STATUS_OK) s = figure_draw(figure, data, r->plot_script, r->plot_style, all);
    free(devices.chars);
    free(names.chars);
    return s;
}

status results_finish(results *r, const char *const *vars)
{
    if (!r)
        return fail(STATUS_BAD_ARGUMENT, "results_finish: the table is NULL; make it with results_create");
    if (r->mistake != STATUS_OK) return mistake_again(r, "results_finish");
    status s = STATUS_OK;
    if (r->csv_path) s = results_save_csv(r, r->csv_path);
    bool csv_is_file = r->csv_path && !output_is_stdout(r->csv_path);
    char saved[CLI_MAX_PLOTS][4096]; /* the data files written for figures */
    int nsaved = 0;
    for (int i = 0; s == STATUS_OK && i < r->nplots; i++) {
        char data[4096];
        if (csv_is_file)
            snprintf(data, sizeof data, "%s", r->csv_path);
        else if (!figure_data_path(r->plot_paths[i], data, sizeof data))
            return fail(STATUS_BAD_ARGUMENT, "results_finish: cannot name the data of the figure %s",
                        r->plot_paths[i]);
        bool written = csv_is_file;
        for (int k = 0; k < nsaved; k++) written = written || strcmp(saved[k], data) == 0;
        if (!written) {
            s = results_save_csv(r, data);
            snprintf(saved[nsaved++], sizeof saved[0], "%s", data);
        }
        if (s == STATUS_OK) s = results_draw(r, r->plot_paths[i], data, vars);
    }
    return s;
}
