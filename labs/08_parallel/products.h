/* products.h: the work of step 3 (given): matrix products queued on a GPU,
 * real or simulated, by a kernel of their own (product_kernel.cuh).
 *
 * Lesson 003's exercise: "measure how much time it takes to perform two
 * matrix-matrix multiplications on two GPUs at the same time vs. in sequence
 * on one GPU". Each device gets a product_work: its own a, b and c, and how
 * many products to queue. queue_products queues them and returns at once;
 * your lab_run_at_once (step 3) decides when to wait.
 *
 * On a simulated GPU the kernel runs on the device's worker thread, which
 * notes when its kernels ran (wall clock) and how much CPU they used: the
 * check reads that to see whether two devices worked at the same time. A real
 * GPU notes nothing (timing stays zero): there, the wall clock says it. */
#ifndef LAB08_PRODUCTS_H
#define LAB08_PRODUCTS_H

#include <stdint.h>

#include "labkit/labkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one device's kernels did, noted by the simulated GPU's worker: the
 * first start and the last end (wall_seconds), and the CPU time they used. */
typedef struct product_timing {
    double start, end;
    double cpu_seconds;
    int kernels;
} product_timing;

typedef struct product_work {
    device dev;
    tensor *a, *b, *c; /* [n, n] on dev; c = a b */
    int64_t n;
    int products;           /* how many times queue_products queues c = a b */
    product_timing *timing; /* host memory, written by dev's worker; zero on a real GPU */
} product_work;

/* The work for device d: a and b uniform in [-1, 1) from fixed seeds (the same
 * values on every device), c zeros. */
status product_work_create(product_work *w, device d, int64_t n, int products);
void product_work_free(product_work *w);

/* Queues w->products launches of the kernel on w->dev, each c = a b, and
 * returns at once (on the CPU each runs at once). */
status queue_products(const product_work *w);

/* The other way of lesson 003's exercise: the products of all n works, one
 * after the other on the first work's device (into its own tensors), then
 * waits for that device. The same work as lab_run_at_once's, on one GPU. */
status run_on_one(const product_work *work, int n);

/* Forgets what w->timing noted (call it before a run; nothing may be queued). */
void product_timing_reset(product_work *w);

/* One launch of the kernel, as device_launch hands it to the launcher of the
 * device's kind: products.c's for a simulated GPU (and the CPU), products.cu's
 * for a real one (only in a build with CUDA). A 1-D grid of `blocks` blocks
 * of PRODUCT_BLOCK_THREADS threads: one block per PRODUCT_BLOCK_THREADS cells
 * of c, at most PRODUCT_MAX_BLOCKS (the kernel's grid-stride loop does the
 * rest). */
#define PRODUCT_BLOCK_THREADS 256
#define PRODUCT_MAX_BLOCKS 1024
typedef struct product_args {
    const float *a, *b;
    float *c;
    int64_t n;
    unsigned blocks;
    product_timing *timing; /* written by the simulated GPU's worker */
} product_args;

void product_on_cuda(const void *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif
