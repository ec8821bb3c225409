/* Lab 05: a training loop on a device, with its log kept on the device.
 *
 * Trains an MLP (default 784-256-256-10, ReLU, softmax cross-entropy, SGD with
 * momentum) on the cpu and on the first GPU, real or simulated (--device picks
 * one), on synthetic digits or MNIST (--data DIR), three times from the same
 * seed, once per style of step:
 *   item every step   the host reads each step's loss: it waits for the device every step
 *   on-device log     each step adds its loss to a sum on the device, read once per epoch
 *   captured step     the on-device log, the step recorded once and replayed as one launch
 * One row per device, style and epoch: the loss, the held-out accuracy, the time
 * per step and the host's share of it, host launches per step, blocking reads
 * and waits (counted by the library); then per device the medians, and a
 * takeaway. --save FILE saves the parameters the last device trained and
 * evaluates the file on the cpu; --load FILE evaluates saved parameters.
 *
 *   ./lab run 05                                    the cpu and the first GPU
 *   LABKIT_SIM_GPUS=2 ./lab run 05 -- --device sim:0 --epochs 3 --plot loss.png
 *   ./lab run 05 -- --data ~/mnist --save mlp.safetensors
 */
#include <stdio.h>
#include <string.h>

#include "data.h"
#include "lab.h"
#include "train.h"

#define MAX_EPOCHS 50

typedef struct options {
    const char *layers, *data_dir, *save_path, *load_path;
    int epochs, batch, samples, seed;
    double lr, momentum;
} options;

/* What every part of the run shares. */
typedef struct experiment {
    options o;
    int64_t sizes[MLP_MAX_LAYERS + 1];
    int nsizes, runs; /* runs: devices x styles */
    dataset train, test;
    results *r;
    progress p;
} experiment;

/* What one style did on one device, for the summary. */
typedef struct style_run {
    double us_per_step, host_us; /* medians over the epochs after the first (which captures, warms up) */
    epoch_result last;           /* the last epoch */
    double accuracy;             /* held-out, after the last epoch */
} style_run;

static const results_column columns[] = {
    { "device", RESULTS_TEXT, NULL, "%s", 6 },
    { "style", RESULTS_TEXT, NULL, "%s", 15 },
    { "epoch", RESULTS_NUMBER, NULL, "%.0f", 5 },
    { "loss", RESULTS_NUMBER, NULL, "%.4f", 6 },
    { "accuracy_percent", RESULTS_NUMBER, "held-out", "%.1f%%", 8 },
    { "us_per_step", RESULTS_NUMBER, "us/step", "%.0f", 7 },
    { "host_us_per_step", RESULTS_NUMBER, "host us", "%.1f", 7 },
    { "launches_per_step", RESULTS_NUMBER, "launches", "%.1f", 8 },
    { "d2h_reads", RESULTS_NUMBER, "reads", "%.0f", 5 },
    { "waits", RESULTS_NUMBER, "waits", "%.0f", 5 },
    { "buffer_waits", RESULTS_NUMBER, "buffer waits", "%.0f", 12 },
};

static status load_data(experiment *x, bool quick)
{
    const options *o = &x->o;
    if (o->data_dir) {
        dataset all;
        status s = dataset_load_mnist_dir(o->data_dir, &all, &x->test);
        const int64_t n = o->samples > 0 && o->samples < all.count ? o->samples : all.count;
        if (s == STATUS_OK) s = dataset_head(&all, n, &x->train);
        dataset_free(&all);
        return s;
    }
    const int64_t n = o->samples > 0 ? o->samples : quick ? 3000 : 12000;
    status s = dataset_synthetic(&x->train, n, (uint64_t)o->seed);
    if (s == STATUS_OK) s = dataset_synthetic(&x->test, n / 4 > 500 ? n / 4 : 500, (uint64_t)o->seed + 1000);
    return s;
}

static void add_row(results *r, device d, train_style style, int epoch, const epoch_result *e, double acc)
{
    const double steps = (double)e->steps;
    results_row(r);
    results_text(r, "device", device_name(d));
    results_text(r, "style", style_name(style));
    results_number(r, "epoch", epoch + 1);
    results_number(r, "loss", e->loss);
    results_number(r, "accuracy_percent", 100.0 * acc);
    results_number(r, "us_per_step", 1e6 * e->seconds / steps);
    results_number(r, "host_us_per_step", 1e6 * e->host_seconds / steps);
    results_number(r, "launches_per_step", (double)e->counters.launches / steps);
    results_number(r, "d2h_reads", (double)e->counters.d2h_copies);
    results_number(r, "waits", (double)e->counters.syncs);
    results_number(r, "buffer_waits", (double)e->buffer_waits);
}

/* --save: the trained parameters to the file, then loaded on the cpu and evaluated there. */
static void save_and_reload(const experiment *x, trainer *t, double accuracy)
{
    const options *o = &x->o;
    char meta[512];
    snprintf(meta, sizeof meta, "{\"layers\": \"%s\", \"epochs\": \"%d\", \"trained_on\": \"%s\"}", o->layers,
             o->epochs, device_name(t->net.dev));
    device_counters c;
    CHECK(counters_reset(t->net.dev));
    CHECK(lab_save_parameters(&t->net, o->save_path, meta));
    CHECK(counters_read(t->net.dev, &c));
    trainer cpu;
    double cpu_accuracy = 0.0;
    CHECK(trainer_create(&cpu, device_cpu(), x->sizes, x->nsizes, &t->settings));
    CHECK(lab_load_parameters(&cpu.net, o->save_path));
    CHECK(evaluate(&cpu, &x->test, &cpu_accuracy));
    printf("saved %s: %d tensors, %llu device-to-host copies from %s; loaded on the cpu: held-out accuracy "
           "%.2f%% (%.2f%% on %s)\n",
           o->save_path, 2 * t->net.nlayers, (unsigned long long)c.d2h_copies, device_name(t->net.dev),
           100 * cpu_accuracy, 100 * accuracy, device_name(t->net.dev));
    trainer_free(&cpu);
}

/* Trains a fresh network (same seed) in one style, all epochs: a row per
 * epoch. `run` counts the runs so far (for the progress line); the last run
 * saves its parameters when --save asks. */
static void run_style(experiment *x, device d, train_style style, int run, style_run *out)
{
    const options *o = &x->o;
    const train_settings settings = { o->batch, (float)o->lr, (float)o->momentum, (uint64_t)o->seed };
    double us[MAX_EPOCHS], host[MAX_EPOCHS];
    trainer t;
    CHECK(trainer_create(&t, d, x->sizes, x->nsizes, &settings));
    t.progress = &x->p;
    for (int e = 0; e < o->epochs; ++e) {
        t.progress_from = (run + (double)e / o->epochs) / x->runs;
        t.progress_to = (run + (e + 1.0) / o->epochs) / x->runs;
        CHECK(train_epoch(&t, &x->train, e, style, &out->last));
        CHECK(evaluate(&t, &x->test, &out->accuracy));
        add_row(x->r, d, style, e, &out->last, out->accuracy);
        us[e] = 1e6 * out->last.seconds / (double)out->last.steps;
        host[e] = 1e6 * out->last.host_seconds / (double)out->last.steps;
    }
    const int first = o->epochs > 1; /* the first epoch warms up (and captures the graphs) */
    out->us_per_step = median_of(us + first, (size_t)(o->epochs - first));
    out->host_us = median_of(host + first, (size_t)(o->epochs - first));
    if (o->save_path && run == x->runs - 1) save_and_reload(x, &t, out->accuracy);
    trainer_free(&t);
}

static void print_summary(device d, const style_run runs[STYLES])
{
    for (int s = 0; s < STYLES; ++s) {
        const epoch_result *e = &runs[s].last;
        const unsigned long long reads = e->counters.d2h_copies, waits = e->counters.syncs;
        printf("%-6s %-16s %7.0f us/step, host %6.1f us of it; %5.1f launches/step; last epoch: %llu reads, "
               "%llu waits (%lld for a staging buffer)\n",
               s ? "" : device_name(d), style_name((train_style)s), runs[s].us_per_step, runs[s].host_us,
               (double)e->counters.launches / (double)e->steps, reads, waits, (long long)e->buffer_waits);
    }
}

/* The takeaway speaks of the last device: the first GPU when there is one. */
static void print_takeaway(device d, const style_run runs[STYLES])
{
    const style_run *item = &runs[STYLE_ITEM_EVERY_STEP], *log = &runs[STYLE_ON_DEVICE],
                    *captured = &runs[STYLE_CAPTURED];
    const double steps = (double)item->last.steps;
    if (!device_is_gpu(d)) {
        printf(
            "takeaway: on the cpu there is no queue and no bus: a read is free and each call runs at once, "
            "so the three styles cost about the same (%.0f, %.0f, %.0f us/step); on a GPU they do not "
            "(LABKIT_SIM_GPUS=2 ... --device sim:0).\n",
            item->us_per_step, log->us_per_step, captured->us_per_step);
        return;
    }
    printf(
        "takeaway: on %s a read every step made the host wait %llu times per epoch, the on-device log %llu "
        "(%lld of them for a staging buffer, then the one read), and capturing the step cut the host's "
        "launches from %.0f to %.0f per step; a step took %.0f, %.0f and %.0f us.%s\n",
        device_name(d), (unsigned long long)item->last.counters.syncs,
        (unsigned long long)log->last.counters.syncs, (long long)log->last.buffer_waits,
        (double)log->last.counters.launches / steps, (double)captured->last.counters.launches / steps,
        item->us_per_step, log->us_per_step, captured->us_per_step,
        d.kind == DEVICE_SIM ? " On a simulated GPU the worker and the host share this CPU's cores, so "
                               "the times hardly differ: the counts show the lesson, a real GPU the times."
                             : "");
}

/* --load: evaluates saved parameters on each device, without training. */
static int load_only(const experiment *x, const device *devices, int n)
{
    const options *o = &x->o;
    const train_settings settings = { o->batch, (float)o->lr, (float)o->momentum, (uint64_t)o->seed };
    for (int i = 0; i < n; ++i) {
        trainer t;
        double accuracy = 0.0;
        CHECK(trainer_create(&t, devices[i], x->sizes, x->nsizes, &settings));
        CHECK(lab_load_parameters(&t.net, o->load_path));
        CHECK(evaluate(&t, &x->test, &accuracy));
        printf("%s on %s: held-out accuracy %.2f%% (%lld images)\n", o->load_path, device_name(devices[i]),
               100 * accuracy, (long long)x->test.count);
        trainer_free(&t);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static experiment x = { .o = { "784,256,256,10", NULL, NULL, NULL, 0, 128, 0, 1, 0.05, 0.9 } };
    options *o = &x.o;
    const cli_option extra[] = {
        { "layers", CLI_STRING, &o->layers, "N,N,...",
          "layer sizes, inputs first: 2 to 9 sizes of 1 to 100000, the first 784 (the pixels of an image), "
          "the last 10",
          0, 0 },
        { "epochs", CLI_INT, &o->epochs, "N", "epochs per device and style (0: 5, or 2 with --quick)", 0,
          MAX_EPOCHS },
        { "batch", CLI_INT, &o->batch, "N", "rows per step", 1, 65536 },
        { "lr", CLI_DOUBLE, &o->lr, "X", "SGD learning rate", 1e-6, 10 },
        { "momentum", CLI_DOUBLE, &o->momentum, "X", "SGD momentum, 0 for none", 0, 0.999 },
        { "samples", CLI_INT, &o->samples, "N",
          "training images (0: synthetic 12000, --quick 3000; --data: all)", 0, 10000000 },
        { "data", CLI_STRING, &o->data_dir, "DIR", "MNIST IDX files (train-images-idx3-ubyte, ...)", 0, 0 },
        { "seed", CLI_INT, &o->seed, "N", "seed of the data, the initialisation and the shuffles", 0,
          1000000 },
        { "save", CLI_STRING, &o->save_path, "FILE",
          "save the parameters the last device trained (safetensors), then evaluate the file on the cpu", 0,
          0 },
        { "load", CLI_STRING, &o->load_path, "FILE", "evaluate saved parameters instead of training", 0, 0 },
    };
    const cli_program program = { "05_training_loop",
                                  "an MLP trained on the cpu and a GPU in three styles of step, its loss log "
                                  "kept on the device",
                                  extra, (int)(sizeof extra / sizeof extra[0]) };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;
    if (o->epochs == 0) o->epochs = args.quick ? 2 : 5;
    CHECK(results_create(&x.r, &args, columns, (int)(sizeof columns / sizeof columns[0])));

    /* Everything is checked before any work: the sizes against each device's memory too. */
    device devices[2] = { args.device_given ? args.dev : device_cpu(), try_gpu(0) };
    const int ndevices = !args.device_given && device_is_gpu(devices[1]) ? 2 : 1;
    status s = mlp_parse_sizes(o->layers, x.sizes, MLP_MAX_LAYERS + 1, &x.nsizes);
    if (s == STATUS_OK && (x.sizes[0] != 784 || x.sizes[x.nsizes - 1] != DATA_CLASSES))
        s = fail(STATUS_BAD_ARGUMENT, "--layers %s: the first size must be 784 (28x28 pixels), the last %d",
                 o->layers, DATA_CLASSES);
    if (s == STATUS_OK && o->save_path && o->load_path)
        s = fail(STATUS_BAD_ARGUMENT, "--save and --load: give one (--load evaluates without training)");
    if (s == STATUS_OK && o->save_path) s = output_check(o->save_path, "--save");
    for (int i = 0; s == STATUS_OK && i < ndevices; ++i)
        s = mlp_check_fits(devices[i], x.sizes, x.nsizes, o->batch);
    if (s != STATUS_OK) {
        fprintf(stderr, "05_training_loop: %s\n(see --help)\n", last_error());
        return 2;
    }
    if (load_data(&x, args.quick) != STATUS_OK) {
        fprintf(stderr, "05_training_loop: %s\n", last_error());
        return 1;
    }
    if (o->load_path) return load_only(&x, devices, ndevices);

    printf("MLP %s, batch %d, lr %g, momentum %g: %lld training and %lld held-out images (%s)\n\n", o->layers,
           o->batch, o->lr, o->momentum, (long long)x.train.count, (long long)x.test.count,
           o->data_dir ? "MNIST" : "synthetic digits");
    double estimate = 0.0;
    for (int i = 0; i < ndevices; ++i)
        estimate += STYLES * o->epochs *
                    estimate_epoch_seconds(devices[i], x.sizes, x.nsizes, x.train.count, o->batch);
    progress_begin(&x.p, "training in three styles on each device", estimate);
    CHECK(results_echo(x.r, true));
    x.runs = ndevices * STYLES;
    style_run runs[2][STYLES];
    for (int i = 0; i < ndevices; ++i)
        for (int st = 0; st < STYLES; ++st)
            run_style(&x, devices[i], (train_style)st, i * STYLES + st, &runs[i][st]);
    CHECK(results_print(x.r));
    progress_end(&x.p);
    printf("\n");
    for (int i = 0; i < ndevices; ++i) print_summary(devices[i], runs[i]);
    print_takeaway(devices[ndevices - 1], runs[ndevices - 1]);

    char layers[160], batch[32];
    snprintf(layers, sizeof layers, "layers=%s", o->layers);
    snprintf(batch, sizeof batch, "batch=%d", o->batch);
    const char *vars[] = { layers, batch, o->data_dir ? "data=MNIST" : "data=synthetic digits", NULL };
    CHECK(results_finish(x.r, vars));
    results_free(x.r);
    dataset_free(&x.train), dataset_free(&x.test);
    return 0;
}
