// cuda_blas.cu: cuBLAS through dlopen (see cuda_blas.h).
#include <dlfcn.h>
#include <pthread.h>

#include <cstdio>

#include "cuda_blas.h"

namespace
{

cublas_api api;
bool loaded;
char failure[512];
pthread_once_t once = PTHREAD_ONCE_INIT;

// The soname first, so that LD_LIBRARY_PATH and the loader's cache decide as
// for any library; then the file CMake found at configure time.
void *open_library()
{
    const char *const candidates[] = { LABKIT_CUBLAS_SONAME, LABKIT_CUBLAS_PATH };
    for (const char *name : candidates) {
        void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (handle) return handle;
    }
    return nullptr;
}

template <typename F> bool find(void *handle, const char *name, F *out)
{
    *out = reinterpret_cast<F>(dlsym(handle, name));
    if (*out) return true;
    std::snprintf(failure, sizeof failure, "%s has no symbol %s", LABKIT_CUBLAS_SONAME, name);
    return false;
}

void load()
{
    void *handle = open_library();
    if (!handle) {
        std::snprintf(failure, sizeof failure,
                      "cannot open cuBLAS (%s, or %s): %s\n"
                      "  hint: the CUDA toolkit's lib64 directory must be where the loader looks "
                      "(ldconfig, or LD_LIBRARY_PATH)",
                      LABKIT_CUBLAS_SONAME, LABKIT_CUBLAS_PATH, dlerror());
        return;
    }
    // The _v2 names are the ones cublas_v2.h maps the plain names to.
    loaded = find(handle, "cublasCreate_v2", &api.create) && find(handle, "cublasDestroy_v2", &api.destroy) &&
             find(handle, "cublasSetStream_v2", &api.set_stream) &&
             find(handle, "cublasSetWorkspace_v2", &api.set_workspace) &&
             find(handle, "cublasSetMathMode", &api.set_math_mode) &&
             find(handle, "cublasSgemm_v2", &api.sgemm) && find(handle, "cublasGemmEx", &api.gemm_ex) &&
             find(handle, "cublasGetStatusString", &api.status_string);
    // Kept open for the rest of the program: its handles live until exit.
}

} // namespace

const cublas_api *cuda_blas(void)
{
    pthread_once(&once, load);
    if (!loaded) {
        fail(STATUS_BACKEND_FAILED, "%s", failure);
        return nullptr;
    }
    return &api;
}
