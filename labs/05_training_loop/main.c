/* Lab 05: a training loop on a device, with its log kept on the device.
 *
 * Trains a small MLP (default 784-256-256-10, ReLU, softmax cross-entropy, SGD
 * with momentum) for a few epochs on each device present (the CPU and every GPU,
 * real or simulated; --device picks one), on built-in synthetic digits or on
 * MNIST (--data DIR). Every device trains twice from the same seed, once per
 * way of logging the loss:
 *   item every step   the host reads each step's loss: one blocking read per step
 *   on-device         each step adds its loss to a sum on the device; one read per epoch
 * and prints, per epoch, the loss, the held-out accuracy, the time of each style
 * and the blocking device-to-host reads each one made (counted by the library),
 * then how often the host ran two steps ahead of the device: the batches go up
 * by queued copies from two pinned staging buffers (train.c), so only a read
 * every step holds the host back.
 *
 *   ./lab run 05                                   every device, synthetic digits
 *   LABKIT_SIM_GPUS=2 ./lab run 05 -- --device sim:0 --epochs 3
 *   ./lab run 05 -- --data ~/mnist --plot loss.png
 */
#include <stdio.h>
#include <string.h>

#include "data.h"
#include "lab.h"
#include "train.h"

#define MAX_EPOCHS 50
#define STYLES 2

typedef struct options {
    const char *layers, *data_dir;
    int epochs, batch, samples, seed;
    double lr, momentum;
} options;

/* What one device did: per style and epoch. */
typedef struct device_run {
    device dev;
    epoch_result epochs[STYLES][MAX_EPOCHS];
    double accuracy[STYLES][MAX_EPOCHS];
} device_run;

static void load_data(const options *o, bool quick, dataset *train, dataset *test)
{
    if (o->data_dir) {
        dataset all;
        CHECK(dataset_load_mnist_dir(o->data_dir, &all, test));
        const int64_t n = o->samples > 0 && o->samples < all.count ? o->samples : all.count;
        CHECK(dataset_head(&all, n, train));
        dataset_free(&all);
        return;
    }
    const int64_t n = o->samples > 0 ? o->samples : quick ? 3000 : 12000;
    CHECK(dataset_synthetic(train, n, (uint64_t)o->seed));
    CHECK(dataset_synthetic(test, n / 4 > 500 ? n / 4 : 500, (uint64_t)o->seed + 1000)); /* held out */
}

/* Trains a fresh network (same seed) with one logging style, all epochs. */
static void run_style(const options *o, const int64_t *sizes, int nsizes, const dataset *train,
                      const dataset *test, log_style style, device_run *run)
{
    const train_settings settings = { o->batch, (float)o->lr, (float)o->momentum, (uint64_t)o->seed };
    trainer t;
    CHECK(trainer_create(&t, run->dev, sizes, nsizes, &settings));
    for (int e = 0; e < o->epochs; ++e) {
        CHECK(train_epoch(&t, train, e, style, &run->epochs[style][e]));
        CHECK(evaluate(&t, test, &run->accuracy[style][e]));
    }
    trainer_free(&t);
}

static void print_run(const options *o, const device_run *run)
{
    for (int e = 0; e < o->epochs; ++e) {
        const epoch_result *item = &run->epochs[LOG_EVERY_STEP][e], *dev = &run->epochs[LOG_ON_DEVICE][e];
        printf("%-7s %5d %8.4f %9.1f%%   %9.3f s %9.3f s   %7llu %7llu\n", device_name(run->dev), e + 1,
               dev->loss, 100.0 * run->accuracy[LOG_ON_DEVICE][e], item->seconds, dev->seconds,
               (unsigned long long)item->counters.d2h_copies, (unsigned long long)dev->counters.d2h_copies);
    }
}

/* Median epoch time of one style (epochs after the first, which warms up). */
static double typical_seconds(const options *o, const device_run *run, log_style style)
{
    double t[MAX_EPOCHS];
    const int first = o->epochs > 1 ? 1 : 0;
    for (int e = first; e < o->epochs; ++e) t[e - first] = run->epochs[style][e].seconds;
    return median_of(t, (size_t)(o->epochs - first));
}

/* Both styles trained the same network from the same seed: their losses must agree. */
static double style_disagreement(const options *o, const device_run *run)
{
    double worst = 0.0;
    for (int e = 0; e < o->epochs; ++e) {
        const double a = run->epochs[LOG_ON_DEVICE][e].loss, b = run->epochs[LOG_EVERY_STEP][e].loss;
        const double rel = (a > b ? a - b : b - a) / (b > 0 ? b : 1.0);
        if (rel > worst) worst = rel;
    }
    return worst;
}

static void write_csv(const char *path, const options *o, const device_run *runs, int nruns)
{
    const char *columns[] = { "device",  "style",      "epoch", "loss",        "heldout_accuracy",
                              "seconds", "d2h_copies", "syncs", "buffer_waits" };
    csv_file *f;
    CHECK(csv_open(&f, path, columns, 9));
    for (int r = 0; r < nruns; ++r)
        for (int s = 0; s < STYLES; ++s)
            for (int e = 0; e < o->epochs; ++e) {
                const epoch_result *x = &runs[r].epochs[s][e];
                char epoch[16], loss[32], acc[32], sec[32], d2h[32], syncs[32], waits[32];
                snprintf(epoch, sizeof epoch, "%d", e + 1);
                snprintf(loss, sizeof loss, "%.6f", x->loss);
                snprintf(acc, sizeof acc, "%.4f", runs[r].accuracy[s][e]);
                snprintf(sec, sizeof sec, "%.4f", x->seconds);
                snprintf(d2h, sizeof d2h, "%llu", (unsigned long long)x->counters.d2h_copies);
                snprintf(syncs, sizeof syncs, "%llu", (unsigned long long)x->counters.syncs);
                snprintf(waits, sizeof waits, "%lld", (long long)x->buffer_waits);
                const char *cells[] = { device_name(runs[r].dev),
                                        log_style_name((log_style)s),
                                        epoch,
                                        loss,
                                        acc,
                                        sec,
                                        d2h,
                                        syncs,
                                        waits };
                CHECK(csv_row_text(f, cells, 9));
            }
    CHECK(csv_close(f));
}

/* "plots/fig.png" -> "plots/fig-time.png" */
static void time_plot_path(const char *path, char *out, size_t size)
{
    const char *dot = strrchr(path, '.');
    const int stem = (int)(dot ? dot - path : (ptrdiff_t)strlen(path));
    snprintf(out, size, "%.*s-time%s", stem, path, dot ? dot : "");
}

static void draw_plots(const char *path, const options *o, const char *what, const device_run *runs,
                       int nruns)
{
    static double x[MAX_EPOCHS], loss[LABKIT_MAX_DEVICES][MAX_EPOCHS], acc[LABKIT_MAX_DEVICES][MAX_EPOCHS];
    char titles[LABKIT_MAX_DEVICES][2][64], names[256] = "", title[512];
    plot p = { 0 };
    for (int e = 0; e < o->epochs; ++e) x[e] = e + 1;
    for (int r = 0; r < nruns && r < PLOT_MAX_SERIES / 2; ++r) {
        for (int e = 0; e < o->epochs; ++e) {
            loss[r][e] = runs[r].epochs[LOG_ON_DEVICE][e].loss;
            acc[r][e] = runs[r].accuracy[LOG_ON_DEVICE][e];
        }
        snprintf(titles[r][0], 64, "training loss, %s", device_name(runs[r].dev));
        snprintf(titles[r][1], 64, "held-out accuracy, %s", device_name(runs[r].dev));
        CHECK(plot_add(&p, titles[r][0], x, loss[r], (size_t)o->epochs, PLOT_LINES_POINTS));
        CHECK(plot_add(&p, titles[r][1], x, acc[r], (size_t)o->epochs, PLOT_DASHED));
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", r ? ", " : "",
                 device_name(runs[r].dev));
    }
    snprintf(title, sizeof title, "MLP %s, %s: loss and accuracy per epoch (%s)", o->layers, what, names);
    p.title = title, p.xlabel = "epoch", p.ylabel = "loss (solid) / accuracy, fraction (dashed)";
    CHECK(plot_draw(&p, path));

    /* Epoch time per device, one bar per logging style. */
    static double seconds[STYLES][LABKIT_MAX_DEVICES];
    const char *labels[LABKIT_MAX_DEVICES];
    plot q = { 0 };
    for (int r = 0; r < nruns; ++r) {
        labels[r] = device_name(runs[r].dev);
        for (int s = 0; s < STYLES; ++s) seconds[s][r] = typical_seconds(o, &runs[r], (log_style)s);
    }
    CHECK(plot_add(&q, "item every step (one read per step)", NULL, seconds[LOG_EVERY_STEP], (size_t)nruns,
                   PLOT_BARS));
    CHECK(plot_add(&q, "on-device log (one read per epoch)", NULL, seconds[LOG_ON_DEVICE], (size_t)nruns,
                   PLOT_BARS));
    char qtitle[512], qpath[4096];
    snprintf(qtitle, sizeof qtitle, "Epoch time by logging style, MLP %s, batch %d (%s)", o->layers, o->batch,
             names);
    q.title = qtitle, q.xlabel = "device", q.ylabel = "seconds per epoch (median)", q.bar_labels = labels;
    time_plot_path(path, qpath, sizeof qpath);
    CHECK(plot_draw(&q, qpath));
}

int main(int argc, char **argv)
{
    options o = { "784,256,256,10", NULL, 0, 128, 0, 1, 0.05, 0.9 };
    const cli_option extra[] = {
        { "layers", CLI_STRING, &o.layers, "N,N,...", "layer sizes, inputs first", 0, 0 },
        { "epochs", CLI_INT, &o.epochs, "N", "epochs per device and style (0: 5, or 2 with --quick)", 0,
          MAX_EPOCHS },
        { "batch", CLI_INT, &o.batch, "N", "rows per step", 1, 65536 },
        { "lr", CLI_DOUBLE, &o.lr, "X", "SGD learning rate", 1e-6, 10 },
        { "momentum", CLI_DOUBLE, &o.momentum, "X", "SGD momentum, 0 for none", 0, 0.999 },
        { "samples", CLI_INT, &o.samples, "N",
          "training images (0: synthetic 12000, --quick 3000; with --data, all)", 0, 10000000 },
        { "data", CLI_STRING, &o.data_dir, "DIR",
          "MNIST IDX files (train-images-idx3-ubyte, ...) instead of synthetic digits", 0, 0 },
        { "seed", CLI_INT, &o.seed, "N", "seed of the data, the initialisation and the shuffles", 0,
          1000000 },
    };
    const cli_program program = { "05_training_loop",
                                  "an MLP trained on every device, with its loss log kept on the device",
                                  extra, (int)(sizeof extra / sizeof extra[0]) };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;
    if (o.epochs == 0) o.epochs = args.quick ? 2 : 5;

    int64_t sizes[MLP_MAX_LAYERS + 1];
    int nsizes = 0;
    if (mlp_parse_sizes(o.layers, sizes, MLP_MAX_LAYERS + 1, &nsizes) != STATUS_OK) {
        fprintf(stderr, "%s\n(see --help)\n", last_error());
        return 2;
    }
    dataset train, test;
    load_data(&o, args.quick, &train, &test);
    if (sizes[0] != dataset_pixels(&train) || sizes[nsizes - 1] != DATA_CLASSES) {
        fprintf(
            stderr,
            "--layers %s: the first size must be the pixels per image (%lld) and the last the classes (%d)\n",
            o.layers, (long long)dataset_pixels(&train), DATA_CLASSES);
        dataset_free(&train), dataset_free(&test);
        return 2;
    }

    device devices[LABKIT_MAX_DEVICES];
    int ndevices = 1;
    if (args.device_given)
        devices[0] = args.dev;
    else
        ndevices = device_list(devices, LABKIT_MAX_DEVICES);
    static device_run runs[LABKIT_MAX_DEVICES];
    const char *what = o.data_dir ? "MNIST" : "synthetic digits";
    printf("MLP %s, batch %d, lr %g, momentum %g: %lld training and %lld held-out images (%s)\n\n", o.layers,
           o.batch, o.lr, o.momentum, (long long)train.count, (long long)test.count, what);
    printf("                                     seconds per epoch          d2h reads\n");
    printf("device  epoch     loss  held-out   item/step  on-device   item/step on-device\n");
    for (int r = 0; r < ndevices; ++r) {
        runs[r].dev = devices[r];
        run_style(&o, sizes, nsizes, &train, &test, LOG_EVERY_STEP, &runs[r]);
        run_style(&o, sizes, nsizes, &train, &test, LOG_ON_DEVICE, &runs[r]);
        print_run(&o, &runs[r]);
    }

    printf("\n");
    for (int r = 0; r < ndevices; ++r) {
        const double item = typical_seconds(&o, &runs[r], LOG_EVERY_STEP),
                     dev = typical_seconds(&o, &runs[r], LOG_ON_DEVICE);
        printf("%-7s median epoch: %.3f s item every step, %.3f s on-device (%.2fx); losses of the two "
               "styles agree "
               "within %.1e\n",
               device_name(runs[r].dev), item, dev, item / dev, style_disagreement(&o, &runs[r]));
        /* How far the host ran ahead: it waits for a staging buffer only two steps ahead of the device. */
        const epoch_result *last_dev = &runs[r].epochs[LOG_ON_DEVICE][o.epochs - 1];
        const epoch_result *last_item = &runs[r].epochs[LOG_EVERY_STEP][o.epochs - 1];
        printf("%-7s last epoch: the host was two steps ahead and waited for a staging buffer at %lld of "
               "%lld steps "
               "on-device, %lld with item every step\n",
               device_name(runs[r].dev), (long long)last_dev->buffer_waits, (long long)last_dev->steps,
               (long long)last_item->buffer_waits);
    }
    /* The takeaway speaks of the first GPU when there is one. */
    const device_run *shown = &runs[ndevices > 1 ? 1 : 0];
    const double ratio =
        typical_seconds(&o, shown, LOG_EVERY_STEP) / typical_seconds(&o, shown, LOG_ON_DEVICE);
    if (device_is_gpu(shown->dev))
        printf("takeaway: on %s the item-every-step log made %llu blocking device-to-host reads per epoch "
               "and the "
               "on-device log 1, for the same losses; the epoch took %.2fx as long with a read every step.\n",
               device_name(shown->dev),
               (unsigned long long)shown->epochs[LOG_EVERY_STEP][0].counters.d2h_copies, ratio);
    else
        printf("takeaway: on the cpu reading the loss is free (no bus, no queue), so both logs cost the same "
               "(%.2fx); on a GPU each of the %lld reads per epoch is a blocking device-to-host copy "
               "(try LABKIT_SIM_GPUS=2 ... --device sim:0).\n",
               ratio, (long long)shown->epochs[LOG_ON_DEVICE][0].steps);

    if (args.csv_path) write_csv(args.csv_path, &o, runs, ndevices);
    if (args.plot_path) draw_plots(args.plot_path, &o, what, runs, ndevices);
    dataset_free(&train), dataset_free(&test);
    return 0;
}
