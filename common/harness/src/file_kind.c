/* file_kind.c: the kinds of file POSIX knows, named for messages. */
#define _POSIX_C_SOURCE 200809L /* S_ISSOCK and S_ISLNK are POSIX, not C17 */

#include "file_kind.h"

#include <sys/stat.h>

const char *file_kind(mode_t mode)
{
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}
