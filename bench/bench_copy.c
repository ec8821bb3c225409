/* bench_copy.c: how close do host <-> device copies come to what a user would
 * call instead?
 *
 * On a simulated GPU, whose memory is host memory: 64 MiB host -> sim:0 and
 * back, next to memcpy between host buffers, in the same run. On the machines
 * this kit is tested on, memcpy's speed depends on which buffers it copies
 * between by as much as 40%, so every measurement rotates through the same
 * PAIRS sets of buffers, and every buffer is touched beforehand so that no
 * first-touch page fault is timed. On a real GPU: 256 MiB host -> cuda:0 and
 * back from pinned and from pageable memory, next to cudaMemcpy on the very same
 * buffers (the aim: at least 95%). */
#include <string.h>

#include "bench_common.h"
#ifdef BENCH_WITH_CUDA
#include "bench_cuda.h"
#endif

#define BYTES ((size_t)64 << 20)
#define PAIRS 4
#define ROUNDS 5

#ifdef BENCH_WITH_CUDA
#define CUDA_BYTES ((size_t)256 << 20)
#define CUDA_REPS 9

/* Median seconds of the kit's copy of t from or to `host`. */
static double kit_copy_seconds(tensor *t, float *host, int to_device)
{
    double seconds[CUDA_REPS];
    const int64_t n = tensor_numel(t);
    for (int r = -1; r < CUDA_REPS; ++r) {
        const double start = wall_seconds();
        if (to_device)
            CHECK(tensor_copy_from_host(t, host, n));
        else
            CHECK(tensor_to_host(t, host, n));
        if (r >= 0) seconds[r] = wall_seconds() - start;
    }
    return median_of(seconds, CUDA_REPS);
}

static void bench_cuda_copies(device gpu)
{
    const int64_t n = (int64_t)(CUDA_BYTES / sizeof(float));
    tensor *t;
    CHECK(tensor_zeros(&t, gpu, shape1(n)));
    printf("256 MiB copies between the host and %s, median of %d, against cudaMemcpy on the same buffers\n",
           device_name(gpu), CUDA_REPS);
    for (int pinned = 1; pinned >= 0; --pinned) {
        float *host = host_alloc(CUDA_BYTES, pinned);
        memset(host, 1, CUDA_BYTES);
        for (int to_device = 1; to_device >= 0; --to_device) {
            const double kit = kit_copy_seconds(t, host, to_device);
            const double direct =
                bench_cuda_memcpy_seconds(gpu.index, tensor_data(t), host, CUDA_BYTES, to_device, CUDA_REPS);
            const double gb = (double)CUDA_BYTES / 1e9;
            printf("  %-8s %-13s cudaMemcpy %6.1f GB/s   kit %6.1f GB/s  %5.1f%%\n",
                   pinned ? "pinned" : "pageable", to_device ? "host->device" : "device->host", gb / direct,
                   gb / kit, 100 * direct / kit);
        }
        host_free(host, pinned);
    }
    tensor_free(t);
    printf("\n");
}
#endif

int main(void)
{
    device gpu = bench_sim();
#ifdef BENCH_WITH_CUDA
    if (bench_gpu().kind == DEVICE_CUDA) bench_cuda_copies(bench_gpu());
#endif
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
