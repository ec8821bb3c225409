/* test_cli.c: cli.h reads every shared flag and every kind of extra option, in
 * both "--flag value" and "--flag=value" forms, and turns each mistake into
 * exit code 2 with a message and the usage.
 *
 * Only "cpu" is used as a valid device (it exists everywhere); "CPU" and "gpu"
 * are the invalid ones. */
#define _POSIX_C_SOURCE 200809L /* test_files.h: dup, dup2, fileno: POSIX, not C17 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/cli.h"
#include "labkit/device.h"
#include "labkit/status.h"
#include "test_files.h"

/* ---- a lab program under test -------------------------------------------------- */

/* The extra options of a pretend lab, with their defaults. */
typedef struct lab_options {
    int epochs;
    double lr;
    int offset;
    bool verbose;
    const char *name;
} lab_options;

static const lab_options defaults = {
    .epochs = 10, .lr = 0.1, .offset = 0, .verbose = false, .name = "baseline"
};

typedef struct lab {
    lab_options values;
    cli_option options[5];
    cli_program program;
} lab;

static void lab_init(lab *l)
{
    l->values = defaults;
    cli_option options[5] = {
        { "epochs", CLI_INT, &l->values.epochs, "N", "passes over the data", 1, 100 },
        { "lr", CLI_DOUBLE, &l->values.lr, "RATE", "learning rate", 0, 10 },
        { "offset", CLI_INT, &l->values.offset, "K", "a shift that may be negative", -10, 10 },
        { "verbose", CLI_FLAG, &l->values.verbose, NULL, "print every step", 0, 0 },
        { "name", CLI_STRING, &l->values.name, "TEXT", "a label for the run", 0, 0 },
    };
    memcpy(l->options, options, sizeof options);
    l->program = (cli_program){ "test_lab", "A pretend lab for the tests.", l->options, 5 };
}

/* What one call of cli_parse did: its exit code and what it printed. */
typedef struct outcome {
    int code;
    cli_args args;
    char out[8192];
    char err[8192];
} outcome;

/* Runs cli_parse on "test_lab" followed by `words` (NULL-terminated). */
static outcome parse_words(lab *l, const char *const *words)
{
    char *argv[32] = { "test_lab" };
    int argc = 1;
    for (; words[argc - 1] != NULL && argc < 31; argc++) {
        argv[argc] = (char *)words[argc - 1]; /* cli_parse only reads them */
    }
    argv[argc] = NULL;

    outcome o = { 0 };
    capture out, err;
    capture_begin(&out, STDOUT_FILENO);
    capture_begin(&err, STDERR_FILENO);
    o.code = cli_parse(&l->program, argc, argv, &o.args);
    capture_end(&err, o.err, sizeof o.err);
    capture_end(&out, o.out, sizeof o.out);
    return o;
}

#define PARSE(l, ...) parse_words((l), (const char *const[]){ __VA_ARGS__, NULL })

/* ---- the tests ------------------------------------------------------------------- */

static void test_defaults_are_kept_when_nothing_is_given(void)
{
    lab l;
    lab_init(&l);
    char *argv[] = { "test_lab", NULL };
    cli_args args;
    EXPECT(cli_parse(&l.program, 1, argv, &args) == -1);
    device expected = try_gpu(0);
    EXPECT(args.dev.kind == expected.kind && args.dev.index == expected.index);
    EXPECT(!args.device_given);
    EXPECT(!args.quick);
    EXPECT(args.csv_path == NULL);
    EXPECT(args.plot_path == NULL);
    EXPECT(l.values.epochs == 10 && l.values.lr == defaults.lr && l.values.offset == 0);
    EXPECT(!l.values.verbose && strcmp(l.values.name, "baseline") == 0);
}

static void test_each_shared_flag_is_read(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--device", "cpu");
    EXPECT(o.code == -1);
    EXPECT(o.args.device_given && o.args.dev.kind == DEVICE_CPU && o.args.dev.index == 0);

    o = PARSE(&l, "--quick");
    EXPECT(o.code == -1 && o.args.quick && !o.args.device_given);

    o = PARSE(&l, "--csv", "results.csv");
    EXPECT(o.code == -1 && o.args.csv_path != NULL && strcmp(o.args.csv_path, "results.csv") == 0);

    const char *figures[] = { "fig.png", "plots/fig.svg", "my fig.pdf" };
    for (int i = 0; i < 3; i++) {
        o = PARSE(&l, "--plot", figures[i]);
        EXPECT(o.code == -1 && o.args.plot_path != NULL && strcmp(o.args.plot_path, figures[i]) == 0);
    }

    o = PARSE(&l, "--device", "cpu", "--quick", "--csv", "a.csv", "--plot", "b.png");
    EXPECT(o.code == -1 && o.args.device_given && o.args.quick);
    EXPECT(strcmp(o.args.csv_path, "a.csv") == 0 && strcmp(o.args.plot_path, "b.png") == 0);
    EXPECT(o.out[0] == '\0' && o.err[0] == '\0'); /* a good command line prints nothing */
}

static void test_values_may_follow_an_equals_sign(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--device=cpu", "--csv=r.csv", "--plot=f.pdf", "--epochs=7", "--lr=0.25",
                      "--name=run 1", "--offset=-3");
    EXPECT(o.code == -1);
    EXPECT(o.args.device_given && o.args.dev.kind == DEVICE_CPU);
    EXPECT(strcmp(o.args.csv_path, "r.csv") == 0 && strcmp(o.args.plot_path, "f.pdf") == 0);
    EXPECT(l.values.epochs == 7 && l.values.lr == 0.25 && l.values.offset == -3);
    EXPECT(strcmp(l.values.name, "run 1") == 0);
}

static void test_each_kind_of_extra_option_is_read(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--verbose", "--epochs", "5", "--lr", "2.5e-1", "--name", "abc", "--offset", "-10");
    EXPECT(o.code == -1);
    EXPECT(l.values.verbose);
    EXPECT(l.values.epochs == 5);
    EXPECT(l.values.lr == 0.25);
    EXPECT(strcmp(l.values.name, "abc") == 0);
    EXPECT(l.values.offset == -10); /* a value may start with one dash */

    o = PARSE(&l, "--epochs", "100", "--epochs", "1", "--lr", "10");
    EXPECT(o.code == -1 && l.values.epochs == 1 && l.values.lr == 10); /* the last one wins */
}

/* Every bad command line exits 2, names the program, and prints the usage to
 * stderr, not stdout. */
static void expect_refused(lab *l, const outcome *o, const char *part)
{
    EXPECT(o->code == 2);
    EXPECT(strncmp(o->err, "test_lab: ", 10) == 0);
    EXPECT_CONTAINS(o->err, part);
    EXPECT_CONTAINS(o->err, "usage: test_lab");
    EXPECT(o->out[0] == '\0');
    /* Nothing was stored: the lab's defaults are intact. */
    EXPECT(l->values.epochs == defaults.epochs && l->values.lr == defaults.lr &&
           l->values.offset == defaults.offset && l->values.verbose == defaults.verbose);
}

static void test_values_out_of_range_exit_with_2(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--epochs", "0");
    expect_refused(&l, &o, "out of range");
    EXPECT_CONTAINS(o.err, "1 to 100");
    o = PARSE(&l, "--epochs=101");
    expect_refused(&l, &o, "out of range");
    o = PARSE(&l, "--lr", "10.5");
    expect_refused(&l, &o, "out of range");
    EXPECT_CONTAINS(o.err, "0 to 10");
    o = PARSE(&l, "--lr", "-0.5");
    expect_refused(&l, &o, "out of range");
    o = PARSE(&l, "--offset", "-11");
    expect_refused(&l, &o, "out of range");
}

static void test_malformed_values_exit_with_2(void)
{
    lab l;
    lab_init(&l);
    const char *bad_ints[] = { "5x", "", " 5", "1.5", "0x10", "99999999999", "ten" };
    for (int i = 0; i < 7; i++) {
        outcome o = PARSE(&l, "--epochs", bad_ints[i]);
        expect_refused(&l, &o, "--epochs");
    }
    const char *bad_doubles[] = { "abc", "nan", "inf", "1e999", "0.5.1", "" };
    for (int i = 0; i < 6; i++) {
        outcome o = PARSE(&l, "--lr", bad_doubles[i]);
        expect_refused(&l, &o, "--lr");
    }
    outcome o = PARSE(&l, "--name=");
    expect_refused(&l, &o, "empty");
    o = PARSE(&l, "--csv=");
    expect_refused(&l, &o, "--csv");
    const char *bad_figures[] = { "fig.jpg", "fig.PNG", "fig", ".png", "dir/.svg" };
    for (int i = 0; i < 5; i++) {
        o = PARSE(&l, "--plot", bad_figures[i]);
        expect_refused(&l, &o, ".png, .svg or .pdf");
    }
}

static void test_bad_devices_exit_with_2(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--device", "CPU");
    expect_refused(&l, &o, "--device 'CPU'");
    o = PARSE(&l, "--device=gpu");
    expect_refused(&l, &o, "--device 'gpu'");
    o = PARSE(&l, "--device=");
    expect_refused(&l, &o, "--device");
}

static void test_unknown_flags_and_missing_values_exit_with_2(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--bogus");
    expect_refused(&l, &o, "unknown flag '--bogus'");
    o = PARSE(&l, "results.csv");
    expect_refused(&l, &o, "unexpected argument 'results.csv'");
    o = PARSE(&l, "-q");
    expect_refused(&l, &o, "unexpected argument '-q'");
    o = PARSE(&l, "--");
    expect_refused(&l, &o, "unexpected argument '--'");
    o = PARSE(&l, "--csv");
    expect_refused(&l, &o, "--csv needs a value");
    o = PARSE(&l, "--csv", "--quick");
    expect_refused(&l, &o, "--csv needs a value");
    o = PARSE(&l, "--quick=yes");
    expect_refused(&l, &o, "takes no value");
    o = PARSE(&l, "--verbose=1");
    expect_refused(&l, &o, "takes no value");
    /* A mistake after good options stores none of them. */
    o = PARSE(&l, "--epochs", "5", "--verbose", "--bogus");
    expect_refused(&l, &o, "--bogus");
}

static void test_help_prints_the_usage_to_stdout_and_exits_0(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--help");
    EXPECT(o.code == 0);
    EXPECT(o.err[0] == '\0');
    /* The usage names every flag, with its value, help, range and default. */
    const char *const usage_parts[] = {
        "usage: test_lab",
        "A pretend lab for the tests.",
        "--device D",
        "--quick",
        "--csv FILE",
        "--plot FILE",
        "--help, -h",
        "--epochs N",
        "passes over the data (1 to 100, default 10)",
        "learning rate (0 to 10, default 0.1)",
        "--verbose",
        "a label for the run (default baseline)",
        "LABKIT_SIM_GPUS=",
    };
    for (size_t i = 0; i < sizeof usage_parts / sizeof usage_parts[0]; i++) {
        EXPECT_CONTAINS(o.out, usage_parts[i]);
    }

    /* The help column is aligned: it starts at the same place on every line. */
    const char *device_line = strstr(o.out, "  --device D");
    const char *epochs_line = strstr(o.out, "  --epochs N");
    if (device_line != NULL && epochs_line != NULL) {
        EXPECT(strstr(device_line, "cpu, cuda") - device_line == strstr(epochs_line, "passes") - epochs_line);
    }

    o = PARSE(&l, "-h");
    EXPECT(o.code == 0 && strstr(o.out, "usage: test_lab") != NULL);
    o = PARSE(&l, "--epochs", "3", "--help");
    EXPECT(o.code == 0 && l.values.epochs == 10); /* --help stores nothing */
}

static void test_a_broken_program_description_is_refused(void)
{
    lab l;
    lab_init(&l);
    char *argv[] = { "test_lab", NULL };
    cli_args args;

    l.options[0].target = NULL;
    capture captured;
    capture_begin(&captured, STDERR_FILENO);
    int no_target = cli_parse(&l.program, 1, argv, &args);
    lab_init(&l);
    l.options[1].name = "device"; /* clashes with a shared flag */
    int clash = cli_parse(&l.program, 1, argv, &args);
    int no_program = cli_parse(NULL, 1, argv, &args);
    char err[4096];
    capture_end(&captured, err, sizeof err);

    EXPECT(no_target == 2);
    EXPECT(clash == 2);
    EXPECT(no_program == 2);
    EXPECT_CONTAINS(err, "cli_parse");
}

int main(void)
{
    RUN_TEST(test_defaults_are_kept_when_nothing_is_given);
    RUN_TEST(test_each_shared_flag_is_read);
    RUN_TEST(test_values_may_follow_an_equals_sign);
    RUN_TEST(test_each_kind_of_extra_option_is_read);
    RUN_TEST(test_values_out_of_range_exit_with_2);
    RUN_TEST(test_malformed_values_exit_with_2);
    RUN_TEST(test_bad_devices_exit_with_2);
    RUN_TEST(test_unknown_flags_and_missing_values_exit_with_2);
    RUN_TEST(test_help_prints_the_usage_to_stdout_and_exits_0);
    RUN_TEST(test_a_broken_program_description_is_refused);
    return harness_finish();
}
