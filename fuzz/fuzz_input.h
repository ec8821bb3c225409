/* fuzz_input.h: what the fuzz targets share: the bytes of an input made into
 * a file the readers open by path, without touching the disk.
 *
 * A target is one function, LLVMFuzzerTestOneInput, built two ways: by clang
 * with libFuzzer (fuzz/CMakeLists.txt, ./lab fuzz), and by the kit's own
 * compiler with replay.c, which runs every seed and every crash ever found
 * through it in the unit tests (fuzz/tests.cmake). */
#ifndef LABKIT_FUZZ_INPUT_H
#define LABKIT_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A file in memory (memfd) holding `size` bytes of `data`; its path, through
 * /proc, in `path`. Made once per name and rewritten for each input. */
typedef struct fuzz_file {
    int fd;
    char path[64];
} fuzz_file;

static inline void fuzz_file_write(fuzz_file *f, const char *name, const uint8_t *data, size_t size)
{
    if (f->path[0] == '\0') {
        f->fd = memfd_create(name, MFD_CLOEXEC);
        if (f->fd < 0) {
            perror("fuzz: memfd_create");
            abort();
        }
        snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    }
    if (ftruncate(f->fd, 0) != 0 || (size > 0 && pwrite(f->fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz: writing the input's file");
        abort();
    }
}

#endif
