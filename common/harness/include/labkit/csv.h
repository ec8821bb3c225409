/* csv.h: results as comma-separated values.
 *
 * The file is written under a temporary name beside its destination and renamed
 * when closed, so a crash or an error never leaves half a file behind. The
 * destination must be absent or a regular file (files.h, output_check); "-"
 * writes to standard output. results.h builds on files.h directly: new code
 * describes its results there. */
#ifndef LABKIT_CSV_H
#define LABKIT_CSV_H

#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct csv_file csv_file;

/* Opens `path` for writing and writes the header line: `columns` are the column
 * names, `ncolumns` of them. */
status csv_open(csv_file **out, const char *path, const char *const *columns, int ncolumns);
/* One row of numbers, as many as there are columns. */
status csv_row(csv_file *f, const double *values, int nvalues);
/* One row whose cells are already text (quoted when they hold a comma or quote). */
status csv_row_text(csv_file *f, const char *const *cells, int ncells);
/* Flushes, closes and renames into place. Frees f, even on failure. */
status csv_close(csv_file *f);
/* Closes and deletes the temporary file: nothing appears at the destination. */
void csv_discard(csv_file *f);

#ifdef __cplusplus
}
#endif
#endif
