/* test_results.c: results.h prints, saves and draws one table.
 *
 * The table prints aligned with "-" for what is unknown, saves as a CSV whose
 * header lines say where the numbers come from and whose rows are exact (an
 * unknown cell empty, never 0), and is drawn by a lab-style gnuplot script
 * (plot_example.gp, compiled in as LAB_PLOT_SCRIPT) as real PNG, SVG and PDF
 * files when gnuplot is installed; only that part is skipped without it. A
 * figure that gnuplot fails to write whole (an error, a file cut short, a full
 * disk) is refused and leaves nothing where the figure should be.
 *
 * Runs with LABKIT_SIM_GPUS=1, so that the devices "cpu" and "sim:0" exist. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, chmod, getrlimit: POSIX, not C17 */

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/load.h"
#include "labkit/results.h"
#include "labkit/status.h"
#include "test_files.h"

static char dir[] = "test_results_XXXXXX";

static void path_in_dir(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", dir, name);
}

static bool gnuplot_installed(void) { return system("gnuplot --version >/dev/null 2>&1") == 0; }

/* ---- the table under test -------------------------------------------------------------- */

static const results_column matmul_columns[] = {
    { "device", RESULTS_TEXT, "device", NULL, 6 },
    { "n", RESULTS_NUMBER, "N", "%.0f", 5 },
    { "gflops", RESULTS_NUMBER, "GFLOP/s", "%.1f", 0 },
    { "peak_gflops", RESULTS_NUMBER, "peak", "%.0f", 0 },
};

/* A pretend lab's command line, as cli_parse would leave it. */
typedef struct pretend_run {
    char *argv[12];
    cli_args args;
} pretend_run;

static void pretend(pretend_run *run, const char *csv, const char *const *plots, int nplots)
{
    static char *words[] = { "/build/labs/04_matmul/lab04-solution", "--quick", "--device", "sim:0" };
    *run = (pretend_run){ 0 };
    for (int i = 0; i < 4; i++) run->argv[i] = words[i];
    int argc = 4;
    run->args.program_name = "04_matmul";
    run->args.quick = true;
    if (csv) {
        run->argv[argc++] = "--csv";
        run->argv[argc++] = (char *)csv;
        run->args.csv_path = csv;
    }
    for (int i = 0; i < nplots; i++) {
        run->argv[argc++] = "--plot";
        run->argv[argc++] = (char *)plots[i];
        run->args.plot_paths[i] = plots[i];
    }
    run->args.nplots = nplots;
    run->args.plot_path = nplots ? plots[0] : NULL;
    run->args.argc = argc;
    run->args.argv = run->argv;
}

/* cpu and sim:0 at four sizes; sim:0 has no value at the first one. */
static results *matmul_table(const cli_args *args)
{
    results *r = NULL;
    EXPECT_OK(results_create(&r, args, matmul_columns, 4));
    if (!r) return NULL;
    const double sizes[] = { 16, 64, 256, 1024 };
    const double cpu[] = { 1.5, 20.25, 150, 400 }, sim[] = { NAN, 8, 120, 390 };
    for (int i = 0; i < 4; i++)
        for (int d = 0; d < 2; d++) {
            EXPECT_OK(results_row(r));
            EXPECT_OK(results_text(r, "device", d == 0 ? "cpu" : "sim:0"));
            EXPECT_OK(results_number(r, "n", sizes[i]));
            EXPECT_OK(results_number(r, "gflops", d == 0 ? cpu[i] : sim[i]));
            EXPECT_OK(results_number(r, "peak_gflops", 460));
        }
    return r;
}

static const char *after_comments(const char *csv)
{
    while (*csv == '#') {
        const char *end = strchr(csv, '\n');
        if (!end) return csv + strlen(csv);
        csv = end + 1;
    }
    return csv;
}

/* ---- columns and cells ------------------------------------------------------------------- */

static void test_bad_columns_are_refused_naming_the_column(void)
{
    results *r = (results *)&r;
    struct {
        results_column column;
        const char *part;
    } bad[] = {
        { { "GFLOP/s", RESULTS_NUMBER, NULL, NULL, 0 }, "letters, digits and _" },
        { { NULL, RESULTS_NUMBER, NULL, NULL, 0 }, "(NULL)" },
        { { "x", (results_kind)7, NULL, NULL, 0 }, "RESULTS_TEXT" },
        { { "x", RESULTS_NUMBER, NULL, "%d", 0 }, "one %f, %e or %g" },
        { { "x", RESULTS_NUMBER, NULL, "%s", 0 }, "\"x\"" },
        { { "x", RESULTS_NUMBER, NULL, "%.1f and %.1f", 0 }, "one number" },
        { { "x", RESULTS_NUMBER, NULL, "%*f", 0 }, "one number" },
        { { "x", RESULTS_TEXT, NULL, "%d", 0 }, "one %s" },
        { { "x", RESULTS_BYTES, NULL, "%.0f", 0 }, "leave its format NULL" },
        { { "x", RESULTS_NUMBER, NULL, NULL, -1 }, "width -1" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT_REFUSED(results_create(&r, NULL, &bad[i].column, 1), STATUS_BAD_ARGUMENT);
        EXPECT_CONTAINS(last_error(), bad[i].part);
        EXPECT(r == NULL);
    }
    const results_column twice[] = { { "a", RESULTS_TEXT, NULL, NULL, 0 },
                                     { "a", RESULTS_TEXT, NULL, NULL, 0 } };
    EXPECT_REFUSED(results_create(&r, NULL, twice, 2), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "two columns are named \"a\"");
    EXPECT_REFUSED(results_create(&r, NULL, NULL, 1), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(results_create(&r, NULL, twice, 0), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(results_create(NULL, NULL, twice, 1), STATUS_BAD_ARGUMENT);

    const results_column fine[] = { { "speedup", RESULTS_NUMBER, "speed-up", "%.2fx", 0 },
                                    { "share", RESULTS_NUMBER, "of peak", "%5.1f%%", 0 },
                                    { "name", RESULTS_TEXT, NULL, "%-12s", 0 } };
    EXPECT_OK(results_create(&r, NULL, fine, 3));
    results_free(r);
}

static void test_the_table_prints_aligned_with_a_dash_for_unknown_cells(void)
{
    results *r = matmul_table(NULL);
    REQUIRE(r != NULL);
    EXPECT_OK(results_row(r)); /* a row with nothing known */
    capture c;
    char out[2048];
    capture_begin(&c, STDOUT_FILENO);
    status s = results_print(r);
    capture_end(&c, out, sizeof out);
    EXPECT_OK(s);
    EXPECT_STREQ(out, "device      N  GFLOP/s  peak\n"
                      "cpu        16      1.5   460\n"
                      "sim:0      16        -   460\n"
                      "cpu        64     20.2   460\n"
                      "sim:0      64      8.0   460\n"
                      "cpu       256    150.0   460\n"
                      "sim:0     256    120.0   460\n"
                      "cpu      1024    400.0   460\n"
                      "sim:0    1024    390.0   460\n"
                      "-           -        -     -\n");
cleanup:
    results_free(r);
}

static void test_bytes_and_wide_values_print_as_people_read_them(void)
{
    const results_column columns[] = { { "bytes", RESULTS_BYTES, "size", NULL, 0 },
                                       { "gbps", RESULTS_NUMBER, "GB/s", NULL, 0 },
                                       { "what", RESULTS_TEXT, "µs", NULL, 0 } };
    results *r = NULL;
    REQUIRE_OK(results_create(&r, NULL, columns, 3));
    const double sizes[] = { 512, 4096, 1.5 * 1024 * 1024, 4294967296.0 };
    for (int i = 0; i < 4; i++) {
        results_row(r);
        results_number(r, "bytes", sizes[i]);
        results_number(r, "gbps", 12.3456789 * i);
        results_text(r, "what", i == 3 ? "a longer text" : "x");
    }
    capture c;
    char out[1024];
    capture_begin(&c, STDOUT_FILENO);
    results_print(r);
    capture_end(&c, out, sizeof out);
    EXPECT_STREQ(out, "   size   GB/s  µs\n"
                      "  512 B      0  x\n"
                      "  4 KiB  12.35  x\n"
                      "1.5 MiB  24.69  x\n"
                      "  4 GiB  37.04  a longer text\n");
cleanup:
    results_free(r);
}

static void test_echo_prints_each_row_once_complete_under_one_heading(void)
{
    results *r = NULL;
    REQUIRE_OK(results_create(&r, NULL, matmul_columns, 4));
    EXPECT_OK(results_echo(r, true));
    capture c;
    char out[1024];
    capture_begin(&c, STDOUT_FILENO);
    results_row(r);
    results_text(r, "device", "cpu");
    results_number(r, "n", 16);
    results_row(r); /* the first row is complete: printed now, with the heading */
    fflush(stdout);
    long after_first = lseek(STDOUT_FILENO, 0, SEEK_CUR);
    results_text(r, "device", "a-long-name");
    results_number(r, "gflops", 1234.5);
    results_print(r); /* only the last row: at the echo's widths */
    capture_end(&c, out, sizeof out);
    EXPECT(after_first == (long)strlen("device      N  GFLOP/s  peak\ncpu        16        -     -\n"));
    EXPECT_STREQ(out, "device      N  GFLOP/s  peak\n"
                      "cpu        16        -     -\n"
                      "a-long-name      -   1234.5     -\n");
cleanup:
    results_free(r);
}

static void test_a_mistake_in_a_cell_is_returned_and_remembered(void)
{
    results *r = NULL;
    REQUIRE_OK(results_create(&r, NULL, matmul_columns, 4));
    EXPECT_REFUSED(results_number(r, "n", 1), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "call results_row first");
    results_row(r);
    EXPECT_REFUSED(results_number(r, "GFLOPS", 1), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "no column \"GFLOPS\"; the columns are: device, n, gflops, peak_gflops");
    EXPECT_REFUSED(results_text(r, "n", "16"), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "use results_number");
    EXPECT_REFUSED(results_number(r, "device", 1), STATUS_BAD_ARGUMENT);

    /* The first mistake comes back from the calls that end a lab. */
    char path[256];
    path_in_dir(path, sizeof path, "never.csv");
    EXPECT_REFUSED(results_save_csv(r, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "an earlier call failed: results_number(\"n\"): no row yet");
    EXPECT_REFUSED(results_finish(r, NULL), STATUS_BAD_ARGUMENT);
    EXPECT(!file_exists(path));
    capture c;
    char out[512];
    capture_begin(&c, STDOUT_FILENO);
    status s = results_print(r);
    capture_end(&c, out, sizeof out);
    EXPECT(s == STATUS_BAD_ARGUMENT);

    EXPECT_REFUSED(results_row(NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(results_print(NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(results_finish(NULL, NULL), STATUS_BAD_ARGUMENT);
cleanup:
    results_free(r);
}

static void test_numbers_read_back_for_a_takeaway(void)
{
    results *r = matmul_table(NULL);
    REQUIRE(r != NULL);
    EXPECT(results_count(r) == 8);
    EXPECT(results_get(r, 2, "gflops") == 20.25);
    EXPECT(isnan(results_get(r, 1, "gflops"))); /* unknown */
    EXPECT(isnan(results_get(r, 0, "device"))); /* text */
    EXPECT(isnan(results_get(r, 8, "gflops")));
    EXPECT(isnan(results_get(r, 0, "nope")));
    EXPECT(results_count(NULL) == 0);
cleanup:
    results_free(r);
}

/* ---- the CSV ------------------------------------------------------------------------------ */

static void test_the_csv_starts_with_where_the_numbers_come_from(void)
{
    char path[256], csv[4096] = "";
    path_in_dir(path, sizeof path, "out file.csv");
    pretend_run run;
    pretend(&run, path, NULL, 0);
    results *r = matmul_table(&run.args);
    REQUIRE(r != NULL);
    EXPECT(!file_exists(path)); /* nothing on disk before it is saved */
    EXPECT_OK(results_save_csv(r, path));
    read_file(path, csv, sizeof csv);

    EXPECT(strncmp(csv, "# lab: 04_matmul\n# date: ", 25) == 0);
    const char *date = csv + 25; /* 2026-11-22T21:30:05Z */
    EXPECT(strlen(date) > 21 && date[4] == '-' && date[10] == 'T' && date[19] == 'Z' && date[20] == '\n');
    EXPECT_CONTAINS(csv, "\n# cpu: ");
    EXPECT_CONTAINS(csv, " cores\n# devices: cpu; sim:0 (Simulated GPU sim:0");
    char command[512];
    snprintf(command, sizeof command, "\n# command: lab04-solution --quick --device sim:0 --csv '%s'\n",
             path);
    EXPECT_CONTAINS(csv, command);
    EXPECT_CONTAINS(csv, "\n# columns: device; n = N; gflops = GFLOP/s; peak_gflops = peak\n");
    EXPECT_STREQ(after_comments(csv), "device,n,gflops,peak_gflops\n"
                                      "cpu,16,1.5,460\n"
                                      "sim:0,16,,460\n"
                                      "cpu,64,20.25,460\n"
                                      "sim:0,64,8,460\n"
                                      "cpu,256,150,460\n"
                                      "sim:0,256,120,460\n"
                                      "cpu,1024,400,460\n"
                                      "sim:0,1024,390,460\n");
    EXPECT(count_entries(dir) == 1); /* no temporary file left */
cleanup:
    results_free(r);
    unlink(path);
}

/* Other programs' cores, from two samples: the machine's busy share of its
 * cores' time, less this process's own CPU time, over the wall clock. Exact
 * inputs, exact answers; a version that forgot to take away the process's own
 * time (1.5 cores here, not 1.0) or divided by the cores' time alone fails. */
static void test_other_programs_cores_are_the_busy_share_less_our_own(void)
{
    const double n = load_cores();
    /* In 2 s of wall clock every core's time grew by 2 n s, its busy time by 0.75 n s. */
    load_sample before = { true, 100.0, 1000.0, 3.0, 50.0 };
    load_sample after = { true, 100.0 + 0.75 * n, 1000.0 + 2.0 * n, 3.0 + 1.0, 52.0 };
    EXPECT_NEAR(load_busy_elsewhere(&before, &after), 0.375 * n - 0.5, 1e-12, 0);
    /* Our own process took more than the machine's busy time said (ticks are coarse): never below 0. */
    after.own_seconds = 3.0 + 2.0 * n;
    EXPECT(load_busy_elsewhere(&before, &after) == 0.0);
    /* Unknown: a sample unknown, none, or no time gone by. */
    after.known = false;
    EXPECT(load_busy_elsewhere(&before, &after) == -1.0);
    after.known = true, after.wall_seconds = before.wall_seconds;
    EXPECT(load_busy_elsewhere(&before, &after) == -1.0);
    EXPECT(load_busy_elsewhere(NULL, &after) == -1.0);
    EXPECT(n >= 1);
    load_sample now;
    EXPECT(load_now(&now) == now.known);
    EXPECT(!load_now(NULL));
}

/* The CSV says the load and what a redraw needs: "# load:", "# plot:" with
 * every plot variable quoted as gnuplot's -e reads it (a ' doubled), and the
 * figures of results_finish_figures, each drawn as FIG-name beside FIG. */
static void test_the_csv_keeps_the_load_and_what_a_redraw_needs(void)
{
    char path[256], csv[8192] = "";
    path_in_dir(path, sizeof path, "kept.csv");
    pretend_run run;
    pretend(&run, path, NULL, 0);
    results *r = matmul_table(&run.args);
    REQUIRE(r != NULL);
    const double busy = results_busy_elsewhere(r);
    EXPECT(busy == -1.0 || busy >= 0.0);
    EXPECT(results_busy_elsewhere(r) == busy); /* measured once: the CSV and the figures say the same */
    static const char *const names[] = { "gflops", "speedup" };
    capture c;
    static char out[8192];
    capture_begin(&c, STDOUT_FILENO);
    status s = results_finish_figures(r, names, 2, (const char *const[]){ "setup=Bob's MLP", NULL });
    capture_end(&c, out, sizeof out);
    EXPECT_OK(s);
    read_file(path, csv, sizeof csv);
    EXPECT_CONTAINS(csv, busy >= 0 ? "\n# load: other programs kept " : "\n# load: unknown");
    EXPECT_CONTAINS(csv, "\n# plot: devices='cpu sim:0'; device_names='cpu: ");
    EXPECT_CONTAINS(csv, "; setup='Bob''s MLP'\n");
    EXPECT(!strstr(csv, "figure='"));
    EXPECT_CONTAINS(csv, "\n# figures: gflops speedup\n# columns: ");
    EXPECT((busy >= LOAD_BUSY_CORES_NOTED) == (strstr(out, "(under load: other programs kept ") != NULL));

    char second[256];
    EXPECT_OK(results_figure_path("figs/precision.png", "error", second, sizeof second));
    EXPECT_STREQ(second, "figs/precision-error.png");
    EXPECT_OK(results_figure_path("figs.v2/precision", "error", second, sizeof second));
    EXPECT_STREQ(second, "figs.v2/precision-error");
    EXPECT_REFUSED(results_figure_path("x.png", "error", second, 8), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(results_finish_figures(r, (const char *const[]){ "a b" }, 1, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "\"a b\", is not letters, digits and _");
    EXPECT_REFUSED(results_check_figures(r, names, 0), STATUS_BAD_ARGUMENT);
cleanup:
    results_free(r);
    unlink(path);
}

static void test_csv_cells_are_quoted_and_numbers_exact(void)
{
    const results_column columns[] = { { "name", RESULTS_TEXT, NULL, NULL, 0 },
                                       { "x", RESULTS_NUMBER, NULL, NULL, 0 },
                                       { "bytes", RESULTS_BYTES, NULL, NULL, 0 } };
    const char *names[] = { "a,b", "say \"hi\"", "two\nlines", NULL, "" };
    const double xs[] = { 1.0 / 3.0, INFINITY, -0.1, NAN, 1e-7 };
    char path[256], csv[1024] = "";
    path_in_dir(path, sizeof path, "quoted.csv");
    results *r = NULL;
    REQUIRE_OK(results_create(&r, NULL, columns, 3));
    for (int i = 0; i < 5; i++) {
        results_row(r);
        results_text(r, "name", names[i]);
        results_number(r, "x", xs[i]);
        results_number(r, "bytes", 4294967296.0 * i);
    }
    EXPECT_OK(results_save_csv(r, path));
    read_file(path, csv, sizeof csv);
    EXPECT(strncmp(csv, "# date: ", 8) == 0); /* no lab, no command without args */
    EXPECT_CONTAINS(csv, "# columns: name; x; bytes (bytes)\n");
    EXPECT_STREQ(after_comments(csv), "name,x,bytes\n"
                                      "\"a,b\",0.333333333,0\n"
                                      "\"say \"\"hi\"\"\",,4294967296\n"
                                      "\"two\nlines\",-0.1,8589934592\n"
                                      ",,12884901888\n"
                                      ",1e-07,17179869184\n");
cleanup:
    results_free(r);
    unlink(path);
}

static void test_the_csv_can_go_to_standard_output(void)
{
    results *r = matmul_table(NULL);
    REQUIRE(r != NULL);
    capture c;
    char out[2048];
    capture_begin(&c, STDOUT_FILENO);
    status s = results_save_csv(r, "-");
    capture_end(&c, out, sizeof out);
    EXPECT_OK(s);
    EXPECT(out[0] == '#');
    EXPECT(strncmp(after_comments(out), "device,n,gflops,peak_gflops\ncpu,16,1.5,460\n", 43) == 0);
    EXPECT(count_entries(dir) == 0);
cleanup:
    results_free(r);
}

/* ---- figures -------------------------------------------------------------------------------- */

static bool is_whole_figure(const char *path)
{
    static char bytes[1 << 20];
    long n = read_file(path, bytes, sizeof bytes);
    if (n < 20) return false;
    if (strstr(path, ".png"))
        return memcmp(bytes, "\x89PNG", 4) == 0 && memcmp(bytes + n - 8, "IEND", 4) == 0;
    if (strstr(path, ".pdf")) return memcmp(bytes, "%PDF-", 5) == 0 && strstr(bytes + n - 8, "%%EOF");
    return strstr(bytes, "<svg") && strstr(bytes, "</svg>");
}

static int count_lines_starting(const char *text, const char *start)
{
    int count = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        count += strncmp(line, start, strlen(start)) == 0;
    return count;
}

static void test_figures_are_drawn_in_png_svg_and_pdf_from_the_same_data(void)
{
    if (!gnuplot_installed()) {
        harness_skip("gnuplot is not installed, so no figure can be drawn");
        return;
    }
    char png[256], svg[256], pdf[256], data[256];
    path_in_dir(png, sizeof png, "matmul.png");
    path_in_dir(svg, sizeof svg, "matmul.svg");
    path_in_dir(pdf, sizeof pdf, "matmul.pdf");
    path_in_dir(data, sizeof data, "matmul.csv");
    const char *plots[] = { png, svg, pdf };
    pretend_run run;
    pretend(&run, NULL, plots, 3);
    results *r = matmul_table(&run.args);
    REQUIRE(r != NULL);
    capture c;
    static char out[8192];
    capture_begin(&c, STDOUT_FILENO);
    status s = results_finish(r, (const char *const[]){ "precision=float32", NULL });
    capture_end(&c, out, sizeof out);
    EXPECT_OK(s);
    EXPECT(is_whole_figure(png) && is_whole_figure(svg) && is_whole_figure(pdf));
    EXPECT(file_size(data) > 100);   /* the data, beside the figures, once */
    EXPECT(count_entries(dir) == 4); /* three figures and their CSV: no temporary file */

    /* One line per figure that redraws it without running the experiment. */
    EXPECT(count_lines_starting(out, "plot: ") == 3);
    EXPECT_CONTAINS(out, "(redraw: gnuplot -e \"data='");
    EXPECT_CONTAINS(out, "format='pdf'");
    EXPECT_CONTAINS(out, "devices='cpu sim:0'; device_names='cpu: ");
    EXPECT_CONTAINS(out, "precision='float32'");
    EXPECT_CONTAINS(out, "plot_example.gp)\n");
    char *line = strstr(out, "(redraw: ");
    char *end = line ? strstr(line, ")\n") : NULL;
    if (line && end) {
        *end = '\0';
        remove(png);
        EXPECT_MSG(system(line + strlen("(redraw: ")) == 0, "the redraw line failed: %s",
                   line + strlen("(redraw: "));
        EXPECT(is_whole_figure(png));
    }
cleanup:
    results_free(r);
    remove(png), remove(svg), remove(pdf), remove(data);
}

static void test_with_csv_the_figures_are_drawn_from_it(void)
{
    if (!gnuplot_installed()) {
        harness_skip("gnuplot is not installed, so no figure can be drawn");
        return;
    }
    char png[256], csv[256];
    path_in_dir(png, sizeof png, "fig.png");
    path_in_dir(csv, sizeof csv, "results.csv");
    const char *plots[] = { png };
    pretend_run run;
    pretend(&run, csv, plots, 1);
    results *r = matmul_table(&run.args);
    REQUIRE(r != NULL);
    capture c;
    char out[4096];
    capture_begin(&c, STDOUT_FILENO);
    status s = results_finish(r, NULL);
    capture_end(&c, out, sizeof out);
    EXPECT_OK(s);
    EXPECT(is_whole_figure(png));
    EXPECT(file_size(csv) > 100);
    EXPECT(count_entries(dir) == 2); /* no fig.csv */
    EXPECT_CONTAINS(out, "data='test_results_");
    EXPECT_CONTAINS(out, "/results.csv'");
cleanup:
    results_free(r);
    remove(png), remove(csv);
}

/* Writes an executable shell script that stands in for gnuplot; its absolute
 * path goes to `path`. It finds the file to write in gnuplot's -e argument. */
static void write_fake_gnuplot(const char *name, const char *body, char *path, size_t size)
{
    char relative[512], cwd[1024];
    path_in_dir(relative, sizeof relative, name);
    FILE *f = fopen(relative, "w");
    if (f) {
        fprintf(f, "#!/bin/sh\nout=$(printf '%%s' \"$2\" | sed -n \"s/.*out='\\([^']*\\)'.*/\\1/p\")\n%s\n",
                body);
        fclose(f);
    }
    chmod(relative, 0755);
    snprintf(path, size, "%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", relative);
}

/* Finishes a table with plots `plots` while LABKIT_GNUPLOT names `program`;
 * what it printed on stderr goes to err. */
static status finish_with(const char *program, const char *const *plots, int nplots, char *err, size_t size)
{
    pretend_run run;
    pretend(&run, NULL, plots, nplots);
    results *r = matmul_table(&run.args);
    if (!r) return STATUS_BAD_ARGUMENT;
    if (program) setenv("LABKIT_GNUPLOT", program, 1);
    capture c, o;
    char out[4096];
    capture_begin(&o, STDOUT_FILENO);
    capture_begin(&c, STDERR_FILENO);
    status s = results_finish(r, NULL);
    capture_end(&c, err, size);
    capture_end(&o, out, sizeof out);
    unsetenv("LABKIT_GNUPLOT");
    results_free(r);
    return s;
}

static void test_without_gnuplot_the_csv_stays_and_one_line_says_how_to_draw_it(void)
{
    char png[256], data[256], err[2048];
    path_in_dir(png, sizeof png, "later.png");
    path_in_dir(data, sizeof data, "later.csv");
    EXPECT_OK(finish_with("/nonexistent/labkit-gnuplot", (const char *[]){ png }, 1, err, sizeof err));
    EXPECT(!file_exists(png));
    EXPECT(file_size(data) > 100);
    EXPECT(count_entries(dir) == 1);
    EXPECT(count_lines_starting(err, "plot: ") == 1 && strchr(err, '\n') == err + strlen(err) - 1);
    EXPECT_CONTAINS(err, "not found");
    EXPECT_CONTAINS(err, "later.csv");
    EXPECT_CONTAINS(err, "gnuplot-nox");
    EXPECT_CONTAINS(err, "-e \"data='");
    EXPECT_CONTAINS(err, "plot_example.gp");
    remove(data);
}

static void test_a_failing_gnuplot_leaves_the_old_figure_and_says_why(void)
{
    char fake[2048], png[256], err[2048], content[64];
    write_fake_gnuplot("failing", "echo 'line 7: undefined variable: oops' >&2; exit 3", fake, sizeof fake);
    path_in_dir(png, sizeof png, "old.png");
    FILE *f = fopen(png, "w");
    REQUIRE(f != NULL);
    fputs("an old figure\n", f);
    fclose(f);
    clear_error();
    EXPECT_STATUS(finish_with(fake, (const char *[]){ png }, 1, err, sizeof err), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "old.png was not written");
    EXPECT_CONTAINS(last_error(), "exit status 3");
    EXPECT_CONTAINS(last_error(), "undefined variable: oops");
    EXPECT_CONTAINS(last_error(), "to see why, run:");
    read_file(png, content, sizeof content);
    EXPECT_STREQ(content, "an old figure\n");
    EXPECT(count_entries(dir) == 3); /* the fake, the old figure, its CSV: no temporary file */
cleanup:
    remove(png);
    remove(fake);
    path_in_dir(png, sizeof png, "old.csv");
    remove(png);
}

static void test_a_figure_cut_short_is_refused_and_removed(void)
{
    /* gnuplot says all went well, but the file is not whole. */
    const char *const cases[][3] = {
        { "cut.png", "printf '\\211PNG\\r\\n\\032\\nIHDR' > \"$out\"", "no IEND chunk" },
        { "cut.svg", "printf '<svg width=\"10\">' > \"$out\"", "does not end with </svg>" },
        { "cut.pdf", "printf '%%PDF-1.5\\n1 0 obj' > \"$out\"", "does not end with %%EOF" },
        { "empty.png", ": > \"$out\"", "left the file empty" },
        { "text.pdf", "echo hello > \"$out\"", "not a PDF" },
    };
    for (int i = 0; i < 5; i++) {
        char fake[2048], figure[256], data[256], err[2048];
        write_fake_gnuplot("cutting", cases[i][1], fake, sizeof fake);
        path_in_dir(figure, sizeof figure, cases[i][0]);
        clear_error();
        EXPECT_STATUS(finish_with(fake, (const char *[]){ figure }, 1, err, sizeof err), STATUS_IO_FAILED);
        EXPECT_CONTAINS(last_error(), cases[i][0]);
        EXPECT_CONTAINS(last_error(), cases[i][2]);
        EXPECT(!file_exists(figure));
        EXPECT(count_entries(dir) == 2); /* the fake and the CSV */
        remove(fake);
        snprintf(data, sizeof data, "%.*s.csv", (int)(strrchr(figure, '.') - figure), figure);
        remove(data);
    }
}

static void test_a_disk_that_fills_while_drawing_leaves_no_figure(void)
{
    if (!gnuplot_installed()) {
        harness_skip("gnuplot is not installed, so no figure can be drawn");
        return;
    }
    /* A file size limit, inherited by gnuplot, stands in for a full disk:
     * gnuplot's writes fail and it still exits with 0. */
    char png[256], data[256], err[2048];
    path_in_dir(png, sizeof png, "full.png");
    path_in_dir(data, sizeof data, "full.csv");
    struct rlimit saved, small;
    getrlimit(RLIMIT_FSIZE, &saved);
    small = saved;
    small.rlim_cur = 8192; /* the CSV fits; a 1600x900 PNG does not */
    void (*previous)(int) = signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &small);
    status s = finish_with(NULL, (const char *[]){ png }, 1, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, previous);
    EXPECT_STATUS(s, STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "full.png was not written");
    EXPECT(!file_exists(png));
    EXPECT(count_entries(dir) == 1); /* the CSV alone */
    remove(data);
}

static void test_a_missing_plot_script_fails_before_the_work(void)
{
    char png[256];
    path_in_dir(png, sizeof png, "never.png");
    const char *plots[] = { png };
    pretend_run run;
    pretend(&run, NULL, plots, 1);
    results *r = NULL;
    EXPECT_REFUSED(results_create_for(&r, &run.args, matmul_columns, 4, "/nonexistent/plot.gp", NULL),
                   STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "/nonexistent/plot.gp");
    EXPECT_CONTAINS(last_error(), "never.png");
    EXPECT_REFUSED(results_create_for(&r, &run.args, matmul_columns, 4, NULL, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "LAB_PLOT_SCRIPT");
    EXPECT(r == NULL);
    /* Without --plot no script is needed. */
    pretend(&run, NULL, NULL, 0);
    EXPECT_OK(results_create_for(&r, &run.args, matmul_columns, 4, NULL, NULL));
    results_free(r);
}

static void test_bad_figure_variables_are_refused(void)
{
    char png[256], err[256];
    path_in_dir(png, sizeof png, "vars.png");
    results *r = matmul_table(NULL);
    REQUIRE(r != NULL);
    REQUIRE_OK(results_save_csv(r, png)); /* any readable file will do as data here */
    EXPECT_REFUSED(results_draw(r, png, png, (const char *const[]){ "no value", NULL }), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(results_draw(r, png, png, (const char *const[]){ "out=x.png", NULL }),
                   STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "set by figure_draw itself");
    (void)err;
cleanup:
    results_free(r);
    remove(png);
}

int main(void)
{
    unsetenv("LABKIT_GNUPLOT");
    if (!mkdtemp(dir)) {
        perror("test_results: mkdtemp");
        return 1;
    }
    RUN_TEST(test_bad_columns_are_refused_naming_the_column);
    RUN_TEST(test_the_table_prints_aligned_with_a_dash_for_unknown_cells);
    RUN_TEST(test_bytes_and_wide_values_print_as_people_read_them);
    RUN_TEST(test_echo_prints_each_row_once_complete_under_one_heading);
    RUN_TEST(test_a_mistake_in_a_cell_is_returned_and_remembered);
    RUN_TEST(test_numbers_read_back_for_a_takeaway);
    RUN_TEST(test_the_csv_starts_with_where_the_numbers_come_from);
    RUN_TEST(test_other_programs_cores_are_the_busy_share_less_our_own);
    RUN_TEST(test_the_csv_keeps_the_load_and_what_a_redraw_needs);
    RUN_TEST(test_csv_cells_are_quoted_and_numbers_exact);
    RUN_TEST(test_the_csv_can_go_to_standard_output);
    RUN_TEST(test_figures_are_drawn_in_png_svg_and_pdf_from_the_same_data);
    RUN_TEST(test_with_csv_the_figures_are_drawn_from_it);
    RUN_TEST(test_without_gnuplot_the_csv_stays_and_one_line_says_how_to_draw_it);
    RUN_TEST(test_a_failing_gnuplot_leaves_the_old_figure_and_says_why);
    RUN_TEST(test_a_figure_cut_short_is_refused_and_removed);
    RUN_TEST(test_a_disk_that_fills_while_drawing_leaves_no_figure);
    RUN_TEST(test_a_missing_plot_script_fails_before_the_work);
    RUN_TEST(test_bad_figure_variables_are_refused);
    remove_tree(dir);
    return harness_finish();
}
