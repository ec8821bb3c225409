/* cli_flags.c: the flags every lab program shares, and the checks of a
 * program's own description of its options (cli.h). */
#include <string.h>

#include "cli_internal.h"

const cli_shared_flag_info cli_shared_flags[] = {
    [FLAG_DEVICE] = { "device", "D",
                      "cpu, cuda, cuda:N or sim:N (default: GPU 0 if there is "
                      "one, else cpu)" },
    [FLAG_QUICK] = { "quick", NULL, "a smaller run that finishes in seconds" },
    [FLAG_CSV] = { "csv", "FILE",
                   "write the results as CSV; - writes them to standard output (and all else "
                   "to standard error)" },
    [FLAG_PLOT] = { "plot", "FILE",
                    "draw the figure: FILE ends in .png, .svg or .pdf; up to 3 times, one per "
                    "format" },
};

shared_flag cli_find_shared_flag(const char *name, size_t length)
{
    for (int f = 0; f < FLAG_NONE; f++) {
        if (strlen(cli_shared_flags[f].name) == length &&
            strncmp(cli_shared_flags[f].name, name, length) == 0) {
            return (shared_flag)f;
        }
    }
    return FLAG_NONE;
}

const cli_option *cli_find_option(const cli_program *program, const char *name, size_t length)
{
    for (int i = 0; i < program->noptions; i++) {
        const cli_option *option = &program->options[i];
        if (strlen(option->name) == length && strncmp(option->name, name, length) == 0) {
            return option;
        }
    }
    return NULL;
}

const char *cli_program_name(const cli_program *program)
{
    return program->name != NULL ? program->name : "program";
}

bool cli_has_range(const cli_option *option) { return option->min < option->max; }

void cli_print_range(const cli_option *option, FILE *to)
{
    if (option->type == CLI_INT) {
        fprintf(to, "%.0f to %.0f", option->min, option->max);
    } else {
        fprintf(to, "%g to %g", option->min, option->max);
    }
}

/* ---- checking the program's own description ---------------------------------- */

/* A mistake in the program's cli_program (not the user's command line). */
const char *cli_check_program(const cli_program *program)
{
    if (program->noptions < 0 || (program->noptions > 0 && program->options == NULL)) {
        return "options is NULL or noptions is negative";
    }
    for (int i = 0; i < program->noptions; i++) {
        const cli_option *option = &program->options[i];
        if (option->name == NULL || option->name[0] == '\0' || option->name[0] == '-' ||
            strchr(option->name, '=') != NULL) {
            return "an option has no name, or a name with '-' in front or '=' in it";
        }
        if (option->target == NULL) {
            return "an option's target is NULL";
        }
        if ((int)option->type < (int)CLI_FLAG || (int)option->type > (int)CLI_STRING) {
            return "an option's type is not CLI_FLAG, CLI_INT, CLI_DOUBLE or CLI_STRING";
        }
        if (cli_find_shared_flag(option->name, strlen(option->name)) != FLAG_NONE ||
            strcmp(option->name, "help") == 0 ||
            cli_find_option(program, option->name, strlen(option->name)) != option) {
            return "two options have the same name (or one repeats a shared flag)";
        }
    }
    return NULL;
}
