/* test_files.h: the file helpers of the input and output tests (test_csv,
 * test_plot, test_cli): read back what a call wrote, look at and clear a scratch
 * directory, and capture what a call prints.
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

#endif
