/* cli_usage.c: a lab program's usage, printed after --help or a mistake: every
 * flag, its value, its range and its default (cli.h). */
#include <stdio.h>
#include <string.h>

#include "cli_internal.h"

/* ---- the usage ------------------------------------------------------------------ */

/* "--epochs N" into buffer: the left column of the usage. */
static const char *flag_with_value(const char *name, const char *value_name, char *buffer, size_t size)
{
    snprintf(buffer, size, "--%s%s%s", name, value_name != NULL ? " " : "",
             value_name != NULL ? value_name : "");
    return buffer;
}

static const char *option_value_name(const cli_option *option)
{
    if (option->type == CLI_FLAG) {
        return NULL;
    }
    return option->value_name != NULL ? option->value_name : "VALUE";
}

static int left_column_width(const cli_program *program, bool with_options)
{
    char buffer[96];
    int width = (int)strlen("--help, -h");
    for (int f = 0; f < FLAG_NONE; f++) {
        int w = (int)strlen(
            flag_with_value(cli_shared_flags[f].name, cli_shared_flags[f].value_name, buffer, sizeof buffer));
        width = w > width ? w : width;
    }
    for (int i = 0; with_options && i < program->noptions; i++) {
        const cli_option *option = &program->options[i];
        int w = (int)strlen(flag_with_value(option->name, option_value_name(option), buffer, sizeof buffer));
        width = w > width ? w : width;
    }
    return width > 30 ? 30 : width; /* a very long name pushes only its own help */
}

/* The current value of the target: the default, when called before parsing. */
static void print_default(const cli_option *option, FILE *to)
{
    switch (option->type) {
    case CLI_FLAG: break;
    case CLI_INT: fprintf(to, "default %d", *(const int *)option->target); break;
    case CLI_DOUBLE: fprintf(to, "default %g", *(const double *)option->target); break;
    case CLI_STRING: {
        const char *text = *(const char *const *)option->target;
        if (text != NULL) {
            fprintf(to, "default %s", text);
        }
        break;
    }
    }
}

static void print_option(const cli_option *option, int width, FILE *to)
{
    char buffer[96];
    fprintf(to, "  %-*s  %s", width,
            flag_with_value(option->name, option_value_name(option), buffer, sizeof buffer),
            option->help != NULL ? option->help : "");
    bool ranged = cli_has_range(option) && (option->type == CLI_INT || option->type == CLI_DOUBLE);
    bool defaulted = option->type != CLI_FLAG &&
                     (option->type != CLI_STRING || *(const char *const *)option->target != NULL);
    if (ranged || defaulted) {
        fputs(" (", to);
        if (ranged) {
            cli_print_range(option, to);
            fputs(defaulted ? ", " : "", to);
        }
        print_default(option, to);
        fputs(")", to);
    }
    fputc('\n', to);
}

void cli_print_usage(const cli_program *program, FILE *to)
{
    if (program == NULL || to == NULL) {
        return;
    }
    bool has_options =
        program->options != NULL && program->noptions > 0 && cli_check_program(program) == NULL;
    fprintf(to, "usage: %s [--device D] [--quick] [--csv FILE] [--plot FILE]...%s\n",
            cli_program_name(program), has_options ? " [options]" : "");
    if (program->summary != NULL) {
        fprintf(to, "%s\n", program->summary);
    }

    int width = left_column_width(program, has_options);
    char buffer[96];
    fputs("\nflags of every lab:\n", to);
    for (int f = 0; f < FLAG_NONE; f++) {
        fprintf(
            to, "  %-*s  %s\n", width,
            flag_with_value(cli_shared_flags[f].name, cli_shared_flags[f].value_name, buffer, sizeof buffer),
            cli_shared_flags[f].help);
    }
    fprintf(to, "  %-*s  %s\n", width, "--help, -h", "print this help and exit");

    if (has_options) {
        fprintf(to, "\noptions of %s:\n", cli_program_name(program));
        for (int i = 0; i < program->noptions; i++) {
            print_option(&program->options[i], width, to);
        }
    }
    fputs("\nA value may also follow an equals sign: --device=cpu.\n"
          "No NVIDIA GPU? LABKIT_SIM_GPUS=N (1 to 8) simulates N GPUs, sim:0 to sim:N-1,\n"
          "for example: LABKIT_SIM_GPUS=2 ",
          to);
    fprintf(to, "%s --device sim:1\n", cli_program_name(program));
}
