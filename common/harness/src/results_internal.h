/* results_internal.h: the table behind results.h, shared by its three files
 * (internal): results.c makes and fills it, results_print.c prints it,
 * results_csv.c saves and draws it. */
#ifndef LABKIT_RESULTS_INTERNAL_H
#define LABKIT_RESULTS_INTERNAL_H

#include "labkit/load.h"
#include "labkit/results.h"

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

    /* Other programs' share of the cores over the run (load.h): sampled when
     * the table is made, worked out once, when first asked for. */
    load_sample started;
    /* What a redraw needs besides the CSV, kept in its "# plot:" and "# figures:"
     * lines (./lab plots --reference): the lab's own plot variables, and the
     * names of results_finish_figures. */
    char *plot_line;
    char figures_line[256];
    bool busy_known;
    double busy_cores; /* -1: unknown */
    bool load_said;    /* the note of a run under load, printed once */

    /* The first mistake in a cell call, reported again by print and finish. */
    status mistake;
    char mistake_message[512];
};

/* The first mistake in a cell call, returned again by a later call: status and message. */
status results_mistake_again(const results *r, const char *function);

/* Other programs' busy cores from the table's making to the first call (load.h). */
double results_busy_frozen(results *r);

/* The terminal widths of the columns while echoing (the columns' own widths). */
void results_echo_widths(const results *r, int *widths);

/* Prints rows [from, to) aligned to `widths`, with the heading first if it was
 * not printed yet. */
void results_print_rows(results *r, int from, int to, const int *widths);

#endif
