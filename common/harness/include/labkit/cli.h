/* cli.h: the flags every lab program shares, and its own extra ones.
 *
 *   --device D   cpu, cuda, cuda:N or sim:N (default: try_gpu(0))
 *   --quick      a smaller run that finishes in seconds (the checks use it)
 *   --csv FILE   write the results as CSV ("-": to standard output, and
 *                everything else the program prints to standard error)
 *   --plot FILE  draw the figure (.png, .svg or .pdf); up to CLI_MAX_PLOTS
 *                times, one figure per format from the same run's data
 *   --help       print the usage and exit 0
 *
 * A bad flag or value prints what was wrong and the usage, and exits with 2; so
 * does a flag given twice (--plot aside). Numbers are strict: an int is an
 * optional '-' and digits, a double a decimal number ("-1.5e-3"; no "+1", hex,
 * "inf", "nan" or spaces).
 *
 * Every output path (--csv, each --plot, and the CSV a figure is drawn from)
 * is checked before the program starts its work (files.h, output_check): its
 * directory must exist and be writable, and the path must be absent or a
 * regular file. A device, FIFO, socket, directory or symbolic link is refused
 * with exit code 2, and nothing is touched. */
#ifndef LABKIT_CLI_H
#define LABKIT_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "labkit/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cli_type { CLI_FLAG, CLI_INT, CLI_DOUBLE, CLI_STRING } cli_type;

/* A lab's own option: "--name VALUE" (or "--name" alone for CLI_FLAG). `target`
 * points to a bool, int, double or const char * according to `type`; it keeps
 * its value when the option is absent, so set the default before parsing. */
typedef struct cli_option {
    const char *name; /* without the dashes: "epochs" */
    cli_type type;
    void *target;
    const char *value_name; /* "N", "DIR"; NULL for flags */
    const char *help;
    double min, max; /* CLI_INT and CLI_DOUBLE: accepted range when min < max */
} cli_option;

typedef struct cli_program {
    const char *name;          /* "01_devices" */
    const char *summary;       /* one line: what the program shows */
    const cli_option *options; /* extra options, or NULL */
    int noptions;
} cli_program;

/* How many times --plot may be given: one figure per format. */
#define CLI_MAX_PLOTS 3

typedef struct cli_args {
    device dev;
    bool device_given; /* --device was on the command line */
    bool quick;
    const char *csv_path;                  /* NULL unless --csv; "-": standard output */
    const char *plot_path;                 /* the first --plot, or NULL */
    const char *plot_paths[CLI_MAX_PLOTS]; /* every --plot, in order */
    int nplots;                            /* how many */
    const char *program_name;              /* the cli_program's name: "04_matmul" */
    int argc;                              /* the command line as given, for the record */
    char **argv;                           /* (results.h writes it into the CSV's header) */
} cli_args;

/* Parses argv. Returns -1 when the program should go on, otherwise the exit code
 * to return at once: 0 after --help, 2 after a bad flag or value (the usage has
 * been printed) or a LABKIT_* setting that cannot be honoured
 * (labkit/environment.h; checked first). */
int cli_parse(const cli_program *program, int argc, char **argv, cli_args *out);

void cli_print_usage(const cli_program *program, FILE *to);

#ifdef __cplusplus
}
#endif
#endif
