/* bench_launch.c: what does it cost to queue one small operation?
 *
 * Times each op_add on a one-element tensor of the first GPU (sim:0 here) from
 * the call to its return, which is all the host pays for an asynchronous launch;
 * a real CUDA launch costs a few microseconds. Every batch ends with a
 * synchronisation (not timed) so that the queue never fills up. */
#include "bench_common.h"

#define LAUNCHES 20000
#define BATCH 256

int main(void)
{
    device gpu = bench_gpu();
    tensor *x;
    CHECK(tensor_zeros(&x, gpu, shape1(1)));
    static double seconds[LAUNCHES];
    for (int i = 0; i < LAUNCHES; ++i) {
        if (i % BATCH == 0) CHECK(device_synchronize(gpu));
        const double start = wall_seconds();
        CHECK(op_add(x, x, x));
        seconds[i] = wall_seconds() - start;
    }
    CHECK(device_synchronize(gpu));
    const double fastest = min_of(seconds, LAUNCHES), median = median_of(seconds, LAUNCHES);
    printf("launching op_add on a 1-element tensor of %s, %d launches\n", device_name(gpu), LAUNCHES);
    printf("  median %.2f us, fastest %.2f us\n", median * 1e6, fastest * 1e6);
    tensor_free(x);
    return 0;
}
