/* cli.c: the command line of a lab program.
 *
 * Every value is checked strictly ("--epochs 5x" is an error, not 5), because a
 * typo that is silently accepted wastes a student's whole run. The command line
 * is read twice: once to check all of it, once to store it. Nothing is stored
 * unless everything is right, so the usage printed after a mistake (or after
 * --help) shows the program's own defaults, and a caller that goes on after an
 * error still has its defaults.
 *
 * A flag given twice is a mistake too (which one did the user mean?), except
 * --plot, which draws one figure per format from the same data. And every path
 * the program will write is checked before it starts its work: a run of ten
 * minutes that ends in "cannot write" teaches nothing, and a path that names a
 * device or a directory must never be replaced. */
#include "labkit/cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/crash.h"
#include "labkit/environment.h"
#include "labkit/figure.h"
#include "labkit/files.h"
#include "cli_internal.h"

/* The exit codes cli_parse returns; -1 means "go on". */
enum { CLI_GO_ON = -1, CLI_EXIT_OK = 0, CLI_EXIT_USAGE = 2 };

/* ---- strict values ------------------------------------------------------------ */

/* Each returns NULL when `text` is good (and writes the value), otherwise what
 * is wrong with it, to follow "--name TEXT: ". */

/* An optional '-', then digits: what a person writes for a whole number.
 * strtol would also take " 5", "+5" and (with base 0) "0x10". */
static bool is_plain_integer(const char *text)
{
    const char *digits = text[0] == '-' ? text + 1 : text;
    return digits[0] != '\0' && strspn(digits, "0123456789") == strlen(digits);
}

/* An optional '-', digits with at most one '.', at least one digit, then an
 * optional exponent: "2.5", "-.5", "1e-3". strtod would also take " 1", "+1",
 * "0x1p3", "inf" and "nan". */
static bool is_plain_decimal(const char *text)
{
    const char *c = text[0] == '-' ? text + 1 : text;
    size_t whole = strspn(c, "0123456789");
    c += whole;
    size_t fraction = 0;
    if (*c == '.') {
        fraction = strspn(c + 1, "0123456789");
        c += 1 + fraction;
    }
    if (whole + fraction == 0) return false;
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '-' || *c == '+') c++;
        size_t exponent = strspn(c, "0123456789");
        if (exponent == 0) return false;
        c += exponent;
    }
    return *c == '\0';
}

static const char *parse_int(const cli_option *option, const char *text, int *value)
{
    if (!is_plain_integer(text)) {
        return "is not a whole number (digits, with a '-' in front if negative)";
    }
    char *end = NULL;
    errno = 0;
    long number = strtol(text, &end, 10);
    if (*end != '\0') {
        return "is not a whole number";
    }
    if (errno == ERANGE || number < INT_MIN || number > INT_MAX) {
        return "does not fit in an int";
    }
    if (cli_has_range(option) && (number < option->min || number > option->max)) {
        return "is out of range";
    }
    *value = (int)number;
    return NULL;
}

static const char *parse_double(const cli_option *option, const char *text, double *value)
{
    if (!is_plain_decimal(text)) {
        return "is not a decimal number (such as 0.5, -2 or 1e-3)";
    }
    char *end = NULL;
    errno = 0;
    double number = strtod(text, &end);
    if (*end != '\0') {
        return "is not a number";
    }
    if (errno == ERANGE) { /* "1e999", "1e-999" */
        return "is too large or too small for a double";
    }
    if (!isfinite(number)) { /* strtod accepts "inf" and "nan" */
        return "is not a finite number";
    }
    if (cli_has_range(option) && (number < option->min || number > option->max)) {
        return "is out of range";
    }
    *value = number;
    return NULL;
}

/* ---- one argument ---------------------------------------------------------------- */

/* Where the parse stands: what was read so far, and whether to store it. */
typedef struct parse_state {
    const cli_program *program;
    cli_args *args;
    bool store; /* false on the checking pass */
    /* The value each flag was given (shared flags first, then the program's
     * options; "" for a flag without a value), NULL while not seen: a flag
     * given twice is refused, naming both values. */
    const char **seen;
} parse_state;

/* Prints "NAME: <problem>" and the usage to stderr; returns the exit code 2. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
usage_error(const parse_state *state, const char *format, ...)
{
    fprintf(stderr, "%s: ", cli_program_name(state->program));
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputs("\n\n", stderr);
    cli_print_usage(state->program, stderr);
    return CLI_EXIT_USAGE;
}

/* A bad value of an extra option: "NAME: --epochs 0 is out of range (1 to 100)". */
static int bad_option_value(const parse_state *state, const cli_option *option, const char *value,
                            const char *problem)
{
    fprintf(stderr, "%s: --%s '%s' %s", cli_program_name(state->program), option->name, value, problem);
    if (cli_has_range(option) && (option->type == CLI_INT || option->type == CLI_DOUBLE)) {
        fputs(" (accepted: ", stderr);
        cli_print_range(option, stderr);
        fputs(")", stderr);
    }
    fputs("\n\n", stderr);
    cli_print_usage(state->program, stderr);
    return CLI_EXIT_USAGE;
}

/* --plot FILE once more: each a new file, at most CLI_MAX_PLOTS of them. */
static int add_plot(parse_state *state, const char *value)
{
    cli_args *args = state->args;
    if (!figure_has_format(value)) {
        return usage_error(state,
                           "--plot '%s': the figure's name must end in .png, .svg "
                           "or .pdf (the format follows it)",
                           value);
    }
    for (int i = 0; i < args->nplots; i++) {
        if (strcmp(args->plot_paths[i], value) == 0) {
            return usage_error(state, "--plot %s given twice; give each figure once", value);
        }
    }
    if (args->nplots == CLI_MAX_PLOTS) {
        return usage_error(state, "--plot given more than %d times; draw at most one figure per format",
                           CLI_MAX_PLOTS);
    }
    args->plot_paths[args->nplots++] = value;
    args->plot_path = args->plot_paths[0];
    return CLI_GO_ON;
}

/* Records that flag number `index` (of `seen`) was given `value`; refuses a second time. */
static int note_given(parse_state *state, int index, const char *name, const char *value)
{
    const char *before = state->seen[index];
    state->seen[index] = value != NULL ? value : "";
    if (before == NULL) {
        return CLI_GO_ON;
    }
    if (value == NULL) {
        return usage_error(state, "--%s given twice; give it once", name);
    }
    return usage_error(state, "--%s given twice (%s and %s); give it once", name, before, value);
}

static int apply_shared(parse_state *state, shared_flag flag, const char *value)
{
    if (flag != FLAG_PLOT) {
        int code = note_given(state, (int)flag, cli_shared_flags[flag].name, value);
        if (code != CLI_GO_ON) {
            return code;
        }
    }
    cli_args *args = state->args;
    switch (flag) {
    case FLAG_DEVICE: {
        device d;
        if (device_parse(value, &d) != STATUS_OK) {
            return usage_error(state, "--device '%s': %s", value, last_error());
        }
        args->dev = d;
        args->device_given = true;
        break;
    }
    case FLAG_QUICK: args->quick = true; break;
    case FLAG_CSV:
        if (value[0] == '\0') {
            return usage_error(state, "--csv needs a file name");
        }
        args->csv_path = value;
        break;
    case FLAG_PLOT: return add_plot(state, value);
    case FLAG_NONE: break;
    }
    return CLI_GO_ON;
}

static int apply_option(parse_state *state, const cli_option *option, const char *value)
{
    int index = FLAG_NONE + (int)(option - state->program->options);
    int code = note_given(state, index, option->name, option->type == CLI_FLAG ? NULL : value);
    if (code != CLI_GO_ON) {
        return code;
    }
    const char *problem = NULL;
    switch (option->type) {
    case CLI_FLAG:
        if (state->store) {
            *(bool *)option->target = true;
        }
        return CLI_GO_ON;
    case CLI_INT: {
        int number = 0;
        problem = parse_int(option, value, &number);
        if (problem == NULL && state->store) {
            *(int *)option->target = number;
        }
        break;
    }
    case CLI_DOUBLE: {
        double number = 0;
        problem = parse_double(option, value, &number);
        if (problem == NULL && state->store) {
            *(double *)option->target = number;
        }
        break;
    }
    case CLI_STRING:
        if (value[0] == '\0') {
            problem = "is empty";
        } else if (state->store) {
            *(const char **)option->target = value;
        }
        break;
    }
    return problem == NULL ? CLI_GO_ON : bad_option_value(state, option, value, problem);
}

/* Reads argv[*i] (and its value, moving *i past it). Returns CLI_GO_ON, or the
 * exit code after --help or a mistake. */
static int parse_one(parse_state *state, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        if (!state->store) {
            cli_print_usage(state->program, stdout);
        }
        return CLI_EXIT_OK;
    }
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
        return usage_error(state, "unexpected argument '%s'%s", arg,
                           arg[0] == '-' && arg[1] != '-'
                               ? " (flags start with two dashes: --quick)"
                               : " (this program takes only flags, such as --quick)");
    }

    /* "--name=value" or "--name value" */
    const char *name = arg + 2;
    const char *equals = strchr(name, '=');
    size_t length = equals != NULL ? (size_t)(equals - name) : strlen(name);
    shared_flag flag = cli_find_shared_flag(name, length);
    const cli_option *option = flag == FLAG_NONE ? cli_find_option(state->program, name, length) : NULL;
    if (flag == FLAG_NONE && option == NULL) {
        return usage_error(state, "unknown flag '%s'", arg);
    }
    bool takes_value =
        flag != FLAG_NONE ? cli_shared_flags[flag].value_name != NULL : option->type != CLI_FLAG;
    const char *value = NULL;
    if (!takes_value) {
        if (equals != NULL) {
            return usage_error(state, "'%s': this flag takes no value; write just --%s", arg,
                               flag != FLAG_NONE ? cli_shared_flags[flag].name : option->name);
        }
    } else if (equals != NULL) {
        value = equals + 1;
    } else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
        *i += 1;
        value = argv[*i];
    } else {
        /* The next word is a flag (or there is none): the value was forgotten. */
        return usage_error(state, "%s needs a value (%s)", arg,
                           flag != FLAG_NONE            ? cli_shared_flags[flag].value_name
                           : option->value_name != NULL ? option->value_name
                                                        : "VALUE");
    }

    if (flag != FLAG_NONE) {
        return apply_shared(state, flag, value);
    }
    return apply_option(state, option, value != NULL ? value : "");
}

static int parse_all(parse_state *state, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int code = parse_one(state, argc, argv, &i);
        if (code != CLI_GO_ON) {
            return code;
        }
    }
    return CLI_GO_ON;
}

/* ---- the public functions ------------------------------------------------------ */

/* One reading of the whole command line, storing the values or not. */
static int parse_pass(const cli_program *program, int argc, char **argv, cli_args *args, bool store)
{
    const char **seen = calloc((size_t)FLAG_NONE + (size_t)program->noptions, sizeof *seen);
    if (seen == NULL) {
        fprintf(stderr, "%s: out of host memory reading the command line\n", cli_program_name(program));
        return CLI_EXIT_USAGE;
    }
    parse_state state = { .program = program, .args = args, .store = store, .seen = seen };
    int code = parse_all(&state, argc, argv);
    free(seen);
    return code;
}

/* Prints "NAME: <why the output cannot be written>"; returns the exit code 2. */
static int bad_output(const cli_program *program)
{
    fprintf(stderr, "%s: %s\n", cli_program_name(program), last_error());
    return CLI_EXIT_USAGE;
}

/* Every path the program will write, checked before it starts its work: --csv,
 * each --plot, and the CSV each figure is drawn from when --csv names no file. */
static int check_outputs(const cli_program *program, cli_args *args)
{
    if (args->csv_path != NULL && output_check(args->csv_path, "--csv") != STATUS_OK) {
        return bad_output(program);
    }
    bool csv_is_file = args->csv_path != NULL && !output_is_stdout(args->csv_path);
    for (int i = 0; i < args->nplots; i++) {
        const char *figure = args->plot_paths[i];
        if (output_check(figure, "--plot") != STATUS_OK) {
            return bad_output(program);
        }
        if (csv_is_file && strcmp(args->csv_path, figure) == 0) {
            fail(STATUS_BAD_ARGUMENT, "--csv and --plot both name %s; give them two files", figure);
            return bad_output(program);
        }
        char data[4096], flag[4200];
        snprintf(flag, sizeof flag, "--plot %s draws from its data in", figure);
        if (!csv_is_file && figure_data_path(figure, data, sizeof data) &&
            output_check(data, flag) != STATUS_OK) {
            return bad_output(program);
        }
    }
    if (args->csv_path != NULL && output_is_stdout(args->csv_path) && output_claim_stdout() != STATUS_OK) {
        return bad_output(program);
    }
    return CLI_GO_ON;
}

int cli_parse(const cli_program *program, int argc, char **argv, cli_args *out)
{
    crash_report_on_fatal_signals(); /* every lab program parses its command line first */
    const char *mistake = NULL;
    if (program == NULL || argv == NULL || out == NULL || argc < 0) {
        mistake = "program, argv and out must not be NULL and argc must not be negative";
    } else {
        mistake = cli_check_program(program);
    }
    if (mistake != NULL) {
        /* The lab's own code is wrong: say so loudly, as for a bad flag. */
        fail(STATUS_BAD_ARGUMENT, "cli_parse: %s", mistake);
        fprintf(stderr, "cli_parse: %s (a mistake in the program, not in its flags)\n", mistake);
        return CLI_EXIT_USAGE;
    }

    /* A setting that cannot be honoured (LABKIT_SIM_GPUS=two) stops the program
     * before anything else, --help and --device included: a device list or a
     * figure without what was asked for is a silent mistake. */
    if (environment_check() != STATUS_OK) {
        fprintf(stderr, "%s: %s\n", cli_program_name(program), last_error());
        return CLI_EXIT_USAGE;
    }

    /* Plain values until the parse succeeds, so that `out` is never left unset. */
    *out = (cli_args){ .dev = { DEVICE_CPU, 0 } };
    cli_args scratch = *out;
    int code = parse_pass(program, argc, argv, &scratch, false);
    if (code != CLI_GO_ON) {
        return code;
    }
    /* Everything is right: read it again, storing this time. */
    parse_pass(program, argc, argv, out, true);
    out->program_name = cli_program_name(program);
    out->argc = argc;
    out->argv = argv;
    code = check_outputs(program, out);
    if (code != CLI_GO_ON) {
        return code;
    }
    if (!out->device_given) {
        out->dev = try_gpu(0); /* asked only now: --help and mistakes need no device */
    }
    return CLI_GO_ON;
}
