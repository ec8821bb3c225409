/* main.c: lab 01's experiment, which devices this program sees.
 *
 * In the order of the README's steps: your try_gpu(i) and try_all_gpus()
 * answers; then every device, the CPU included, in the spirit of CUDA's
 * deviceQuery and nvidia-smi (name, memory, multiprocessors, cores, clock,
 * compute capability and the FP32 peak, worked out with your steps 2 and 3 next
 * to the library's figure); the same formula on published cards; and a tensor
 * and a layer put on --device, each saying where it lives.
 *
 *   ./lab run 01                                      this machine as it is
 *   LABKIT_SIM_GPUS=2 ./lab run 01 -- --device sim:0  with two simulated GPUs
 *   ./lab run 01 -- --csv devices.csv --plot peaks.png */
#include <stdio.h>
#include <string.h>

#include "cards.h"
#include "lab.h"

/* One line of the table: a device here or a published card. */
typedef struct table_row {
    const char *source; /* "this machine" or "published card" */
    char device[16];    /* "cpu", "sim:0", "cuda:0"; "" for a card */
    char name[128];
    double memory_gib; /* 0 for a card: not part of the peak */
    int multiprocessors, cores_per_mp;
    double clock_ghz;
    char cc[8];       /* "8.6"; "" for the CPU and simulated GPUs */
    double gflops;    /* your steps 2 and 3; 0 = unknown */
    double reference; /* the library's figure, or the published one */
    char bar[24];     /* the bar's label in the figure; "" for no bar */
} table_row;

#define MAX_ROWS (LABKIT_MAX_DEVICES + KNOWN_CARDS)

/* ---- this machine's devices --------------------------------------------- */

/* Prints one line per device, adds its row; returns the CPU's peak. */
static double list_devices(table_row *rows, int *nrows)
{
    device all[LABKIT_MAX_DEVICES];
    const int n = device_list(all, LABKIT_MAX_DEVICES);
    double cpu_peak = 0;
    printf("\ndevices this program sees (for the CPU and a simulated GPU, \"MPs\" are cores and\n"
           "\"cores/MP\" the FP32 lanes of one core's FMA units)\n");
    printf("%-7s %9s %5s %8s %9s %5s %12s %12s  %s\n", "device", "memory", "MPs", "cores/MP", "clock", "CC",
           "peak GFLOP/s", "library's", "name");
    for (int k = 0; k < n; ++k) {
        device_properties p;
        CHECK(device_get_properties(all[k], &p));
        table_row *r = &rows[(*nrows)++];
        *r = (table_row){ .source = "this machine",
                          .memory_gib = (double)p.memory_bytes / (1u << 30),
                          .multiprocessors = p.multiprocessors,
                          .cores_per_mp = p.cores_per_mp,
                          .clock_ghz = p.clock_ghz,
                          .reference = p.peak_gflops };
        snprintf(r->device, sizeof r->device, "%s", device_name(all[k]));
        snprintf(r->name, sizeof r->name, "%s", p.name);
        if (all[k].kind == DEVICE_CUDA) { /* a real GPU's cores come from your table */
            snprintf(r->cc, sizeof r->cc, "%d.%d", p.cc_major, p.cc_minor);
            CHECK(lab_fp32_cores_per_sm(p.cc_major, p.cc_minor, &r->cores_per_mp));
        }
        CHECK(lab_peak_fp32_gflops(r->multiprocessors, r->cores_per_mp, r->clock_ghz, &r->gflops));
        char peak[16] = "unknown";
        if (r->gflops > 0) snprintf(peak, sizeof peak, "%.1f", r->gflops);
        printf("%-7s %5.1f GiB %5d %8d %5.2f GHz %5s %12s %12.1f  %s\n", r->device, r->memory_gib,
               r->multiprocessors, r->cores_per_mp, r->clock_ghz, r->cc[0] ? r->cc : "-", peak, r->reference,
               r->name);
        if (all[k].kind == DEVICE_CPU) cpu_peak = r->gflops;
        /* One bar per device whose peak is known, but one for all simulated GPUs:
         * each is the CPU again. */
        if (r->gflops == 0 || (all[k].kind == DEVICE_SIM && all[k].index > 0)) continue;
        if (all[k].kind == DEVICE_SIM && n > 2)
            snprintf(r->bar, sizeof r->bar, "sim:0-%d", n - 2);
        else
            snprintf(r->bar, sizeof r->bar, "%s", r->device);
    }
    return cpu_peak;
}

/* ---- published cards ------------------------------------------------------- */

static void list_cards(table_row *rows, int *nrows)
{
    printf("\npublished cards through your steps 2 and 3 (lesson 001 counts one operation per cycle)\n");
    printf("%-18s %4s %5s %9s %9s %12s %10s %17s\n", "card", "SMs", "CC", "boost", "cores/SM", "peak TFLOPS",
           "published", "one op per cycle");
    for (int k = 0; k < KNOWN_CARDS; ++k) {
        const known_card *c = &known_cards[k];
        table_row *r = &rows[(*nrows)++];
        *r = (table_row){ .source = "published card",
                          .multiprocessors = c->multiprocessors,
                          .clock_ghz = c->boost_ghz,
                          .reference = c->published_tflops * 1000 };
        snprintf(r->name, sizeof r->name, "%s", c->name);
        snprintf(r->cc, sizeof r->cc, "%d.%d", c->cc_major, c->cc_minor);
        CHECK(lab_fp32_cores_per_sm(c->cc_major, c->cc_minor, &r->cores_per_mp));
        CHECK(lab_peak_fp32_gflops(r->multiprocessors, r->cores_per_mp, r->clock_ghz, &r->gflops));
        char cores[16] = "unknown", peak[16] = "unknown", half[16] = "unknown";
        if (r->cores_per_mp > 0) snprintf(cores, sizeof cores, "%d", r->cores_per_mp);
        if (r->gflops > 0) {
            snprintf(peak, sizeof peak, "%.2f", r->gflops / 1000);
            snprintf(half, sizeof half, "%.2f", r->gflops / 2000);
        }
        printf("%-18s %4d %5s %5.3f GHz %9s %12s %10.4g %17s\n", c->name, r->multiprocessors, r->cc,
               r->clock_ghz, cores, peak, c->published_tflops, half);
        if (r->gflops > 0 && c->label) snprintf(r->bar, sizeof r->bar, "%s", c->label); /* unknown: no bar */
    }
}

/* ---- the table as CSV ---------------------------------------------------------- */

static void write_csv(const char *path, const table_row *rows, int nrows)
{
    static const char *const columns[] = {
        "source",          "device",          "name",      "memory_gib",
        "multiprocessors", "cores_per_mp",    "clock_ghz", "compute_capability",
        "peak_gflops",     "reference_gflops"
    };
    csv_file *csv = NULL;
    CHECK(csv_open(&csv, path, columns, 10));
    for (int k = 0; k < nrows; ++k) {
        const table_row *r = &rows[k];
        char memory[32] = "", mps[16], cores[16], clock[32], gflops[32], reference[32];
        if (r->memory_gib > 0) snprintf(memory, sizeof memory, "%.3f", r->memory_gib);
        snprintf(mps, sizeof mps, "%d", r->multiprocessors);
        snprintf(cores, sizeof cores, "%d", r->cores_per_mp);
        snprintf(clock, sizeof clock, "%.4f", r->clock_ghz);
        snprintf(gflops, sizeof gflops, "%.3f", r->gflops);
        snprintf(reference, sizeof reference, "%.3f", r->reference);
        const char *cells[10] = { r->source, r->device, r->name, memory, mps,
                                  cores,     clock,     r->cc,   gflops, reference };
        status s = csv_row_text(csv, cells, 10);
        if (s != STATUS_OK) csv_discard(csv); /* nothing half-written is left behind */
        CHECK(s);
    }
    CHECK(csv_close(csv));
    printf("csv: %s\n", path);
}

/* ---- the lessons' helpers -------------------------------------------------- */

static void show_try_gpu(void)
{
    const int gpus = gpu_count();
    printf("gpu_count() = %d\n", gpus);
    for (int i = 0; i <= gpus + 1; ++i) {
        device d;
        CHECK(lab_try_gpu(i, &d));
        printf("%stry_gpu(%d) = %s", i ? "   " : "", i, device_name(d));
    }
    device all[LABKIT_MAX_DEVICES];
    int n = 0;
    CHECK(lab_try_all_gpus(all, LABKIT_MAX_DEVICES, &n));
    printf("\ntry_all_gpus() = [");
    for (int k = 0; k < n; ++k) printf("%s%s", k ? ", " : "", device_name(all[k]));
    printf("]\n");
}

/* ---- a tensor and a layer on the device ------------------------------------ */

/* One line of the placement listing: what was done, then what came of it. */
static void show_step(const char *what, const char *result) { printf("  %-30s %s\n", what, result); }

static void place_on(device d)
{
    char what[64], result[160], a[64], b[64];
    printf("\non %s (--device):\n", device_name(d));
    tensor *x = NULL, *y = NULL;
    CHECK(lab_rand_on(d, 2, 3, 1, &x));
    snprintf(what, sizeof what, "X = lab_rand_on(%s, 2, 3)", device_name(d));
    show_step(what, tensor_describe(x, a, sizeof a));

    lab_linear net = { 0 };
    CHECK(lab_linear_create(&net, 3, 1, 2)); /* the lessons' nn.Linear(3, 1) */
    snprintf(result, sizeof result, "weight %s, bias %s", tensor_describe(net.weight, a, sizeof a),
             tensor_describe(net.bias, b, sizeof b));
    show_step("net = lab_linear_create(3, 1)", result);

    device_counters before, after;
    CHECK(counters_read(d, &before));
    CHECK(lab_linear_to(&net, d));
    CHECK(counters_read(d, &after));
    snprintf(what, sizeof what, "lab_linear_to(net, %s)", device_name(d));
    snprintf(result, sizeof result, "weight %s, bias %s (%llu copies to the device)",
             tensor_describe(net.weight, a, sizeof a), tensor_describe(net.bias, b, sizeof b),
             (unsigned long long)(after.h2d_copies - before.h2d_copies));
    show_step(what, result);
    device where;
    CHECK(lab_linear_device(&net, &where));
    show_step("lab_linear_device(net)", device_name(where));

    CHECK(tensor_empty(&y, d, DTYPE_F32, shape2(2, 1)));
    CHECK(lab_linear_forward(&net, x, y));
    show_step("net(X)", tensor_describe(y, a, sizeof a));
    tensor_free(x);
    tensor_free(y);
    lab_linear_free(&net);
}

/* ---- the figure ---------------------------------------------------------------- */

/* Bars from the slowest to the fastest device, on a log axis: the CPU and the
 * largest GPUs are 2 to 3 decades apart. */
static void draw(const char *path, const table_row *rows, int nrows)
{
    const table_row *bars[MAX_ROWS];
    int nbars = 0;
    for (int k = 0; k < nrows; ++k) { /* insertion sort of the rows that have a bar */
        if (!rows[k].bar[0]) continue;
        int at = nbars++;
        while (at > 0 && bars[at - 1]->gflops > rows[k].gflops) bars[at] = bars[at - 1], --at;
        bars[at] = &rows[k];
    }
    double y[MAX_ROWS];
    const char *labels[MAX_ROWS];
    for (int k = 0; k < nbars; ++k) y[k] = bars[k]->gflops, labels[k] = bars[k]->bar;

    device_properties cpu;
    CHECK(device_get_properties(device_cpu(), &cpu));
    char title[256];
    snprintf(title, sizeof title, "FP32 peak: this machine (%.40s) vs published GPUs", cpu.name);
    plot p = { .title = title,
               .xlabel = "",
               .ylabel = "GFLOP/s (SMs x cores x clock x 2)",
               .log_y = true,
               .bar_labels = labels };
    CHECK(plot_add(&p, "FP32 peak", NULL, y, (size_t)nbars, PLOT_BARS));
    CHECK(plot_draw(&p, path));
    printf("plot: %s\n", path);
}

/* The takeaway names this machine's first GPU if it is real, else the lesson's card. */
static void print_takeaway(double cpu_peak)
{
    device_properties gpu;
    double gflops = 0;
    const device first = { DEVICE_CUDA, 0 };
    if (device_exists(first)) {
        int cores = 0;
        CHECK(device_get_properties(first, &gpu));
        CHECK(lab_fp32_cores_per_sm(gpu.cc_major, gpu.cc_minor, &cores));
        CHECK(lab_peak_fp32_gflops(gpu.multiprocessors, cores, gpu.clock_ghz, &gflops));
    } else {
        snprintf(gpu.name, sizeof gpu.name, "an RTX 3080 12 GB");
        CHECK(lab_peak_fp32_gflops(70, 128, 1.71, &gflops));
    }
    if (gflops > 0 && cpu_peak > 0)
        printf(
            "takeaway: FP32 peak = SMs x cores x clock x 2 (an FMA is 2 operations): %s reaches %.1f TFLOPS, "
            "%.0fx this CPU's %.0f GFLOP/s; try_gpu(i) falls back to the CPU when GPU i does not exist.\n",
            gpu.name, gflops / 1000, gflops / cpu_peak, cpu_peak);
    else
        printf(
            "takeaway: FP32 peak = SMs x cores x clock x 2 (an FMA is 2 operations), unknown when one factor "
            "is; try_gpu(i) falls back to the CPU when GPU i does not exist.\n");
}

/* ---- the program ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    const cli_program program = {
        .name = "01_devices",
        .summary = "every device this program sees, its FP32 peak, try_gpu and try_all_gpus, "
                   "and a tensor and a layer on --device (--quick changes nothing: the listing is quick)",
    };
    cli_args args;
    int code = cli_parse(&program, argc, argv, &args);
    if (code >= 0) return code;

    /* In the order of the README's steps: which devices (1), what they are
     * made of and their peak (2, 3), then a tensor and a layer on one (4, 5). */
    show_try_gpu();
    table_row rows[MAX_ROWS];
    int nrows = 0;
    const double cpu_peak = list_devices(rows, &nrows);
    list_cards(rows, &nrows);
    if (args.csv_path) write_csv(args.csv_path, rows, nrows);
    place_on(args.dev);
    if (args.plot_path) draw(args.plot_path, rows, nrows);

    print_takeaway(cpu_peak);
    return 0;
}
