/* test_plot.c: plot.h checks its input, writes the data and the script, draws
 * real PNG, SVG and PDF files with gnuplot, and keeps the data when gnuplot is
 * missing or fails.
 *
 * The figures go to a directory whose name holds a space and a quote, the
 * characters that break careless shell commands. The checks that need a real
 * gnuplot are skipped (and say so) where none is installed; the rest pretend
 * with LABKIT_GNUPLOT, which names the program plot_draw runs. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, chmod: POSIX, not C17 */

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/plot.h"
#include "labkit/status.h"
#include "test_files.h"

/* The directory every test works in: "it's a dir" inside a fresh one, both made
 * by main; a space and a quote, so that the shell command must quote it. */
static char top[] = "test_plot_XXXXXX";
static char dir[64];

static int count_lines(const char *text)
{
    int lines = 0;
    for (const char *c = text; *c != '\0'; c++) {
        lines += *c == '\n';
    }
    return lines;
}

/* ---- the plots under test ----------------------------------------------------- */

static const double sizes[] = { 64, 128, 256, 512, 1024 };
static const double cpu_gflops[] = { 20, 60, 150, 400, 700 };
static const double sim_gflops[] = { 5, 30, 120, 350, 690 };
static const double peak_x[] = { 64, 1024 };
static const double peak_y[] = { 1500, 1500 };

/* A log-log line plot with a dashed peak: the matmul lesson's figure. */
static plot line_plot(void)
{
    plot p = {
        .title = "matmul on cpu and sim_0", .xlabel = "N", .ylabel = "GFLOP/s", .log_x = true, .log_y = true
    };
    plot_add(&p, "cpu", sizes, cpu_gflops, 5, PLOT_LINES_POINTS);
    plot_add(&p, "sim:0", sizes, sim_gflops, 5, PLOT_LINES);
    plot_add(&p, "peak, 'theoretical'", peak_x, peak_y, 2, PLOT_DASHED);
    return p;
}

static const char *const copy_labels[] = { "h2d", "d2h", "d2d" };
static const double pinned[] = { 12, 11, 300 };
static const double pageable[] = { 6, 5.5, 280 };

static plot bar_plot(void)
{
    plot p = { .title = "copies", .ylabel = "GB/s", .bar_labels = copy_labels };
    plot_add(&p, "pinned", NULL, pinned, 3, PLOT_BARS);
    plot_add(&p, "pageable", NULL, pageable, 3, PLOT_BARS);
    return p;
}

static bool gnuplot_installed(void) { return system("gnuplot --version >/dev/null 2>&1") == 0; }

/* The paths of the three files plot_draw writes for the figure
 * "<dir>/<stem>.<extension>": the figure, its data and its script. */
typedef struct figure_files {
    char figure[PATH_MAX], csv[PATH_MAX], script[PATH_MAX];
} figure_files;

static figure_files figure_files_for(const char *stem, const char *extension)
{
    figure_files f;
    snprintf(f.figure, sizeof f.figure, "%s/%s.%s", dir, stem, extension);
    snprintf(f.csv, sizeof f.csv, "%s/%s.plot.csv", dir, stem);
    snprintf(f.script, sizeof f.script, "%s/%s.gp", dir, stem);
    return f;
}

/* Draws p with LABKIT_GNUPLOT naming a program that does not exist, so that only
 * the data and the script are written; what plot_draw printed lands in warning. */
static status draw_without_gnuplot(const plot *p, const char *figure, char *warning, size_t capacity)
{
    setenv("LABKIT_GNUPLOT", "/nonexistent/labkit-test-gnuplot", 1);
    capture c;
    capture_begin(&c, STDERR_FILENO);
    status s = plot_draw(p, figure);
    capture_end(&c, warning, capacity);
    unsetenv("LABKIT_GNUPLOT");
    return s;
}

/* ---- the tests ------------------------------------------------------------------- */

static void test_plot_add_checks_its_arguments(void)
{
    plot p = { 0 };
    const double x[] = { 1, 2 }, y[] = { 3, 4 };
    EXPECT_STATUS(plot_add(NULL, "a", x, y, 2, PLOT_LINES), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(plot_add(&p, "a", x, NULL, 2, PLOT_LINES), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(plot_add(&p, "a", NULL, y, 2, PLOT_LINES), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "x is NULL");
    EXPECT_STATUS(plot_add(&p, "a", x, y, 0, PLOT_LINES), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(plot_add(&p, "a", x, y, 2, (plot_style)42), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "style");
    EXPECT(p.nseries == 0);

    EXPECT_STATUS(plot_add(&p, "bars need no x", NULL, y, 2, PLOT_BARS), STATUS_OK);
    for (int i = 1; i < PLOT_MAX_SERIES; i++) {
        EXPECT_STATUS(plot_add(&p, NULL, x, y, 2, PLOT_LINES), STATUS_OK);
    }
    EXPECT_STATUS(plot_add(&p, "one too many", x, y, 2, PLOT_LINES), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "PLOT_MAX_SERIES");
    EXPECT(p.nseries == PLOT_MAX_SERIES);
    EXPECT(p.series[0].y == y && p.series[0].n == 2 && p.series[0].style == PLOT_BARS);
}

static void test_an_unknown_extension_is_refused_before_writing_anything(void)
{
    plot p = line_plot();
    const char *names[] = { "fig.jpg", "fig.PNG", "fig", "fig.png.txt" };
    char path[PATH_MAX];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        EXPECT_STATUS(plot_draw(&p, path), STATUS_BAD_ARGUMENT);
        EXPECT_CONTAINS(last_error(), ".png, .svg or .pdf");
    }
    snprintf(path, sizeof path, "%s/.png", dir);
    EXPECT_STATUS(plot_draw(&p, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "no name");
    EXPECT_STATUS(plot_draw(&p, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_STATUS(plot_draw(NULL, "fig.png"), STATUS_BAD_ARGUMENT);
    EXPECT(count_entries(dir) == 0);
}

static void test_a_plot_that_cannot_be_drawn_is_refused(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/bad.png", dir);

    plot empty = { 0 };
    EXPECT_STATUS(plot_draw(&empty, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "plot_add");

    /* A logarithmic axis cannot show 0 or less: say which point, not draw nothing. */
    const double x[] = { 1, 2, 3 }, y[] = { 5, 0, 7 };
    plot log_zero = { .log_y = true };
    plot_add(&log_zero, "zero", x, y, 3, PLOT_LINES_POINTS);
    EXPECT_STATUS(plot_draw(&log_zero, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "y[1]");
    EXPECT_CONTAINS(last_error(), "logarithmic");

    const double infinite[] = { 1, INFINITY, 3 };
    plot not_finite = { 0 };
    plot_add(&not_finite, "inf", x, infinite, 3, PLOT_LINES);
    EXPECT_STATUS(plot_draw(&not_finite, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "finite");

    plot log_bars = bar_plot();
    log_bars.log_x = true;
    EXPECT_STATUS(plot_draw(&log_bars, path), STATUS_BAD_ARGUMENT);

    const char *const short_labels[] = { "h2d", NULL };
    plot missing_label = bar_plot();
    missing_label.bar_labels = short_labels;
    EXPECT_STATUS(plot_draw(&missing_label, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "bar_labels[1]");

    EXPECT(count_entries(dir) == 0);
}

/* The first bytes of each format. */
static bool has_magic(const char *path, const char *format)
{
    char head[512];
    long n = read_file(path, head, sizeof head);
    if (n <= 0) {
        return false;
    }
    if (strcmp(format, "png") == 0) {
        return n >= 8 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0;
    }
    if (strcmp(format, "pdf") == 0) {
        return memcmp(head, "%PDF-", 5) == 0;
    }
    return strstr(head, "<svg") != NULL;
}

static void test_gnuplot_draws_png_svg_and_pdf(void)
{
    if (!gnuplot_installed()) {
        harness_skip("gnuplot is not installed, so no figure can be checked");
        return;
    }
    plot lines = line_plot();
    const char *formats[] = { "png", "svg", "pdf" };
    for (int i = 0; i < 3; i++) {
        char stem[64];
        snprintf(stem, sizeof stem, "fig's %s", formats[i]);
        figure_files files = figure_files_for(stem, formats[i]);
        EXPECT_STATUS(plot_draw(&lines, files.figure), STATUS_OK);
        EXPECT(file_size(files.figure) > 1000);
        EXPECT(has_magic(files.figure, formats[i]));
        EXPECT(file_size(files.csv) > 0);
        EXPECT(file_size(files.script) > 0);
    }

    char bars_path[PATH_MAX];
    snprintf(bars_path, sizeof bars_path, "%s/bars.png", dir);
    plot bars = bar_plot();
    EXPECT_STATUS(plot_draw(&bars, bars_path), STATUS_OK);
    EXPECT(has_magic(bars_path, "png"));
}

static void test_the_data_and_script_say_what_the_figure_shows(void)
{
    /* No gnuplot is needed to check the files it would read. */
    figure_files files = figure_files_for("mm", "svg");
    plot lines = line_plot();
    char warning[1024];
    EXPECT_STATUS(draw_without_gnuplot(&lines, files.figure, warning, sizeof warning), STATUS_OK);

    char csv[2048] = "", script[8192] = "";
    read_file(files.csv, csv, sizeof csv);
    const char *first_rows = "series,x,y,title\n1,64,20,cpu\n1,128,60,cpu\n";
    EXPECT(strncmp(csv, first_rows, strlen(first_rows)) == 0);
    EXPECT_CONTAINS(csv, "\n2,1024,690,sim:0\n");
    EXPECT_CONTAINS(csv, "\n3,1024,1500,\"peak, 'theoretical'\"\n");

    read_file(files.script, script, sizeof script);
    EXPECT_CONTAINS(script, "set terminal svg size 1200,800");
    EXPECT_CONTAINS(script, "set output 'mm.svg'");
    EXPECT_CONTAINS(script, "set title 'matmul on cpu and sim_0' noenhanced");
    EXPECT_CONTAINS(script, "set xlabel 'N'");
    EXPECT_CONTAINS(script, "set ylabel 'GFLOP/s'");
    EXPECT_CONTAINS(script, "set logscale x");
    EXPECT_CONTAINS(script, "set logscale y");
    EXPECT_CONTAINS(script, "set grid");
    EXPECT_CONTAINS(script, "set key");
    EXPECT_CONTAINS(script, "'mm.plot.csv' using 2:($1 == 1 ? $3 : NaN) with linespoints");
    EXPECT_CONTAINS(script, "with lines dt 2");
    EXPECT_CONTAINS(script, "title 'peak, ''theoretical'''");
    EXPECT(strstr(script, dir) == NULL); /* names relative to the script's directory */

    /* Bars: clustered boxes, labelled below. */
    files = figure_files_for("bars", "pdf");
    plot bars = bar_plot();
    EXPECT_STATUS(draw_without_gnuplot(&bars, files.figure, warning, sizeof warning), STATUS_OK);
    read_file(files.script, script, sizeof script);
    EXPECT_CONTAINS(script, "set terminal pdfcairo size 8in,5.33in");
    EXPECT_CONTAINS(script, "set xtics ('h2d' 0, 'd2h' 1, 'd2d' 2)");
    EXPECT_CONTAINS(script, "with boxes");
    EXPECT_CONTAINS(script, "set yrange [0:*]");
}

static void test_without_gnuplot_the_data_stays_and_one_line_says_why(void)
{
    figure_files files = figure_files_for("lost", "png");
    plot lines = line_plot();
    char warning[1024];
    EXPECT_STATUS(draw_without_gnuplot(&lines, files.figure, warning, sizeof warning), STATUS_OK);

    EXPECT(file_size(files.csv) > 0);
    EXPECT(file_size(files.script) > 0);
    EXPECT(file_size(files.figure) == -1);
    EXPECT(count_lines(warning) == 1);
    EXPECT_CONTAINS(warning, "not found");
    EXPECT_CONTAINS(warning, "lost.plot.csv");
    EXPECT_CONTAINS(warning, "lost.gp");
    EXPECT_CONTAINS(warning, "gnuplot-nox");
}

/* Writes an executable shell script that stands in for gnuplot; returns its
 * absolute path in `path`. */
static void write_fake_gnuplot(const char *name, const char *body, char *path, size_t size)
{
    char relative[1024], cwd[1024];
    snprintf(relative, sizeof relative, "%s/%s", dir, name);
    FILE *f = fopen(relative, "w");
    if (f != NULL) {
        fprintf(f, "#!/bin/sh\n%s\n", body);
        fclose(f);
    }
    chmod(relative, 0755);
    /* Absolute, because plot_draw runs the program from the figure's directory. */
    snprintf(path, size, "%s/%s", getcwd(cwd, sizeof cwd) != NULL ? cwd : ".", relative);
}

static void test_a_failing_gnuplot_is_a_backend_error_with_its_output(void)
{
    char fake[PATH_MAX], figure[PATH_MAX];
    write_fake_gnuplot("broken gnuplot", "echo 'line 7: undefined variable: oops'\nexit 3", fake,
                       sizeof fake);
    snprintf(figure, sizeof figure, "%s/broken.png", dir);
    setenv("LABKIT_GNUPLOT", fake, 1);
    plot lines = line_plot();
    EXPECT_STATUS(plot_draw(&lines, figure), STATUS_BACKEND_FAILED);
    EXPECT_CONTAINS(last_error(), "exit status 3");
    EXPECT_CONTAINS(last_error(), "undefined variable: oops");
    EXPECT_CONTAINS(last_error(), "broken.plot.csv");

    /* Success without a figure is a failure too. */
    write_fake_gnuplot("silent gnuplot", "exit 0", fake, sizeof fake);
    setenv("LABKIT_GNUPLOT", fake, 1);
    EXPECT_STATUS(plot_draw(&lines, figure), STATUS_BACKEND_FAILED);
    EXPECT_CONTAINS(last_error(), "missing");
    unsetenv("LABKIT_GNUPLOT");
}

static void test_a_directory_in_place_of_the_figure_is_refused_and_kept(void)
{
    /* An empty directory named like the figure was once removed to make room. */
    char figure[PATH_MAX];
    snprintf(figure, sizeof figure, "%s/taken.png", dir);
    EXPECT(mkdir(figure, 0755) == 0);
    plot lines = line_plot();
    EXPECT_STATUS(plot_draw(&lines, figure), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "is a directory");
    struct stat info;
    EXPECT(stat(figure, &info) == 0 && S_ISDIR(info.st_mode));
    figure_files files = figure_files_for("taken", "png");
    EXPECT(!file_exists(files.csv) && !file_exists(files.script)); /* nothing else was written */
    rmdir(figure);
}

int main(void)
{
    unsetenv("LABKIT_GNUPLOT"); /* the tests choose it themselves */
    if (mkdtemp(top) == NULL) {
        perror("test_plot: mkdtemp");
        return 1;
    }
    snprintf(dir, sizeof dir, "%s/it's a dir", top);
    if (mkdir(dir, 0755) != 0) {
        perror("test_plot: mkdir");
        return 1;
    }

    RUN_TEST(test_plot_add_checks_its_arguments);
    RUN_TEST(test_an_unknown_extension_is_refused_before_writing_anything);
    RUN_TEST(test_a_plot_that_cannot_be_drawn_is_refused);
    RUN_TEST(test_gnuplot_draws_png_svg_and_pdf);
    RUN_TEST(test_the_data_and_script_say_what_the_figure_shows);
    RUN_TEST(test_without_gnuplot_the_data_stays_and_one_line_says_why);
    RUN_TEST(test_a_failing_gnuplot_is_a_backend_error_with_its_output);
    RUN_TEST(test_a_directory_in_place_of_the_figure_is_refused_and_kept);
    remove_tree(top);
    return harness_finish();
}
