/* bench_matmul.c: does the library's matrix product reach the speed of the
 * library a user would call instead?
 *
 * On the CPU and a simulated GPU: for N = 1024 and 2048 it times, in the same
 * run and interleaved, cblas_sgemm called directly, op_matmul on the cpu, and
 * op_matmul on sim:0 (OpenBLAS too), and prints GFLOP/s and each one's ratio to
 * the direct call. Then it queues products on the GPU while the host computes
 * others on the cpu, to show that two users of OpenBLAS at once cost no more
 * than one after the other. On a real GPU it also sets op_matmul on cuda:0
 * beside cublasSgemm called directly on the same device buffers, N = 1024, 2048
 * and 4096 (the aim: at least 95%). */
#include <cblas.h>

#include "bench_common.h"
#ifdef BENCH_WITH_CUDA
#include "bench_cuda.h"
#endif

#define REPEATS 7

typedef struct candidate {
    const char *name;
    device dev;
    tensor *a, *b, *out;
    double seconds[REPEATS];
} candidate;

static double time_direct(const float *a, const float *b, float *out, int n)
{
    double start = wall_seconds();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, out, n);
    return wall_seconds() - start;
}

static double time_library(candidate *c)
{
    double start = wall_seconds();
    CHECK(op_matmul(c->a, false, c->b, false, NULL, c->out));
    CHECK(device_synchronize(c->dev));
    return wall_seconds() - start;
}

static void setup(candidate *c, const char *name, device d, int n)
{
    c->name = name;
    c->dev = d;
    CHECK(tensor_uniform(&c->a, d, shape2(n, n), -1.0f, 1.0f, 1));
    CHECK(tensor_uniform(&c->b, d, shape2(n, n), -1.0f, 1.0f, 2));
    CHECK(tensor_empty(&c->out, d, DTYPE_F32, shape2(n, n)));
}

static void teardown(candidate *c)
{
    tensor_free(c->a);
    tensor_free(c->b);
    tensor_free(c->out);
}

static void bench_size(int n, device gpu)
{
    float *a = host_alloc((size_t)n * n * sizeof(float), 0),
          *b = host_alloc((size_t)n * n * sizeof(float), 0);
    float *out = host_alloc((size_t)n * n * sizeof(float), 0);
    for (size_t i = 0; i < (size_t)n * n; ++i) a[i] = (float)(i % 7) - 3.0f, b[i] = (float)(i % 5) - 2.0f;
    candidate lib[2];
    setup(&lib[0], "op_matmul on cpu", device_cpu(), n);
    setup(&lib[1], "op_matmul on ", gpu, n);
    double direct[REPEATS];
    time_direct(a, b, out, n); /* warm-up: OpenBLAS starts its threads on first use */
    time_library(&lib[0]);
    time_library(&lib[1]);
    for (int r = 0; r < REPEATS; ++r) {
        direct[r] = time_direct(a, b, out, n);
        lib[0].seconds[r] = time_library(&lib[0]);
        lib[1].seconds[r] = time_library(&lib[1]);
    }
    const double flop = 2.0 * n * (double)n * n, base = flop / median_of(direct, REPEATS) / 1e9;
    printf("%5d  %-28s %8.1f GFLOP/s\n", n, "cblas_sgemm (direct)", base);
    for (int i = 0; i < 2; ++i) {
        const double gflops = flop / median_of(lib[i].seconds, REPEATS) / 1e9;
        char label[64];
        snprintf(label, sizeof label, "%s%s", lib[i].name, i == 1 ? device_name(gpu) : "");
        printf("%5d  %-28s %8.1f GFLOP/s  %5.1f%% of direct\n", n, label, gflops, 100.0 * gflops / base);
        teardown(&lib[i]);
    }
    host_free(a, 0);
    host_free(b, 0);
    host_free(out, 0);
}

/* PRODUCTS on the cpu then PRODUCTS on the GPU, versus the GPU's queued first
 * so that both devices work at the same time. */
static void bench_both_at_once(device gpu, int n)
{
    enum { PRODUCTS = 6, ROUNDS = 3 };
    candidate c[2];
    setup(&c[0], "cpu", device_cpu(), n);
    setup(&c[1], "gpu", gpu, n);
    double apart[ROUNDS], together[ROUNDS];
    for (int r = 0; r < ROUNDS; ++r) {
        double start = wall_seconds();
        for (int i = 0; i < PRODUCTS; ++i) CHECK(op_matmul(c[0].a, false, c[0].b, false, NULL, c[0].out));
        for (int i = 0; i < PRODUCTS; ++i) CHECK(op_matmul(c[1].a, false, c[1].b, false, NULL, c[1].out));
        CHECK(device_synchronize(gpu));
        apart[r] = wall_seconds() - start;
        start = wall_seconds();
        for (int i = 0; i < PRODUCTS; ++i) CHECK(op_matmul(c[1].a, false, c[1].b, false, NULL, c[1].out));
        for (int i = 0; i < PRODUCTS; ++i) CHECK(op_matmul(c[0].a, false, c[0].b, false, NULL, c[0].out));
        CHECK(device_synchronize(gpu));
        together[r] = wall_seconds() - start;
    }
    const double t_apart = median_of(apart, ROUNDS), t_together = median_of(together, ROUNDS);
    printf("%5d  %d products on cpu and %d on %s: one after the other %.3f s, at once %.3f s (%.2fx)\n", n,
           PRODUCTS, PRODUCTS, device_name(gpu), t_apart, t_together, t_together / t_apart);
    teardown(&c[0]);
    teardown(&c[1]);
}

#ifdef BENCH_WITH_CUDA
/* op_matmul on cuda:index against cublasSgemm on the very same buffers. */
static void bench_cuda_size(int n, device gpu)
{
    candidate lib;
    setup(&lib, "op_matmul on ", gpu, n);
    time_library(&lib); /* warm-up: cuBLAS chooses its kernel on first use */
    for (int r = 0; r < REPEATS; ++r) lib.seconds[r] = time_library(&lib);
    const double direct = bench_cuda_sgemm_seconds(
        gpu.index, tensor_data_const(lib.a), tensor_data_const(lib.b), tensor_data(lib.out), n, REPEATS);
    const double flop = 2.0 * n * (double)n * n, base = flop / direct / 1e12;
    const double kit = flop / median_of(lib.seconds, REPEATS) / 1e12;
    printf("%5d  %-28s %8.1f TFLOP/s\n", n, "cublasSgemm (direct)", base);
    printf("%5d  op_matmul on %-15s %8.1f TFLOP/s  %5.1f%% of direct\n", n, device_name(gpu), kit,
           100.0 * kit / base);
    teardown(&lib);
}
#endif

int main(void)
{
    const device gpu = bench_gpu(), sim = bench_sim();
    printf("matrix product, median of %d runs, N x N times N x N (float32)\n", REPEATS);
#ifdef BENCH_WITH_CUDA
    if (gpu.kind == DEVICE_CUDA) {
        for (int n = 1024; n <= 4096; n *= 2) bench_cuda_size(n, gpu);
        printf("\n");
    }
#endif
    (void)gpu;
    /* OpenBLAS against itself through the kit, on the CPU and on sim:0. */
    bench_size(1024, sim);
    bench_size(2048, sim);
    bench_both_at_once(sim, 1024);
    return 0;
}
