/* test_files.h: the file helpers of the input and output tests (test_results,
 * test_cli, test_file_safety, ...): read back what a call wrote, look at and
 * clear a scratch directory, capture what a call prints, and run a call in a
 * child process that may change its standard streams for good.
 *
 * POSIX, not C17: define _POSIX_C_SOURCE 200809L before the first #include. */
#ifndef LABKIT_TESTS_TEST_FILES_H
#define LABKIT_TESTS_TEST_FILES_H

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#error "define _POSIX_C_SOURCE 200809L before including test_files.h"
#endif

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Reads up to capacity - 1 bytes of a file into buffer, NUL-terminated; -1 if it cannot. */
static inline long read_file(const char *path, char *buffer, size_t capacity)
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

/* Whether something (a file, a directory) exists at path. */
static inline bool file_exists(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0;
}

/* The size of the file at path in bytes; -1 if there is none. */
static inline long file_size(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 ? (long)info.st_size : -1;
}

/* How many entries dir holds, "." and ".." aside; -1 if it cannot be read. */
static inline int count_entries(const char *dir)
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

/* Removes dir and everything under it (a symbolic link is removed, not followed). */
static inline void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            char path[PATH_MAX];
            if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) {
                continue; /* too long a name to be one of the tests' own */
            }
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

/* A file descriptor sent to a temporary file between capture_begin and capture_end. */
typedef struct capture {
    int fd;
    int saved_fd;
    FILE *file;
} capture;

/* Sends fd (STDOUT_FILENO or STDERR_FILENO) to a fresh temporary file. */
static inline void capture_begin(capture *c, int fd)
{
    fflush(fd == STDOUT_FILENO ? stdout : stderr);
    c->fd = fd;
    c->file = tmpfile();
    c->saved_fd = dup(fd);
    if (c->file != NULL) {
        dup2(fileno(c->file), fd);
    }
}

/* Gives fd back and copies what it printed into text (NUL-terminated, "" if nothing). */
static inline void capture_end(capture *c, char *text, size_t capacity)
{
    fflush(c->fd == STDOUT_FILENO ? stdout : stderr);
    dup2(c->saved_fd, c->fd);
    close(c->saved_fd);
    text[0] = '\0';
    if (c->file != NULL) {
        rewind(c->file);
        size_t n = fread(text, 1, capacity - 1, c->file);
        text[n] = '\0';
        fclose(c->file);
    }
}

/* Runs child() in a forked process, whose standard output and error go to
 * pipes read into out and err (NUL-terminated, up to capacity - 1 bytes each:
 * enough for the few lines a test prints); child ends with _exit. Returns the
 * child's wait status, or -1 when it could not start. */
static inline int run_in_child(void (*child)(void), char *out, char *err, size_t capacity)
{
    int out_pipe[2], err_pipe[2];
    out[0] = err[0] = '\0';
    if (pipe(out_pipe) != 0) return -1;
    if (pipe(err_pipe) != 0) {
        close(out_pipe[0]), close(out_pipe[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        close(out_pipe[0]), close(err_pipe[0]), close(out_pipe[1]), close(err_pipe[1]);
        child();
        _exit(99); /* child() should not return */
    }
    close(out_pipe[1]), close(err_pipe[1]);
    ssize_t n = pid > 0 ? read(out_pipe[0], out, capacity - 1) : 0;
    out[n > 0 ? n : 0] = '\0';
    n = pid > 0 ? read(err_pipe[0], err, capacity - 1) : 0;
    err[n > 0 ? n : 0] = '\0';
    close(out_pipe[0]), close(err_pipe[0]);
    int wait_status = -1;
    if (pid > 0) waitpid(pid, &wait_status, 0);
    return wait_status;
}

#endif
