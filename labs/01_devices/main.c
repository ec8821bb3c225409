/* main.c: lab 01's experiment: which devices this program sees, and how fast
 * each of them, and some published GPUs, could possibly compute.
 *
 * In the order of the README's steps: your try_gpu(i) and try_all_gpus()
 * answers (step 1); one table of every device here, in the spirit of CUDA's
 * deviceQuery, and of published cards, each with the FP32 peak your steps 2
 * and 3 work out beside the library's or the published figure; then a tensor
 * and a layer put on --device, each saying where it lives (steps 4 and 5).
 *
 *   ./lab run 01                                   this machine as it is
 *   ./lab run 01 -- --device sim:0                 the tensor and the layer on sim:0
 *   ./lab run 01 -- --csv peaks.csv --plot peaks.png --plot peaks.pdf */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cards.h"
#include "lab.h"

static const results_column columns[] = {
    { "source", RESULTS_TEXT, "source", "%s", 9 },
    { "device", RESULTS_TEXT, "device", "%s", 6 },
    { "memory", RESULTS_BYTES, "memory", NULL, 9 },
    { "multiprocessors", RESULTS_NUMBER, "MPs", "%.0f", 4 },
    { "cores_per_mp", RESULTS_NUMBER, "cores/MP", "%.0f", 8 },
    { "clock_ghz", RESULTS_NUMBER, "GHz", "%.3f", 5 },
    { "compute_capability", RESULTS_TEXT, "CC", "%s", 4 },
    { "peak_tflops", RESULTS_NUMBER, "your peak TFLOPS", "%.3f", 16 },
    { "reference_tflops", RESULTS_NUMBER, "library's/published", "%.3f", 19 },
    { "name", RESULTS_TEXT, "name", "%s", 4 },
};
#define NCOLUMNS ((int)(sizeof columns / sizeof columns[0]))

/* ---- step 1: the lessons' helpers ------------------------------------------ */

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
    printf("]\n\n");
}

/* ---- steps 2 and 3: the table ---------------------------------------------- */

/* The cells a device here and a published card share. A figure of 0 is
 * unknown, and its cell stays unknown: "-" on the terminal, empty in the CSV. */
static void add_figures(results *r, int multiprocessors, int cores, double clock_ghz, int cc_major,
                        int cc_minor, double reference_gflops)
{
    double gflops = 0;
    CHECK(lab_peak_fp32_gflops(multiprocessors, cores, clock_ghz, &gflops));
    results_number(r, "multiprocessors", multiprocessors);
    if (cores > 0) results_number(r, "cores_per_mp", cores);
    results_number(r, "clock_ghz", clock_ghz);
    if (cc_major > 0) {
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", cc_major, cc_minor);
        results_text(r, "compute_capability", cc);
    }
    if (gflops > 0) results_number(r, "peak_tflops", gflops / 1000);
    if (reference_gflops > 0) results_number(r, "reference_tflops", reference_gflops / 1000);
}

/* Every device here, the CPU first. On the CPU the library counts cores as
 * "MPs" and one core's FP32 FMA lanes as "cores/MP"; a GPU's cores per SM come
 * from your table: a real GPU's compute capability, or a simulated one's
 * modelled card (8.6). */
static void add_devices_here(results *r)
{
    device all[LABKIT_MAX_DEVICES];
    const int n = device_list(all, LABKIT_MAX_DEVICES);
    for (int k = 0; k < n; ++k) {
        device_properties p;
        CHECK(device_get_properties(all[k], &p));
        int cores = p.cores_per_mp;
        if (device_is_gpu(all[k])) CHECK(lab_fp32_cores_per_sm(p.cc_major, p.cc_minor, &cores));
        CHECK(results_row(r));
        results_text(r, "source", "here");
        results_text(r, "device", device_name(all[k]));
        results_number(r, "memory", (double)p.memory_bytes);
        add_figures(r, p.multiprocessors, cores, p.clock_ghz, p.cc_major, p.cc_minor, p.peak_gflops);
        results_text(r, "name", p.name);
    }
}

static void add_published_cards(results *r)
{
    for (int k = 0; k < known_card_count; ++k) {
        const known_card *c = &known_cards[k];
        int cores = 0;
        CHECK(lab_fp32_cores_per_sm(c->cc_major, c->cc_minor, &cores));
        CHECK(results_row(r));
        results_text(r, "source", "published");
        add_figures(r, c->multiprocessors, cores, c->boost_ghz, c->cc_major, c->cc_minor,
                    c->published_tflops * 1000);
        results_text(r, "name", c->name);
    }
}

/* ---- steps 4 and 5: a tensor and a layer on the device ------------------------ */

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

/* ---- the takeaway ------------------------------------------------------------- */

/* This machine's first real GPU against its CPU (row 0) or, without one,
 * lesson 001's card; and the lesson's own figure for that card. */
static void print_takeaway(const results *r, int here)
{
    double lesson = 0;
    CHECK(lab_peak_fp32_gflops(70, 128, 1.71, &lesson));
    printf(
        "lesson 001's RTX 3080 12 GB: 70 SMs x 128 cores x 1.71 GHz = %.2f TFLOPS counts one operation per "
        "cycle; x 2 for the FMA: %.2f TFLOPS, as published.\n",
        lesson / 2000, lesson / 1000);

    char gpu[160] = "";
    int row = -1;
    device_properties p;
    if (device_count(DEVICE_CUDA) > 0) { /* device_list puts cuda:0 right after the CPU */
        CHECK(device_get_properties((device){ DEVICE_CUDA, 0 }, &p));
        snprintf(gpu, sizeof gpu, "this machine's cuda:0 (%s)", p.name);
        row = 1;
    }
    for (int k = 0; k < known_card_count && row < 0; ++k)
        if (strcmp(known_cards[k].name, "RTX 3080 12 GB") == 0) {
            snprintf(gpu, sizeof gpu, "lesson 001's %s", known_cards[k].name);
            row = here + k;
        }
    const double cpu = results_get(r, 0, "peak_tflops"),
                 peak = row < 0 ? NAN : results_get(r, row, "peak_tflops");
    if (isnan(cpu) || isnan(peak))
        printf(
            "takeaway: FP32 peak = SMs x cores x clock x 2 (an FMA is 2 operations), unknown when one factor "
            "is; try_gpu(i) falls back to the CPU when GPU i does not exist.\n");
    else
        printf(
            "takeaway: FP32 peak = SMs x cores x clock x 2 (an FMA is 2 operations): %s reaches %.1f TFLOPS, "
            "%.0fx this CPU's %.2f TFLOPS; try_gpu(i) falls back to the CPU when GPU i does not exist.\n",
            gpu, peak, peak / cpu, cpu);
}

int main(int argc, char **argv)
{
    const cli_program program = {
        .name = "01_devices",
        .summary = "try_gpu and try_all_gpus; every device here and published GPUs with their FP32 peak; "
                   "a tensor and a layer on --device (--quick changes nothing: the listing is quick)",
    };
    cli_args args;
    int code = cli_parse(&program, argc, argv, &args);
    if (code >= 0) return code;
    results *r = NULL;
    CHECK(results_create(&r, &args, columns, NCOLUMNS));

    show_try_gpu();
    add_devices_here(r);
    const int here = results_count(r);
    add_published_cards(r);
    printf("the FP32 peak your steps 2 and 3 work out, beside the library's or the published figure\n"
           "(on the CPU, MPs are cores and cores/MP one core's FP32 FMA lanes):\n");
    CHECK(results_print(r));
    place_on(args.dev);
    printf("\n");

    device_properties cpu;
    CHECK(device_get_properties(device_cpu(), &cpu));
    char machine[160];
    snprintf(machine, sizeof machine, "machine=%s, %d cores", cpu.name, cpu.multiprocessors);
    const char *vars[] = { machine, NULL };
    CHECK(results_finish(r, vars));
    print_takeaway(r, here);
    results_free(r);
    return 0;
}
