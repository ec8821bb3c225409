/* fuzz_cli.c: the labs' command-line parser, cli_parse (labkit/cli.h), on any
 * command line: the input's bytes, split at each NUL, are the arguments of a
 * program with an option of every type. It returns "go on", 0 or 2; what it
 * stored is read back whole. */
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz_input.h"
#include "labkit/cli.h"
#include "labkit/crash.h"

enum { MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        /* cli_parse installs the kit's crash report once; the sanitizer's own
         * handlers must stay, so that a crash is found and its input kept. */
        static const int signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
        struct sigaction kept[sizeof signals / sizeof signals[0]];
        for (size_t i = 0; i < sizeof signals / sizeof signals[0]; ++i) sigaction(signals[i], NULL, &kept[i]);
        crash_report_on_fatal_signals();
        for (size_t i = 0; i < sizeof signals / sizeof signals[0]; ++i) sigaction(signals[i], &kept[i], NULL);
        ready = true;
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 2] = { "fuzz_cli" };
    int argc = 1;
    for (size_t at = 0; at <= size && argc <= MAX_ARGS; at += strlen(text + at) + 1) argv[argc++] = text + at;
    argv[argc] = NULL;

    bool flag = false;
    int epochs = 3;
    double rate = 0.1;
    const char *dir = NULL;
    const cli_option options[] = {
        { "flag", CLI_FLAG, &flag, NULL, "a flag", 0, 0 },
        { "epochs", CLI_INT, &epochs, "N", "an int from 1 to 100", 1, 100 },
        { "rate", CLI_DOUBLE, &rate, "R", "any double", 0, 0 },
        { "data", CLI_STRING, &dir, "DIR", "a string", 0, 0 },
    };
    const cli_program program = { "fuzz_cli", "the fuzz target of cli_parse", options, 4 };
    cli_args args;
    const int code = cli_parse(&program, argc, argv, &args);
    if (code != -1 && code != 0 && code != 2) abort();
    if (code == -1) {
        /* What it kept is read back whole (a pointer into a freed or
         * overwritten command line shows here), and the int is in its range. */
        static volatile size_t sink;
        sink =
            strlen(args.program_name) + (args.csv_path ? strlen(args.csv_path) : 0) + (dir ? strlen(dir) : 0);
        for (int i = 0; i < args.nplots; ++i) sink += strlen(args.plot_paths[i]);
        if (args.nplots < 0 || args.nplots > CLI_MAX_PLOTS || epochs < 1 || epochs > 100) abort();
    }
    free(text);
    return 0;
}
