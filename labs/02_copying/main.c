/* Lab 02 (copying): where a tensor lives, and what moving it costs.
 *
 * Shows, on the device of --device (default: GPU 0, else the CPU), paired with
 * a second device (the CPU for a GPU; GPU 0 for the CPU, when there is one):
 *   1. the same-device rule: a + b across the two devices is refused; copied
 *      on purpose, the sum works;
 *   2. tensor_to onto a tensor's own device copies nothing; onto another, once;
 *   3. the lessons' nn.Linear(3, 1) moved to the device, then net(X) there;
 *   4. the same bytes moved as one copy and as thousands of small ones;
 *   5. the lessons' exercise: 1000 products of 100x100 matrices, logging each
 *      product's norm on the host vs keeping the log on the device;
 *   6. the results: copy bandwidth against copy size, each direction, from
 *      pageable and pinned memory (CUDA's bandwidthTest), drawn by plot.gp.
 * The counters of counters.h say how many copies and waits each part made. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "given.h"
#include "lab.h"
#include "measure.h"

#define KIB ((int64_t)1 << 10)
#define MIB ((int64_t)1 << 20)

static uint64_t copies_made(device d, device other)
{
    copy_tally t;
    CHECK(copies_between(d, other, &t));
    return t.copies;
}

/* ---- 1 to 3: the same-device rule, tensor_to, a whole layer -------------------- */

static void show_same_device_rule(device d, device other)
{
    tensor *a, *b, *sum;
    CHECK(tensor_ones(&a, d, shape2(2, 3)));                          /* the lessons' X, on the "GPU" */
    CHECK(tensor_uniform(&b, other, shape2(2, 3), 0.0f, 1.0f, 2021)); /* Y, elsewhere */
    CHECK(tensor_empty(&sum, d, DTYPE_F32, shape2(2, 3)));
    printf("1. the same-device rule: a = ones [2, 3] on %s, b = uniform [2, 3] on %s\n", device_name(d),
           device_name(other));
    bool refused;
    char message[512];
    CHECK(reset_pair(d, other));
    CHECK(lab_try_add(a, b, sum, &refused, message, sizeof message));
    if (refused) {
        printf("   a + b: refused, %llu copies made; the library says:\n",
               (unsigned long long)copies_made(d, other));
        for (char *line = strtok(message, "\n"); line; line = strtok(NULL, "\n")) printf("      %s\n", line);
    } else {
        printf("   a + b: computed (a and b live on one device, so nothing is refused)\n");
    }
    CHECK(reset_pair(d, other));
    CHECK(lab_add_across(a, b, sum));
    const uint64_t copies = copies_made(d, other); /* before the read below, itself a copy */
    float v[6];
    CHECK(tensor_to_host(sum, v, 6));
    printf("   b copied to %s on purpose, then added (copies: %llu): [%.4f %.4f %.4f; %.4f %.4f %.4f]\n",
           device_name(d), (unsigned long long)copies, v[0], v[1], v[2], v[3], v[4], v[5]);
    tensor_free(a), tensor_free(b), tensor_free(sum);
}

static void show_to(device d, device other)
{
    tensor *z, *same, *there;
    CHECK(tensor_zeros(&z, d, shape2(32, 32)));
    CHECK(reset_pair(d, other));
    CHECK(tensor_to(z, d, &same));
    printf("2. tensor_to: z = zeros [32, 32] on %s; to(z, %s) is z: %s, %llu copies\n", device_name(d),
           device_name(d), same == z ? "yes" : "no", (unsigned long long)copies_made(d, other));
    if (device_equal(d, other)) {
        printf("   (no second device here: LABKIT_SIM_GPUS=2 gives two simulated GPUs)\n");
    } else {
        CHECK(reset_pair(d, other));
        CHECK(tensor_to(z, other, &there));
        copy_tally t;
        CHECK(copies_between(d, other, &t));
        printf("   to(z, %s): a new tensor, %llu copy of %llu bytes (%s)\n", device_name(other),
               (unsigned long long)t.copies, (unsigned long long)t.bytes,
               t.d2h ? "device to host" : "host to device");
        tensor_free(there);
    }
    tensor_free(z), tensor_free(same);
}

static void show_layer(device d, device other)
{
    lab_linear net; /* the lessons' nn.Linear(3, 1): weight [1, 3], bias [1] */
    CHECK(tensor_normal(&net.weight, other, shape2(1, 3), 0.0f, 0.5f, 7));
    CHECK(tensor_full(&net.bias, other, shape1(1), 0.25f));
    tensor *x, *y;
    CHECK(tensor_ones(&x, d, shape2(2, 3)));
    CHECK(tensor_empty(&y, d, DTYPE_F32, shape2(2, 1)));
    CHECK(reset_pair(d, other));
    CHECK(lab_linear_to(&net, d));
    copy_tally t;
    CHECK(copies_between(d, other, &t));
    CHECK(linear_forward(&net, x, y)); /* net(X): runs where X and the layer are */
    float out[2];
    CHECK(tensor_to_host(y, out, 2));
    printf("3. nn.Linear(3, 1) (weight [1, 3], bias [1]) moved from %s to %s in %llu copies of %llu bytes:\n"
           "   weight on %s, bias on %s; net(X) for X = ones [2, 3] on %s: [%.4f; %.4f]\n",
           device_name(other), device_name(d), (unsigned long long)t.copies, (unsigned long long)t.bytes,
           device_name(tensor_device(net.weight)), device_name(tensor_device(net.bias)), device_name(d),
           out[0], out[1]);
    tensor_free(net.weight), tensor_free(net.bias), tensor_free(x), tensor_free(y);
}

/* ---- 4 and 5: one big copy vs many small ones; the norm log --------------------- */

/* Returns how many times longer the many small host->device copies took. */
static double show_one_vs_many(device d, bool quick)
{
    const int64_t total = 4 * MIB;
    const int pieces = 4096, reps = quick ? 3 : 5;
    double ratio = 0.0;
    printf("\n4. the same %lld MiB moved as 1 copy and as %d copies of %lld KiB (median of %d):\n",
           (long long)(total / MIB), pieces, (long long)(total / pieces / KIB), reps);
    for (int to_device = 1; to_device >= 0; --to_device) {
        double one, many;
        CHECK(time_one_vs_many(d, total, pieces, to_device, reps, &one, &many));
        printf("   %s: 1 copy %.2f ms, %d copies %.2f ms: %.1fx\n",
               to_device ? "host->device" : "device->host", one * 1e3, pieces, many * 1e3, many / one);
        if (to_device) ratio = many / one;
    }
    if (!device_is_gpu(d)) printf("   (on cpu no transfer happens: a \"copy\" is a memcpy within RAM)\n");
    return ratio;
}

/* Returns how many times longer the host-logged loop took. */
static double show_norm_log(device d)
{
    enum { N = 100, STEPS = 1000 };
    static float on_host[STEPS], on_device[STEPS]; /* the two logs, one norm per step */
    tensor *x, *w;
    CHECK(norm_log_inputs(d, N, &x, &w));
    CHECK(lab_norms_logged_on_device(x, w, 10, on_device)); /* warm-up: threads, caches */
    device_counters c[2];
    double seconds[2];
    for (int k = 0; k < 2; ++k) { /* k = 0: the log read on the host every step; 1: kept on the device */
        CHECK(counters_reset(d));
        const double start = wall_seconds();
        CHECK(k == 0 ? norms_logged_on_host(x, w, STEPS, on_host)
                     : lab_norms_logged_on_device(x, w, STEPS, on_device));
        seconds[k] = wall_seconds() - start;
        CHECK(counters_read(d, &c[k]));
    }
    int equal = 0;
    for (int i = 0; i < STEPS; ++i) equal += memcmp(&on_host[i], &on_device[i], sizeof(float)) == 0;
    printf("\n5. %d products of %dx%d matrices on %s, logging the norm of each product\n", STEPS, N, N,
           device_name(d));
    printf("   %-12s %10s %12s %16s %15s\n", "log kept on", "time", "d2h copies", "copies on device",
           "blocking waits");
    for (int k = 0; k < 2; ++k)
        printf("   %-12s %7.1f ms %12llu %16llu %15llu\n", k == 0 ? "host" : "device", seconds[k] * 1e3,
               (unsigned long long)c[k].d2h_copies, (unsigned long long)c[k].d2d_copies,
               (unsigned long long)c[k].syncs);
    if (!device_is_gpu(d)) /* counters.h: copies between the host and the cpu count as copies within it */
        printf("   (on cpu a read is counted as a copy within the cpu and never waits: the host log's %llu\n"
               "   copies are its reads; the device log's %llu, its slot writes and its one read)\n",
               (unsigned long long)c[0].d2d_copies, (unsigned long long)c[1].d2d_copies);
    printf(
        "   the two logs: %d of %d norms bitwise equal; norm after product 1: %.4f, after product %d: %.4f\n",
        equal, STEPS, on_host[0], STEPS, on_host[STEPS - 1]);
    tensor_free(x), tensor_free(w);
    return seconds[0] / seconds[1];
}

/* ---- 6: the results: bandwidth, in the spirit of bandwidthTest ------------------ */

static const results_column columns[] = {
    { "device", RESULTS_TEXT, "device", NULL, 6 },
    { "bytes", RESULTS_BYTES, "size", NULL, 8 },
    { "h2d_pageable_gbps", RESULTS_NUMBER, "h2d pageable", "%.2f", 13 },
    { "h2d_pinned_gbps", RESULTS_NUMBER, "h2d pinned", "%.2f", 11 },
    { "d2h_pageable_gbps", RESULTS_NUMBER, "d2h pageable", "%.2f", 13 },
    { "d2h_pinned_gbps", RESULTS_NUMBER, "d2h pinned", "%.2f", 11 },
};

static void measure_bandwidth(device d, bool quick, results *r)
{
    const int64_t largest = quick ? 4 * MIB : 256 * MIB;
    printf("\n6. copy bandwidth between the host and %s, GB/s (1 GB = 1e9 bytes; median of 3 to 50 copies)\n",
           device_name(d));
    CHECK(results_echo(r, true));
    for (int64_t bytes = 4 * KIB; bytes <= largest; bytes *= 4) {
        const int64_t budget = 64 * MIB / bytes; /* small copies are repeated more: their times are noisy */
        const int reps = budget < 3 ? 3 : budget > 50 ? 50 : (int)budget;
        double gbps[BW_KINDS];
        CHECK(bandwidth_point(d, (size_t)bytes, reps, gbps));
        CHECK(results_row(r));
        results_text(r, "device", device_name(d));
        results_number(r, "bytes", (double)bytes);
        for (int k = 0; k < BW_KINDS; ++k) results_number(r, columns[2 + k].name, gbps[k]);
    }
    CHECK(results_print(r));
    if (d.kind == DEVICE_CPU)
        printf("   on cpu no transfer happens: these are memcpy within RAM, the ceiling any copy here can "
               "reach\n");
    else if (d.kind == DEVICE_SIM)
        printf(
            "   on a simulated GPU \"pinned\" memory is ordinary memory, and each copy is a memcpy plus a\n"
            "   modelled 10-microsecond latency: the curve's shape is a real GPU's, its heights are not\n");
}

/* ---- the experiment ------------------------------------------------------------ */

int main(int argc, char **argv)
{
    const cli_program program = { "02_copying",
                                  "where tensors live, the same-device rule, and what copies cost", NULL, 0 };
    cli_args args;
    const int rc = cli_parse(&program, argc, argv, &args);
    if (rc >= 0) return rc;
    results *r;
    CHECK(results_create(&r, &args, columns, (int)(sizeof columns / sizeof columns[0])));
    const device d = args.dev, other = partner_of(d);
    printf("lab 02 on %s, paired with %s%s\n\n", device_name(d), device_name(other),
           device_is_gpu(d) ? "" : " (copies between the host and the cpu cross no bus)");

    show_same_device_rule(d, other);
    show_to(d, other);
    show_layer(d, other);
    const double many_ratio = show_one_vs_many(d, args.quick);
    const double log_ratio = show_norm_log(d);
    measure_bandwidth(d, args.quick, r);
    const char *vars[] = { d.kind == DEVICE_CPU   ? "kind=cpu"
                           : d.kind == DEVICE_SIM ? "kind=sim"
                                                  : "kind=cuda",
                           NULL };
    CHECK(results_finish(r, vars));
    results_free(r);

    if (device_is_gpu(d))
        printf(
            "\ntakeaway: on %s, 4096 small copies took %.0fx as long as one copy of the same bytes, and "
            "logging a norm every step cost 1000 blocking reads instead of 1 (%.1fx the time here): copy in "
            "big pieces, keep logs on the device%s.\n",
            device_name(d), many_ratio, log_ratio,
            d.kind == DEVICE_SIM && !args.quick
                ? " (past 16 MiB a simulated GPU's copies measure the host's memory, not a bus: the figure "
                  "says so)"
                : "");
    else
        printf("\ntakeaway: on cpu a tensor already lives in host memory, so no copy crosses a bus or waits; "
               "on a GPU every copy pays a latency: copy in big pieces, keep logs on the device.\n");
    return 0;
}
