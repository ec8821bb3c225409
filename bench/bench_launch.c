/* bench_launch.c: what does it cost to queue one small operation?
 *
 * Times each op_add on a one-element tensor from the call to its return, which
 * is all the host pays for an asynchronous launch, on sim:0 and, where there is
 * one, on cuda:0 beside an empty kernel launched with <<<1, 1>>> directly (the
 * least a launch can cost). Every batch ends with a synchronisation (not timed)
 * so that the queue never fills up. */
#include "bench_common.h"
#ifdef BENCH_WITH_CUDA
#include "bench_cuda.h"
#endif

#define LAUNCHES 20000
#define BATCH 256

static void bench_op_launch(device d)
{
    tensor *x;
    CHECK(tensor_zeros(&x, d, shape1(1)));
    static double seconds[LAUNCHES];
    for (int i = 0; i < LAUNCHES; ++i) {
        if (i % BATCH == 0) CHECK(device_synchronize(d));
        const double start = wall_seconds();
        CHECK(op_add(x, x, x));
        seconds[i] = wall_seconds() - start;
    }
    CHECK(device_synchronize(d));
    const double fastest = min_of(seconds, LAUNCHES), median = median_of(seconds, LAUNCHES);
    printf("  op_add on a 1-element tensor of %-6s median %6.2f us, fastest %6.2f us\n", device_name(d),
           median * 1e6, fastest * 1e6);
    tensor_free(x);
}

int main(void)
{
    const device gpu = bench_gpu(), sim = bench_sim();
    printf("host time of one launch, %d launches\n", LAUNCHES);
#ifdef BENCH_WITH_CUDA
    if (gpu.kind == DEVICE_CUDA) {
        bench_op_launch(gpu);
        printf(
            "  an empty kernel <<<1, 1>>> on %-6s     median %6.2f us (directly, the least a launch costs)\n",
            device_name(gpu), bench_cuda_launch_seconds(gpu.index, LAUNCHES) * 1e6);
    }
#endif
    (void)gpu;
    bench_op_launch(sim);
    return 0;
}
