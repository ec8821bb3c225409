/* bench_precision.c: do the kit's products at each precision (lab 06) reach
 * the speed of the library a user would call instead?
 *
 * On a real GPU: for N = 1024, 4096 and 8192, op_matmul at FP32, TF32
 * (op_matmul_precision with MATMUL_TF32), BF16 and F16 on cuda:0, beside
 * cublasGemmEx called directly with the same types on the very same device
 * buffers (bench_cuda.cu), each side's products queued back to back, TFLOP/s
 * and the ratio (the aim: at least 95% at every N, the 16-bit ones at
 * N = 1024 included), and each one's fraction of the device's peak for that
 * format.
 *
 * On the CPU and a simulated GPU, which have no tensor cores: the kit's
 * products at each precision for N = 1024 and 2048, in GFLOP/s and against the
 * kit's own FP32 product, honestly slower (the library rounds and widens the
 * low-precision inputs, then multiplies in float32 with OpenBLAS). */
#include <math.h>

#include "bench_common.h"
#ifdef BENCH_WITH_CUDA
#include "bench_cuda.h"
#endif

#define REPEATS 7
#define PRECISIONS 4

static const char *const names[PRECISIONS] = { "FP32", "TF32", "BF16", "F16" };

/* The operands of one size on one device, in every dtype the products read. */
typedef struct operands {
    tensor *a, *b, *a16[2], *b16[2], *out; /* a16/b16: [0] bf16, [1] f16 */
} operands;

static void make_operands(operands *o, device d, int n)
{
    const dtype types[2] = { DTYPE_BF16, DTYPE_F16 };
    CHECK(tensor_uniform(&o->a, d, shape2(n, n), -1.0f, 1.0f, 1));
    CHECK(tensor_uniform(&o->b, d, shape2(n, n), -1.0f, 1.0f, 2));
    for (int i = 0; i < 2; ++i) {
        CHECK(tensor_empty(&o->a16[i], d, types[i], shape2(n, n)));
        CHECK(tensor_empty(&o->b16[i], d, types[i], shape2(n, n)));
        CHECK(tensor_convert(o->a, o->a16[i]));
        CHECK(tensor_convert(o->b, o->b16[i]));
    }
    CHECK(tensor_empty(&o->out, d, DTYPE_F32, shape2(n, n)));
    CHECK(device_synchronize(d));
}

static void free_operands(operands *o)
{
    tensor_free(o->a), tensor_free(o->b), tensor_free(o->out);
    for (int i = 0; i < 2; ++i) tensor_free(o->a16[i]), tensor_free(o->b16[i]);
}

/* Seconds per product at precision p (0 FP32, 1 TF32, 2 BF16, 3 F16), of
 * `batch` products queued back to back and synchronised once. */
static double product_seconds(operands *o, int p, int batch)
{
    const tensor *a = p >= 2 ? o->a16[p - 2] : o->a, *b = p >= 2 ? o->b16[p - 2] : o->b;
    const double start = wall_seconds();
    for (int i = 0; i < batch; ++i)
        CHECK(op_matmul_precision(a, false, b, false, NULL, o->out, p == 1 ? MATMUL_TF32 : MATMUL_DEFAULT));
    CHECK(device_synchronize(tensor_device(o->out)));
    return (wall_seconds() - start) / batch;
}

/* Median seconds per product over REPEATS batches, after one not timed. */
static double kit_seconds(operands *o, int p, int batch)
{
    double seconds[REPEATS];
    product_seconds(o, p, batch);
    for (int r = 0; r < REPEATS; ++r) seconds[r] = product_seconds(o, p, batch);
    return median_of(seconds, REPEATS);
}

/* On a GPU, products queued back to back, as a training loop queues them:
 * a product of N = 1024 in 16 bits takes about 20 us, and one synchronisation
 * a product would time the wait for the GPU as much as the product. */
static int gpu_batch(int n) { return n <= 1024 ? 50 : n <= 4096 ? 5 : 2; }

/* The peak of precision p on a device: its tensor cores' for that format, or
 * its FP32 cores' where it has none (lab 06's step 5). */
static double peak_gflops(const device_properties *props, int p)
{
    const double tensor[PRECISIONS] = { 0, props->peak_tf32_gflops, props->peak_bf16_gflops,
                                        props->peak_fp16_gflops };
    return tensor[p] > 0 ? tensor[p] : props->peak_gflops;
}

/* Without tensor cores: the kit's products at each precision against its own FP32 one. */
static void bench_without_tensor_cores(device d, int n)
{
    device_properties props;
    CHECK(device_get_properties(d, &props));
    operands o = { 0 };
    make_operands(&o, d, n);
    const double flop = 2.0 * n * (double)n * n;
    double fp32 = 0;
    for (int p = 0; p < PRECISIONS; ++p) {
        const double gflops = flop / kit_seconds(&o, p, 1) / 1e9;
        if (p == 0) fp32 = gflops;
        printf("%5d  %-6s %-5s %8.1f GFLOP/s  %5.2fx FP32's  %5.1f%% of its peak\n", n, device_name(d),
               names[p], gflops, gflops / fp32, 100 * gflops / peak_gflops(&props, p));
    }
    free_operands(&o);
}

#ifdef BENCH_WITH_CUDA
/* On a real GPU: the kit against cublasGemmEx on the same buffers. */
static void bench_cuda(device gpu, int n)
{
    static const enum bench_gemm_type types[PRECISIONS] = { BENCH_GEMM_F32, BENCH_GEMM_TF32, BENCH_GEMM_BF16,
                                                            BENCH_GEMM_F16 };
    device_properties props;
    CHECK(device_get_properties(gpu, &props));
    operands o = { 0 };
    make_operands(&o, gpu, n);
    const double flop = 2.0 * n * (double)n * n;
    for (int p = 0; p < PRECISIONS; ++p) {
        const tensor *a = p >= 2 ? o.a16[p - 2] : o.a, *b = p >= 2 ? o.b16[p - 2] : o.b;
        const double kit = flop / kit_seconds(&o, p, gpu_batch(n)) / 1e12;
        const double direct =
            flop /
            bench_cuda_gemm_ex_seconds(gpu.index, types[p], tensor_data_const(a), tensor_data_const(b),
                                       tensor_data(o.out), n, REPEATS, gpu_batch(n)) /
            1e12;
        printf(
            "%5d  %-5s cublasGemmEx %7.1f TFLOP/s   kit %7.1f TFLOP/s  %5.1f%%   %5.1f%% of the peak %.0f\n",
            n, names[p], direct, kit, 100 * kit / direct, 100 * kit * 1e3 / peak_gflops(&props, p),
            peak_gflops(&props, p) / 1e3);
    }
    free_operands(&o);
}
#endif

int main(void)
{
    const device gpu = bench_gpu(), sim = bench_sim();
    printf("matrix products at four precisions, N x N times N x N, median of %d runs (on a GPU each run %d, "
           "%d and %d products back to back at N = 1024, 4096 and 8192)\n",
           REPEATS, gpu_batch(1024), gpu_batch(4096), gpu_batch(8192));
#ifdef BENCH_WITH_CUDA
    if (gpu.kind == DEVICE_CUDA) {
        device_properties props;
        CHECK(device_get_properties(gpu, &props));
        printf("%s: %s\n  %s\n", device_name(gpu), props.name, props.tensor_notes);
        for (int n = 1024; n <= 8192; n *= (n == 1024 ? 4 : 2)) bench_cuda(gpu, n);
        printf("\n");
    }
#endif
    (void)gpu;
    /* The CPU and sim:0: no tensor cores, the same float32 products. */
    const device here[2] = { device_cpu(), sim };
    for (int i = 0; i < 2; ++i) {
        device_properties props;
        CHECK(device_get_properties(here[i], &props));
        printf("%s: %s\n", device_name(here[i]), props.tensor_notes);
        for (int n = 1024; n <= 2048; n *= 2) bench_without_tensor_cores(here[i], n);
        if (device_equal(here[i], sim)) break;
    }
    return 0;
}
