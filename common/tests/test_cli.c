/* test_cli.c: cli.h reads every shared flag and every kind of extra option, in
 * both "--flag value" and "--flag=value" forms, and turns each mistake into
 * exit code 2 with a message and the usage: a malformed number, a flag given
 * twice, and an output path that must not be written (checked before the
 * program starts its work, and left as it was).
 *
 * Only "cpu" is used as a valid device (it exists everywhere); "CPU" and "gpu"
 * are the invalid ones. The test runs inside a scratch directory of its own
 * (mkdtemp in the build folder), where the output paths it names are made. */
#define _POSIX_C_SOURCE 200809L /* test_files.h: dup, dup2, fileno; mkdtemp, mkfifo: POSIX */
#define _DEFAULT_SOURCE         /* mknod, makedev */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/cli.h"
#include "labkit/device.h"
#include "labkit/files.h"
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
    char *argv[32]; /* the last command line parsed: cli_args keeps pointing at it, as at main's argv */
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
    char **argv = l->argv;
    argv[0] = "test_lab";
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

    o = PARSE(&l, "--epochs", "100", "--lr", "10", "--offset", "-0");
    EXPECT(o.code == -1 && l.values.epochs == 100 && l.values.lr == 10 && l.values.offset == 0);
    o = PARSE(&l, "--lr", ".5");
    EXPECT(o.code == -1 && l.values.lr == 0.5);
    o = PARSE(&l, "--lr", "1e+0");
    EXPECT(o.code == -1 && l.values.lr == 1);
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
    const char *bad_ints[] = { "5x", "", " 5", "5 ", "1.5", "0x10", "99999999999", "ten", "+12", "-", "1e3" };
    for (size_t i = 0; i < sizeof bad_ints / sizeof bad_ints[0]; i++) {
        outcome o = PARSE(&l, "--epochs", bad_ints[i]);
        expect_refused(&l, &o, "--epochs");
    }
    outcome plus = PARSE(&l, "--epochs", "+12");
    expect_refused(&l, &plus, "is not a whole number (digits, with a '-' in front if negative)");
    const char *bad_doubles[] = { "abc", "nan", "inf", "-inf", "infinity", "1e999", "0.5.1",
                                  "",    " 1",  "1 ",  "+1.5", "0x1p3",    "0x10",  "1e",
                                  ".",   "-",   "e3",  "1e+",  "NaN" };
    for (size_t i = 0; i < sizeof bad_doubles / sizeof bad_doubles[0]; i++) {
        outcome o = PARSE(&l, "--lr", bad_doubles[i]);
        expect_refused(&l, &o, "--lr");
    }
    outcome hex = PARSE(&l, "--lr", "0x1p-2");
    expect_refused(&l, &hex, "is not a decimal number");
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
        "- writes them to standard output",
        "up to 3 times",
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

static void test_a_flag_given_twice_is_refused_naming_both_values(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--epochs", "5", "--epochs=7");
    expect_refused(&l, &o, "--epochs given twice (5 and 7)");
    o = PARSE(&l, "--quick", "--quick");
    expect_refused(&l, &o, "--quick given twice");
    o = PARSE(&l, "--device", "cpu", "--device=cpu");
    expect_refused(&l, &o, "--device given twice (cpu and cpu)");
    o = PARSE(&l, "--csv", "a.csv", "--csv", "b.csv");
    expect_refused(&l, &o, "--csv given twice (a.csv and b.csv)");
    o = PARSE(&l, "--verbose", "--verbose");
    expect_refused(&l, &o, "--verbose given twice");
    o = PARSE(&l, "--name", "a", "--lr", "1", "--name=b");
    expect_refused(&l, &o, "--name given twice (a and b)");
}

static void test_plot_may_be_given_once_per_format(void)
{
    lab l;
    lab_init(&l);
    outcome o = PARSE(&l, "--plot", "f.png", "--plot=f.svg", "--plot", "plots/f.pdf");
    EXPECT(o.code == -1);
    EXPECT(o.args.nplots == 3);
    EXPECT_STREQ(o.args.plot_paths[0], "f.png");
    EXPECT_STREQ(o.args.plot_paths[1], "f.svg");
    EXPECT_STREQ(o.args.plot_paths[2], "plots/f.pdf");
    EXPECT_STREQ(o.args.plot_path, "f.png"); /* the first, for a lab that draws one */

    o = PARSE(&l, "--plot", "f.png", "--plot", "f.png");
    expect_refused(&l, &o, "--plot f.png given twice");
    o = PARSE(&l, "--plot", "a.png", "--plot", "b.png", "--plot", "c.png", "--plot", "d.png");
    expect_refused(&l, &o, "more than 3 times");

    /* The command line is kept for the record (results.h writes it in the CSV). */
    o = PARSE(&l, "--quick");
    EXPECT(o.args.argc == 2 && strcmp(o.args.argv[1], "--quick") == 0);
    EXPECT_STREQ(o.args.program_name, "test_lab");
}

/* An output refused before any work: exit code 2, one message naming the
 * program, the flag and the path, no usage, and nothing on stdout. */
static void expect_output_refused(const outcome *o, const char *part)
{
    EXPECT(o->code == 2);
    EXPECT(strncmp(o->err, "test_lab: ", 10) == 0);
    EXPECT_CONTAINS(o->err, part);
    EXPECT(strstr(o->err, "usage:") == NULL);
    EXPECT(o->out[0] == '\0');
}

static bool same_file(const char *path, const struct stat *before)
{
    struct stat after;
    return lstat(path, &after) == 0 && after.st_ino == before->st_ino && after.st_mode == before->st_mode &&
           after.st_rdev == before->st_rdev && after.st_size == before->st_size;
}

static void test_output_paths_are_checked_before_the_work(void)
{
    lab l;
    lab_init(&l);
    struct stat before;

    /* --plot x.png where x.png is an empty directory: refused, and it stays. */
    REQUIRE(mkdir("x.png", 0755) == 0);
    lstat("x.png", &before);
    outcome o = PARSE(&l, "--plot", "x.png");
    expect_output_refused(&o, "--plot x.png: is a directory, not a regular file");
    EXPECT(same_file("x.png", &before));

    REQUIRE(mkfifo("fifo.csv", 0644) == 0);
    lstat("fifo.csv", &before);
    o = PARSE(&l, "--csv", "fifo.csv");
    expect_output_refused(&o, "--csv fifo.csv: is a FIFO (named pipe)");
    EXPECT(same_file("fifo.csv", &before));

    REQUIRE(symlink("/proc/self/fd/1", "stdout.csv") == 0);
    lstat("stdout.csv", &before);
    o = PARSE(&l, "--csv", "stdout.csv");
    expect_output_refused(&o, "give the file itself");
    EXPECT(same_file("stdout.csv", &before));

    if (mknod("null.csv", S_IFCHR | 0666, makedev(1, 3)) == 0) {
        lstat("null.csv", &before);
        o = PARSE(&l, "--csv", "null.csv");
        expect_output_refused(&o, "--csv null.csv: is a character device");
        EXPECT(same_file("null.csv", &before));
    } else {
        printf("  note: cannot make a device node here (%s): that case is skipped\n", strerror(errno));
    }

    o = PARSE(&l, "--csv", "missing/r.csv");
    expect_output_refused(&o, "mkdir -p missing");

    /* Without --csv a figure is drawn from FIG.csv beside it: checked too. */
    REQUIRE(mkdir("fig.csv", 0755) == 0);
    o = PARSE(&l, "--plot", "fig.png");
    expect_output_refused(&o, "--plot fig.png draws from its data in fig.csv: is a directory");
    o = PARSE(&l, "--plot", "fig.png", "--csv", "data.csv");
    EXPECT(o.code == -1);

    o = PARSE(&l, "--csv", "same.png", "--plot", "same.png");
    expect_output_refused(&o, "--csv and --plot both name same.png");
cleanup:
    rmdir("x.png"), unlink("fifo.csv"), unlink("stdout.csv"), unlink("null.csv"), rmdir("fig.csv");
}

/* The child of the test below: --csv - sends the program's own output to stderr for good. */
static void csv_to_standard_output(void)
{
    lab l;
    lab_init(&l);
    char *argv[] = { "test_lab", "--csv", "-", NULL };
    cli_args args;
    if (cli_parse(&l.program, 3, argv, &args) != -1 || strcmp(args.csv_path, "-") != 0) _exit(3);
    printf("the table\n");
    fflush(stdout);
    fputs("n,x\n", output_stdout());
    fflush(output_stdout());
    _exit(0);
}

static void test_csv_dash_means_standard_output(void)
{
    char got_out[256], got_err[256];
    const int wait_status = run_in_child(csv_to_standard_output, got_out, got_err, sizeof got_out);
    EXPECT(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
    EXPECT_STREQ(got_out, "n,x\n");
    EXPECT_STREQ(got_err, "the table\n");
}

static char scratch[] = "test_cli_XXXXXX";

int main(void)
{
    if (!mkdtemp(scratch) || chdir(scratch) != 0 || mkdir("plots", 0755) != 0) {
        perror("test_cli: scratch directory");
        return 1;
    }
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
    RUN_TEST(test_a_flag_given_twice_is_refused_naming_both_values);
    RUN_TEST(test_plot_may_be_given_once_per_format);
    RUN_TEST(test_output_paths_are_checked_before_the_work);
    RUN_TEST(test_csv_dash_means_standard_output);
    if (chdir("..") == 0) remove_tree(scratch);
    return harness_finish();
}
