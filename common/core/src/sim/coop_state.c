/* coop_state.c: the per-OS-thread state of kernels on the simulated GPU and the
 * CPU device: the GPU indices, the running launch, the cooperative block's
 * runtime, and the hooks of a tool that watches (coop_internal.h,
 * coop_hooks.h). */
#include <pthread.h>
#include <stdlib.h>

#include "coop_hooks.h"
#include "coop_internal.h"

_Thread_local dim3 blockIdx, blockDim, threadIdx, gridDim;
_Thread_local int labkit_block_cooperative;
_Thread_local void *labkit_dynamic_shared;

_Thread_local const labkit_launch *coop_launch_running COOP_SIGNAL_SAFE_TLS;
_Thread_local coop_runtime *coop_rt COOP_SIGNAL_SAFE_TLS;

static pthread_key_t runtime_key;
static pthread_once_t runtime_key_once = PTHREAD_ONCE_INIT;
static bool runtime_key_made;

/* A simulated GPU's worker that ends (at exit) frees its runtime. */
static void runtime_release(void *rt) { free(rt); }

static void make_runtime_key(void)
{
    runtime_key_made = pthread_key_create(&runtime_key, runtime_release) == 0;
}

coop_runtime *coop_runtime_get(void)
{
    if (coop_rt) return coop_rt;
    pthread_once(&runtime_key_once, make_runtime_key);
    if (!runtime_key_made) return NULL;
    coop_runtime *made = calloc(1, sizeof *made);
    if (!made) return NULL;
    if (pthread_setspecific(runtime_key, made) != 0) {
        free(made);
        return NULL;
    }
    coop_rt = made;
    return made;
}

/* ---- hooks ------------------------------------------------------------------ */

static coop_hooks installed;
static bool hooks_installed;

void coop_set_hooks(const coop_hooks *hooks)
{
    if (hooks) installed = *hooks;
    __atomic_store_n(&hooks_installed, hooks != NULL, __ATOMIC_RELEASE);
}

const coop_hooks *coop_installed_hooks(void)
{
    return __atomic_load_n(&hooks_installed, __ATOMIC_ACQUIRE) ? &installed : NULL;
}

unsigned coop_current_thread(void)
{
    if (labkit_block_cooperative && coop_rt) return coop_rt->current;
    return coop_linear_thread(threadIdx, blockDim);
}

bool coop_dynamic_shared_range(void **base, size_t *bytes)
{
    const labkit_launch *l = coop_launch_running;
    if (!l) return false;
    if (base) *base = labkit_dynamic_shared;
    if (bytes) *bytes = l->shared_bytes;
    return true;
}
