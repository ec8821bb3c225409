/* results.h: a lab's results, described once as a table that prints aligned,
 * saves as CSV and is drawn by the lab's own gnuplot script (plot.gp).
 *
 *   static const results_column columns[] = {
 *       { "device", RESULTS_TEXT, "device", NULL, 6 },
 *       { "n", RESULTS_NUMBER, "N", "%.0f", 6 },
 *       { "gflops", RESULTS_NUMBER, "GFLOP/s", "%.1f", 8 },
 *   };
 *   results *r;
 *   CHECK(results_create(&r, &args, columns, 3));   // right after cli_parse
 *   for (int64_t n = 64; n <= 4096; n *= 2) {
 *       results_row(r);                             // a new row; its cells are unknown
 *       results_text(r, "device", device_name(d));
 *       results_number(r, "n", (double)n);
 *       results_number(r, "gflops", measure(d, n));
 *   }
 *   results_print(r);                               // the table, aligned
 *   CHECK(results_finish(r, NULL));                 // --csv FILE, and every --plot FILE
 *   results_free(r);
 *
 * Cells are set by their column's name. A cell never set, a NaN or an infinity
 * is unknown: "-" on the terminal, an empty cell in the CSV (never 0). A mistake
 * in a cell call (no row started, an unknown column, text for a number) is
 * returned, and also remembered: results_print and results_finish fail with it,
 * so a lab need not CHECK every cell.
 *
 * The CSV starts with comment lines that say where the numbers come from, then
 * the column names, then one line per row (RFC 4180 quoting, numbers "%.9g"):
 *   # lab: 04_matmul
 *   # date: 2026-11-22T21:30:05Z
 *   # cpu: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz, 2 cores
 *   # devices: cpu; sim:0 (Simulated GPU ...)
 *   # command: lab04-solution --quick --device sim:0
 *   # load: other programs kept 0.12 of 2 cores busy during the run
 *   # plot: devices='cpu sim:0'; device_names='cpu: Intel Xeon, sim:0: simulated GPU'; ...
 *   # figures: gflops speedup
 *   # columns: device; n = N; gflops = GFLOP/s
 *   device,n,gflops
 *   cpu,64,20.5
 * The plot and figures lines (written by results_finish and
 * results_finish_figures) hold what a redraw from the CSV alone needs:
 * `./lab plots --reference`. gnuplot skips the comments, pandas reads it with read_csv(path, comment='#'),
 * and a spreadsheet shows the comments as rows of text above the table.
 *
 * Figures: each --plot FILE is drawn by the lab's plot.gp (figure.h), found
 * from the compile definition LAB_PLOT_SCRIPT that labs/CMakeLists.txt gives
 * every lab program, with the shared style LABKIT_PLOT_STYLE. Besides data,
 * out, format and style, the script gets the variables devices ("cpu sim:0":
 * the devices the results name, for `plot for [d in devices]`) and device_names
 * ("cpu: Intel Xeon Platinum 8375C, sim:0: simulated GPU", for titles), and
 * the lab's own `vars` ("name=value" strings, NULL-terminated), and the
 * load: busy_cores (how many cores other programs kept busy from
 * results_create to the end, load.h; -1: unknown) and cores, which style.gp
 * turns into load_line, a line under the title of a run under load. */
#ifndef LABKIT_RESULTS_H
#define LABKIT_RESULTS_H

#include <stdbool.h>
#include <stdio.h>

#include "labkit/cli.h"
#include "labkit/device.h"
#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum results_kind {
    RESULTS_TEXT,   /* a name: "cpu", "naive i-k-j" */
    RESULTS_NUMBER, /* a measurement or a size */
    RESULTS_BYTES   /* a number of bytes: the CSV has the number, the terminal "4 KiB", "256 MiB" */
} results_kind;

typedef struct results_column {
    const char *name;    /* the CSV's column, and how cells are set: letters, digits and _ ("gflops") */
    results_kind kind;   /* */
    const char *heading; /* the terminal's heading ("GFLOP/s"); NULL: the name */
    const char *format;  /* printf format of one cell: "%.1f", "%.2fx", "%.0f%%" (numbers: one f, e
                          * or g conversion), "%s" (text); NULL: "%.4g" or "%s" */
    int width;           /* terminal width, at least the heading's; wider values widen it in
                          * results_print, but not while rows are echoed */
} results_column;

typedef struct results results;

/* Makes an empty table with `ncolumns` columns (copied; their strings must
 * outlive r). `args` (from cli_parse, or NULL) gives the lab's name, the
 * command line and the output paths; when --plot was given, the lab's plot
 * script and the style must exist, so that a missing one fails before the
 * experiment, not after it. */
#define results_create(out, args, columns, ncolumns) \
    results_create_for((out), (args), (columns), (ncolumns), RESULTS_PLOT_SCRIPT_, RESULTS_PLOT_STYLE_)

/* results_create with the script and style named (NULL: none; the style then
 * defaults to the kit's own). */
status results_create_for(results **out, const cli_args *args, const results_column *columns, int ncolumns,
                          const char *plot_script, const char *plot_style);

/* Starts a new row, every cell unknown. With echo on, the rows completed so far
 * are printed first. */
status results_row(results *r);

/* Sets a cell of the current row. */
status results_text(results *r, const char *column, const char *value);
status results_number(results *r, const char *column, double value);

/* Names a device in the CSV's "# devices:" line and in the plot variables even
 * though no cell names it (a text cell that holds a device's name, "sim:0",
 * names it already). */
status results_mention_device(results *r, device d);

/* Echo on: each row is printed to stdout once it is complete (when the next
 * row starts, or at results_print), under a heading printed once, so that a
 * long experiment shows its progress. */
status results_echo(results *r, bool on);

/* Prints the table to stdout, aligned (after echoing: the rows not printed yet). */
status results_print(results *r);

/* How many rows; the number in a cell (NaN when unknown, a text column, or no
 * such row or column). For a takeaway computed from the table. */
int results_count(const results *r);
double results_get(const results *r, int row, const char *column);

/* Writes the CSV to `path` ("-": standard output) under a temporary name,
 * renamed into place when whole (files.h). */
status results_save_csv(results *r, const char *path);

/* Draws `figure` from the CSV at `data` (already saved) with the lab's script. */
status results_draw(results *r, const char *figure, const char *data, const char *const *vars);

/* What every lab does at the end: writes --csv if it was given and draws every
 * --plot, each from the CSV (--csv FILE, or FIG.csv beside the figure). Prints
 * no table; stops at the first failure. */
status results_finish(results *r, const char *const *vars);

/* How many cores other programs kept busy, on average, from results_create
 * to the first call of this function or of results_finish (the CSV's "# load:"
 * line and the figures say the same figure); -1 when unknown. A takeaway
 * says it when it reaches LOAD_BUSY_CORES_NOTED. */
double results_busy_elsewhere(results *r);

/* Several figures from one run, one idea each: every --plot FIG draws FIG
 * with the plot variable figure=names[0], and FIG-names[i] beside it (the
 * same extension) with figure=names[i], each from the one CSV; the lab's
 * `vars` go to all of them. results_check_figures, right after results_create,
 * says before any work whether every one of them can be written. At most 8
 * names of letters, digits and _. */
status results_check_figures(const results *r, const char *const *names, int nnames);
status results_finish_figures(results *r, const char *const *names, int nnames, const char *const *vars);

/* "figs/precision.png", "error" -> "figs/precision-error.png". */
status results_figure_path(const char *figure, const char *name, char *out, size_t size);

void results_free(results *r);

/* The compile definitions that say where a lab's plot script and the shared
 * style are (labs/CMakeLists.txt). */
#ifdef LAB_PLOT_SCRIPT
#define RESULTS_PLOT_SCRIPT_ LAB_PLOT_SCRIPT
#else
#define RESULTS_PLOT_SCRIPT_ NULL
#endif
#ifdef LABKIT_PLOT_STYLE
#define RESULTS_PLOT_STYLE_ LABKIT_PLOT_STYLE
#else
#define RESULTS_PLOT_STYLE_ NULL
#endif

#ifdef __cplusplus
}
#endif
#endif
