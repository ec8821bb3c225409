/* bench_copy.c: how close do host <-> device copies come to memcpy?
 *
 * Copies 64 MiB host -> device and device -> host on the first GPU (sim:0
 * here), next to memcpy between host buffers, in the same run. On the machines
 * this kit is tested on, memcpy's speed depends on which buffers it copies
 * between by as much as 40%, so every measurement rotates through the same
 * PAIRS sets of buffers, and every buffer is touched beforehand so that no
 * first-touch page fault is timed. */
#include <string.h>

#include "bench_common.h"

#define BYTES ((size_t)64 << 20)
#define PAIRS 4
#define ROUNDS 5

int main(void)
{
    device gpu = bench_gpu();
    const int64_t n = (int64_t)(BYTES / sizeof(float));
    float *src[PAIRS], *dst[PAIRS];
    tensor *t[PAIRS];
    for (int p = 0; p < PAIRS; ++p) {
        src[p] = host_alloc(BYTES, 0);
        dst[p] = host_alloc(BYTES, 0);
        for (int64_t i = 0; i < n; ++i) src[p][i] = (float)i;
        memcpy(dst[p], src[p], BYTES);
        CHECK(tensor_from_host(&t[p], gpu, shape1(n), src[p]));
    }
    double host[PAIRS * ROUNDS], up[PAIRS * ROUNDS], down[PAIRS * ROUNDS];
    for (int r = 0; r < PAIRS * ROUNDS; ++r) {
        const int p = r % PAIRS;
        double start = wall_seconds();
        memcpy(dst[p], src[p], BYTES);
        host[r] = wall_seconds() - start;
        start = wall_seconds();
        CHECK(tensor_copy_from_host(t[p], src[p], n));
        up[r] = wall_seconds() - start;
        start = wall_seconds();
        CHECK(tensor_to_host(t[p], dst[p], n));
        down[r] = wall_seconds() - start;
    }
    const double gb = (double)BYTES / 1e9, base = gb / median_of(host, PAIRS * ROUNDS);
    const double h2d = gb / median_of(up, PAIRS * ROUNDS), d2h = gb / median_of(down, PAIRS * ROUNDS);
    printf("64 MiB copies, median of %d over %d sets of buffers\n", PAIRS * ROUNDS, PAIRS);
    printf("  memcpy host -> host      %6.2f GB/s\n", base);
    printf("  host -> %-6s           %6.2f GB/s  %5.1f%% of memcpy\n", device_name(gpu), h2d,
           100 * h2d / base);
    printf("  %-6s -> host           %6.2f GB/s  %5.1f%% of memcpy\n", device_name(gpu), d2h,
           100 * d2h / base);
    for (int p = 0; p < PAIRS; ++p) {
        tensor_free(t[p]);
        host_free(src[p], 0);
        host_free(dst[p], 0);
    }
    return 0;
}
