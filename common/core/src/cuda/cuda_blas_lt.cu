// cuda_blas_lt.cu: cuBLASLt through dlopen (see cuda_blas_lt.h).
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "cuda_blas_lt.h"

namespace
{

struct lt_api {
    decltype(&cublasLtCreate) create;
    decltype(&cublasLtDestroy) destroy;
    decltype(&cublasLtMatmulDescCreate) desc_create;
    decltype(&cublasLtMatmulDescDestroy) desc_destroy;
    decltype(&cublasLtMatmulDescSetAttribute) desc_set;
    decltype(&cublasLtMatrixLayoutCreate) layout_create;
    decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
    decltype(&cublasLtMatmulPreferenceCreate) pref_create;
    decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy;
    decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
    decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
    decltype(&cublasLtMatmul) matmul;
};

lt_api api;
bool loaded;
pthread_once_t once = PTHREAD_ONCE_INIT;

template <typename F> bool find(void *handle, const char *name, F *out)
{
    *out = reinterpret_cast<F>(dlsym(handle, name));
    return *out != nullptr;
}

void load()
{
    const char *const candidates[] = { LABKIT_CUBLASLT_SONAME, LABKIT_CUBLASLT_PATH };
    void *handle = nullptr;
    for (const char *name : candidates)
        if (!handle) handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    loaded = find(handle, "cublasLtCreate", &api.create) && find(handle, "cublasLtDestroy", &api.destroy) &&
             find(handle, "cublasLtMatmulDescCreate", &api.desc_create) &&
             find(handle, "cublasLtMatmulDescDestroy", &api.desc_destroy) &&
             find(handle, "cublasLtMatmulDescSetAttribute", &api.desc_set) &&
             find(handle, "cublasLtMatrixLayoutCreate", &api.layout_create) &&
             find(handle, "cublasLtMatrixLayoutDestroy", &api.layout_destroy) &&
             find(handle, "cublasLtMatmulPreferenceCreate", &api.pref_create) &&
             find(handle, "cublasLtMatmulPreferenceDestroy", &api.pref_destroy) &&
             find(handle, "cublasLtMatmulPreferenceSetAttribute", &api.pref_set) &&
             find(handle, "cublasLtMatmulAlgoGetHeuristic", &api.heuristic) &&
             find(handle, "cublasLtMatmul", &api.matmul);
}

// The plan of cuda_ops.cu's swapped column-major call: D [n, m] = op(B) op(A)
// where B is our b read column-major, A our a; the bias, one value per row of
// D, is one per column of our row-major out.
bool make_plan(cuda_lt *lt, lt_plan *p)
{
    const int64_t m = p->m, n = p->n, k = p->k;
    const cublasOperation_t ta = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    bool ok = api.desc_create(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS;
    ok = ok && api.desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) == CUBLAS_STATUS_SUCCESS;
    ok = ok && api.desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) == CUBLAS_STATUS_SUCCESS;
    ok = ok && api.desc_set(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue) ==
                   CUBLAS_STATUS_SUCCESS;
    ok = ok && api.layout_create(&p->a, CUDA_R_32F, p->trans_b ? k : n, p->trans_b ? n : k,
                                 p->trans_b ? k : n) == CUBLAS_STATUS_SUCCESS;
    ok = ok && api.layout_create(&p->b, CUDA_R_32F, p->trans_a ? m : k, p->trans_a ? k : m,
                                 p->trans_a ? m : k) == CUBLAS_STATUS_SUCCESS;
    ok = ok && api.layout_create(&p->d, CUDA_R_32F, n, m, n) == CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulPreference_t pref = nullptr;
    ok = ok && api.pref_create(&pref) == CUBLAS_STATUS_SUCCESS;
    ok = ok && api.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lt->workspace_bytes,
                            sizeof lt->workspace_bytes) == CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    ok = ok && api.heuristic(lt->handle, p->desc, p->a, p->b, p->d, p->d, pref, 1, &result, &found) ==
                   CUBLAS_STATUS_SUCCESS;
    if (pref) api.pref_destroy(pref);
    ok = ok && found > 0 && result.state == CUBLAS_STATUS_SUCCESS;
    if (ok) p->algo = result.algo;
    return ok;
}

} // namespace

void lt_start(cuda_lt *lt, void *workspace, size_t workspace_bytes)
{
    std::memset(lt, 0, sizeof *lt);
    pthread_mutex_init(&lt->lock, nullptr);
    lt->workspace = workspace, lt->workspace_bytes = workspace_bytes;
    pthread_once(&once, load);
    if (loaded && api.create(&lt->handle) != CUBLAS_STATUS_SUCCESS) lt->handle = nullptr;
}

void lt_stop(cuda_lt *lt)
{
    if (!lt->handle) return;
    for (int i = 0; i < lt->count; ++i) {
        lt_plan *p = &lt->plans[i];
        if (p->desc) api.desc_destroy(p->desc);
        if (p->a) api.layout_destroy(p->a);
        if (p->b) api.layout_destroy(p->b);
        if (p->d) api.layout_destroy(p->d);
    }
    api.destroy(lt->handle);
    lt->handle = nullptr, lt->count = 0;
}

status lt_gemm_bias(cuda_lt *lt, cudaStream_t stream, const op_call *op, bool *done)
{
    *done = false;
    if (!lt || !lt->handle || !op->c || op->in_type != DTYPE_F32 || op->tf32) return STATUS_OK;
    pthread_mutex_lock(&lt->lock);
    lt_plan *plan = nullptr;
    for (int i = 0; i < lt->count && !plan; ++i) {
        lt_plan *p = &lt->plans[i];
        if (p->m == op->m && p->n == op->cols && p->k == op->k && p->trans_a == op->trans_a &&
            p->trans_b == op->trans_b)
            plan = p;
    }
    if (!plan && lt->count < LT_PLANS) {
        plan = &lt->plans[lt->count++];
        plan->m = op->m, plan->n = op->cols, plan->k = op->k;
        plan->trans_a = op->trans_a, plan->trans_b = op->trans_b;
        plan->usable = make_plan(lt, plan);
    }
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (plan && plan->usable) {
        const float one = 1.0f, zero = 0.0f;
        const void *bias = op->c;
        s = api.desc_set(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = api.matmul(lt->handle, plan->desc, &one, op->b, plan->a, op->a, plan->b, &zero, op->out,
                           plan->d, op->out, plan->d, &plan->algo, lt->workspace, lt->workspace_bytes,
                           stream);
        *done = s == CUBLAS_STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&lt->lock);
    if (s != CUBLAS_STATUS_SUCCESS)
        return fail(STATUS_BACKEND_FAILED,
                    "%s:%d: cublasLtMatmul (bias in the epilogue) failed: status %d (m=%lld "
                    "n=%lld k=%lld)",
                    __FILE__, __LINE__, (int)s, (long long)op->m, (long long)op->cols, (long long)op->k);
    return STATUS_OK;
}
