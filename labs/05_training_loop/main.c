/* Lab 05: a training loop on a device, with its log kept on the device.
 *
 * Trains an MLP (default 784-256-256-10) on the cpu and on the first GPU, real
 * or simulated (--device picks one), on synthetic digits or MNIST (--data DIR),
 * three times from the same seed, once per style of step:
 *   item every step   the host reads each step's loss: it waits for the device every step
 *   on-device log     each step adds its loss to a sum on the device, read once per epoch
 *   captured step     the on-device log, the step recorded once and replayed as one launch
 * One row per device, style and epoch (loss, held-out accuracy, time per step
 * and the host's share, launches per step, reads and waits counted by the
 * library), then a takeaway. --save FILE saves what the last device trained
 * and evaluates the file on the cpu; --load FILE evaluates saved parameters.
 *
 *   ./lab run 05                                    the cpu and the first GPU
 *   LABKIT_SIM_GPUS=2 ./lab run 05 -- --device sim:0 --epochs 3 --plot loss.png   (and loss-steps.png)
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
    char saved[512]; /* --save: what was saved, printed after the table */
} experiment;

/* What one style did on one device: medians over the epochs after the first (which warms up and captures
 * the graphs), the last epoch, and the held-out accuracy after it. */
typedef struct style_run {
    double us_per_step, host_us, accuracy;
    epoch_result last;
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
static void save_and_reload(experiment *x, trainer *t, double accuracy)
{
    char meta[512];
    const device d = t->net.dev;
    snprintf(meta, sizeof meta, "{\"layers\": \"%s\", \"epochs\": \"%d\", \"trained_on\": \"%s\"}",
             x->o.layers, x->o.epochs, device_name(d));
    device_counters c;
    double on_cpu = 0.0;
    CHECK(counters_reset(d));
    CHECK(lab_save_parameters(&t->net, x->o.save_path, meta));
    CHECK(counters_read(d, &c));
    CHECK(evaluate_saved(device_cpu(), x->sizes, x->nsizes, &t->settings, x->o.save_path, &x->test, &on_cpu));
    snprintf(x->saved, sizeof x->saved,
             "saved %s: %d tensors, %llu device-to-host copies from %s; loaded on the cpu: held-out accuracy "
             "%.2f%% (%.2f%% on %s)\n",
             x->o.save_path, 2 * t->net.nlayers, (unsigned long long)c.d2h_copies, device_name(d),
             100 * on_cpu, 100 * accuracy, device_name(d));
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
        t.progress_from = (run + (double)e / o->epochs) / x->runs,
        t.progress_to = t.progress_from + 1.0 / x->runs / o->epochs;
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

/* The takeaway speaks of the last device: the first GPU when there is one. */
static void print_takeaway(device d, const style_run runs[STYLES])
{
    const style_run *item = &runs[STYLE_ITEM_EVERY_STEP], *log = &runs[STYLE_ON_DEVICE],
                    *captured = &runs[STYLE_CAPTURED];
    const double steps = (double)item->last.steps;
    printf(
        "\n%s: a step took %.0f us with a read every step, %.0f with the on-device log, %.0f captured (the "
        "host's share %.1f, %.1f and %.1f us; medians after the first epoch)\n",
        device_name(d), item->us_per_step, log->us_per_step, captured->us_per_step, item->host_us,
        log->host_us, captured->host_us);
    if (!device_is_gpu(d)) {
        puts("takeaway: on the cpu a read is free and every call runs at once: the styles cost the same but "
             "for noise; on a GPU they do not (LABKIT_SIM_GPUS=2 ... --device sim:0).");
        return;
    }
    const bool ahead = 4 * log->last.buffer_waits >= log->last.steps; /* the host ran ahead of the device */
    const double copies = (double)log->last.counters.copy_queue_copies / steps;
    char crossing[128];
    if (copies > 0)
        snprintf(crossing, sizeof crossing,
                 "each batch crossed on the copy queue (%.0f copies a step there) while the step before it "
                 "computed",
                 copies);
    else
        snprintf(
            crossing, sizeof crossing,
            "each batch crossed on the compute queue, in line with the steps (LABKIT_TRAIN_ONE_QUEUE=1)");
    printf(
        "takeaway: on %s a read every step drained the device's queue %llu times per epoch, idling the "
        "device while the host prepared each next step; the on-device log read once, and the host waited "
        "%lld times for a staging buffer (%s); %s; capturing the step cut the host's launches from %.0f to "
        "%.0f per step.%s\n",
        device_name(d), (unsigned long long)item->last.counters.syncs, (long long)log->last.buffer_waits,
        ahead ? "ahead of the device: it always had a step queued"
              : "the device kept up: the host's own time bounds a step, which capturing cuts",
        crossing, (double)log->last.counters.launches / steps,
        (double)captured->last.counters.launches / steps,
        d.kind == DEVICE_SIM ? " On a simulated GPU the worker and the host share this CPU's cores, so the "
                               "times say little: the counts and the host's share show the lesson."
                             : "");
}

/* --load: evaluates saved parameters on each device, without training. */
static int load_only(const experiment *x, const device *devices, int n)
{
    const options *o = &x->o;
    const train_settings settings = { o->batch, (float)o->lr, (float)o->momentum, (uint64_t)o->seed };
    for (int i = 0; i < n; ++i) {
        double accuracy = 0.0;
        if (evaluate_saved(devices[i], x->sizes, x->nsizes, &settings, o->load_path, &x->test, &accuracy) !=
            STATUS_OK) {
            fprintf(stderr, "05_training_loop: %s\n", last_error());
            return 1;
        }
        printf("%s on %s: held-out accuracy %.2f%% (%lld images)\n", o->load_path, device_name(devices[i]),
               100 * accuracy, (long long)x->test.count);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static experiment x = { .o = { "784,256,256,10", NULL, NULL, NULL, 0, 128, 0, 1, 0.05, 0.9 } };
    options *o = &x.o;
    const cli_option extra[] = {
        { "layers", CLI_STRING, &o->layers, "N,N,...",
          "2 to 9 layer sizes of 1 to 100000: 784 (the pixels) first, 10 (the classes) last", 0, 0 },
        { "epochs", CLI_INT, &o->epochs, "N", "epochs of each run (0: 5; --quick 2)", 0, MAX_EPOCHS },
        { "batch", CLI_INT, &o->batch, "N", "rows per step", 1, 65536 },
        { "lr", CLI_DOUBLE, &o->lr, "X", "SGD learning rate", 1e-6, 10 },
        { "momentum", CLI_DOUBLE, &o->momentum, "X", "SGD momentum, 0 for none", 0, 0.999 },
        { "samples", CLI_INT, &o->samples, "N", "training images (0: 12000 or all; --quick 3000)", 0, 1e7 },
        { "data", CLI_STRING, &o->data_dir, "DIR", "MNIST IDX files (train-images-idx3-ubyte, ...)", 0, 0 },
        { "seed", CLI_INT, &o->seed, "N", "seed of the data, the weights and the shuffles", 0, 1000000 },
        { "save", CLI_STRING, &o->save_path, "FILE", "save the trained parameters (safetensors)", 0, 0 },
        { "load", CLI_STRING, &o->load_path, "FILE", "evaluate saved parameters instead of training", 0, 0 },
    };
    const cli_program program = { "05_training_loop",
                                  "an MLP trained on the cpu and a GPU in three styles of step", extra,
                                  (int)(sizeof extra / sizeof extra[0]) };
    cli_args args;
    const int exit_code = cli_parse(&program, argc, argv, &args);
    if (exit_code >= 0) return exit_code;
    if (o->epochs == 0) o->epochs = args.quick ? 2 : 5;
    CHECK(results_create(&x.r, &args, columns, (int)(sizeof columns / sizeof columns[0])));
    /* Two lessons, two figures: FIG (learning) and FIG-steps (the time per step). */
    static const char *const figures[] = { "learning", "steps" };
    CHECK(results_check_figures(x.r, figures, 2));

    /* Everything is checked before any work: the sizes against each device's memory too. */
    device devices[2] = { args.device_given ? args.dev : device_cpu(), try_gpu(0) };
    const int ndevices = !args.device_given && device_is_gpu(devices[1]) ? 2 : 1;
    status s = mlp_parse_sizes(o->layers, 784, DATA_CLASSES, x.sizes, MLP_MAX_LAYERS + 1, &x.nsizes);
    if (s == STATUS_OK && o->save_path && o->load_path)
        s = fail(STATUS_BAD_ARGUMENT, "--save and --load: give one (--load evaluates without training)");
    if (s == STATUS_OK && o->save_path) s = output_check(o->save_path, "--save");
    for (int i = 0; s == STATUS_OK && i < ndevices; ++i)
        s = mlp_check_fits(devices[i], x.sizes, x.nsizes, o->batch);
    if (s != STATUS_OK) {
        fprintf(stderr, "05_training_loop: %s\n(see --help)\n", last_error());
        return 2;
    }
    const int samples = o->samples || o->data_dir ? o->samples : args.quick ? 3000 : 12000;
    if (dataset_for_run(o->data_dir, samples, (uint64_t)o->seed, &x.train, &x.test) != STATUS_OK) {
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
    print_takeaway(devices[ndevices - 1], runs[ndevices - 1]);
    printf("%s", x.saved);

    char setup[256]; /* the figure's title */
    snprintf(setup, sizeof setup, "setup=MLP %s, batch %d, %s", o->layers, o->batch,
             o->data_dir ? "MNIST" : "synthetic digits");
    const char *vars[] = { setup, NULL };
    CHECK(results_finish_figures(x.r, figures, 2, vars));
    results_free(x.r);
    dataset_free(&x.train), dataset_free(&x.test);
    return 0;
}
