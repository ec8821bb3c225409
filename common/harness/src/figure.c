/* figure.c: runs a lab's gnuplot script on its CSV, and keeps the figure only
 * if it is whole.
 *
 * gnuplot is started directly (posix_spawnp), with no shell, so that no file
 * name can ever be read as a command; its standard input is /dev/null, so a
 * script that waits for a key cannot hang the program, and it is killed if it
 * takes longer than FIGURE_TIMEOUT_SECONDS. Its output is read while it runs.
 *
 * gnuplot exits with 0 even when it could not finish a file (a full disk, a
 * file size limit): the cairo terminals ignore write errors. So the file is
 * checked after it exits: a PNG must end with its IEND chunk, an SVG with
 * </svg>, a PDF with %%EOF. It is written under a temporary name in the
 * figure's directory (files.h) and renamed into place only when it passed. */
#include "labkit/figure.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "labkit/files.h"
#include "text.h"

extern char **environ;

/* A figure takes gnuplot well under a second; a minute means it is stuck. */
#define FIGURE_TIMEOUT_SECONDS 60

/* How much of gnuplot's output a message quotes. */
#define OUTPUT_KEPT 400

/* ---- formats ------------------------------------------------------------------------- */

static const char *const formats[] = { "png", "svg", "pdf" };

/* "png", "svg" or "pdf" from the path's extension; NULL when it has none of them. */
static const char *format_of(const char *path)
{
    if (!path) return NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) return NULL;
    for (int i = 0; i < 3; i++)
        if (strcmp(dot + 1, formats[i]) == 0) return formats[i];
    return NULL;
}

bool figure_has_format(const char *path) { return format_of(path) != NULL; }

bool figure_data_path(const char *figure, char *buffer, size_t size)
{
    if (!format_of(figure) || !buffer) return false;
    int stem = (int)(strrchr(figure, '.') - figure);
    int n = snprintf(buffer, size, "%.*s.csv", stem, figure);
    return n >= 0 && (size_t)n < size;
}

/* ---- checking a finished file --------------------------------------------------------- */

/* The first `size` bytes of the file at `offset` (from the end when negative). */
static size_t read_at(FILE *f, long offset, unsigned char *bytes, size_t size)
{
    if (fseek(f, offset, offset < 0 ? SEEK_END : SEEK_SET) != 0) return 0;
    return fread(bytes, 1, size, f);
}

/* The last `size` bytes without trailing white space, NUL-terminated. */
static void tail_of(FILE *f, long file_size, char *tail, size_t size)
{
    long want = file_size < (long)size - 1 ? file_size : (long)size - 1;
    size_t n = read_at(f, -want, (unsigned char *)tail, (size_t)want);
    while (n > 0 && isspace((unsigned char)tail[n - 1])) n--;
    tail[n] = '\0';
}

static bool ends_with(const char *text, const char *end)
{
    size_t a = strlen(text), b = strlen(end);
    return a >= b && strcmp(text + a - b, end) == 0;
}

/* What is wrong with the file gnuplot wrote, or NULL when it is a whole figure. */
static const char *figure_problem(const char *path, const char *format)
{
    static const unsigned char png_signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    static const unsigned char png_end[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82 };
    struct stat info;
    if (stat(path, &info) != 0) return "gnuplot wrote no file";
    if (info.st_size == 0) return "gnuplot left the file empty";
    FILE *f = fopen(path, "rb");
    if (!f) return "the file it wrote cannot be read back";
    unsigned char head[8] = { 0 }, end[12] = { 0 };
    char tail[32];
    const char *problem = NULL;
    if (strcmp(format, "png") == 0) {
        if (read_at(f, 0, head, 8) != 8 || memcmp(head, png_signature, 8) != 0)
            problem = "the file is not a PNG (no PNG signature)";
        else if (info.st_size < 20 || read_at(f, -12, end, 12) != 12 || memcmp(end, png_end, 12) != 0)
            problem = "the PNG was cut short (no IEND chunk at its end)";
    } else if (strcmp(format, "svg") == 0) {
        tail_of(f, (long)info.st_size, tail, sizeof tail);
        if (!ends_with(tail, "</svg>")) problem = "the SVG was cut short (it does not end with </svg>)";
    } else {
        tail_of(f, (long)info.st_size, tail, sizeof tail);
        if (read_at(f, 0, head, 5) != 5 || memcmp(head, "%PDF-", 5) != 0)
            problem = "the file is not a PDF (it does not start with %PDF-)";
        else if (!ends_with(tail, "%%EOF"))
            problem = "the PDF was cut short (it does not end with %%EOF)";
    }
    fclose(f);
    return problem;
}

/* ---- the arguments -------------------------------------------------------------------- */

static bool is_readable_file(const char *path)
{
    struct stat info;
    return path && stat(path, &info) == 0 && S_ISREG(info.st_mode) && access(path, R_OK) == 0;
}

static bool is_reserved(const char *name, size_t length)
{
    static const char *const reserved[] = { "data", "out", "format", "style" };
    for (int i = 0; i < 4; i++)
        if (strlen(reserved[i]) == length && strncmp(reserved[i], name, length) == 0) return true;
    return false;
}

/* Each of vars is "name=value" with a gnuplot name that is not one of ours. */
static status check_vars(const char *const *vars)
{
    for (int i = 0; vars && vars[i]; i++) {
        const char *equals = strchr(vars[i], '=');
        size_t length = equals ? (size_t)(equals - vars[i]) : 0;
        bool good = length > 0 && (isalpha((unsigned char)vars[i][0]) || vars[i][0] == '_');
        for (size_t k = 0; good && k < length; k++)
            good = isalnum((unsigned char)vars[i][k]) || vars[i][k] == '_';
        if (!good)
            return fail(STATUS_BAD_ARGUMENT,
                        "figure_draw: variable %d, \"%s\", is not name=value with a name of letters, digits "
                        "and _ (\"devices=cpu sim:0\")",
                        i, vars[i]);
        if (is_reserved(vars[i], length))
            return fail(STATUS_BAD_ARGUMENT,
                        "figure_draw: variable \"%.*s\" is set by figure_draw itself (data, out, format, "
                        "style); choose another name",
                        (int)length, vars[i]);
    }
    return STATUS_OK;
}

static status check_arguments(const char *figure, const char *data, const char *script, const char *style,
                              const char *const *vars)
{
    if (!format_of(figure))
        return fail(
            STATUS_BAD_ARGUMENT,
            "figure_draw: cannot tell the format of the figure %s; the name must end in .png, .svg or "
            ".pdf",
            figure ? figure : "(NULL)");
    if (!is_readable_file(data))
        return fail(STATUS_IO_FAILED,
                    "figure_draw(%s): the data %s is not a readable file; save the CSV first", figure,
                    data ? data : "(NULL)");
    if (!is_readable_file(script))
        return fail(STATUS_IO_FAILED,
                    "figure_draw(%s): the plot script %s is missing or unreadable; a lab's is plot.gp beside "
                    "its main.c",
                    figure, script ? script : "(NULL)");
    if (!is_readable_file(style))
        return fail(STATUS_IO_FAILED, "figure_draw(%s): the style file %s is missing or unreadable", figure,
                    style ? style : "(NULL)");
    status s = check_vars(vars);
    if (s != STATUS_OK) return s;
    return output_check(figure, NULL);
}

/* ---- the command ------------------------------------------------------------------------ */

/* A path as a person would type it here: relative to the working directory
 * when it lies below it (labs/04_matmul/plot.gp), otherwise as it is. */
static const char *as_typed(const char *path, const char *cwd)
{
    size_t n = strlen(cwd);
    if (path[0] == '/' && n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/') return path + n + 1;
    return path;
}

/* data='...'; out='...'; format='...'; style='...'; name='value'... */
static void add_assignments(text *t, const char *data, const char *out, const char *format, const char *style,
                            const char *const *vars)
{
    text_add(t, "data=");
    text_add_gnuplot_string(t, data);
    text_add(t, "; out=");
    text_add_gnuplot_string(t, out);
    text_add(t, "; format='%s'; style=", format);
    text_add_gnuplot_string(t, style);
    for (int i = 0; vars && vars[i]; i++) {
        const char *equals = strchr(vars[i], '=');
        text_add(t, "; %.*s=", (int)(equals - vars[i]), vars[i]);
        text_add_gnuplot_string(t, equals + 1);
    }
}

/* gnuplot -e "data='fig.csv'; out='fig.png'; ..." labs/04_matmul/plot.gp */
static void add_redraw_command(text *t, const char *program, const char *figure, const char *data,
                               const char *script, const char *style, const char *const *vars)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    text assignments = { 0 };
    add_assignments(&assignments, data, figure, format_of(figure), as_typed(style, cwd), vars);
    text_add_shell_word(t, program);
    text_add(t, " -e \"");
    if (assignments.chars) text_add_shell_double_quoted(t, assignments.chars);
    text_add(t, "\" ");
    text_add_shell_word(t, as_typed(script, cwd));
    free(assignments.chars);
}

/* ---- running gnuplot --------------------------------------------------------------------- */

typedef enum run_outcome { RUN_EXITED, RUN_NOT_FOUND, RUN_KILLED, RUN_TIMED_OUT, RUN_FAILED } run_outcome;

typedef struct run_result {
    run_outcome outcome;
    int code; /* the exit status, the signal, or errno for RUN_FAILED and RUN_NOT_FOUND */
    char output[OUTPUT_KEPT + 1];
} run_result;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Reads what the child prints until it closes the pipe, keeping the first
 * OUTPUT_KEPT characters; false when the deadline passed first. */
static bool read_output(int fd, char *kept, double deadline)
{
    size_t used = 0;
    for (;;) {
        int wait_ms = (int)((deadline - now_seconds()) * 1000.0);
        if (wait_ms <= 0) return false;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int ready = poll(&p, 1, wait_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return false;
        char chunk[512];
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        size_t take = (size_t)got < OUTPUT_KEPT - used ? (size_t)got : OUTPUT_KEPT - used;
        memcpy(kept + used, chunk, take);
        used += take;
    }
    while (used > 0 && isspace((unsigned char)kept[used - 1])) used--;
    kept[used] = '\0';
    return true;
}

/* The child's standard input from /dev/null, its output and errors into `pipe_fds`. */
static int set_up_child_files(posix_spawn_file_actions_t *actions, const int pipe_fds[2])
{
    int rc = posix_spawn_file_actions_init(actions);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(actions, pipe_fds[1], STDOUT_FILENO);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(actions, pipe_fds[1], STDERR_FILENO);
    if (rc == 0) rc = posix_spawn_file_actions_addclose(actions, pipe_fds[0]);
    if (rc == 0) rc = posix_spawn_file_actions_addclose(actions, pipe_fds[1]);
    return rc;
}

static void wait_for(pid_t pid, run_result *result, bool timed_out)
{
    if (timed_out) kill(pid, SIGKILL);
    int wait_status = 0;
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) continue;
    if (timed_out)
        result->outcome = RUN_TIMED_OUT;
    else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 127)
        result->outcome = RUN_NOT_FOUND, result->code = ENOENT; /* a shell script's "not found" */
    else if (WIFEXITED(wait_status))
        result->outcome = RUN_EXITED, result->code = WEXITSTATUS(wait_status);
    else
        result->outcome = RUN_KILLED, result->code = WTERMSIG(wait_status);
}

/* Runs argv[0] (looked up on PATH) and waits for it. */
static void run(char *const argv[], run_result *result)
{
    *result = (run_result){ .outcome = RUN_FAILED };
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        result->code = errno;
        return;
    }
    posix_spawn_file_actions_t actions;
    pid_t pid = 0;
    int rc = set_up_child_files(&actions, pipe_fds);
    if (rc == 0) rc = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fds[1]);
    if (rc != 0) {
        close(pipe_fds[0]);
        result->outcome = rc == ENOENT || rc == EACCES || rc == ENOEXEC ? RUN_NOT_FOUND : RUN_FAILED;
        result->code = rc;
        return;
    }
    bool finished = read_output(pipe_fds[0], result->output, now_seconds() + FIGURE_TIMEOUT_SECONDS);
    close(pipe_fds[0]);
    wait_for(pid, result, !finished);
}

/* ---- drawing ------------------------------------------------------------------------------- */

/* Why the run did not give a figure, or NULL when gnuplot exited with 0. */
static const char *run_problem(const run_result *r, char *buffer, size_t size)
{
    switch (r->outcome) {
    case RUN_EXITED:
        if (r->code == 0) return NULL;
        snprintf(buffer, size, "gnuplot failed (exit status %d)", r->code);
        break;
    case RUN_KILLED: snprintf(buffer, size, "gnuplot was killed by signal %d", r->code); break;
    case RUN_TIMED_OUT:
        snprintf(buffer, size, "gnuplot took over %d s and was stopped", FIGURE_TIMEOUT_SECONDS);
        break;
    case RUN_FAILED:
    case RUN_NOT_FOUND: snprintf(buffer, size, "gnuplot could not be started: %s", strerror(r->code)); break;
    }
    return buffer;
}

static const char *gnuplot_program(void)
{
    const char *program = getenv("LABKIT_GNUPLOT");
    return program && program[0] ? program : "gnuplot";
}

/* gnuplot is missing: the data stays, and one line says how to draw the figure later. */
static void warn_not_drawn(const char *figure, const char *data, const char *program, const char *redraw)
{
    fflush(stdout);
    fprintf(
        stderr,
        "plot: %s not found, so %s was not drawn; the data is in %s. Install gnuplot-nox (./lab deps) and "
        "run: %s\n",
        program, figure, data, redraw);
}

/* Runs gnuplot into the temporary file of `o` and checks what it wrote; the
 * failure's message, or STATUS_OK. *missing is set when gnuplot is not installed. */
static status draw_into(output_file *o, const char *figure, const char *data, const char *script,
                        const char *style, const char *const *vars, const char *redraw, bool *missing)
{
    const char *program = gnuplot_program();
    text assignments = { 0 };
    add_assignments(&assignments, data, o->temp_path, format_of(figure), style, vars);
    if (!assignments.chars) return fail(STATUS_OUT_OF_MEMORY, "figure_draw(%s): out of host memory", figure);
    char *argv[] = { (char *)program, "-e", assignments.chars, (char *)script, NULL };
    run_result result;
    run(argv, &result);
    free(assignments.chars);

    *missing = result.outcome == RUN_NOT_FOUND;
    if (*missing) return STATUS_OK;
    char why[160];
    const char *problem = run_problem(&result, why, sizeof why);
    if (!problem) problem = figure_problem(o->temp_path, format_of(figure));
    if (!problem) {
        /* Drawn, but gnuplot had something to say ("no valid points"): the
         * instructor who wrote the script wants to see it. */
        if (result.output[0]) fprintf(stderr, "plot: gnuplot said, drawing %s:\n%s\n", figure, result.output);
        return STATUS_OK;
    }
    return fail(STATUS_IO_FAILED, "figure %s was not written: %s%s%s\n  to see why, run: %s", figure, problem,
                result.output[0] ? "; gnuplot said:\n" : "", result.output, redraw);
}

status figure_draw(const char *figure, const char *data, const char *script, const char *style,
                   const char *const *vars)
{
    status s = check_arguments(figure, data, script, style, vars);
    if (s != STATUS_OK) return s;
    text redraw = { 0 };
    add_redraw_command(&redraw, gnuplot_program(), figure, data, script, style, vars);
    if (!redraw.chars) return fail(STATUS_OUT_OF_MEMORY, "figure_draw(%s): out of host memory", figure);

    output_file o;
    s = output_begin(&o, figure);
    if (s == STATUS_OK) {
        fclose(o.stream); /* gnuplot writes the file, by its name */
        o.stream = NULL;
        bool missing = false;
        s = draw_into(&o, figure, data, script, style, vars, redraw.chars, &missing);
        if (s != STATUS_OK || missing) {
            output_discard(&o);
            if (missing) warn_not_drawn(figure, data, gnuplot_program(), redraw.chars);
        } else {
            s = output_commit(&o);
            if (s == STATUS_OK) printf("plot: %s (redraw: %s)\n", figure, redraw.chars);
        }
    }
    free(redraw.chars);
    return s;
}
