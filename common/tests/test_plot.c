/* test_plot.c: plot.h checks its input, writes the data and the script, draws
 * real PNG, SVG and PDF files with gnuplot, and keeps the data when gnuplot is
 * missing or fails.
 *
 * The figures go to a directory whose name holds a space and a quote, the
 * characters that break careless shell commands. The checks that need a real
 * gnuplot are skipped (and say so) where none is installed; the rest pretend
 * with LABKIT_GNUPLOT, which names the program plot_draw runs. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, dup2: POSIX, not C17 */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "labkit/plot.h"
#include "labkit/status.h"

/* ---- a tiny harness ------------------------------------------------------------- */

static int passed, failed;

#define EXPECT(condition)                                                               \
    do {                                                                                \
        if (condition) {                                                                \
            passed++;                                                                   \
        } else {                                                                        \
            failed++;                                                                   \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #condition);     \
        }                                                                               \
    } while (0)

#define EXPECT_STATUS(call, expected)                                                   \
    do {                                                                                \
        status got_ = (call);                                                           \
        if (got_ == (expected)) {                                                       \
            passed++;                                                                   \
        } else {                                                                        \
            failed++;                                                                   \
            fprintf(stderr, "%s:%d: FAILED: %s returned %s, expected %s (%s)\n",        \
                    __FILE__, __LINE__, #call, status_name(got_), status_name(expected), \
                    last_error());                                                      \
        }                                                                               \
    } while (0)

#define EXPECT_CONTAINS(text, part)                                                     \
    do {                                                                                \
        const char *text_ = (text);                                                     \
        if (strstr(text_, (part)) != NULL) {                                            \
            passed++;                                                                   \
        } else {                                                                        \
            failed++;                                                                   \
            fprintf(stderr, "%s:%d: FAILED: \"%s\" does not contain \"%s\"\n", __FILE__, \
                    __LINE__, text_, (part));                                           \
        }                                                                               \
    } while (0)

/* ---- files -------------------------------------------------------------------------- */

/* Reads up to capacity - 1 bytes of a file, NUL-terminated; -1 if it cannot. */
static long read_file(const char *path, char *buffer, size_t capacity)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return -1;
    }
    size_t n = fread(buffer, 1, capacity - 1, f);
    fclose(f);
    buffer[n] = '\0';
    return (long)n;
}

static long file_size(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 ? (long)info.st_size : -1;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    int count = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            count++;
        }
    }
    closedir(d);
    return count;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat info;
            if (lstat(path, &info) == 0 && S_ISDIR(info.st_mode)) {
                remove_tree(path);
            } else {
                remove(path);
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Sends stderr to a file while a call runs, so that a test can read what it
 * printed. */
typedef struct captured {
    int saved_fd;
    char path[PATH_MAX];
} captured;

static void capture_stderr(captured *c, const char *dir)
{
    snprintf(c->path, sizeof c->path, "%s/stderr.txt", dir);
    fflush(stderr);
    c->saved_fd = dup(STDERR_FILENO);
    int fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

static void end_capture(captured *c, char *text, size_t capacity)
{
    fflush(stderr);
    dup2(c->saved_fd, STDERR_FILENO);
    close(c->saved_fd);
    if (read_file(c->path, text, capacity) < 0) {
        text[0] = '\0';
    }
    remove(c->path);
}

static int count_lines(const char *text)
{
    int lines = 0;
    for (const char *c = text; *c != '\0'; c++) {
        lines += *c == '\n';
    }
    return lines;
}

/* ---- the plots under test ----------------------------------------------------- */

static const double sizes[] = {64, 128, 256, 512, 1024};
static const double cpu_gflops[] = {20, 60, 150, 400, 700};
static const double sim_gflops[] = {5, 30, 120, 350, 690};
static const double peak_x[] = {64, 1024};
static const double peak_y[] = {1500, 1500};

/* A log-log line plot with a dashed peak: the matmul lesson's figure. */
static plot line_plot(void)
{
    plot p = {.title = "matmul on cpu and sim_0", .xlabel = "N", .ylabel = "GFLOP/s",
              .log_x = true, .log_y = true};
    plot_add(&p, "cpu", sizes, cpu_gflops, 5, PLOT_LINES_POINTS);
    plot_add(&p, "sim:0", sizes, sim_gflops, 5, PLOT_LINES);
    plot_add(&p, "peak, 'theoretical'", peak_x, peak_y, 2, PLOT_DASHED);
    return p;
}

static const char *const copy_labels[] = {"h2d", "d2h", "d2d"};
static const double pinned[] = {12, 11, 300};
static const double pageable[] = {6, 5.5, 280};

static plot bar_plot(void)
{
    plot p = {.title = "copies", .ylabel = "GB/s", .bar_labels = copy_labels};
    plot_add(&p, "pinned", NULL, pinned, 3, PLOT_BARS);
    plot_add(&p, "pageable", NULL, pageable, 3, PLOT_BARS);
    return p;
}

static bool gnuplot_installed(void)
{
    return system("gnuplot --version >/dev/null 2>&1") == 0;
}

/* ---- the tests ------------------------------------------------------------------- */

static void test_plot_add_checks_its_arguments(void)
{
    plot p = {0};
    const double x[] = {1, 2}, y[] = {3, 4};
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

static void test_an_unknown_extension_is_refused_before_writing_anything(const char *dir)
{
    plot p = line_plot();
    const char *names[] = {"fig.jpg", "fig.PNG", "fig", "fig.png.txt"};
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

static void test_a_plot_that_cannot_be_drawn_is_refused(const char *dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/bad.png", dir);

    plot empty = {0};
    EXPECT_STATUS(plot_draw(&empty, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "plot_add");

    /* A logarithmic axis cannot show 0 or less: say which point, not draw nothing. */
    const double x[] = {1, 2, 3}, y[] = {5, 0, 7};
    plot log_zero = {.log_y = true};
    plot_add(&log_zero, "zero", x, y, 3, PLOT_LINES_POINTS);
    EXPECT_STATUS(plot_draw(&log_zero, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "y[1]");
    EXPECT_CONTAINS(last_error(), "logarithmic");

    const double infinite[] = {1, INFINITY, 3};
    plot not_finite = {0};
    plot_add(&not_finite, "inf", x, infinite, 3, PLOT_LINES);
    EXPECT_STATUS(plot_draw(&not_finite, path), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "finite");

    plot log_bars = bar_plot();
    log_bars.log_x = true;
    EXPECT_STATUS(plot_draw(&log_bars, path), STATUS_BAD_ARGUMENT);

    const char *const short_labels[] = {"h2d", NULL};
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

static void test_gnuplot_draws_png_svg_and_pdf(const char *dir)
{
    if (!gnuplot_installed()) {
        printf("skipped: gnuplot is not installed, so no figure can be checked\n");
        return;
    }
    plot lines = line_plot();
    const char *formats[] = {"png", "svg", "pdf"};
    for (int i = 0; i < 3; i++) {
        char figure[PATH_MAX], csv[PATH_MAX], script[PATH_MAX];
        snprintf(figure, sizeof figure, "%s/fig's %s.%s", dir, formats[i], formats[i]);
        snprintf(csv, sizeof csv, "%s/fig's %s.plot.csv", dir, formats[i]);
        snprintf(script, sizeof script, "%s/fig's %s.gp", dir, formats[i]);
        EXPECT_STATUS(plot_draw(&lines, figure), STATUS_OK);
        EXPECT(file_size(figure) > 1000);
        EXPECT(has_magic(figure, formats[i]));
        EXPECT(file_size(csv) > 0);
        EXPECT(file_size(script) > 0);
    }

    char bars_path[PATH_MAX];
    snprintf(bars_path, sizeof bars_path, "%s/bars.png", dir);
    plot bars = bar_plot();
    EXPECT_STATUS(plot_draw(&bars, bars_path), STATUS_OK);
    EXPECT(has_magic(bars_path, "png"));
}

static void test_the_data_and_script_say_what_the_figure_shows(const char *dir)
{
    char figure[PATH_MAX], csv_path[PATH_MAX], script_path[PATH_MAX];
    snprintf(figure, sizeof figure, "%s/mm.svg", dir);
    snprintf(csv_path, sizeof csv_path, "%s/mm.plot.csv", dir);
    snprintf(script_path, sizeof script_path, "%s/mm.gp", dir);
    /* No gnuplot is needed to check the files it would read. */
    setenv("LABKIT_GNUPLOT", "/nonexistent/labkit-test-gnuplot", 1);
    plot lines = line_plot();
    captured c;
    char warning[1024];
    capture_stderr(&c, dir);
    EXPECT_STATUS(plot_draw(&lines, figure), STATUS_OK);
    end_capture(&c, warning, sizeof warning);
    unsetenv("LABKIT_GNUPLOT");

    char csv[2048], script[8192];
    read_file(csv_path, csv, sizeof csv);
    const char *first_rows = "series,x,y,title\n1,64,20,cpu\n1,128,60,cpu\n";
    EXPECT(strncmp(csv, first_rows, strlen(first_rows)) == 0);
    EXPECT_CONTAINS(csv, "\n2,1024,690,sim:0\n");
    EXPECT_CONTAINS(csv, "\n3,1024,1500,\"peak, 'theoretical'\"\n");

    read_file(script_path, script, sizeof script);
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
    snprintf(figure, sizeof figure, "%s/bars.pdf", dir);
    snprintf(script_path, sizeof script_path, "%s/bars.gp", dir);
    setenv("LABKIT_GNUPLOT", "/nonexistent/labkit-test-gnuplot", 1);
    plot bars = bar_plot();
    capture_stderr(&c, dir);
    EXPECT_STATUS(plot_draw(&bars, figure), STATUS_OK);
    end_capture(&c, warning, sizeof warning);
    unsetenv("LABKIT_GNUPLOT");
    read_file(script_path, script, sizeof script);
    EXPECT_CONTAINS(script, "set terminal pdfcairo size 8in,5.33in");
    EXPECT_CONTAINS(script, "set xtics ('h2d' 0, 'd2h' 1, 'd2d' 2)");
    EXPECT_CONTAINS(script, "with boxes");
    EXPECT_CONTAINS(script, "set yrange [0:*]");
}

static void test_without_gnuplot_the_data_stays_and_one_line_says_why(const char *dir)
{
    char figure[PATH_MAX], csv[PATH_MAX], script[PATH_MAX];
    snprintf(figure, sizeof figure, "%s/lost.png", dir);
    snprintf(csv, sizeof csv, "%s/lost.plot.csv", dir);
    snprintf(script, sizeof script, "%s/lost.gp", dir);
    setenv("LABKIT_GNUPLOT", "/nonexistent/labkit-test-gnuplot", 1);

    plot lines = line_plot();
    captured c;
    char warning[1024];
    capture_stderr(&c, dir);
    EXPECT_STATUS(plot_draw(&lines, figure), STATUS_OK);
    end_capture(&c, warning, sizeof warning);
    unsetenv("LABKIT_GNUPLOT");

    EXPECT(file_size(csv) > 0);
    EXPECT(file_size(script) > 0);
    EXPECT(file_size(figure) == -1);
    EXPECT(count_lines(warning) == 1);
    EXPECT_CONTAINS(warning, "not found");
    EXPECT_CONTAINS(warning, "lost.plot.csv");
    EXPECT_CONTAINS(warning, "lost.gp");
    EXPECT_CONTAINS(warning, "gnuplot-nox");
}

/* Writes an executable shell script that stands in for gnuplot; returns its
 * absolute path in `path`. */
static void write_fake_gnuplot(const char *dir, const char *name, const char *body, char *path,
                               size_t size)
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

static void test_a_failing_gnuplot_is_a_backend_error_with_its_output(const char *dir)
{
    char fake[PATH_MAX], figure[PATH_MAX];
    write_fake_gnuplot(dir, "broken gnuplot", "echo 'line 7: undefined variable: oops'\nexit 3",
                       fake, sizeof fake);
    snprintf(figure, sizeof figure, "%s/broken.png", dir);
    setenv("LABKIT_GNUPLOT", fake, 1);
    plot lines = line_plot();
    EXPECT_STATUS(plot_draw(&lines, figure), STATUS_BACKEND_FAILED);
    EXPECT_CONTAINS(last_error(), "exit status 3");
    EXPECT_CONTAINS(last_error(), "undefined variable: oops");
    EXPECT_CONTAINS(last_error(), "broken.plot.csv");

    /* Success without a figure is a failure too. */
    write_fake_gnuplot(dir, "silent gnuplot", "exit 0", fake, sizeof fake);
    setenv("LABKIT_GNUPLOT", fake, 1);
    EXPECT_STATUS(plot_draw(&lines, figure), STATUS_BACKEND_FAILED);
    EXPECT_CONTAINS(last_error(), "missing");
    unsetenv("LABKIT_GNUPLOT");
}

int main(void)
{
    unsetenv("LABKIT_GNUPLOT"); /* the tests choose it themselves */
    char top[] = "test_plot_XXXXXX";
    if (mkdtemp(top) == NULL) {
        perror("test_plot: mkdtemp");
        return 1;
    }
    /* A space and a quote in the directory: the shell command must quote it. */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/it's a dir", top);
    if (mkdir(dir, 0755) != 0) {
        perror("test_plot: mkdir");
        return 1;
    }

    test_plot_add_checks_its_arguments();
    test_an_unknown_extension_is_refused_before_writing_anything(dir);
    test_a_plot_that_cannot_be_drawn_is_refused(dir);
    test_gnuplot_draws_png_svg_and_pdf(dir);
    test_the_data_and_script_say_what_the_figure_shows(dir);
    test_without_gnuplot_the_data_stays_and_one_line_says_why(dir);
    test_a_failing_gnuplot_is_a_backend_error_with_its_output(dir);
    remove_tree(top);

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
