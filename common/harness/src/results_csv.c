/* results_csv.c: a results table saved as CSV, with the header lines that say
 * where the numbers come from, and drawn by the lab's gnuplot script from that
 * CSV (results.h). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/figure.h"
#include "labkit/files.h"
#include "labkit/properties.h"
#include "results_internal.h"
#include "text.h"

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

static void write_header(const results *r, double busy, FILE *f)
{
    if (r->lab) write_comment(f, "lab", r->lab);
    write_comment(f, "date", r->date);
    device_properties cpu;
    if (device_get_properties(device_cpu(), &cpu) == STATUS_OK)
        fprintf(f, "# cpu: %s, %d cores\n", cpu.name, cpu.multiprocessors);
    write_devices_comment(r, f);
    if (r->command) write_comment(f, "command", r->command);
    if (busy >= 0.0)
        fprintf(f, "# load: other programs kept %.2f of %d cores busy during the run\n", busy, load_cores());
    else
        fprintf(f, "# load: unknown (/proc/stat could not be read)\n");
    if (r->plot_line) write_comment(f, "plot", r->plot_line);
    if (r->figures_line[0]) write_comment(f, "figures", r->figures_line);
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
    if (r->mistake != STATUS_OK) return results_mistake_again(r, "results_save_csv");
    output_file o;
    status s = output_begin(&o, path);
    if (s != STATUS_OK) return s;
    FILE *f = o.stream ? o.stream : output_stdout();
    write_header(r, results_busy_frozen(r), f);
    write_rows(r, f);
    return output_commit(&o);
}

/* ---- figures -------------------------------------------------------------------------------------- */

/* The variables every figure gets besides the lab's own (free the texts). */
typedef struct plot_texts {
    text devices, names;      /* devices='cpu sim:0', device_names='cpu: AMD EPYC, ...' */
    char busy[48], cores[32]; /* the load: busy_cores=1.70, cores=2 */
} plot_texts;

/* devices='cpu sim:0', device_names='cpu: AMD EPYC, sim:0: simulated GPU',
 * busy_cores and cores (the load), then the lab's own, into one
 * NULL-terminated list of "name=value" whose texts t holds. */
static status plot_vars(results *r, const char *const *vars, plot_texts *t, const char **all, int capacity)
{
    device found[LABKIT_MAX_DEVICES];
    int n = named_devices(r, found);
    text_add(&t->devices, "devices=");
    text_add(&t->names, "device_names=");
    for (int i = 0; i < n; i++) {
        char name[128];
        short_name(found[i], name, sizeof name);
        text_add(&t->devices, "%s%s", i ? " " : "", device_name(found[i]));
        text_add(&t->names, "%s%s: %s", i ? ", " : "", device_name(found[i]), name);
    }
    if (!t->devices.chars || !t->names.chars)
        return fail(STATUS_OUT_OF_MEMORY, "results_draw: out of host memory");
    snprintf(t->busy, sizeof t->busy, "busy_cores=%.2f", results_busy_frozen(r));
    snprintf(t->cores, sizeof t->cores, "cores=%d", load_cores());
    int count = 0;
    all[count++] = t->devices.chars;
    all[count++] = t->names.chars;
    all[count++] = t->busy;
    all[count++] = t->cores;
    for (int i = 0; vars && vars[i]; i++) {
        if (count == capacity - 1)
            return fail(STATUS_BAD_ARGUMENT, "results_draw: more than %d plot variables", capacity - 5);
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
    plot_texts t = { 0 };
    const char *all[36];
    status s = plot_vars(r, vars, &t, all, 36);
    if (s == STATUS_OK) s = figure_draw(figure, data, r->plot_script, r->plot_style, all);
    free(t.devices.chars);
    free(t.names.chars);
    return s;
}

status results_finish(results *r, const char *const *vars)
{
    if (!r)
        return fail(STATUS_BAD_ARGUMENT, "results_finish: the table is NULL; make it with results_create");
    if (r->mistake != STATUS_OK) return results_mistake_again(r, "results_finish");
    /* The lab's variables, as gnuplot's -e reads them, for a redraw from the CSV
     * alone; figure= is the figures line's. One line: no line breaks kept. */
    text line = { 0 };
    plot_texts t = { 0 };
    const char *all[36];
    status made = plot_vars(r, vars, &t, all, 36);
    for (int i = 0; made == STATUS_OK && all[i]; i++) {
        const char *equals = strchr(all[i], '=');
        if (!equals || strncmp(all[i], "figure=", 7) == 0) continue;
        text_add(&line, "%s%.*s='", line.chars ? "; " : "", (int)(equals - all[i]), all[i]);
        for (const char *c = equals + 1; *c; c++)
            text_add(&line, "%s", *c == '\'' ? "''" : *c == '\n' ? " " : (char[]){ *c, 0 });
        text_add(&line, "'");
    }
    free(t.devices.chars);
    free(t.names.chars);
    if (made != STATUS_OK) {
        free(line.chars);
        return made;
    }
    free(r->plot_line);
    r->plot_line = line.chars;
    /* A run under load says so beside its takeaway, as its figures do. */
    const double others = results_busy_frozen(r);
    if (others >= LOAD_BUSY_CORES_NOTED && !r->load_said) {
        printf("(under load: other programs kept %.1f of %d cores busy during this run; its times are slower "
               "and noisier than this machine's, and its figures say so)\n",
               others, load_cores());
        r->load_said = true;
    }
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

/* ---- several figures from one run ----------------------------------------------------- */

status results_figure_path(const char *figure, const char *name, char *out, size_t size)
{
    if (!figure || !name || !out || size == 0)
        return fail(STATUS_BAD_ARGUMENT, "results_figure_path: figure, name and out must not be NULL");
    const char *slash = strrchr(figure, '/'), *dot = strrchr(figure, '.');
    if (!dot || (slash && dot < slash)) dot = figure + strlen(figure);
    int n = snprintf(out, size, "%.*s-%s%s", (int)(dot - figure), figure, name, dot);
    if (n < 0 || (size_t)n >= size)
        return fail(STATUS_BAD_ARGUMENT, "results_figure_path: the path of %s's figure %s is too long",
                    figure, name);
    return STATUS_OK;
}

static status check_names(const char *const *names, int nnames, const char *function)
{
    if (!names || nnames < 1 || nnames > 8)
        return fail(STATUS_BAD_ARGUMENT, "%s: give 1 to 8 figure names, not %d%s", function, nnames,
                    names ? "" : " (names is NULL)");
    for (int i = 0; i < nnames; i++) {
        bool good = names[i] && names[i][0];
        for (const char *c = names[i]; good && *c; c++) good = isalnum((unsigned char)*c) || *c == '_';
        if (!good)
            return fail(STATUS_BAD_ARGUMENT,
                        "%s: figure name %d, \"%s\", is not letters, digits and _ (\"error\")", function, i,
                        names[i] ? names[i] : "(NULL)");
    }
    return STATUS_OK;
}

status results_check_figures(const results *r, const char *const *names, int nnames)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_check_figures: the table is NULL; make it first");
    status s = check_names(names, nnames, "results_check_figures");
    for (int i = 0; s == STATUS_OK && i < r->nplots; i++)
        for (int k = 1; s == STATUS_OK && k < nnames; k++) {
            char path[4096];
            s = results_figure_path(r->plot_paths[i], names[k], path, sizeof path);
            if (s == STATUS_OK) s = output_check(path, "--plot (one of its figures)");
        }
    return s;
}

status results_finish_figures(results *r, const char *const *names, int nnames, const char *const *vars)
{
    if (!r) return fail(STATUS_BAD_ARGUMENT, "results_finish_figures: the table is NULL; make it first");
    status s = check_names(names, nnames, "results_finish_figures");
    const char *all[34];
    char figure[64];
    int count = 0;
    all[count++] = figure;
    for (int i = 0; s == STATUS_OK && vars && vars[i]; i++) {
        if (count == 33)
            return fail(STATUS_BAD_ARGUMENT, "results_finish_figures: more than 32 plot variables");
        all[count++] = vars[i];
    }
    all[count] = NULL;
    if (s != STATUS_OK) return s;
    r->figures_line[0] = '\0';
    for (int k = 0; k < nnames; k++)
        snprintf(r->figures_line + strlen(r->figures_line), sizeof r->figures_line - strlen(r->figures_line),
                 "%s%s", k ? " " : "", names[k]);
    snprintf(figure, sizeof figure, "figure=%s", names[0]);
    s = results_finish(r, all);
    for (int i = 0; s == STATUS_OK && i < r->nplots; i++) {
        char data[4096], path[4096];
        if (r->csv_path && !output_is_stdout(r->csv_path))
            snprintf(data, sizeof data, "%s", r->csv_path);
        else if (!figure_data_path(r->plot_paths[i], data, sizeof data))
            return fail(STATUS_BAD_ARGUMENT, "results_finish_figures: cannot name the data of %s",
                        r->plot_paths[i]);
        for (int k = 1; s == STATUS_OK && k < nnames; k++) {
            snprintf(figure, sizeof figure, "figure=%s", names[k]);
            s = results_figure_path(r->plot_paths[i], names[k], path, sizeof path);
            if (s == STATUS_OK) s = results_draw(r, path, data, all);
        }
    }
    return s;
}
