/* figure.h: a figure drawn by a lab's own gnuplot script from a CSV file.
 *
 *   figure_draw("fig.png", "fig.csv", "labs/04_matmul/plot.gp", style, vars);
 *
 * runs, with no shell in between,
 *   gnuplot -e "data='fig.csv'; out='.labkit-XXXXXX'; format='png'; style='...'; <vars>" plot.gp
 * into a temporary file beside the figure, checks gnuplot's exit status and the
 * file it wrote (not empty; a PNG has its signature and its IEND chunk, an SVG
 * ends with </svg>, a PDF with %%EOF), and only then renames it into place. On
 * failure the temporary file is removed, nothing replaces the figure, and
 * STATUS_IO_FAILED names the figure and why. On success it prints one line an
 * instructor can copy to restyle the figure without recompiling:
 *   plot: fig.png (redraw: gnuplot -e "data='fig.csv'; ..." labs/04_matmul/plot.gp)
 * Without gnuplot the CSV stays, one warning line on stderr gives the same
 * command to draw it later, and the call succeeds.
 *
 * The format follows the extension: .png, .svg or .pdf. LABKIT_GNUPLOT names
 * the program to run instead of gnuplot (the tests use it). */
#ifndef LABKIT_FIGURE_H
#define LABKIT_FIGURE_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether `path` ends in .png, .svg or .pdf after a name ("fig.png", not ".png"). */
bool figure_has_format(const char *path);

/* The CSV a figure is drawn from when no --csv is given: the figure's path
 * with .csv for its extension ("plots/fig.png" -> "plots/fig.csv"), into
 * buffer. False when it does not fit or the figure has no known format. */
bool figure_data_path(const char *figure, char *buffer, size_t size);

/* Draws `figure` from the CSV at `data` with the gnuplot script `script`, which
 * loads the shared style file `style`. `vars` are the script's own variables,
 * "name=value" strings ending with NULL (or vars NULL): each becomes
 * name='value' for gnuplot. The names data, out, format and style are taken. */
status figure_draw(const char *figure, const char *data, const char *script, const char *style,
                   const char *const *vars);

#ifdef __cplusplus
}
#endif
#endif
