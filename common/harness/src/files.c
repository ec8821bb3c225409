/* files.c: inputs opened without blocking, outputs written whole or not at all.
 *
 * Inputs. open() on a FIFO blocks until a writer appears, which may be never; on
 * some devices it has effects of its own. So the path is looked at first (stat),
 * opened only if it is a regular file, with O_NONBLOCK in case it was swapped
 * for a FIFO meanwhile, and looked at again through the open descriptor (fstat)
 * before O_NONBLOCK is cleared for ordinary reads.
 *
 * Outputs. A path given on the command line may name anything: /dev/null, a
 * FIFO, a directory, a symbolic link to a terminal. Writing "over" such a thing
 * by creating a file and renaming it there would delete or replace what is not
 * ours, so only an absent path or an existing regular file is accepted, and
 * output_check says so before any work starts. The data goes to a temporary file
 * in the same directory, with a short name (mkstemp's ".labkit-XXXXXX"), so that
 * a destination name near the file system's limit still works, and the final
 * rename stays within one file system and is atomic: a reader sees the old file
 * or the whole new one. Every failure path removes the temporary file. */
#include "labkit/files.h"

#include "file_kind.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- what a path is ------------------------------------------------------------ */

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The directory part of `path`, in a new string: "." when there is none, "/"
 * for a file at the root. NULL when out of memory. */
static char *dir_of(const char *path)
{
    const char *base = base_of(path);
    if (base == path) return strdup(".");
    size_t length = (size_t)(base - path - 1);
    if (length == 0) return strdup("/");
    return strndup(path, length);
}

bool output_is_stdout(const char *path) { return path && strcmp(path, "-") == 0; }

/* ---- inputs ---------------------------------------------------------------------- */

static status not_a_regular_file(const char *path, mode_t mode)
{
    return fail(STATUS_IO_FAILED, "%s is %s, not a regular file; give the path of the file itself", path,
                file_kind(mode));
}

/* Opens a regular file without blocking; returns the descriptor or -1 (with
 * the failure recorded). */
static int open_regular(const char *path, struct stat *info)
{
    if (stat(path, info) != 0) {
        fail(STATUS_IO_FAILED, "%s: cannot open it: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(info->st_mode)) {
        not_a_regular_file(path, info->st_mode);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        fail(STATUS_IO_FAILED, "%s: cannot open it: %s", path, strerror(errno));
        return -1;
    }
    /* Looked at again through the descriptor: the path may have been replaced
     * between stat and open. */
    if (fstat(fd, info) != 0 || !S_ISREG(info->st_mode)) {
        not_a_regular_file(path, info->st_mode);
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1) {
        fail(STATUS_IO_FAILED, "%s: cannot set it up for reading: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

status input_open(const char *path, FILE **out, int64_t *size)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "input_open: out is NULL; pass the address of a FILE *");
    *out = NULL;
    if (!path || !path[0])
        return fail(STATUS_BAD_ARGUMENT, "input_open: the path is %s; give a file's path",
                    path ? "empty" : "NULL");
    struct stat info;
    int fd = open_regular(path, &info);
    if (fd < 0) return STATUS_IO_FAILED;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return fail(STATUS_IO_FAILED, "%s: cannot open it: %s", path, strerror(errno));
    }
    *out = f;
    if (size) *size = (int64_t)info.st_size;
    return STATUS_OK;
}

/* ---- checking an output path -------------------------------------------------------- */

/* "--csv out.csv" or "cannot write out.csv": how a message names the output. */
static void output_name(const char *path, const char *flag, char *buffer, size_t size)
{
    if (flag)
        snprintf(buffer, size, "%s %s", flag, path);
    else
        snprintf(buffer, size, "cannot write %s", path);
}

/* The directory must exist, be a directory, and let us create files in it. */
static status check_directory(const char *path, const char *name)
{
    char *dir = dir_of(path);
    if (!dir) return fail(STATUS_OUT_OF_MEMORY, "%s: out of host memory", name);
    struct stat info;
    status s = STATUS_OK;
    if (stat(dir, &info) != 0)
        s = fail(STATUS_IO_FAILED, "%s: its directory %s cannot be used: %s; create it first (mkdir -p %s)",
                 name, dir, strerror(errno), dir);
    else if (!S_ISDIR(info.st_mode))
        s = fail(STATUS_IO_FAILED, "%s: %s is %s, not a directory", name, dir, file_kind(info.st_mode));
    else if (access(dir, W_OK | X_OK) != 0) /* EROFS too, even for root */
        s = fail(STATUS_IO_FAILED, "%s: cannot create files in the directory %s: %s; choose another place",
                 name, dir, strerror(errno));
    free(dir);
    return s;
}

/* The path itself: absent, or a regular file (which will be replaced whole). */
static status check_final_component(const char *path, const char *name)
{
    struct stat info;
    if (lstat(path, &info) != 0) {
        if (errno == ENOENT) return STATUS_OK;
        return fail(STATUS_IO_FAILED, "%s: cannot look at it: %s", name, strerror(errno));
    }
    if (S_ISREG(info.st_mode)) return STATUS_OK;
    if (S_ISLNK(info.st_mode)) {
        char target[256] = "";
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        return fail(STATUS_BAD_ARGUMENT,
                    "%s: is a symbolic link (to %s); give the file itself, not a link (nothing was written)",
                    name, target[0] ? target : "?");
    }
    return fail(STATUS_BAD_ARGUMENT,
                "%s: is %s, not a regular file; it is never replaced: give a new file name or an existing "
                "regular file (nothing was written)",
                name, file_kind(info.st_mode));
}

status output_check(const char *path, const char *flag)
{
    if (!path || !path[0])
        return fail(STATUS_BAD_ARGUMENT, "%s: the path is %s; give a file name", flag ? flag : "output_check",
                    path ? "empty" : "NULL");
    if (output_is_stdout(path)) return STATUS_OK;
    char name[PATH_MAX + 64];
    output_name(path, flag, name, sizeof name);
    const char *base = base_of(path);
    if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return fail(STATUS_BAD_ARGUMENT, "%s: names a directory; give a file name", name);
    size_t length = strlen(base);
    if (length > NAME_MAX)
        return fail(STATUS_BAD_ARGUMENT, "%s: the file name is %zu characters long; at most %d are allowed",
                    name, length, NAME_MAX);
    status s = check_directory(path, name);
    if (s != STATUS_OK) return s;
    return check_final_component(path, name);
}

/* ---- writing an output --------------------------------------------------------- */

static void output_free(output_file *o)
{
    free(o->path);
    free(o->temp_path);
    *o = (output_file){ 0 };
}

/* The mode a new file gets from the umask, as fopen would give it (mkstemp
 * makes its files private, 0600, which a figure for slides should not be). */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* "<dir>/.labkit-XXXXXX", created. Returns its descriptor, or -1. */
static int make_temp(const char *path, char **temp_path)
{
    char *dir = dir_of(path);
    size_t size = (dir ? strlen(dir) : 0) + sizeof "/.labkit-XXXXXX";
    *temp_path = dir ? malloc(size) : NULL;
    if (!*temp_path) {
        free(dir);
        errno = ENOMEM;
        return -1;
    }
    snprintf(*temp_path, size, "%s/.labkit-XXXXXX", dir);
    free(dir);
    int fd = mkostemp(*temp_path, O_CLOEXEC);
    if (fd >= 0) fchmod(fd, new_file_mode());
    return fd;
}

status output_begin(output_file *out, const char *path)
{
    if (!out)
        return fail(STATUS_BAD_ARGUMENT, "output_begin: out is NULL; pass the address of an output_file");
    *out = (output_file){ 0 };
    status s = output_check(path, NULL);
    if (s != STATUS_OK) return s;
    out->path = strdup(path);
    if (!out->path) return fail(STATUS_OUT_OF_MEMORY, "output_begin(%s): out of host memory", path);
    if (output_is_stdout(path)) return STATUS_OK;

    int fd = make_temp(path, &out->temp_path);
    if (fd < 0) {
        s = fail(STATUS_IO_FAILED, "cannot write %s: creating a temporary file beside it failed: %s", path,
                 strerror(errno));
        output_free(out);
        return s;
    }
    out->stream = fdopen(fd, "w");
    if (!out->stream) {
        s = fail(STATUS_IO_FAILED, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(out->temp_path);
        output_free(out);
    }
    return s;
}

/* Flushes, syncs and closes the stream; the reason it failed, or NULL. A write
 * that failed earlier (a full disk) leaves the stream's error flag set. */
static const char *close_stream(FILE *stream)
{
    const char *why = NULL;
    if (fflush(stream) != 0)
        why = strerror(errno);
    else if (ferror(stream))
        why = "an earlier write failed (is the disk full?)";
    else if (fsync(fileno(stream)) != 0 && errno != EINVAL) /* EINVAL: a file system without fsync */
        why = strerror(errno);
    if (fclose(stream) != 0 && !why) why = strerror(errno);
    return why;
}

static status commit_stdout(output_file *o)
{
    FILE *out = output_stdout();
    status s = STATUS_OK;
    if (fflush(out) != 0 || ferror(out))
        s = fail(STATUS_IO_FAILED, "writing to standard output failed: %s", strerror(errno));
    output_free(o);
    return s;
}

status output_commit(output_file *o)
{
    if (!o || !o->path)
        return fail(STATUS_BAD_ARGUMENT, "output_commit: nothing to commit; call output_begin");
    if (!o->temp_path) return commit_stdout(o);

    const char *why = NULL;
    if (o->stream) why = close_stream(o->stream);
    o->stream = NULL;
    /* Checked again: what was a regular file (or nothing) at the start may have
     * become something that must not be replaced. */
    struct stat info;
    char changed[96];
    if (!why && lstat(o->path, &info) == 0 && !S_ISREG(info.st_mode)) {
        snprintf(changed, sizeof changed, "it became %s meanwhile, which is never replaced",
                 file_kind(info.st_mode));
        why = changed;
    }
    if (!why && rename(o->temp_path, o->path) != 0) why = strerror(errno);
    status s = STATUS_OK;
    if (why) {
        unlink(o->temp_path);
        s = fail(STATUS_IO_FAILED, "cannot write %s: %s; the partial file was removed and %s left as it was",
                 o->path, why, o->path);
    }
    output_free(o);
    return s;
}

void output_discard(output_file *o)
{
    if (!o) return;
    if (o->stream) fclose(o->stream);
    if (o->temp_path) unlink(o->temp_path);
    output_free(o);
}

/* ---- standard output for the data ------------------------------------------------------- */

/* The real standard output, kept for the data once the rest goes to stderr. */
static FILE *data_stdout;

status output_claim_stdout(void)
{
    if (data_stdout) return STATUS_OK;
    fflush(stdout);
    int kept = dup(STDOUT_FILENO);
    FILE *stream = kept >= 0 ? fdopen(kept, "w") : NULL;
    if (!stream || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        status s = fail(STATUS_IO_FAILED, "cannot keep standard output for the data: %s", strerror(errno));
        if (stream)
            fclose(stream);
        else if (kept >= 0)
            close(kept);
        return s;
    }
    /* stdout now shares stderr's terminal or file: line by line keeps the two in order. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    data_stdout = stream;
    return STATUS_OK;
}

FILE *output_stdout(void) { return data_stdout ? data_stdout : stdout; }
