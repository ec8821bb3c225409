/* plot.h: figures for slides, drawn by gnuplot through a pipe.
 *
 * plot_draw(p, "fig.png") writes fig.plot.csv (the data) and fig.gp (a gnuplot
 * script that reads fig.plot.csv and writes fig.png), then runs gnuplot on the script.
 * The format follows the extension: .png, .svg or .pdf. Without gnuplot the CSV
 * and the script stay and a one-line warning says how to draw the figure later;
 * the call still succeeds, since the data is not lost.
 * LABKIT_GNUPLOT=/path/to/gnuplot picks the program to run (default: gnuplot). */
#ifndef LABKIT_PLOT_H
#define LABKIT_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum plot_style {
    PLOT_LINES_POINTS = 0,
    PLOT_LINES,
    PLOT_DASHED, /* a reference line, such as a device's peak */
    PLOT_BARS    /* clustered bars: x values are bar positions, labels below */
} plot_style;

typedef struct plot_series {
    const char *title;
    const double *x; /* n values (for PLOT_BARS: ignored, bars are 0..n-1) */
    const double *y; /* n values */
    size_t n;
    plot_style style;
} plot_series;

#define PLOT_MAX_SERIES 16

typedef struct plot {
    const char *title;
    const char *xlabel;
    const char *ylabel;
    bool log_x, log_y;
    const char *const *bar_labels; /* PLOT_BARS: one label per bar position, or NULL */
    plot_series series[PLOT_MAX_SERIES];
    int nseries;
} plot;

/* Adds a series (copies the pointers, not the data). */
status plot_add(plot *p, const char *title, const double *x, const double *y, size_t n, plot_style style);

/* Writes the data, the script and (with gnuplot) the figure at `path`. */
status plot_draw(const plot *p, const char *path);

#ifdef __cplusplus
}
#endif
#endif
