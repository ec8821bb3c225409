/* cli_internal.h: what the command line's three files share (internal):
 * cli_flags.c describes the flags, cli.c parses them, cli_usage.c prints them. */
#ifndef LABKIT_CLI_INTERNAL_H
#define LABKIT_CLI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "labkit/cli.h"

typedef enum shared_flag { FLAG_DEVICE, FLAG_QUICK, FLAG_CSV, FLAG_PLOT, FLAG_NONE } shared_flag;

typedef struct cli_shared_flag_info {
    const char *name;
    const char *value_name; /* NULL for a flag without a value */
    const char *help;
} cli_shared_flag_info;

/* The flags every lab shares, indexed by shared_flag. */
extern const cli_shared_flag_info cli_shared_flags[FLAG_NONE];

/* The shared flag called name[0..length-1], or FLAG_NONE. */
shared_flag cli_find_shared_flag(const char *name, size_t length);
/* The program's own option called name[0..length-1], or NULL. */
const cli_option *cli_find_option(const cli_program *program, const char *name, size_t length);
const char *cli_program_name(const cli_program *program);
/* Whether a number option has a range (min < max), and "1 to 100". */
bool cli_has_range(const cli_option *option);
void cli_print_range(const cli_option *option, FILE *to);
/* NULL when the program's description is right, else what is wrong with it. */
const char *cli_check_program(const cli_program *program);

#endif
