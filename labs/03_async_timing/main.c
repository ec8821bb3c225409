/* main.c: lab 03, asynchronous execution and honest timing.
 *
 * On a GPU, real or simulated, an operation is queued and the call returns at
 * once; the work runs later, behind the host's back. This program times three
 * workloads (the lesson's matrix-product loop, the same loop reading a value in
 * every step, and 100000 launches of x = x + 1) in four ways: the host clock
 * alone, the host clock after synchronising, the host clock after reading one
 * value, and device events. Then it counts how much host work fits inside the
 * device's work, and shows the utilisation illusion: a device "busy" most of the
 * time that does almost no arithmetic. On the CPU nothing is asynchronous, and
 * the program says so.
 *
 *   LABKIT_SIM_GPUS=2 ./lab run 03 -- --device sim:0 --plot timing.png */
#include <stdio.h>
#include <string.h>

#include "lab.h"

enum { MATMULS, READING, INCREMENTS, NWORKLOADS };

/* One workload's figures. Each workload exists only while it is measured, so
 * that the memory peak of one holds none of the others' tensors. */
typedef struct row {
    char name[64];
    double naive, synced, read_one; /* seconds, steps 1 to 3: medians over the repeats */
    measurement m;                  /* step 4: the run with the median event time */
    device_counters blocking;       /* READING: one run's copies and waits */
    int64_t chunks;                 /* MATMULS: host work beside the device's (step 5) */
    utilisation u;                  /* INCREMENTS: step 6 */
} row;

static void measure_times(workload *w, row *r, int repeats)
{
    double naive[8], synced[8], read_one[8], events[8];
    measurement m[8];
    float value;
    for (int i = 0; i < repeats; ++i) {
        CHECK(lab_time_naive(w, &naive[i]));
        CHECK(lab_time_synchronized(w, &synced[i]));
        CHECK(lab_time_read_one(w, &read_one[i], &value));
        CHECK(lab_benchmark(w, &m[i]));
        events[i] = m[i].device_seconds;
    }
    r->naive = median_of(naive, (size_t)repeats);
    r->synced = median_of(synced, (size_t)repeats);
    r->read_one = median_of(read_one, (size_t)repeats);
    const double median_events = median_of(events, (size_t)repeats); /* reorders events */
    r->m = m[0];
    for (int i = 0; i < repeats; ++i)
        if (m[i].device_seconds == median_events) r->m = m[i];
}

/* Makes workload `which`, measures it, adds its own experiment, frees it. */
static void measure_workload(int which, device d, int size, int matmuls, int launches, int repeats, row *r)
{
    workload w;
    if (which == MATMULS) CHECK(workload_matmuls(&w, d, size, matmuls));
    if (which == READING) CHECK(workload_matmuls_reading(&w, d, size, matmuls));
    if (which == INCREMENTS) CHECK(workload_increments(&w, d, launches));
    snprintf(r->name, sizeof r->name, "%s", w.name);
    CHECK(w.run(&w)); /* a warm-up run: the first one pays for start-up (OpenBLAS's threads) */
    CHECK(device_synchronize(d));
    measure_times(&w, r, repeats);
    if (which == MATMULS) CHECK(lab_count_host_work(&w, &r->chunks));
    if (which == READING) { /* one run of the given loop, its copies and waits counted */
        CHECK(counters_reset(d));
        CHECK(w.run(&w));
        CHECK(device_synchronize(d));
        CHECK(counters_read(d, &r->blocking));
    }
    if (which == INCREMENTS) CHECK(lab_utilisation(&w, &r->m, &r->u));
    workload_free(&w);
}

static void print_results(device d, const row *rows)
{
    printf("%-32s %10s %10s %10s %10s %11s\n", "workload", "unsync ms", "sync ms", "read ms", "events ms",
           "peak bytes");
    for (int i = 0; i < NWORKLOADS; ++i) {
        const row *r = &rows[i];
        printf("%-32s %10.3f %10.1f %10.1f %10.1f %11zu\n", r->name, 1e3 * r->naive, 1e3 * r->synced,
               1e3 * r->read_one, 1e3 * r->m.device_seconds, r->m.peak_bytes);
    }
    printf("\n");

    const row *reading = &rows[READING], *plain = &rows[MATMULS], *inc = &rows[INCREMENTS];
    if (device_is_gpu(d))
        printf("blocking: \"%s\" copied to the host %llu times and waited %llu times (one per step, "
               "plus the final synchronize)\n",
               reading->name, (unsigned long long)reading->blocking.d2h_copies,
               (unsigned long long)reading->blocking.syncs);
    else
        printf("blocking: on the cpu \"%s\" made %llu plain copies and waited 0 times: nothing to wait for\n",
               reading->name, (unsigned long long)reading->blocking.d2d_copies);

    if (device_is_gpu(d))
        printf("host work: %lld chunks of %d generator steps ran on the host while the device computed "
               "\"%s\" (%.1f ms)\n",
               (long long)plain->chunks, HOST_WORK_STEPS, plain->name, 1e3 * plain->m.device_seconds);
    else
        printf("host work: %lld chunks fitted inside \"%s\": on the cpu the work was all done before "
               "run() returned\n",
               (long long)plain->chunks, plain->name);

    printf("utilisation: %s on %s: busy %.0f%% of the time (%s), but %.3g GFLOP/s = %.5f%% of "
           "its %.0f GFLOP/s peak\n",
           inc->name, device_name(d), 100 * inc->u.busy_fraction,
           inc->m.busy_seconds > 0 ? "its queue's busy time" : "events", inc->u.achieved_gflops,
           100 * inc->u.peak_fraction, inc->u.peak_gflops);
}

static void write_csv(const char *path, device d, const row *rows)
{
    static const char *const columns[] = { "workload",  "device",  "unsync_ms", "sync_ms", "read_one_ms",
                                           "launch_ms", "host_ms", "events_ms", "busy_ms", "peak_bytes" };
    csv_file *f;
    CHECK(csv_open(&f, path, columns, 10));
    for (int i = 0; i < NWORKLOADS; ++i) {
        const row *r = &rows[i];
        char v[8][32];
        const double ms[7] = { r->naive,          r->synced,           r->read_one,      r->m.launch_seconds,
                               r->m.host_seconds, r->m.device_seconds, r->m.busy_seconds };
        for (int k = 0; k < 7; ++k) snprintf(v[k], sizeof v[k], "%.6f", 1e3 * ms[k]);
        snprintf(v[7], sizeof v[7], "%zu", r->m.peak_bytes);
        const char *cells[10] = { r->name, device_name(d), v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] };
        CHECK(csv_row_text(f, cells, 10));
    }
    CHECK(csv_close(f));
}

static void draw_plot(const char *path, device d, const row *rows)
{
    device_properties props;
    CHECK(device_get_properties(d, &props));
    double naive[NWORKLOADS], synced[NWORKLOADS], events[NWORKLOADS];
    const char *labels[NWORKLOADS];
    for (int i = 0; i < NWORKLOADS; ++i) {
        naive[i] = 1e3 * rows[i].naive;
        synced[i] = 1e3 * rows[i].synced;
        events[i] = 1e3 * rows[i].m.device_seconds;
        labels[i] = rows[i].name;
    }
    char title[256];
    if (device_is_gpu(d))
        snprintf(title, sizeof title, "Host clock vs events on %s", props.name);
    else
        snprintf(title, sizeof title, "Host clock vs events on the cpu (%s)", props.name);
    plot p = { .title = title,
               .xlabel = "workload",
               .ylabel = "time (ms, log scale)",
               .log_y = true,
               .bar_labels = labels };
    CHECK(plot_add(&p, "host clock, not synchronised", NULL, naive, NWORKLOADS, PLOT_BARS));
    CHECK(plot_add(&p, "host clock, synchronised", NULL, synced, NWORKLOADS, PLOT_BARS));
    CHECK(plot_add(&p, "device events", NULL, events, NWORKLOADS, PLOT_BARS));
    CHECK(plot_draw(&p, path));
    printf("plot: %s\n", path);
}

static void print_takeaway(device d, const row *rows)
{
    const row *r = &rows[MATMULS];
    if (device_is_gpu(d))
        printf("takeaway: on %s the loop \"took\" %.3f ms by the host clock but %.0f ms of device time: "
               "launches return at once, so synchronise (or read a value) before stopping the clock, "
               "or time with events.\n",
               device_name(d), 1e3 * r->naive, 1e3 * r->m.device_seconds);
    else
        printf("takeaway: on the cpu nothing is asynchronous (%.0f ms unsynchronised, %.0f ms synchronised); "
               "on a GPU the unsynchronised clock would see almost nothing, so always synchronise before "
               "stopping the clock.\n",
               1e3 * r->naive, 1e3 * r->synced);
}

int main(int argc, char **argv)
{
    int size = 0, matmuls = 0, launches = 100000;
    const cli_option options[] = {
        { "size", CLI_INT, &size, "N",
          "matrix size (0: 1024, or 512 with --quick; on a real GPU 4096 or 2048)", 0, 4096 },
        { "matmuls", CLI_INT, &matmuls, "K", "products per run (0: 20, or 16 with --quick)", 0, 1000 },
        { "launches", CLI_INT, &launches, "L", "launches of x = x + 1", 1, 1 << 24 },
    };
    const cli_program program = { "03_async_timing",
                                  "asynchronous execution, honest timing, peak memory "
                                  "and the utilisation illusion",
                                  options, 3 };
    cli_args args;
    int code = cli_parse(&program, argc, argv, &args);
    if (code >= 0) return code;
    /* A real GPU needs the lesson's size for the work to take longer than
     * launching it; the CPU and a simulated GPU take seconds at that size. */
    const bool real_gpu = args.dev.kind == DEVICE_CUDA;
    if (size == 0) size = real_gpu ? (args.quick ? 2048 : 4096) : (args.quick ? 512 : 1024);
    if (matmuls == 0) matmuls = args.quick ? 16 : 20;
    const int repeats = args.quick ? 1 : 3;
    const device d = args.dev;

    printf("device: %s%s\n\n", device_name(d),
           device_is_gpu(d) ? ""
                            : " (everything runs at once on the calling thread: nothing is asynchronous)");
    row rows[NWORKLOADS];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < NWORKLOADS; ++i) measure_workload(i, d, size, matmuls, launches, repeats, &rows[i]);
    print_results(d, rows);
    if (args.csv_path) write_csv(args.csv_path, d, rows);
    if (args.plot_path) draw_plot(args.plot_path, d, rows);
    print_takeaway(d, rows);
    return 0;
}
