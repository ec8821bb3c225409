/* replay.c: a fuzz target's function run on given inputs, without libFuzzer:
 * every file named, or every file in each directory named, once. The unit
 * tests run each target's seeds and every crash ever found (fuzz/<target>/seeds
 * and crashes/) through the kit's ordinary build of the target this way. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_input.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    static uint8_t data[1 << 20];
    const size_t size = fread(data, 1, sizeof data, f);
    const int too_long = !feof(f);
    fclose(f);
    if (too_long) {
        fprintf(stderr, "%s: longer than the %zu bytes a replayed input may have\n", path, sizeof data);
        return 1;
    }
    /* A copy of exactly its size, as libFuzzer gives: a read past its end shows. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 1;
    memcpy(copy, data, size);
    LLVMFuzzerTestOneInput(copy, size);
    free(copy);
    return 0;
}

int main(int argc, char **argv)
{
    int inputs = 0, failed = 0;
    for (int i = 1; i < argc; ++i) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed += replay_file(argv[i]), inputs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 2;
        }
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            failed += replay_file(path), inputs++;
        }
        closedir(d);
    }
    printf("%s: %d inputs replayed, %d unreadable\n", argc > 0 ? argv[0] : "replay", inputs, failed);
    return failed ? 1 : 0;
}
