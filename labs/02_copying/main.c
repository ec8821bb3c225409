/* Lab 02 (copying): where a tensor lives, and what moving it costs.
 *
 * Shows, on the device of --device (default: GPU 0, else the CPU):
 *   1. the same-device rule: a + b with a and b on two devices is refused;
 *      copied on purpose, the sum works;
 *   2. tensor_to onto a tensor's own device copies nothing; onto another, once;
 *   3. a whole layer (weight and bias) moved to the device;
 *   4. the same bytes moved as one copy and as thousands of small ones;
 *   5. the lesson's exercise: 1000 products of 100x100 matrices, logging each
 *      product's norm on the host vs keeping the log on the device;
 *   6. a bandwidth table (and plot) in the spirit of CUDA's bandwidthTest.
 * The counters of counters.h say how many copies and waits each part made. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "measure.h"

#define KIB ((int64_t)1 << 10)
#define MIB ((int64_t)1 << 20)

/* The copies made since reset_both(d, other), and their bytes. A copy between
 * the host and a GPU is counted on the GPU only, so summing the two devices
 * counts each copy once (the pair is always the CPU and one device). */
typedef struct tally {
    uint64_t copies, bytes;
    bool to_host; /* some copy went device -> host */
} tally;

static tally copies_between(device d, device other)
{
    tally t = { 0, 0, false };
    for (int i = 0; i < (device_equal(d, other) ? 1 : 2); ++i) {
        device_counters c;
        CHECK(counters_read(i == 0 ? d : other, &c));
        t.copies += c.h2d_copies + c.d2h_copies + c.d2d_copies;
        t.bytes += c.h2d_bytes + c.d2h_bytes + c.d2d_bytes;
        t.to_host = t.to_host || c.d2h_copies > 0;
    }
    return t;
}

static void reset_both(device d, device other)
{
    CHECK(counters_reset(d));
    CHECK(counters_reset(other));
}

/* Prints a library message indented, line by line. */
static void print_indented(const char *text)
{
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        int length = end ? (int)(end - line) : (int)strlen(line);
        printf("      %.*s\n", length, line);
        line += length + (end ? 1 : 0);
    }
}

/* ---- 1 and 2: the same-device rule and tensor_to ---------------------------- */

static void show_same_device_rule(device d, device other)
{
    tensor *a, *b, *sum;
    CHECK(tensor_ones(&a, d, shape2(2, 3)));                          /* X on the "GPU" */
    CHECK(tensor_uniform(&b, other, shape2(2, 3), 0.0f, 1.0f, 2021)); /* Y elsewhere */
    CHECK(tensor_empty(&sum, d, DTYPE_F32, shape2(2, 3)));
    printf("1. the same-device rule: a = ones [2, 3] on %s, b = uniform [2, 3] on %s\n", device_name(d),
           device_name(other));

    bool refused;
    char message[512];
    reset_both(d, other);
    CHECK(lab_try_add(a, b, sum, &refused, message, sizeof message));
    if (refused) {
        printf("   a + b: refused, %llu copies made; the library says:\n",
               (unsigned long long)copies_between(d, other).copies);
        print_indented(message);
    } else {
        printf("   a + b: computed (a and b live on one device, so nothing is refused)\n");
    }

    reset_both(d, other);
    CHECK(lab_add_across(a, b, sum));
    const tally t = copies_between(d, other); /* before the read below, itself a copy */
    float v[6];
    CHECK(tensor_to_host(sum, v, 6));
    printf("   copy b to %s on purpose, then add (copies: %llu): [%.4f %.4f %.4f; %.4f %.4f %.4f]\n",
           device_name(d), (unsigned long long)t.copies, v[0], v[1], v[2], v[3], v[4], v[5]);
    tensor_free(a), tensor_free(b), tensor_free(sum);
}

static void show_to(device d, device other)
{
    tensor *z, *same, *there;
    CHECK(tensor_zeros(&z, d, shape2(32, 32)));
    reset_both(d, other);
    CHECK(tensor_to(z, d, &same));
    printf("2. tensor_to: z = zeros [32, 32] on %s; to(z, %s) is z: %s, %llu copies\n", device_name(d),
           device_name(d), same == z ? "yes" : "no", (unsigned long long)copies_between(d, other).copies);
    if (device_equal(d, other)) {
        printf("   (no second device here: LABKIT_SIM_GPUS=2 gives two simulated GPUs)\n");
    } else {
        reset_both(d, other);
        CHECK(tensor_to(z, other, &there));
        tally t = copies_between(d, other);
        printf("   to(z, %s): a new tensor, %llu copy of %llu bytes (%s)\n", device_name(other),
               (unsigned long long)t.copies, (unsigned long long)t.bytes,
               t.to_host ? "device to host" : "host to device");
        tensor_free(there);
    }
    tensor_free(z), tensor_free(same);
}

/* ---- 3: a whole layer --------------------------------------------------------- */

static void show_layer(device d, device other)
{
    lab_linear net; /* the lesson's nn.Linear(3, 1): weight [3, 1], bias [1] */
    CHECK(tensor_normal(&net.weight, other, shape2(3, 1), 0.0f, 0.5f, 7));
    CHECK(tensor_full(&net.bias, other, shape1(1), 0.25f));
    tensor *x, *y;
    CHECK(tensor_ones(&x, d, shape2(2, 3)));
    CHECK(tensor_empty(&y, d, DTYPE_F32, shape2(2, 1)));

    reset_both(d, other);
    CHECK(lab_linear_to(&net, d));
    const tally t = copies_between(d, other);
    CHECK(op_matmul(x, false, net.weight, false, net.bias, y)); /* net(X): runs where X and net are */
    float out[2];
    CHECK(tensor_to_host(y, out, 2));
    printf("3. a layer (weight [3, 1], bias [1]) moved from %s to %s in %llu copies of %llu bytes:\n"
           "   weight on %s, bias on %s; net(X) for X = ones [2, 3] on %s: [%.4f; %.4f]\n",
           device_name(other), device_name(d), (unsigned long long)t.copies, (unsigned long long)t.bytes,
           device_name(tensor_device(net.weight)), device_name(tensor_device(net.bias)), device_name(d),
           out[0], out[1]);
    tensor_free(net.weight), tensor_free(net.bias), tensor_free(x), tensor_free(y);
}

/* ---- 4: one big copy vs many small ones --------------------------------------- */

/* Returns how many times longer the many small host->device copies took. */
static double show_one_vs_many(device d, bool quick)
{
    const int64_t total = 4 * MIB;
    const int pieces = 4096, reps = quick ? 3 : 5;
    double ratio = 0.0;
    printf("\n4. the same %lld MiB moved as 1 copy and as %d copies of %lld KiB (median of %d)\n",
           (long long)(total / MIB), pieces, (long long)(total / pieces / KIB), reps);
    printf("   %-14s %12s %16s %8s\n", "direction", "1 copy", "4096 copies", "ratio");
    for (int to_device = 1; to_device >= 0; --to_device) {
        double one, many;
        CHECK(time_one_vs_many(d, total, pieces, to_device, reps, &one, &many));
        printf("   %-14s %9.2f ms %13.2f ms %7.1fx\n", to_device ? "host->device" : "device->host", one * 1e3,
               many * 1e3, many / one);
        if (to_device) ratio = many / one;
    }
    if (!device_is_gpu(d))
        printf("   (on cpu no transfer happens: a \"copy\" is a memcpy within RAM, with no bus and no "
               "latency)\n");
    return ratio;
}

/* ---- 5: the lesson's exercise: logging a norm every step --------------------- */

/* Returns how many times longer the host-logged loop took. */
static double show_norm_log(device d)
{
    enum { N = 100, STEPS = 1000 };
    tensor *x, *w;
    CHECK(norm_log_inputs(d, N, &x, &w));
    static float on_host[STEPS], on_device[STEPS];          /* the two logs, one norm per step */
    CHECK(lab_norms_logged_on_device(x, w, 10, on_device)); /* warm-up: threads, caches */

    CHECK(counters_reset(d));
    double start = wall_seconds();
    CHECK(lab_norms_logged_on_host(x, w, STEPS, on_host));
    const double host_s = wall_seconds() - start;
    device_counters host_c, device_c;
    CHECK(counters_read(d, &host_c));

    CHECK(counters_reset(d));
    start = wall_seconds();
    CHECK(lab_norms_logged_on_device(x, w, STEPS, on_device));
    const double device_s = wall_seconds() - start;
    CHECK(counters_read(d, &device_c));

    double worst = 0.0; /* the largest relative difference between the two logs, step by step */
    int equal = 0;
    for (int i = 0; i < STEPS; ++i) {
        equal += memcmp(&on_host[i], &on_device[i], sizeof(float)) == 0;
        worst = fmax(worst, fabs((double)on_device[i] - on_host[i]) / fabs((double)on_host[i]));
    }
    printf("\n5. %d products of %dx%d matrices on %s, logging the norm of each product\n", STEPS, N, N,
           device_name(d));
    printf("   %-12s %10s %12s %16s %15s\n", "log kept on", "time", "d2h copies", "copies on device",
           "blocking waits");
    printf("   %-12s %7.1f ms %12llu %16llu %15llu\n", "host", host_s * 1e3,
           (unsigned long long)host_c.d2h_copies, (unsigned long long)host_c.d2d_copies,
           (unsigned long long)host_c.syncs);
    printf("   %-12s %7.1f ms %12llu %16llu %15llu\n", "device", device_s * 1e3,
           (unsigned long long)device_c.d2h_copies, (unsigned long long)device_c.d2d_copies,
           (unsigned long long)device_c.syncs);
    if (!device_is_gpu(d)) /* counters.h: copies between the host and the cpu count as copies within it */
        printf(
            "   (on cpu a read to the host is counted as a copy within the cpu and never waits: the host\n"
            "   log's %llu copies are its reads, the device log's %llu its slot writes and its one read)\n",
            (unsigned long long)host_c.d2d_copies, (unsigned long long)device_c.d2d_copies);
    printf("   the two logs: %d of %d norms bitwise equal, largest relative difference %.2g\n", equal, STEPS,
           worst);
    printf("   norm after product 1: %.4f on the host, %.4f on the device; after product %d: %.4f, %.4f\n",
           on_host[0], on_device[0], STEPS, on_host[STEPS - 1], on_device[STEPS - 1]);
    tensor_free(x), tensor_free(w);
    return host_s / device_s;
}

/* ---- 6: bandwidth, in the spirit of bandwidthTest ---------------------------- */

enum { MAX_SIZES = 16 };

typedef struct bandwidth_table {
    int n;
    double bytes[MAX_SIZES];
    double gbps[BW_KINDS][MAX_SIZES]; /* one row per column of the table: a plot series each */
} bandwidth_table;

static void measure_bandwidth(device d, bool quick, bandwidth_table *table)
{
    const int64_t largest = quick ? 4 * MIB : 256 * MIB;
    printf("\n6. bandwidth between the host and %s, GB/s (1 GB = 1e9 bytes; median of 3 to 50 copies)\n",
           device_name(d));
    static const char *const short_names[BW_KINDS] = { "h2d pageable", "h2d pinned", "d2h pageable",
                                                       "d2h pinned" };
    printf("   %10s", "size");
    for (int k = 0; k < BW_KINDS; ++k) printf(" %13s", short_names[k]);
    printf("\n");
    table->n = 0;
    for (int64_t bytes = 4 * KIB; bytes <= largest && table->n < MAX_SIZES; bytes *= 4) {
        const int64_t budget = 64 * MIB / bytes; /* small copies are repeated more: their times are noisy */
        const int reps = budget < 3 ? 3 : budget > 50 ? 50 : (int)budget;
        double gbps[BW_KINDS];
        CHECK(bandwidth_point(d, (size_t)bytes, reps, gbps));
        const int i = table->n++;
        table->bytes[i] = (double)bytes;
        printf("   %6lld %s", (long long)(bytes >= MIB ? bytes / MIB : bytes / KIB),
               bytes >= MIB ? "MiB" : "KiB");
        for (int k = 0; k < BW_KINDS; ++k) {
            table->gbps[k][i] = gbps[k];
            printf(" %13.2f", gbps[k]);
        }
        printf("\n");
    }
    if (d.kind == DEVICE_CPU)
        printf("   on cpu no transfer happens: these are memcpy within RAM, the ceiling any copy here can "
               "reach\n");
    else if (d.kind == DEVICE_SIM)
        printf(
            "   on a simulated GPU \"pinned\" memory is ordinary memory, and each copy is a memcpy plus a\n"
            "   modelled 10-microsecond latency: the curve's shape is a real GPU's, its heights are not\n");
}

static void write_bandwidth(const bandwidth_table *t, device d, const cli_args *args)
{
    if (args->csv_path) {
        const char *columns[] = { "bytes", "h2d_pageable_gbps", "h2d_pinned_gbps", "d2h_pageable_gbps",
                                  "d2h_pinned_gbps" };
        csv_file *f;
        CHECK(csv_open(&f, args->csv_path, columns, 5));
        for (int i = 0; i < t->n; ++i) {
            const double row[5] = { t->bytes[i], t->gbps[0][i], t->gbps[1][i], t->gbps[2][i], t->gbps[3][i] };
            CHECK(csv_row(f, row, 5));
        }
        CHECK(csv_close(f));
    }
    if (args->plot_path) {
        device_properties props;
        CHECK(device_get_properties(d, &props));
        char title[200];
        snprintf(title, sizeof title, "Copy bandwidth, host <-> %s (%.60s)", device_name(d),
                 d.kind == DEVICE_CPU   ? "memcpy in RAM: no transfer"
                 : d.kind == DEVICE_SIM ? "simulated GPU: pinned = ordinary"
                                        : props.name);
        plot p = { .title = title,
                   .xlabel = "copy size (bytes)",
                   .ylabel = "bandwidth (GB/s)",
                   .log_x = true,
                   .log_y = true };
        for (int k = 0; k < BW_KINDS; ++k)
            CHECK(plot_add(&p, bw_kind_names[k], t->bytes, t->gbps[k], (size_t)t->n, PLOT_LINES_POINTS));
        CHECK(plot_draw(&p, args->plot_path));
    }
}

/* ---- the experiment ------------------------------------------------------------ */

int main(int argc, char **argv)
{
    const cli_program program = { "02_copying",
                                  "where tensors live, the same-device rule, and what copies cost", NULL, 0 };
    cli_args args;
    const int rc = cli_parse(&program, argc, argv, &args);
    if (rc >= 0) return rc;
    const device d = args.dev, other = partner_of(d);
    printf("lab 02 on %s%s\n\n", device_name(d),
           device_is_gpu(d) ? "" : " (copies between the host and the cpu cross no bus)");

    show_same_device_rule(d, other);
    show_to(d, other);
    show_layer(d, other);
    const double many_ratio = show_one_vs_many(d, args.quick);
    const double log_ratio = show_norm_log(d);
    bandwidth_table table;
    measure_bandwidth(d, args.quick, &table);
    write_bandwidth(&table, d, &args);

    if (device_is_gpu(d))
        printf(
            "\ntakeaway: on %s, 4096 small copies took %.0fx as long as one copy of the same bytes, and "
            "logging a norm every step cost 1000 blocking reads instead of 1 (%.1fx the time here): copy in "
            "big pieces, keep logs on the device.\n",
            device_name(d), many_ratio, log_ratio);
    else
        printf("\ntakeaway: on cpu a tensor already lives in host memory, so no copy crosses a bus or waits; "
               "on a GPU every copy pays a latency: copy in big pieces, keep logs on the device.\n");
    return 0;
}
