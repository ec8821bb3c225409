/* bench_kernel_tools.c: what the simulated GPU's kernel sanitizer and memory
 * profiler cost (labkit/kernel_sanitizer.h, labkit/kernel_profile.h), against
 * the plain simulated run of the same kernels.
 *
 * Lab 04's naive product (from its solution; left out of the student copy) at
 * the shapes of lab 04's kernels claim ([64 x 64] x [64 x 64] and
 * [37 x 53] x [53 x 29]), and the 16 x 16 tiled product of bench_kernels.cuh
 * (shared memory, two barriers per tile; lab 09's step 2) at N = 64 and 37,
 * and lab 09's copy at n = 100000 and block sum at n = 100003 (its kernels
 * claim's sizes; from its solution, kernel_tools_launch09.c), each launched:
 *   plain        as a lab's launcher is built (kernel_tools_launch.c);
 *   instrumented the same file built for the kernel tools, both tools off:
 *                what the callbacks cost when they watch nothing;
 *   sanitizer    watched by the sanitizer (./lab check NN --kernels);
 *   profiler     counted by the profiler (./lab profile NN);
 *   both         the two at once.
 * Each is the worker's CPU time for the launches of all the shapes
 * (CLOCK_THREAD_CPUTIME_ID, which other programs on the machine do not
 * lengthen), the fastest of rounds in which the five take turns. The aim: the
 * sanitizer and the profiler each at most 5x the plain run. */
#include "bench_common.h"

#include "labkit/kernel_profile.h"
#include "labkit/kernel_sanitizer.h"

#include "bench_kernel_tools.h"

#define TILE 16 /* bench_kernels.cuh's BENCH_TILE */

enum { PLAIN, INSTRUMENTED, SANITIZER, PROFILER, BOTH, MODES };
static const char *const mode_names[MODES] = { "plain", "instrumented", "sanitizer", "profiler", "both" };

typedef struct product_shape {
    int64_t m, n, k;
} product_shape;

static double worker_cpu_seconds;

/* The worker's CPU time for one launch of `k` on `args`. */
static double launch_seconds(device d, const kernel_launchers *k, tools_product_args *args)
{
    args->cpu_seconds = &worker_cpu_seconds;
    CHECK(device_launch(d, k, args, sizeof *args));
    CHECK(device_synchronize(d));
    return worker_cpu_seconds;
}

#ifdef BENCH_WITH_KERNEL_TOOLS
/* The tools as mode `m` wants them, for the launches that start from now on. */
static void tools_for(int m)
{
    CHECK(kernel_sanitizer_enable(m == SANITIZER || m == BOTH));
    if (m == PROFILER || m == BOTH)
        CHECK(kernel_profile_start());
    else
        kernel_profile_stop();
}

/* A kernel's row: its plain time and every mode's against it, with the
 * sanitizer's cost per watched access; or mode `only`'s time alone. */
static void print_row(const char *name, const double best[MODES], double accesses, int only)
{
    if (only >= 0) {
        printf("  %-20s %s: %.2f ms\n", name, mode_names[only], best[only] * 1e3);
        return;
    }
    printf("  %-20s %9.2f ms", name, best[PLAIN] * 1e3);
    for (int m = INSTRUMENTED; m < MODES; ++m) printf(" %8.2fx", best[m] / best[PLAIN]);
    printf("  %8.1f ns\n", (best[SANITIZER] - best[PLAIN]) / accesses * 1e9);
}

/* Loads and stores of a buffer or a shared array that the tools see in one
 * launch (the indices and the kernel's stack are not counted). */
static double naive_accesses(product_shape s)
{
    return (double)s.m * (double)s.n * (2.0 * (double)s.k + 1.0);
}

static double tiled_accesses(int n)
{
    const int tiles = (n + TILE - 1) / TILE, side = tiles * TILE;
    double count = 0.0;
    for (int row = 0; row < side; ++row)
        for (int col = 0; col < side; ++col) {
            const int tx = col % TILE, ty = row % TILE;
            for (int t = 0; t < n; t += TILE)
                count += (row < n && t + tx < n) + (t + ty < n && col < n) + 2.0 /* stores */ + 2.0 * TILE;
            count += row < n && col < n;
        }
    return count;
}

/* One kernel over its shapes in every mode (or only mode `only`, for
 * callgrind: no table then): the fastest total of `rounds`. */
static void measure(device sim, const char *name, const kernel_launchers *const launchers[2],
                    const product_shape *shapes, size_t count, double accesses, int rounds, int only)
{
    double best[MODES] = { 0 };
    tensor *a[4], *b[4], *c[4];
    tools_product_args args[4];
    for (size_t i = 0; i < count; ++i) {
        const product_shape s = shapes[i];
        CHECK(tensor_uniform(&a[i], sim, shape2(s.m, s.k), -1.0f, 1.0f, 1));
        CHECK(tensor_uniform(&b[i], sim, shape2(s.k, s.n), -1.0f, 1.0f, 2));
        CHECK(tensor_zeros(&c[i], sim, shape2(s.m, s.n)));
        const tools_product_args p = {
            tensor_data_const(a[i]), tensor_data_const(b[i]), tensor_data(c[i]), s.m, s.n, s.k, (int)s.n, NULL
        };
        args[i] = p;
    }
    for (int r = 0; r < rounds; ++r)
        for (int m = 0; m < MODES; ++m) {
            if (only >= 0 && m != only) continue;
            tools_for(m);
            double total = 0.0;
            for (size_t i = 0; i < count; ++i) total += launch_seconds(sim, launchers[m != PLAIN], &args[i]);
            if (r == 0 || total < best[m]) best[m] = total;
        }
    tools_for(INSTRUMENTED);
    for (size_t i = 0; i < count; ++i) tensor_free(a[i]), tensor_free(b[i]), tensor_free(c[i]);
    print_row(name, best, accesses, only);
}

#ifdef BENCH_WITH_LAB09
/* Lab 09's copy or block sum over n floats in every mode (or mode `only`),
 * as measure does: the fastest of `rounds`. */
static void measure_stream(device sim, const char *name, const kernel_launchers *const launchers[2],
                           int64_t n, double accesses, int rounds, int only)
{
    double best[MODES] = { 0 };
    tensor *in = NULL, *out = NULL, *atomics = NULL;
    CHECK(tensor_uniform(&in, sim, shape1(n), -1.0f, 1.0f, 3));
    CHECK(tensor_zeros(&out, sim, shape1(n)));
    CHECK(tensor_zeros(&atomics, sim, shape1(1))); /* a float's 4 bytes: the sum's counter */
    tools_stream_args args = { tensor_data_const(in), tensor_data(out), n, (unsigned *)tensor_data(atomics),
                               &worker_cpu_seconds };
    for (int r = 0; r < rounds; ++r)
        for (int m = 0; m < MODES; ++m) {
            if (only >= 0 && m != only) continue;
            tools_for(m);
            CHECK(device_launch(sim, launchers[m != PLAIN], &args, sizeof args));
            CHECK(device_synchronize(sim));
            if (r == 0 || worker_cpu_seconds < best[m]) best[m] = worker_cpu_seconds;
        }
    tools_for(INSTRUMENTED);
    tensor_free(in), tensor_free(out), tensor_free(atomics);
    print_row(name, best, accesses, only);
}
#endif
#endif

/* bench_kernel_tools [MODE [KERNEL]]: MODE (plain, instrumented, sanitizer,
 * profiler or both) runs that way alone, once, and KERNEL (naive, tiled, copy or sum)
 * that kernel alone: what `valgrind --tool=callgrind` measures. */
int main(int argc, char **argv)
{
    const device sim = bench_sim();
    if (sim.kind != DEVICE_SIM) {
        printf("bench_kernel_tools: no simulated GPU (LABKIT_SIM_GPUS=0): nothing to measure\n");
        return 0;
    }
#ifndef BENCH_WITH_KERNEL_TOOLS
    (void)argc, (void)argv;
    printf("bench_kernel_tools: this build has no kernel tools (the configure summary says why: \"kernel "
           "tools\"): nothing to measure\n");
    return 0;
#else
    int only = -1, rounds = 7;
    for (int m = 0; argc > 1 && m < MODES; ++m)
        if (strcmp(argv[1], mode_names[m]) == 0) only = m, rounds = 1;
    const char *kernel = argc > 2 ? argv[2] : "";
    if (argc > 3 || (argc >= 2 && only < 0) ||
        (argc == 3 && strcmp(kernel, "naive") && strcmp(kernel, "tiled") && strcmp(kernel, "copy") &&
         strcmp(kernel, "sum"))) {
        fprintf(stderr, "usage: bench_kernel_tools [plain|instrumented|sanitizer|profiler|both "
                        "[naive|tiled|copy|sum]]\n");
        return 2;
    }
    if (only < 0) {
        printf(
            "%s, the worker's CPU time for each kernel's launches at its check's sizes (the fastest of %d "
            "rounds),\nthen each way of running them against the plain run; the sanitizer's extra time per "
            "load or store\nof device or shared memory:\n",
            device_name(sim), rounds);
        printf("  %-20s %12s", "kernel", mode_names[PLAIN]);
        for (int m = INSTRUMENTED; m < MODES; ++m) printf(" %9s", mode_names[m]);
        printf("  %11s\n", "per access");
    }
    kernel_sanitizer_clear();
#ifdef BENCH_WITH_NAIVE
    /* lab 04's kernels claim (labs/04_matmul/check.c): [m x k] x [k x n] */
    static const product_shape naive_shapes[] = { { 64, 64, 64 }, { 37, 29, 53 } };
    const kernel_launchers *const naive[2] = { bench_tools_plain.naive, bench_tools_watched.naive };
    if (!*kernel || strcmp(kernel, "naive") == 0)
        measure(sim, "naive_matmul_kernel", naive, naive_shapes, 2,
                naive_accesses(naive_shapes[0]) + naive_accesses(naive_shapes[1]), rounds, only);
#else
    printf("  (no naive row: lab 04's solution is not in this copy of the kit)\n");
#endif
    static const product_shape tiled_shapes[] = { { 64, 64, 64 }, { 37, 37, 37 } };
    const kernel_launchers *const tiled[2] = { bench_tools_plain.tiled, bench_tools_watched.tiled };
    if (!*kernel || strcmp(kernel, "tiled") == 0)
        measure(sim, "bench_tiled_kernel", tiled, tiled_shapes, 2, tiled_accesses(64) + tiled_accesses(37),
                rounds, only);
#ifdef BENCH_WITH_LAB09
    /* lab 09's kernels claim (labs/09_memory/check.c): the copy at n = 100000
     * (a load and a store per element), the block sum at 100003 (a load, then
     * a tree of 255 additions in shared memory per block: 3 accesses each,
     * and a store of the element) */
    const kernel_launchers *const copy[2] = { bench_tools09_plain.copy, bench_tools09_watched.copy };
    const kernel_launchers *const sum[2] = { bench_tools09_plain.sum_block, bench_tools09_watched.sum_block };
    const int64_t sum_blocks = (100003 + 255) / 256;
    if (!*kernel || strcmp(kernel, "copy") == 0)
        measure_stream(sim, "copy_kernel", copy, 100000, 2.0 * 100000, rounds, only);
    if (!*kernel || strcmp(kernel, "sum") == 0)
        measure_stream(sim, "sum_block_kernel", sum, 100003, (double)sum_blocks * (2.0 * 256 + 3.0 * 255),
                       rounds, only);
#endif
    /* the tools did run: a bench of tools that watched nothing would flatter them */
    const size_t reports = kernel_sanitizer_count();
    const unsigned long long watched = kernel_sanitizer_launches();
    printf("  the sanitizer watched %llu launches (%zu reports); the profiler recorded %zu\n", watched,
           reports, kernel_profile_count());
    const bool sanitized = only < 0 || only == SANITIZER || only == BOTH,
               profiled = only < 0 || only == PROFILER || only == BOTH;
    if ((sanitized && watched == 0) || reports > 0 || (profiled && kernel_profile_count() == 0)) {
        printf(
            "bench_kernel_tools: the tools did not watch these launches cleanly: the figures mean nothing\n");
        return 1;
    }
    printf(
        "\ntakeaway: the kernel tools cost every load and store of a kernel a call; ./lab check NN --kernels "
        "and ./lab profile NN pay it, the timed runs never do.\n");
    return 0;
#endif
}
