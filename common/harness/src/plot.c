/* plot.c: figures for slides, drawn by gnuplot through a pipe.
 *
 * plot_draw(p, "plots/fig.png") writes three files side by side:
 *   plots/fig.plot.csv  the data, one row per point: series (1, 2, ...), x, y, title
 *   plots/fig.gp        a gnuplot script that reads fig.plot.csv and writes fig.png
 *   plots/fig.png  the figure, drawn by running "gnuplot fig.gp" inside plots/
 * The script names the other two files without their directory, so the folder
 * can be moved (into a slide deck's folder, say) and the script still works from
 * there. Without gnuplot the figure is missing but the data and the script stay,
 * and one warning line says how to draw it later.
 *
 * LABKIT_GNUPLOT=/path/to/gnuplot picks the program to run (tests use it to
 * pretend that gnuplot is missing). */
#define _POSIX_C_SOURCE 200809L /* popen, pclose, strdup and stat are POSIX, not C17 */

#include "labkit/plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "labkit/csv.h"
#include "labkit/files.h"

/* ---- the files of a figure ------------------------------------------------- */

typedef enum figure_format { FIGURE_PNG, FIGURE_SVG, FIGURE_PDF } figure_format;

/* What plot_draw writes, derived from the figure's path. The *_path fields are
 * for this program (relative to its working directory); the *_name fields are
 * for the script and gnuplot, which run inside `dir`. */
typedef struct figure_files {
    figure_format format;
    const char *figure_path; /* the path as given: "plots/fig.png" */
    char *dir;               /* "plots"; "." when the path has no directory */
    char *csv_path;          /* "plots/fig.plot.csv" */
    char *script_path;       /* "plots/fig.gp" */
    char *figure_name;       /* "fig.png" */
    char *csv_name;          /* "fig.plot.csv" */
    char *script_name;       /* "fig.gp" */
} figure_files;

/* The first `length` characters of `a`, then `b`, in a new string (NULL when out
 * of memory). */
static char *join(const char *a, size_t length, const char *b)
{
    size_t b_length = strlen(b);
    char *joined = malloc(length + b_length + 1);
    if (joined != NULL) {
        memcpy(joined, a, length);
        memcpy(joined + length, b, b_length + 1);
    }
    return joined;
}

static void figure_files_free(figure_files *files)
{
    free(files->dir);
    free(files->csv_path);
    free(files->script_path);
    free(files->figure_name);
    free(files->csv_name);
    free(files->script_name);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash == NULL ? path : slash + 1;
}

/* Checks the figure's path and finds its format from the extension. */
static status check_figure_path(const char *path, figure_format *format)
{
    if (path == NULL || path[0] == '\0') {
        return fail(STATUS_BAD_ARGUMENT,
                    "plot_draw: the figure's path is %s; give a file name "
                    "ending in .png, .svg or .pdf",
                    path == NULL ? "NULL" : "empty");
    }
    for (const char *c = path; *c != '\0'; c++) {
        if ((unsigned char)*c < ' ') { /* a line break would split the script's lines */
            return fail(STATUS_BAD_ARGUMENT, "plot_draw: the figure's path contains a control "
                                             "character (a line break?); use a plain file name");
        }
    }
    const char *base = base_name(path);
    const char *dot = strrchr(base, '.');
    static const char *const extensions[] = { ".png", ".svg", ".pdf" };
    static const figure_format formats[] = { FIGURE_PNG, FIGURE_SVG, FIGURE_PDF };
    for (int i = 0; dot != NULL && i < 3; i++) {
        if (strcmp(dot, extensions[i]) == 0) {
            if (dot == base) {
                return fail(STATUS_BAD_ARGUMENT,
                            "plot_draw: %s has an extension but no name; "
                            "use a name such as fig%s",
                            path, extensions[i]);
            }
            *format = formats[i];
            return STATUS_OK;
        }
    }
    return fail(STATUS_BAD_ARGUMENT,
                "plot_draw: cannot tell the figure's format from %s; "
                "the name must end in .png, .svg or .pdf (lowercase)",
                path);
}

static status figure_files_make(const char *path, figure_format format, figure_files *files)
{
    const char *base = base_name(path);
    size_t dir_length = (size_t)(base - path);
    size_t stem_length = (size_t)(strrchr(base, '.') - path); /* "plots/fig" */
    size_t base_stem_length = stem_length - dir_length;       /* "fig" */

    *files = (figure_files){ .format = format, .figure_path = path };
    if (dir_length == 0) {
        files->dir = join(".", 1, "");
    } else if (dir_length == 1) {
        files->dir = join("/", 1, ""); /* "/fig.png": the root, not "" */
    } else {
        files->dir = join(path, dir_length - 1, ""); /* without the trailing '/' */
    }
    files->csv_path = join(path, stem_length, ".plot.csv");
    files->script_path = join(path, stem_length, ".gp");
    files->figure_name = join(base, strlen(base), "");
    files->csv_name = join(base, base_stem_length, ".plot.csv");
    files->script_name = join(base, base_stem_length, ".gp");
    if (files->dir == NULL || files->csv_path == NULL || files->script_path == NULL ||
        files->figure_name == NULL || files->csv_name == NULL || files->script_name == NULL) {
        figure_files_free(files);
        return fail(STATUS_OUT_OF_MEMORY, "plot_draw: out of host memory");
    }
    return STATUS_OK;
}

/* ---- checking a plot ----------------------------------------------------------- */

static const char *title_or_untitled(const char *title) { return title == NULL ? "(untitled)" : title; }

static status check_series(const char *function, const plot_series *s, int index)
{
    const char *title = title_or_untitled(s->title);
    if ((int)s->style < (int)PLOT_LINES_POINTS || (int)s->style > (int)PLOT_BARS) {
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: series %d '%s' has an unknown style %d; use "
                    "PLOT_LINES_POINTS, PLOT_LINES, PLOT_DASHED or PLOT_BARS",
                    function, index, title, (int)s->style);
    }
    if (s->n == 0) {
        return fail(STATUS_BAD_ARGUMENT, "%s: series %d '%s' has no points (n is 0)", function, index, title);
    }
    if (s->y == NULL || (s->x == NULL && s->style != PLOT_BARS)) {
        return fail(STATUS_BAD_ARGUMENT, "%s: series %d '%s': %s is NULL; give %zu values", function, index,
                    title, s->y == NULL ? "y" : "x", s->n);
    }
    return STATUS_OK;
}

/* Every value must be a finite number, and positive on a logarithmic axis, or
 * gnuplot drops the point with a warning that is easy to miss. */
static status check_values(const char *axis, const double *values, size_t n, bool log_axis, int index,
                           const char *title)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(values[i])) {
            return fail(STATUS_BAD_ARGUMENT,
                        "plot_draw: %s[%zu] of series %d '%s' is %g; a "
                        "plot needs finite numbers (a division by a time of 0?)",
                        axis, i, index, title, values[i]);
        }
        if (log_axis && values[i] <= 0) {
            return fail(STATUS_BAD_ARGUMENT,
                        "plot_draw: %s[%zu] of series %d '%s' is %g, "
                        "but the %s axis is logarithmic: only positive values can be shown",
                        axis, i, index, title, values[i], axis);
        }
    }
    return STATUS_OK;
}

/* The number of bar positions: the longest PLOT_BARS series (0 without bars). */
static size_t bar_positions(const plot *p)
{
    size_t positions = 0;
    for (int k = 0; k < p->nseries; k++) {
        if (p->series[k].style == PLOT_BARS && p->series[k].n > positions) {
            positions = p->series[k].n;
        }
    }
    return positions;
}

static status check_plot(const plot *p)
{
    if (p->nseries < 1 || p->nseries > PLOT_MAX_SERIES) {
        return fail(STATUS_BAD_ARGUMENT,
                    "plot_draw: the plot has %d series; add 1 to %d with "
                    "plot_add (start from plot p = {0})",
                    p->nseries, PLOT_MAX_SERIES);
    }
    size_t positions = bar_positions(p);
    if (positions > 0 && p->log_x) {
        return fail(STATUS_BAD_ARGUMENT, "plot_draw: bars sit at positions 0, 1, 2, ..., "
                                         "which a logarithmic x axis cannot show; set log_x to false");
    }
    for (int k = 0; k < p->nseries; k++) {
        const plot_series *s = &p->series[k];
        status st = check_series("plot_draw", s, k);
        const char *title = title_or_untitled(s->title);
        if (st == STATUS_OK && s->style != PLOT_BARS) {
            st = check_values("x", s->x, s->n, p->log_x, k, title);
        }
        if (st == STATUS_OK) {
            st = check_values("y", s->y, s->n, p->log_y, k, title);
        }
        if (st != STATUS_OK) {
            return st;
        }
    }
    for (size_t i = 0; p->bar_labels != NULL && i < positions; i++) {
        if (p->bar_labels[i] == NULL) {
            return fail(STATUS_BAD_ARGUMENT,
                        "plot_draw: bar_labels[%zu] is NULL; give one "
                        "label per bar position (%zu here)",
                        i, positions);
        }
    }
    return STATUS_OK;
}

/* ---- the data ---------------------------------------------------------------- */

/* One row per point, series after series. Long rather than wide because series
 * need not share their x values; the title goes last so that a title holding a
 * comma can never shift the numeric columns for a reader that ignores quotes. */
static status write_data(const plot *p, const figure_files *files)
{
    static const char *const columns[] = { "series", "x", "y", "title" };
    csv_file *f = NULL;
    status s = csv_open(&f, files->csv_path, columns, 4);
    for (int k = 0; s == STATUS_OK && k < p->nseries; k++) {
        const plot_series *series = &p->series[k];
        for (size_t i = 0; s == STATUS_OK && i < series->n; i++) {
            char number[16], x[32], y[32];
            snprintf(number, sizeof number, "%d", k + 1);
            /* A bar's x is its position: gnuplot shifts it to its place in the cluster. */
            snprintf(x, sizeof x, "%.9g", series->style == PLOT_BARS ? (double)i : series->x[i]);
            snprintf(y, sizeof y, "%.9g", series->y[i]);
            const char *cells[] = { number, x, y, series->title == NULL ? "" : series->title };
            s = csv_row_text(f, cells, 4);
        }
    }
    if (f == NULL) {
        return s;
    }
    if (s != STATUS_OK) {
        csv_discard(f);
        return s;
    }
    return csv_close(f);
}

/* ---- quoting for the shell --------------------------------------------------- */

/* `text` in single quotes for sh: nothing is special inside them, and a quote
 * itself is written '\'' (close, an escaped quote, reopen). NULL when out of
 * memory. */
static char *shell_quote(const char *text)
{
    char *quoted = malloc(4 * strlen(text) + 3);
    if (quoted == NULL) {
        return NULL;
    }
    char *q = quoted;
    *q++ = '\'';
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\'') {
            memcpy(q, "'\\''", 4);
            q += 4;
        } else {
            *q++ = *c;
        }
    }
    *q++ = '\'';
    *q = '\0';
    return quoted;
}

/* ---- the script -------------------------------------------------------------- */

/* A gnuplot single-quoted string: nothing is special inside it but the quote,
 * written twice. Control characters become spaces, since a line break would end
 * the command. */
static void write_gp_string(FILE *out, const char *text)
{
    fputc('\'', out);
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\'') {
            fputs("''", out);
        } else {
            fputc((unsigned char)*c < ' ' ? ' ' : *c, out);
        }
    }
    fputc('\'', out);
}

/* `set <command> '<text>' noenhanced<options>`, or nothing when text is NULL.
 * noenhanced keeps "time_s" or "x^2" as typed instead of turning _ and ^ into
 * sub- and superscripts. */
static void write_text_setting(FILE *out, const char *command, const char *text, const char *options)
{
    if (text == NULL || text[0] == '\0') {
        return;
    }
    fprintf(out, "set %s ", command);
    write_gp_string(out, text);
    fprintf(out, " noenhanced%s\n", options);
}

static void write_terminal(FILE *out, const figure_files *files)
{
    /* Sizes and fonts for a slide: 1200x800 pixels (3:2), or 8 x 5.33 inches. */
    static const char *const terminals[] = {
        [FIGURE_PNG] = "pngcairo size 1200,800 enhanced font 'Sans,16' linewidth 1.5",
        [FIGURE_SVG] = ("svg size 1200,800 enhanced font 'sans-serif,16' linewidth 1.5 "
                        "background '#ffffff'"), /* white, not transparent, on dark slides */
        [FIGURE_PDF] = "pdfcairo size 8in,5.33in enhanced font 'Sans,12' linewidth 1.5",
    };
    fprintf(out, "set terminal %s\n", terminals[files->format]);
    fputs("set output ", out);
    write_gp_string(out, files->figure_name);
    fputs("\nset encoding utf8\n\n", out);
}

static void write_style(FILE *out)
{
    fputs("# Colours that colour-blind readers can tell apart (Okabe and Ito), thick\n"
          "# lines and filled points that stay visible on a projector.\n"
          "set linetype 1 lc rgb '#0072B2' lw 2 pt 7 ps 1.3\n"
          "set linetype 2 lc rgb '#D55E00' lw 2 pt 5 ps 1.3\n"
          "set linetype 3 lc rgb '#009E73' lw 2 pt 9 ps 1.5\n"
          "set linetype 4 lc rgb '#CC79A7' lw 2 pt 11 ps 1.5\n"
          "set linetype 5 lc rgb '#E69F00' lw 2 pt 13 ps 1.5\n"
          "set linetype 6 lc rgb '#56B4E9' lw 2 pt 4 ps 1.3\n"
          "set linetype 7 lc rgb '#000000' lw 2 pt 6 ps 1.3\n"
          "set linetype 8 lc rgb '#999999' lw 2 pt 8 ps 1.3\n"
          "set linetype cycle 8\n"
          "set border 3 lw 1\n"
          "set tics nomirror out\n"
          "set grid back xtics ytics mxtics mytics lt 1 lw 0.7 lc rgb '#d0d0d0', "
          "lt 1 lw 0.5 lc rgb '#ececec'\n"
          "# The key goes below the axes, where it can hide no data.\n"
          "set key outside below center horizontal reverse Left noenhanced\n\n",
          out);
}

static void write_axes(FILE *out, const plot *p)
{
    write_text_setting(out, "title", p->title, " font ',20'");
    write_text_setting(out, "xlabel", p->xlabel, "");
    write_text_setting(out, "ylabel", p->ylabel, "");
    /* Sizes that span decades read best as powers of ten: 10^3 rather than 1000. */
    if (p->log_x) {
        fputs("set logscale x\nset format x '10^{%L}'\n", out);
    }
    if (p->log_y) {
        fputs("set logscale y\nset format y '10^{%L}'\n", out);
    }
}

/* Bars: position i holds one bar per PLOT_BARS series, side by side, 80% of
 * the space between positions, labelled below with bar_labels[i]. */
static void write_bar_axis(FILE *out, const plot *p, size_t positions, int nbars)
{
    fprintf(out, "\n# Bars: %zu positions; at each, one bar per bar series (%d).\n", positions, nbars);
    fprintf(out, "set boxwidth %.6g absolute\n", 0.8 / nbars);
    fputs("set style fill solid 0.85 border lc rgb '#333333'\n", out);
    fprintf(out, "set xrange [-0.5:%.1f]\n", (double)positions - 0.5);
    if (!p->log_y) {
        fputs("set yrange [0:*]\n", out); /* a bar's height is only honest from zero */
    }
    fputs("set grid noxtics nomxtics\n", out);
    if (p->bar_labels == NULL) {
        fputs("set xtics 1\n", out);
        return;
    }
    fputs("set xtics (", out);
    for (size_t i = 0; i < positions; i++) {
        fputs(i > 0 ? ", " : "", out);
        write_gp_string(out, p->bar_labels[i]);
        fprintf(out, " %zu", i);
    }
    fputs(") noenhanced\n", out);
}

/* One plot clause per series. The CSV holds every series; `$1 == k ? $3 : NaN`
 * keeps the rows of series k and leaves the others undefined, which gnuplot
 * skips. */
static void write_plot_command(FILE *out, const plot *p, const figure_files *files, int nbars)
{
    static const char *const styles[] = {
        [PLOT_LINES_POINTS] = "linespoints",
        [PLOT_LINES] = "lines",
        [PLOT_DASHED] = "lines dt 2",
        [PLOT_BARS] = "boxes",
    };
    fputs("\nplot ", out);
    int bar = 0;
    for (int k = 0; k < p->nseries; k++) {
        const plot_series *s = &p->series[k];
        if (k > 0) {
            fputs(", \\\n     ", out);
        }
        write_gp_string(out, files->csv_name);
        if (s->style == PLOT_BARS) {
            /* Centre the cluster on its position: bar b of nbars moves by this much. */
            double shift = (bar - (nbars - 1) / 2.0) * (0.8 / nbars);
            if (2 * bar == nbars - 1) { /* the middle bar of an odd number sits on x */
                fprintf(out, " using 2:($1 == %d ? $3 : NaN)", k + 1);
            } else {
                fprintf(out, " using ($2 %+.6g):($1 == %d ? $3 : NaN)", shift, k + 1);
            }
            bar++;
        } else {
            fprintf(out, " using 2:($1 == %d ? $3 : NaN)", k + 1);
        }
        fprintf(out, " with %s lt %d", styles[s->style], k + 1);
        if (s->title == NULL || s->title[0] == '\0') {
            fputs(" notitle", out);
        } else {
            fputs(" title ", out);
            write_gp_string(out, s->title);
        }
    }
    fputc('\n', out);
}

static status write_script(const plot *p, const figure_files *files)
{
    FILE *out = fopen(files->script_path, "w");
    if (out == NULL) {
        return fail(STATUS_IO_FAILED, "plot_draw: cannot create %s: %s", files->script_path, strerror(errno));
    }
    fprintf(out, "# %s: draws %s from %s (written by labkit's plot_draw).\n", files->script_name,
            files->figure_name, files->csv_name);
    char *quoted = shell_quote(files->script_name);
    fprintf(out, "# Run it in this directory: gnuplot %s\n", quoted != NULL ? quoted : files->script_name);
    free(quoted);
    fprintf(out, "# %s has one row per point: series number, x, y, series title.\n\n", files->csv_name);
    write_terminal(out, files);
    write_style(out);
    /* No "set datafile columnheaders": gnuplot before 5.4 does not know it, and
     * the header line, holding no numbers, is skipped anyway. */
    fputs("# The first line of the CSV names the columns; gnuplot skips it.\n"
          "set datafile separator comma\n\n",
          out);
    write_axes(out, p);

    size_t positions = bar_positions(p);
    int nbars = 0;
    for (int k = 0; k < p->nseries; k++) {
        nbars += p->series[k].style == PLOT_BARS;
    }
    if (nbars > 0) {
        write_bar_axis(out, p, positions, nbars);
    }
    write_plot_command(out, p, files, nbars);

    bool written = !ferror(out);
    if (fclose(out) != 0 || !written) {
        return fail(STATUS_IO_FAILED, "plot_draw: cannot write %s: %s", files->script_path, strerror(errno));
    }
    return STATUS_OK;
}

/* ---- running gnuplot --------------------------------------------------------- */

/* The shell command that draws the figure:
 *     (cd -- 'DIR' && 'gnuplot' './fig.gp') 2>&1
 * "--" and "./" keep a name that starts with '-' from being read as an option;
 * 2>&1 lets plot_draw capture gnuplot's complaints along with its output. */
static char *gnuplot_command(const char *program, const figure_files *files)
{
    char *dir = shell_quote(files->dir);
    char *gnuplot = shell_quote(program);
    char *script = shell_quote(files->script_name);
    char *command = NULL;
    if (dir != NULL && gnuplot != NULL && script != NULL) {
        const char *format = "(cd -- %s && %s ./%s) 2>&1";
        size_t size = strlen(format) + strlen(dir) + strlen(gnuplot) + strlen(script);
        command = malloc(size);
        if (command != NULL) {
            snprintf(command, size, format, dir, gnuplot, script);
        }
    }
    free(dir);
    free(gnuplot);
    free(script);
    return command;
}

/* Reads everything the command prints (so that it never blocks on a full pipe)
 * and keeps the first `capacity - 1` characters, without the final line break. */
static void read_output(FILE *pipe, char *kept, size_t capacity)
{
    size_t used = 0;
    char chunk[512];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, pipe)) > 0) {
        size_t room = capacity - 1 - used;
        size_t take = got < room ? got : room;
        memcpy(kept + used, chunk, take);
        used += take;
    }
    while (used > 0 && kept[used - 1] == '\n') {
        used--;
    }
    kept[used] = '\0';
}

/* How to draw the figure by hand, for the messages: "cd 'plots' && gnuplot 'fig.gp'". */
static void how_to_draw(const figure_files *files, char *buffer, size_t size)
{
    char *dir = shell_quote(files->dir);
    char *script = shell_quote(files->script_name);
    if (dir == NULL || script == NULL) {
        snprintf(buffer, size, "gnuplot %s (in the directory %s)", files->script_name, files->dir);
    } else if (strcmp(files->dir, ".") == 0) {
        snprintf(buffer, size, "gnuplot %s", script);
    } else {
        snprintf(buffer, size, "cd %s && gnuplot %s", dir, script);
    }
    free(dir);
    free(script);
}

/* Runs gnuplot on the script. A missing gnuplot is not an error: the data and
 * the script are written, and the warning says how to draw the figure later. */
static status run_gnuplot(const figure_files *files)
{
    const char *program = getenv("LABKIT_GNUPLOT");
    bool from_environment = program != NULL && program[0] != '\0';
    if (!from_environment) {
        program = "gnuplot";
    }
    char *command = gnuplot_command(program, files);
    if (command == NULL) {
        return fail(STATUS_OUT_OF_MEMORY, "plot_draw: out of host memory");
    }
    /* A figure left from an earlier run would look like this run's: remove it, so
     * that a figure on disk always matches its data. */
    remove(files->figure_path);

    FILE *pipe = popen(command, "r");
    free(command);
    if (pipe == NULL) {
        return fail(STATUS_BACKEND_FAILED, "plot_draw: cannot start a shell to run %s: %s", program,
                    strerror(errno));
    }
    char output[480];
    read_output(pipe, output, sizeof output);
    /* Only here is a missing gnuplot seen: popen started the shell, and the
     * shell reports "command not found" with exit status 127. */
    int wait_status = pclose(pipe);

    char redo[400];
    how_to_draw(files, redo, sizeof redo);
    if (wait_status == -1) {
        return fail(STATUS_BACKEND_FAILED, "plot_draw: waiting for %s failed: %s", program, strerror(errno));
    }
    if (WIFEXITED(wait_status) && (WEXITSTATUS(wait_status) == 127 || WEXITSTATUS(wait_status) == 126)) {
        fprintf(stderr,
                "plot: %s%s %s; the data is in %s and the script in %s: install "
                "gnuplot-nox (./lab deps) and run: %s\n",
                program, from_environment ? " (LABKIT_GNUPLOT)" : "",
                WEXITSTATUS(wait_status) == 127 ? "not found" : "cannot be run", files->csv_path,
                files->script_path, redo);
        return STATUS_OK;
    }
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
        char how[64];
        if (WIFEXITED(wait_status)) {
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(wait_status));
        } else {
            snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(wait_status));
        }
        return fail(STATUS_BACKEND_FAILED,
                    "plot_draw: %s failed (%s) drawing %s:\n%s\n"
                    "  the data is in %s; to see the whole error run: %s",
                    program, how, files->figure_path, output[0] ? output : "(it printed nothing)",
                    files->csv_path, redo);
    }
    if (output[0] != '\0') {
        fprintf(stderr, "plot: %s said, drawing %s:\n%s\n", program, files->figure_path, output);
    }
    struct stat figure;
    bool missing = stat(files->figure_path, &figure) != 0;
    if (missing || figure.st_size == 0) {
        return fail(STATUS_BACKEND_FAILED,
                    "plot_draw: %s finished but %s is %s; run it "
                    "yourself to see why: %s",
                    program, files->figure_path, missing ? "missing" : "empty", redo);
    }
    return STATUS_OK;
}

/* ---- the public functions ------------------------------------------------------ */

status plot_add(plot *p, const char *title, const double *x, const double *y, size_t n, plot_style style)
{
    if (p == NULL) {
        return fail(STATUS_BAD_ARGUMENT, "plot_add: the plot is NULL");
    }
    if (p->nseries < 0 || p->nseries >= PLOT_MAX_SERIES) {
        return fail(STATUS_BAD_ARGUMENT,
                    "plot_add: the plot already has %d series and holds "
                    "at most %d (PLOT_MAX_SERIES); did you start from plot p = {0}?",
                    p->nseries, PLOT_MAX_SERIES);
    }
    plot_series series = { .title = title, .x = x, .y = y, .n = n, .style = style };
    status s = check_series("plot_add", &series, p->nseries);
    if (s != STATUS_OK) {
        return s;
    }
    p->series[p->nseries++] = series;
    return STATUS_OK;
}

status plot_draw(const plot *p, const char *path)
{
    if (p == NULL) {
        return fail(STATUS_BAD_ARGUMENT, "plot_draw: the plot is NULL");
    }
    figure_format format = FIGURE_PNG;
    status s = check_figure_path(path, &format);
    if (s == STATUS_OK) {
        s = check_plot(p);
    }
    if (s != STATUS_OK) {
        return s;
    }
    figure_files files;
    s = figure_files_make(path, format, &files);
    if (s != STATUS_OK) {
        return s;
    }
    /* Only a new file or a regular file is ever written or removed: never a
     * directory, a device or what a symbolic link points to. */
    s = output_check(path, NULL);
    if (s == STATUS_OK) {
        s = output_check(files.script_path, NULL);
    }
    if (s == STATUS_OK) {
        s = write_data(p, &files);
    }
    if (s == STATUS_OK) {
        s = write_script(p, &files);
    }
    if (s == STATUS_OK) {
        s = run_gnuplot(&files);
    }
    figure_files_free(&files);
    return s;
}
