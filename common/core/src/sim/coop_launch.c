/* coop_launch.c: LAUNCH's beginning and end on the simulated GPU and the CPU
 * device: the launch checked against CUDA's limits (a GPU refuses a launch
 * beyond them, so the emulation does too), the indices and the dynamic shared
 * memory set up, the hooks told. */
#include <stdio.h>
#include <stdlib.h>

#include "coop_describe.h"
#include "coop_guard.h"
#include "coop_hooks.h"
#include "coop_internal.h"

#define MAX_BLOCK_X 1024u
#define MAX_BLOCK_Y 1024u
#define MAX_BLOCK_Z 64u
#define MAX_GRID_X 2147483647u
#define MAX_GRID_YZ 65535u

/* What a GPU would refuse in this launch, in words (problem and hint); false
 * when nothing. */
static bool launch_problem(const labkit_launch *l, char *problem, size_t size, const char **hint)
{
    const dim3 g = l->grid, b = l->block;
    const unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    *hint = "blocks of 256 threads (16 x 16) are usual, with as many blocks as the data needs";
    if (b.x == 0 || b.y == 0 || b.z == 0 || g.x == 0 || g.y == 0 || g.z == 0)
        snprintf(problem, size, "a grid of %u x %u x %u blocks of %u x %u x %u threads has no thread", g.x,
                 g.y, g.z, b.x, b.y, b.z);
    else if (b.x > MAX_BLOCK_X || b.y > MAX_BLOCK_Y || b.z > MAX_BLOCK_Z)
        snprintf(problem, size, "a block of %u x %u x %u threads is beyond a GPU's %u x %u x %u", b.x, b.y,
                 b.z, MAX_BLOCK_X, MAX_BLOCK_Y, MAX_BLOCK_Z);
    else if (threads > COOP_MAX_THREADS)
        snprintf(problem, size,
                 "a block of %u x %u x %u = %llu threads is more than the %d a GPU runs in one block", b.x,
                 b.y, b.z, threads, COOP_MAX_THREADS);
    else if (g.x > MAX_GRID_X || g.y > MAX_GRID_YZ || g.z > MAX_GRID_YZ) {
        snprintf(problem, size, "a grid of %u x %u x %u blocks is beyond a GPU's %u x %u x %u", g.x, g.y, g.z,
                 MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ);
        *hint = "put the long side of the grid along x";
    } else if (l->shared_bytes > COOP_SHARED_LIMIT) {
        snprintf(problem, size,
                 "%zu bytes of dynamic shared memory per block is more than the device's %zu (48 KiB)",
                 l->shared_bytes, COOP_SHARED_LIMIT);
        *hint = "use smaller tiles, or fewer threads per block";
    } else
        return false;
    return true;
}

/* The launch's name for a message: formatted only when one is needed. */
static const char *launch_name(const labkit_launch *l)
{
    static _Thread_local char text[256];
    coop_launch_text(text, sizeof text, l);
    return text;
}

void labkit_launch_begin(const labkit_launch *l)
{
    char problem[256];
    const char *hint;
    if (coop_launch_running)
        coop_fail("%s: LAUNCH inside another kernel (%s): a kernel cannot launch kernels here",
                  launch_name(l), coop_launch_running->kernel_name);
    if (launch_problem(l, problem, sizeof problem, &hint))
        coop_fail("%s: %s; a GPU refuses such a launch, so nothing ran.\n  hint: %s", launch_name(l), problem,
                  hint);
    gridDim = l->grid;
    blockDim = l->block;
    labkit_block_cooperative = 0;
    if (l->shared_bytes > 0 && !(labkit_dynamic_shared = malloc(l->shared_bytes)))
        coop_fail("%s: no host memory for its %zu bytes of dynamic shared memory", launch_name(l),
                  l->shared_bytes);
    coop_launch_running = l;
    const coop_hooks *hooks = coop_installed_hooks();
    if (hooks && hooks->launch_begin) hooks->launch_begin(hooks->user, l);
}

void labkit_launch_end(void)
{
    const coop_hooks *hooks = coop_installed_hooks();
    if (hooks && hooks->launch_end && coop_launch_running)
        hooks->launch_end(hooks->user, coop_launch_running);
    free(labkit_dynamic_shared);
    labkit_dynamic_shared = NULL;
    coop_launch_running = NULL;
}
