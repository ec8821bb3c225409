/* products.c: the work of step 3 on a device (products.h says what it is),
 * and the kernel's launch on a simulated GPU or the CPU. */
#include "products.h"

#include <stdlib.h>
#include <string.h>

#include "given.h"
#include "labkit/cuda_emulation.h"
#include "product_kernel.cuh"

/* The largest n: n * n cells of c and the kernel's int64_t indices stay far
 * from overflowing, and a[n * n] fits a device's memory many times over. */
enum { PRODUCT_MAX_N = 65536 };

/* On a simulated GPU: runs on the device's worker thread when its queue gets
 * here, and notes when and for how much CPU (on the CPU: at once, on the
 * host). */
static void product_on_sim(const void *args, void *stream)
{
    const product_args *p = args;
    const double start = wall_seconds(), cpu = thread_cpu_seconds();
    const dim3 grid = { p->blocks, 1, 1 }, block = { PRODUCT_BLOCK_THREADS, 1, 1 };
    LAUNCH(product_kernel, grid, block, stream, p->a, p->b, p->c, p->n);
    product_timing *t = p->timing;
    if (t->kernels++ == 0) t->start = start;
    t->end = wall_seconds();
    t->cpu_seconds += thread_cpu_seconds() - cpu;
}

/* nvcc compiled products.cu only in a build with CUDA (lab.cmake). */
#ifdef PRODUCTS_WITH_CUDA
#define PRODUCT_ON_CUDA product_on_cuda
#else
#define PRODUCT_ON_CUDA NULL
#endif

static const kernel_launchers product_launchers = { "product_kernel", product_on_sim, PRODUCT_ON_CUDA };

void product_work_free(product_work *w)
{
    if (!w) return;
    tensor_free(w->a), tensor_free(w->b), tensor_free(w->c);
    free(w->timing);
    memset(w, 0, sizeof *w);
}

status product_work_create(product_work *w, device d, int64_t n, int products)
{
    if (!w || n < 1 || n > PRODUCT_MAX_N || products < 1)
        return fail(STATUS_BAD_ARGUMENT, "product_work_create: n = %lld (1 to %d) and products = %d (>= 1)",
                    (long long)n, PRODUCT_MAX_N, products);
    memset(w, 0, sizeof *w);
    w->dev = d, w->n = n, w->products = products;
    w->timing = calloc(1, sizeof *w->timing);
    status s = w->timing ? STATUS_OK : fail(STATUS_OUT_OF_MEMORY, "product_work_create: no host memory");
    if (s == STATUS_OK) s = tensor_uniform(&w->a, d, shape2(n, n), -1.0f, 1.0f, 81);
    if (s == STATUS_OK) s = tensor_uniform(&w->b, d, shape2(n, n), -1.0f, 1.0f, 82);
    if (s == STATUS_OK) s = tensor_zeros(&w->c, d, shape2(n, n));
    if (s != STATUS_OK) product_work_free(w);
    return s;
}

/* A block per PRODUCT_BLOCK_THREADS cells of c, at most PRODUCT_MAX_BLOCKS. */
static unsigned blocks_for(int64_t n)
{
    const int64_t blocks = (n * n + PRODUCT_BLOCK_THREADS - 1) / PRODUCT_BLOCK_THREADS;
    return (unsigned)(blocks < PRODUCT_MAX_BLOCKS ? blocks : PRODUCT_MAX_BLOCKS);
}

/* One launch of the kernel on w's device, into `into`'s c. */
static status launch_one(const product_work *w, const product_work *into)
{
    const product_args args = { .a = tensor_data_const(into->a),
                                .b = tensor_data_const(into->b),
                                .c = tensor_data(into->c),
                                .n = into->n,
                                .blocks = blocks_for(into->n),
                                .timing = into->timing };
    return device_launch(w->dev, &product_launchers, &args, sizeof args);
}

static status check_work(const char *function, const product_work *w)
{
    if (!w || !w->a || !w->b || !w->c || !w->timing)
        return fail(STATUS_BAD_ARGUMENT, "%s: the work is NULL or was not made by product_work_create",
                    function);
    return STATUS_OK;
}

status queue_products(const product_work *w)
{
    TRY(check_work("queue_products", w));
    for (int r = 0; r < w->products; ++r) TRY(launch_one(w, w));
    return STATUS_OK;
}

status run_on_one(const product_work *work, int n)
{
    if (!work || n < 1) return fail(STATUS_BAD_ARGUMENT, "run_on_one: give 1 or more works (n = %d)", n);
    status s = STATUS_OK;
    for (int i = 0; i < n && s == STATUS_OK; ++i) s = check_work("run_on_one", &work[i]);
    for (int i = 0; i < n && s == STATUS_OK; ++i)
        for (int r = 0; s == STATUS_OK && r < work[i].products; ++r) s = launch_one(&work[0], &work[0]);
    return s == STATUS_OK ? device_synchronize(work[0].dev) : s;
}

void product_timing_reset(product_work *w)
{
    if (w && w->timing) memset(w->timing, 0, sizeof *w->timing);
}
