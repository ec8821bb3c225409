/* naive_launch.c: your kernel on a simulated GPU, and the checks of its
 * operands (given: not a step; naive_launch.h says how it fits together).
 *
 * The C compiler builds your naive_kernel.cuh here, after labkit/cuda_emulation.h
 * has turned CUDA's qualifiers and indices into plain C. It is included with
 * <...> on purpose: each program compiles the kernel beside its own lab.c (the
 * build puts that directory first on the include path; lab.cmake). */
#include "naive_launch.h"

#include <stdio.h>

#include "labkit/cuda_emulation.h"
#include <naive_kernel.cuh>

/* What a real GPU refuses to launch: no thread at all, more than 1024 threads
 * in a block, more than 65535 blocks along y. The simulated GPU refuses the
 * same, so that a launch that works here also starts on a GPU. */
static const char *launch_problem(const naive_matmul_args *p)
{
    const unsigned long long threads = (unsigned long long)p->block_x * p->block_y;
    if (p->grid_x == 0 || p->grid_y == 0 || threads == 0) return "a grid or a block with no thread";
    if (threads > 1024) return "more than 1024 threads in a block";
    if (p->grid_y > 65535) return "more than 65535 blocks along y";
    return NULL;
}

/* Queued by device_launch on a sim:N device: runs on its worker thread when the
 * queue reaches it. A launch a GPU would refuse runs nothing, as on a GPU, and
 * says why on stderr (a real GPU's device_launch returns the error instead). */
static void naive_matmul_on_sim(const void *args, void *stream)
{
    const naive_matmul_args *p = args;
    const char *problem = launch_problem(p);
    if (problem) {
        fprintf(
            stderr,
            "naive_matmul_kernel: a grid of %u x %u blocks of %u x %u threads has %s: a GPU does not "
            "launch it, so nothing ran.\n  hint: blocks of 16 x 16 threads, and enough of them to cover c "
            "(README, \"Step 6\")\n",
            p->grid_x, p->grid_y, p->block_x, p->block_y, problem);
        return;
    }
    const dim3 grid = { p->grid_x, p->grid_y, 1 }, block = { p->block_x, p->block_y, 1 };
    LAUNCH(naive_matmul_kernel, grid, block, stream, p->a, p->b, p->c, p->m, p->n, p->k);
}

/* nvcc compiled naive_launch.cu only in a build with CUDA (lab.cmake). */
#ifdef LAB_WITH_CUDA
#define NAIVE_ON_CUDA naive_matmul_on_cuda
#else
#define NAIVE_ON_CUDA NULL
#endif

const kernel_launchers naive_matmul_launchers = { "naive_matmul_kernel", naive_matmul_on_sim, NAIVE_ON_CUDA };

status naive_matmul_check_operands(const tensor *a, const tensor *b, const tensor *c)
{
    char sa[48], sb[48], sc[48];
    if (!a || !b || !c) return fail(STATUS_BAD_ARGUMENT, "lab_matmul_naive_gpu: a, b and c must not be NULL");
    const device d = tensor_device(c);
    if (!device_is_gpu(d))
        return fail(STATUS_WRONG_DEVICE,
                    "lab_matmul_naive_gpu: c is on %s, which is not a GPU.\n"
                    "  hint: the naive kernel runs on cuda:N or sim:N; on the CPU use lab_matmul_ikj",
                    device_name(d));
    if (!device_equal(tensor_device(a), d) || !device_equal(tensor_device(b), d))
        return fail(STATUS_WRONG_DEVICE,
                    "lab_matmul_naive_gpu: a, b and c are on %s, %s and %s; they must share one GPU.\n"
                    "  hint: move them with tensor_to first; nothing is copied for you",
                    device_name(tensor_device(a)), device_name(tensor_device(b)), device_name(d));
    if (tensor_dtype(a) != DTYPE_F32 || tensor_dtype(b) != DTYPE_F32 || tensor_dtype(c) != DTYPE_F32 ||
        tensor_shape(a).ndim != 2 || tensor_shape(b).ndim != 2 || tensor_shape(c).ndim != 2 ||
        tensor_dim(a, 1) != tensor_dim(b, 0) || tensor_dim(c, 0) != tensor_dim(a, 0) ||
        tensor_dim(c, 1) != tensor_dim(b, 1))
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_matmul_naive_gpu: shapes %s x %s -> %s; need float32 [m, k] x [k, n] -> [m, n]",
                    shape_format(tensor_shape(a), sa, sizeof sa),
                    shape_format(tensor_shape(b), sb, sizeof sb),
                    shape_format(tensor_shape(c), sc, sizeof sc));
    return STATUS_OK;
}
