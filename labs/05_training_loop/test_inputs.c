/* test_inputs.c: lab 05's given code against bad inputs, on its own (not the
 * student's work; the test suite runs it as 05_training_loop.unit.inputs).
 *
 *   - the IDX reader: a good pair reads back; truncated, wrong-magic, too-long
 *     and bad-label files are refused; a FIFO, a directory and a link to a
 *     character device are refused at once, without waiting or reading; a
 *     3 GiB file whose header announces a few images is refused after reading
 *     its header alone (the bytes read are counted in /proc/self/io);
 *   - the sizing of a network: the bytes a network needs, exactly; a network
 *     too large for a device refused before anything is drawn on the host,
 *     naming the device; the limits of --layers;
 *   - the operation count behind the progress estimate, exactly, and the
 *     estimate itself: an absurd network long, the default one short.
 * Everything happens in a scratch directory under /tmp, removed at the end. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data.h"
#include "train.h"

static char scratch[] = "/tmp/test05-XXXXXX";

static void path_in(char *out, size_t size, const char *name) { snprintf(out, size, "%s/%s", scratch, name); }

/* Bytes this process has read so far (rchar of /proc/self/io); -1 where it is unknown. */
static long long bytes_read(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long long value = -1;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %lld", &value) == 1) break;
    if (f) fclose(f);
    return value;
}

static long peak_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/* Loads the pair and expects a refusal whose message names `bad_file` and says `what`. */
static bool refused(const char *images, const char *labels, const char *bad_file, const char *what,
                    char *message, size_t size)
{
    dataset d;
    clear_error();
    alarm(20); /* a reader that waits on a FIFO would hang here: the alarm ends the test instead */
    const status s = dataset_load_idx(&d, images, labels);
    alarm(0);
    snprintf(message, size, "%s", last_error());
    if (s == STATUS_OK) dataset_free(&d);
    return s == STATUS_IO_FAILED && strstr(message, what) && strstr(message, bad_file);
}

static void poke_byte(const char *path, long at, unsigned char value)
{
    FILE *f = fopen(path, "r+b");
    if (!f || fseek(f, at, SEEK_SET) != 0 || fputc(value, f) == EOF) exit(CHECK_FAILS);
    fclose(f);
}

static void set_length(const char *path, long long length)
{
    if (truncate(path, (off_t)length) != 0) exit(CHECK_FAILS);
}

static void check_idx_files(const dataset *good, const char *images, const char *labels)
{
    dataset back;
    CHECK(dataset_write_idx(good, images, labels));
    CHECK(dataset_load_idx(&back, images, labels));
    double worst = 0.0;
    for (int64_t i = 0; i < good->count * dataset_pixels(good); ++i) {
        const double e = good->images[i] > back.images[i] ? good->images[i] - back.images[i]
                                                          : back.images[i] - good->images[i];
        worst = e > worst ? e : worst;
    }
    const bool same_labels = memcmp(good->labels, back.labels, sizeof(int32_t) * (size_t)good->count) == 0;
    check_that(back.count == 5 && back.rows == 28 && back.cols == 28 && same_labels &&
                   worst <= 0.5 / 255 + 1e-6,
               "IDX: a good file pair reads back", "%lld images of %lldx%lld, labels %s, pixels within %.4f",
               (long long)back.count, (long long)back.rows, (long long)back.cols,
               same_labels ? "equal" : "DIFFER", worst);
    dataset_free(&back);

    char m[4][512];
    set_length(images, 16 + 5 * 784 - 100);
    const bool truncated = refused(images, labels, images, "truncated", m[0], sizeof m[0]);
    CHECK(dataset_write_idx(good, images, labels));
    poke_byte(images, 3, 0x01); /* 0x00000801: a labels file where images are expected */
    const bool magic = refused(images, labels, images, "wrong magic", m[1], sizeof m[1]);
    CHECK(dataset_write_idx(good, images, labels));
    set_length(labels, 8 + 5 + 3);
    const bool size = refused(images, labels, labels, "wrong size", m[2], sizeof m[2]);
    CHECK(dataset_write_idx(good, images, labels));
    poke_byte(labels, 8 + 2, 42);
    const bool label = refused(images, labels, labels, "labels must be 0 to 9", m[3], sizeof m[3]);
    check_that(truncated, "IDX: a truncated images file is refused", "%s", m[0]);
    check_that(magic, "IDX: a wrong magic number is refused", "%s", m[1]);
    check_that(size, "IDX: a file longer than its header says is refused", "%s", m[2]);
    check_that(label, "IDX: a label out of range is refused", "%s", m[3]);
    CHECK(dataset_write_idx(good, images, labels));
}

/* Things that are not regular files where a file is expected: refused at once. */
static void check_special_files(const char *images, const char *labels)
{
    char fifo[256], dir[256], zero[256], m[4][512];
    path_in(fifo, sizeof fifo, "fifo");
    path_in(dir, sizeof dir, "a-directory");
    path_in(zero, sizeof zero, "zero-link");
    if (mkfifo(fifo, 0600) != 0 || mkdir(dir, 0700) != 0 || symlink("/dev/zero", zero) != 0) {
        perror("test05_inputs: mkfifo, mkdir or symlink in the scratch directory");
        exit(CHECK_FAILS);
    }
    const bool fifo_images = refused(fifo, labels, fifo, "FIFO", m[0], sizeof m[0]);
    const bool fifo_labels = refused(images, fifo, fifo, "FIFO", m[1], sizeof m[1]);
    const bool directory = refused(dir, labels, dir, "directory", m[2], sizeof m[2]);
    const long long before = bytes_read();
    const bool device = refused(zero, labels, zero, "character device", m[3], sizeof m[3]);
    const long long read = bytes_read() - before;
    check_that(fifo_images && fifo_labels,
               "IDX: a FIFO in place of either file is refused at once, never waited on",
               "images: %s; labels: %s", m[0], m[1]);
    check_that(directory, "IDX: a directory in place of a file is refused, saying so", "%s", m[2]);
    check_that(device && (before < 0 || read < 65536),
               "IDX: a link to a device (/dev/zero) is refused without reading it", "%s (%lld bytes read)",
               m[3], before < 0 ? -1LL : read);
    remove(fifo), rmdir(dir), remove(zero);
}

/* A 3 GiB file (sparse: no disk used) whose header announces 5 images. */
static void check_lying_size(const dataset *good, const char *images, const char *labels)
{
    char m[512];
    set_length(images, 3LL << 30);
    const long long before = bytes_read();
    const long peak = peak_kib();
    const double start = wall_seconds();
    const bool refused_it = refused(images, labels, images, "wrong size", m, sizeof m);
    const double seconds = wall_seconds() - start;
    const long long read = bytes_read() - before;
    const long grew = peak_kib() - peak;
    check_that(refused_it && (before < 0 || read < 65536) && grew < 16384,
               "IDX: a 3 GiB file whose header announces 5 images is refused after reading its header alone",
               "%s; %lld bytes read, peak memory +%ld KiB, %.2f s", m, before < 0 ? -1LL : read, grew,
               seconds);
    CHECK(dataset_write_idx(good, images, labels));
}

static void check_sizing(void)
{
    /* 4-3-2 at batch 5: 23 parameters, 3 x 4 x 23 = 276 bytes; a row of the batch is 4 pixels, a label, the
     * outputs and gradients of both layers (2 x 5) and 2 probabilities: 17 values; 3 batches of
     * 4 x (5 x 17 + 2) bytes in each of the 2 sets. */
    const int64_t tiny[] = { 4, 3, 2 };
    const uint64_t bytes = mlp_device_bytes(tiny, 3, 5);
    const double flops = epoch_flops(tiny, 3, 10);
    check_that(
        bytes == 276 + 2 * 3 * 348 && flops == 840.0,
        "sizing: the bytes and the products' operations of a network, exactly",
        "4-3-2: %llu bytes at batch 5 (2364 expected), %.0f FLOP for an epoch of 10 images (840 expected: "
        "6 x 18 per image, less 2 x 12 for the first layer's input gradient)",
        (unsigned long long)bytes, flops);

    const device sim = { DEVICE_SIM, 0 };
    const int64_t huge[] = { 784, 50000, 50000, 10 };
    device_counters c;
    trainer t;
    CHECK(counters_reset(sim));
    const long peak = peak_kib();
    const double start = wall_seconds();
    const status s = trainer_create(&t, sim, huge, 4, &(train_settings){ 128, 0.05f, 0.9f, 1 });
    const double seconds = wall_seconds() - start;
    char message[512];
    snprintf(message, sizeof message, "%s", last_error());
    CHECK(counters_read(sim, &c));
    check_that(
        s == STATUS_OUT_OF_MEMORY && strstr(message, "sim:0") && c.memory_peak == c.memory_current &&
            peak_kib() - peak < 16384,
        "sizing: a network too large for the device is refused before anything is allocated or drawn",
        "784-50000-50000-10 on sim:0 (LABKIT_SIM_MEMORY=%s): %s; %.3f s, %zu bytes more taken on sim:0, host "
        "peak +%ld KiB",
        getenv("LABKIT_SIM_MEMORY") ? getenv("LABKIT_SIM_MEMORY") : "default", message, seconds,
        c.memory_peak - c.memory_current, peak_kib() - peak);

    const int64_t wider[] = { 784, 100000, 100000, 100000, 10 };
    const status on_cpu = mlp_check_fits(device_cpu(), wider, 5, 128);
    snprintf(message, sizeof message, "%s", last_error());
    check_that(on_cpu == STATUS_OUT_OF_MEMORY && strstr(message, "on cpu"),
               "sizing: the cpu's memory is the limit on the cpu", "784-100000-100000-100000-10: %s",
               message);

    /* A run estimated over a minute says so at its start (progress.h): the estimate must see an absurd
     * network as long, and the default one as short, whatever the cpu. */
    const int64_t usual[] = { 784, 256, 256, 10 }, absurd[] = { 784, 100000, 100000, 10 };
    const double quick = estimate_epoch_seconds(device_cpu(), usual, 4, 12000, 128);
    const double slow = estimate_epoch_seconds(device_cpu(), absurd, 4, 12000, 128);
    check_that(quick > 0 && quick < 10 && slow > PROGRESS_LONG_SECONDS,
               "progress: one epoch of an absurd network is estimated long, one of the default network short",
               "on the cpu, 12000 images: 784-256-256-10 %.2f s (under 10 s expected), 784-100000-100000-10 "
               "%.0f s (over %.0f s expected: the run says so at its start)",
               quick, slow, PROGRESS_LONG_SECONDS);

    int64_t sizes[MLP_MAX_LAYERS + 1];
    int n = 0;
    const char *bad[] = { "784,100001,10", "784,8,8,8,8,8,8,8,8,10", "100,256,10", "784,256,9", "784,,10" };
    int refusals = 0;
    for (int i = 0; i < 5; ++i)
        refusals += mlp_parse_sizes(bad[i], 784, 10, sizes, MLP_MAX_LAYERS + 1, &n) != 0;
    const bool good = mlp_parse_sizes("784,100000,10", 784, 10, sizes, MLP_MAX_LAYERS + 1, &n) == STATUS_OK &&
                      n == 3 && sizes[1] == MLP_MAX_WIDTH;
    check_that(
        refusals == 5 && good, "--layers: 2 to 9 sizes of 1 to 100000, 784 first and 10 last",
        "%d of 5 bad lists refused (a size over 100000, 10 sizes, a first size not 784, a last not 10, "
        "an empty size); 784,100000,10 %s",
        refusals, good ? "accepted" : "REFUSED");
}

int main(void)
{
    if (devices_init() != STATUS_OK) { /* a LABKIT_SIM_* setting that cannot be honoured */
        fprintf(stderr, "test05_inputs: %s\n", last_error());
        return 2;
    }
    if (!mkdtemp(scratch)) {
        perror("test05_inputs: mkdtemp");
        return CHECK_FAILS;
    }
    char images[256], labels[256];
    path_in(images, sizeof images, "train-images-idx3-ubyte");
    path_in(labels, sizeof labels, "train-labels-idx1-ubyte");
    dataset good;
    CHECK(dataset_synthetic(&good, 5, 3));
    check_idx_files(&good, images, labels);
    check_special_files(images, labels);
    check_lying_size(&good, images, labels);
    remove(images), remove(labels), rmdir(scratch);
    dataset_free(&good);
    if (device_exists((device){ DEVICE_SIM, 0 }))
        check_sizing();
    else
        printf("  (sizing skipped: no sim:0; LABKIT_SIM_GPUS=1 runs it)\n");
    return check_finish("05_training_loop inputs");
}
