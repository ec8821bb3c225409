/* main.c: lab 03, asynchronous execution and honest timing.
 *
 * On a GPU, real or simulated, an operation is queued and the call returns at
 * once; the work runs later, behind the host's back. This program times three
 * workloads (the lesson's matrix-product loop, the same loop reading a value in
 * every step, and 100000 launches of x = x + 1) with your four clocks: the host
 * clock alone, after synchronising, after reading one value, and events. It
 * counts the blocking waits inside each loop and the host work that fits beside
 * the device's, and shows the utilisation illusion: a device "busy" most of the
 * time that does almost no arithmetic. On the CPU nothing is asynchronous, and
 * every clock agrees.
 *
 *   ./lab run 03 -- --plot timing.png   (and timing-busy.png; a simulated GPU without a real one) */
#include <math.h>
#include <stdio.h>

#include "lab.h"

enum { MATMULS, READING, INCREMENTS, NWORKLOADS };
#define MAX_REPEATS 3
/* For the time a run will take: the fraction of its peak a device reaches on
 * large matrix products (the simulated GPUs here: about a quarter), and the
 * least time of one launch on a GPU (the simulated GPU models 2 us; a real one
 * needs a few us of the host's time to launch it). */
#define PEAK_REACHED 0.25
#define LAUNCH_SECONDS 3e-6

typedef struct experiment {
    device dev;
    int size, matmuls, launches, repeats;
    double run_seconds[NWORKLOADS]; /* the estimated time of one run of each workload */
    double estimate, done;          /* of the whole experiment, in seconds */
    progress progress;
} experiment;

static const results_column columns[] = {
    { "workload", RESULTS_TEXT, "workload", NULL, 32 },
    { "unsync_ms", RESULTS_NUMBER, "unsync ms", "%.3f", 9 },
    { "sync_ms", RESULTS_NUMBER, "sync ms", "%.1f", 7 },
    { "read_ms", RESULTS_NUMBER, "read ms", "%.1f", 7 },
    { "events_ms", RESULTS_NUMBER, "events ms", "%.1f", 9 },
    { "peak_bytes", RESULTS_BYTES, "peak mem", NULL, 8 },
    { "waits", RESULTS_NUMBER, "waits", "%.0f", 5 },
    { "host_chunks", RESULTS_NUMBER, "chunks", "%.0f", 6 },
    { "busy_pct", RESULTS_NUMBER, "busy", "%.0f%%", 4 },
    { "peak_pct", RESULTS_NUMBER, "of peak", "%.2g%%", 7 },
};
#define NCOLUMNS ((int)(sizeof columns / sizeof columns[0]))

/* Runs of each workload: a warm-up, four clocks per repeat, host work, one counted. */
static int runs_per_workload(const experiment *e) { return 1 + 4 * e->repeats + 2; }

/* The arithmetic at the peak a device reaches, and the launches at their least time. */
static void estimate(experiment *e)
{
    const double gflops = device_compute_gflops(e->dev);
    const double rate = gflops > 0 ? 1e9 * PEAK_REACHED * gflops : 1e10;
    const double products = 2.0 * e->size * e->size * (double)e->size * e->matmuls / rate;
    const double launch = device_is_gpu(e->dev) ? LAUNCH_SECONDS : 0.0;
    e->run_seconds[MATMULS] = products + launch * (e->matmuls + 2);
    e->run_seconds[READING] = products + launch * (2 * e->matmuls + 2);
    e->run_seconds[INCREMENTS] = launch * e->launches + e->launches / rate;
    e->estimate = 0;
    for (int i = 0; i < NWORKLOADS; ++i) e->estimate += runs_per_workload(e) * e->run_seconds[i];
}

/* One run of workload `which` is done. */
static void ran(experiment *e, int which)
{
    e->done += e->run_seconds[which];
    progress_update(&e->progress, e->done / e->estimate);
}

static void make_workload(const experiment *e, int which, workload *w)
{
    if (which == MATMULS) CHECK(workload_matmuls(w, e->dev, e->size, e->matmuls));
    if (which == READING) CHECK(workload_matmuls_reading(w, e->dev, e->size, e->matmuls));
    if (which == INCREMENTS) CHECK(workload_increments(w, e->dev, e->launches));
}

/* Steps 1 to 4, `repeats` times: the medians of the three clocks, and the
 * benchmark whose events' time is the median one. */
static measurement time_clocks(experiment *e, int which, workload *w, results *r)
{
    double naive[MAX_REPEATS], synced[MAX_REPEATS], read[MAX_REPEATS], events[MAX_REPEATS];
    measurement m[MAX_REPEATS];
    float value;
    for (int i = 0; i < e->repeats; ++i) {
        CHECK(lab_time_naive(w, &naive[i]));
        CHECK(lab_time_synchronized(w, &synced[i]));
        CHECK(lab_time_read_one(w, &read[i], &value));
        CHECK(lab_benchmark(w, &m[i]));
        events[i] = m[i].device_seconds;
        for (int k = 0; k < 4; ++k) ran(e, which);
    }
    const size_t n = (size_t)e->repeats;
    results_number(r, "unsync_ms", 1e3 * median_of(naive, n));
    results_number(r, "sync_ms", 1e3 * median_of(synced, n));
    results_number(r, "read_ms", 1e3 * median_of(read, n));
    const double median_events = median_of(events, n); /* reorders events, not m */
    for (int i = 0; i < e->repeats; ++i)
        if (m[i].device_seconds == median_events) return m[i];
    return m[0];
}

/* One row: workload `which`, made, measured and freed, so that its memory peak
 * holds none of the other workloads' tensors. */
static void measure(experiment *e, int which, results *r)
{
    workload w;
    device_counters c;
    utilisation u;
    int64_t chunks = 0;
    make_workload(e, which, &w);
    CHECK(w.run(&w)); /* a warm-up: the first run pays for starting up (OpenBLAS's threads) */
    CHECK(device_synchronize(e->dev));
    ran(e, which);
    CHECK(results_row(r));
    results_text(r, "workload", w.name);
    const measurement m = time_clocks(e, which, &w, r);
    CHECK(lab_count_host_work(&w, &chunks)); /* step 5 */
    ran(e, which);
    CHECK(counters_reset(e->dev)); /* the blocking waits inside run() itself */
    CHECK(w.run(&w));
    CHECK(counters_read(e->dev, &c));
    CHECK(device_synchronize(e->dev));
    ran(e, which);
    CHECK(lab_utilisation(&w, &m, &u)); /* step 6 */
    results_number(r, "events_ms", 1e3 * m.device_seconds);
    results_number(r, "peak_bytes", (double)m.peak_bytes);
    results_number(r, "waits", (double)c.syncs);
    results_number(r, "host_chunks", (double)chunks);
    results_number(r, "busy_pct", 100 * u.busy_fraction);
    results_number(r, "peak_pct", u.peak_gflops > 0 ? 100 * u.peak_fraction : NAN);
    workload_free(&w);
}

static void print_takeaway(const experiment *e, const results *r)
{
    const double lie = results_get(r, MATMULS, "unsync_ms"), truth = results_get(r, MATMULS, "events_ms");
    if (device_is_gpu(e->dev))
        printf("takeaway: on %s the loop \"took\" %.3f ms by the host clock alone but %.0f ms by the events: "
               "launches return at once, so synchronise (or read a value) before you stop the clock; and a "
               "device busy %.0f%% of the time may use %.2g%% of its peak.\n",
               device_name(e->dev), lie, truth, results_get(r, INCREMENTS, "busy_pct"),
               results_get(r, INCREMENTS, "peak_pct"));
    else
        printf(
            "takeaway: on the cpu nothing is asynchronous: the host clock alone already says %.0f ms, as the "
            "events do (%.0f ms); on a GPU it would see almost nothing (try --device sim:0).\n",
            lie, truth);
}

int main(int argc, char **argv)
{
    experiment e = { .launches = 100000 };
    const cli_option options[] = {
        { "size", CLI_INT, &e.size, "N",
          "matrix size (0: 1024, or 512 with --quick; on a real GPU 4096 or 2048)", 0, 4096 },
        { "matmuls", CLI_INT, &e.matmuls, "K", "products per run (0: 20, or 16 with --quick)", 0, 1000 },
        { "launches", CLI_INT, &e.launches, "L", "launches of x = x + 1", 1, 1 << 24 },
    };
    const cli_program program = { "03_async_timing",
                                  "asynchronous execution, honest timing, peak memory and the utilisation "
                                  "illusion",
                                  options, 3 };
    cli_args args;
    const int code = cli_parse(&program, argc, argv, &args);
    if (code >= 0) return code;
    results *r;
    CHECK(results_create(&r, &args, columns, NCOLUMNS));
    /* Two lessons, two figures: FIG (the clocks) and FIG-busy. */
    static const char *const figures[] = { "clocks", "busy" };
    CHECK(results_check_figures(r, figures, 2));
    /* A real GPU needs the lesson's size for the work to take far longer than
     * launching it; the CPU and a simulated GPU take seconds at that size. */
    e.dev = args.dev;
    const bool real_gpu = e.dev.kind == DEVICE_CUDA;
    if (e.size == 0) e.size = real_gpu ? (args.quick ? 2048 : 4096) : (args.quick ? 512 : 1024);
    if (e.matmuls == 0) e.matmuls = args.quick ? 16 : 20;
    e.repeats = args.quick ? 1 : MAX_REPEATS;
    CHECK(results_mention_device(r, e.dev));
    CHECK(results_echo(r, true));

    printf("device: %s%s\n\n", device_name(e.dev),
           device_is_gpu(e.dev)
               ? ""
               : " (everything runs at once on the calling thread: nothing is asynchronous)");
    estimate(&e);
    progress_begin(&e.progress, "three workloads timed with four clocks (estimated from the device's peak)",
                   e.estimate);
    for (int i = 0; i < NWORKLOADS; ++i) measure(&e, i, r);
    progress_end(&e.progress);
    CHECK(results_print(r));
    printf("\n");
    print_takeaway(&e, r);
    CHECK(results_finish_figures(r, figures, 2, NULL));
    results_free(r);
    return 0;
}
