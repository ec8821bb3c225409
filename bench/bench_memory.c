/* bench_memory.c: lab 09's kernels on a real GPU beside what a user would call
 * instead: cudaMemcpy device to device, the bandwidth anchor, for the copies
 * and the sums; cuBLAS's product (cublasSgemm called directly) for the naive
 * and the tiled products.
 *
 *   1. 256 MiB: cudaMemcpy device to device, lab 09's copy and scale, and its
 *      strided copy at strides 1 to 32: GB/s (bytes read + written), and each
 *      against cudaMemcpy and the device's peak;
 *   2. N = 1024, 2048 and 4096: lab 09's naive and 16 x 16 tiled products and
 *      cublasSgemm: GFLOP/s, and the tiled kernel's share of cuBLAS;
 *   3. 2^26 floats summed: one atomic per element, a shared-memory tree, a
 *      tree and warp shuffles: time and GB/s.
 *
 * Each figure is the fastest of 10 runs between CUDA events, after one
 * untimed run. Lab 09's kernels come from its solution (solutions/09_memory):
 * in the student copy, which has none, only cudaMemcpy and cuBLAS run. Without
 * a real GPU there is nothing to measure, and it says so. */
#include <math.h>

#include "bench_common.h"
#ifdef BENCH_WITH_CUDA
#include "bench_cuda.h"
#include "bench_memory.h"
#endif

#ifdef BENCH_WITH_CUDA

enum { REPS = 10 };

static void bandwidth(device gpu, const device_properties *p)
{
    const int64_t n = (int64_t)1 << 26;
    const double bytes = 8.0 * (double)n; /* read and written */
    tensor *in, *out;
    CHECK(tensor_uniform(&in, gpu, shape1(n), -1.0f, 1.0f, 1));
    CHECK(tensor_zeros(&out, gpu, shape1(n)));
    CHECK(device_synchronize(gpu));
    const double memcpy_s =
        bench_memory_d2d_seconds(gpu.index, tensor_data(out), tensor_data_const(in), 4 * (size_t)n, REPS);
    const double anchor = bytes / memcpy_s / 1e9;
    printf("\n%s, 2^26 floats (256 MiB read, 256 MiB written), GB/s counting both:\n", device_name(gpu));
    printf("  %-28s %9s %10s %8s\n", "", "GB/s", "of memcpy", "of peak");
    printf("  %-28s %9.0f %9.0f%% %7.0f%%\n", "cudaMemcpy device to device", anchor, 100.0,
           100.0 * anchor / p->memory_bandwidth_gbs);
    if (!bench_memory_has_lab09()) {
        printf("  (no lab 09 rows: its solution is not in this copy of the kit)\n");
        tensor_free(in), tensor_free(out);
        return;
    }
    static const char *const names[] = { "lab 09 copy", "lab 09 scale" };
    for (int kernel = 0; kernel < 2; ++kernel) {
        const double s = bench_memory_stream_seconds(gpu.index, kernel, tensor_data_const(in),
                                                     tensor_data(out), n, 1, REPS);
        printf("  %-28s %9.0f %9.0f%% %7.0f%%\n", names[kernel], bytes / s / 1e9, 100.0 * memcpy_s / s,
               100.0 * bytes / s / 1e9 / p->memory_bandwidth_gbs);
    }
    for (int64_t stride = 1; stride <= 32; stride *= 2) {
        char name[48];
        snprintf(name, sizeof name, "lab 09 strided copy, %2lld", (long long)stride);
        const double s = bench_memory_stream_seconds(gpu.index, 2, tensor_data_const(in), tensor_data(out), n,
                                                     stride, REPS);
        printf("  %-28s %9.0f %9.0f%% %7.0f%%\n", name, bytes / s / 1e9, 100.0 * memcpy_s / s,
               100.0 * bytes / s / 1e9 / p->memory_bandwidth_gbs);
    }
    tensor_free(in), tensor_free(out);
}

static void products(device gpu)
{
    static const int sizes[] = { 1024, 2048, 4096 };
    printf("\n%s, products c = a b, GFLOP/s:\n", device_name(gpu));
    printf("  %5s %10s %10s %10s %16s\n", "N", "naive", "tiled", "cuBLAS", "tiled of cuBLAS");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const int n = sizes[i];
        const double flop = 2.0 * n * (double)n * n;
        tensor *a, *b, *c;
        CHECK(tensor_uniform(&a, gpu, shape2(n, n), -1.0f, 1.0f, 2));
        CHECK(tensor_uniform(&b, gpu, shape2(n, n), -1.0f, 1.0f, 3));
        CHECK(tensor_zeros(&c, gpu, shape2(n, n)));
        CHECK(device_synchronize(gpu));
        const double cublas = flop /
                              bench_cuda_sgemm_seconds(gpu.index, tensor_data_const(a), tensor_data_const(b),
                                                       tensor_data(c), n, REPS) /
                              1e9;
        if (bench_memory_has_lab09()) {
            const double naive = flop /
                                 bench_memory_product_seconds(gpu.index, 0, tensor_data_const(a),
                                                              tensor_data_const(b), tensor_data(c), n, REPS) /
                                 1e9;
            const double tiled = flop /
                                 bench_memory_product_seconds(gpu.index, 1, tensor_data_const(a),
                                                              tensor_data_const(b), tensor_data(c), n, REPS) /
                                 1e9;
            printf("  %5d %10.0f %10.0f %10.0f %15.1f%%\n", n, naive, tiled, cublas, 100.0 * tiled / cublas);
        } else
            printf("  %5d %10s %10s %10.0f %16s\n", n, "-", "-", cublas, "-");
        tensor_free(a), tensor_free(b), tensor_free(c);
    }
}

static void sums(device gpu)
{
    if (!bench_memory_has_lab09()) return;
    const int64_t n = (int64_t)1 << 26;
    tensor *x, *total;
    CHECK(tensor_uniform(&x, gpu, shape1(n), -1.0f, 1.0f, 4));
    CHECK(tensor_zeros(&total, gpu, shape1(1)));
    CHECK(device_synchronize(gpu));
    static const char *const names[] = { "one atomic per element", "tree, one atomic per block",
                                         "tree + warp shuffles" };
    printf("\n%s, 2^26 floats summed (256 MiB read):\n", device_name(gpu));
    printf("  %-28s %9s %9s\n", "", "ms", "GB/s");
    for (int kernel = 0; kernel < 3; ++kernel) {
        const double s =
            bench_memory_sum_seconds(gpu.index, kernel, tensor_data_const(x), n, tensor_data(total), REPS);
        printf("  %-28s %9.3f %9.0f\n", names[kernel], s * 1e3, 4.0 * (double)n / s / 1e9);
    }
    tensor_free(x), tensor_free(total);
}

#endif

int main(void)
{
    const device gpu = bench_gpu();
    if (gpu.kind != DEVICE_CUDA) {
        printf("bench_memory: no real GPU here (%s is the first GPU): lab 09's kernels beside cudaMemcpy and "
               "cuBLAS need one; skipped\n",
               device_name(gpu));
        return 0;
    }
#ifdef BENCH_WITH_CUDA
    device_properties p;
    CHECK(device_get_properties(gpu, &p));
    printf("bench_memory on %s (%s): peak %.0f GB/s, %.0f GFLOP/s FP32\n", device_name(gpu), p.name,
           p.memory_bandwidth_gbs, p.peak_gflops);
    bandwidth(gpu, &p);
    products(gpu);
    sums(gpu);
    printf(
        "\ntakeaway: cudaMemcpy sets the bandwidth a kernel can hope for; a coalesced copy comes near it, a "
        "strided one falls with the sectors it wastes, and a tiled product gains on the naive one without "
        "reaching cuBLAS.\n");
#endif
    return 0;
}
