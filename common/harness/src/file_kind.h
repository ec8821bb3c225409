/* file_kind.h: what a path is, in words, for a message that refuses it ("is a
 * directory"). */
#ifndef LABKIT_FILE_KIND_H
#define LABKIT_FILE_KIND_H

#include <sys/types.h>

/* "a regular file", "a directory", "a FIFO (named pipe)", "a socket", "a
 * character device", "a block device", "a symbolic link" (from lstat) or "not
 * a regular file", from a struct stat's st_mode. */
const char *file_kind(mode_t mode);

#endif
