/* files.h: opening the files a lab reads and writes, without harming what is not
 * ours and without hanging.
 *
 * Inputs: input_open opens a file for reading without ever blocking (a FIFO
 * left in a data directory would otherwise hang the program in open) and
 * refuses anything that is not a regular file, saying what it found. It gives
 * the size, so that a reader can check a header against it before reading.
 *
 *   FILE *f;
 *   int64_t bytes;
 *   CHECK(input_open(path, &f, &bytes));   // "data/x is a directory, not a file"
 *
 * Outputs: a CSV or a figure is only ever written as a new regular file or over
 * an existing regular file, and only whole. output_check says, before any work,
 * whether a path may be written; output_begin, output_commit and output_discard
 * write under a short temporary name in the destination's directory and rename
 * it into place only once it is complete.
 *
 *   output_file o;
 *   CHECK(output_begin(&o, "results.csv"));
 *   fprintf(o.stream, "n,seconds\n");
 *   CHECK(output_commit(&o));              // or output_discard(&o)
 *
 * The path "-" means standard output (see output_stdout). */
#ifndef LABKIT_FILES_H
#define LABKIT_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- inputs ---------------------------------------------------------------- */

/* Opens `path` for reading ("rb"), which must be a regular file: a directory, a
 * FIFO, a socket or a device is refused with STATUS_IO_FAILED naming what it is.
 * Never blocks. *size (if not NULL) receives the file's size in bytes. */
status input_open(const char *path, FILE **out, int64_t *size);

/* ---- outputs --------------------------------------------------------------- */

/* Whether `path` may be written: its directory exists and is writable, and the
 * path is absent or a regular file (a symbolic link, a directory, a FIFO, a
 * socket or a device is refused). `flag` names where the path came from in the
 * message ("--csv"); NULL for "the output". "-" (standard output) is fine.
 * Checks only: creates, changes and deletes nothing. */
status output_check(const char *path, const char *flag);

/* A file being written under a temporary name beside its destination. */
typedef struct output_file {
    FILE *stream;    /* open on temp_path; NULL for "-" (use output_stdout()) */
    char *path;      /* the destination */
    char *temp_path; /* "<dir>/.labkit-XXXXXX"; NULL for "-" */
} output_file;

/* Checks `path` (output_check) and creates the temporary file. */
status output_begin(output_file *out, const char *path);

/* Flushes and closes the stream (unless it is already closed and set to NULL,
 * as when another program wrote temp_path), then renames the file into place.
 * On any failure the temporary file is removed, the destination is left as it
 * was, and STATUS_IO_FAILED names the file and why. Frees what o holds. */
status output_commit(output_file *o);

/* Removes the temporary file; nothing appears at the destination. */
void output_discard(output_file *o);

/* "-" as an output path: standard output. */
bool output_is_stdout(const char *path);

/* Sends everything the program prints on standard output to standard error
 * from now on, and keeps the real standard output for the data (--csv -), so
 * that the CSV arrives there clean. Idempotent. */
status output_claim_stdout(void);

/* Where "-" writes: the standard output kept by output_claim_stdout, else stdout. */
FILE *output_stdout(void);

#ifdef __cplusplus
}
#endif
#endif
