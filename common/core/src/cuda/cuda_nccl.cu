// cuda_nccl.cu: the all-reduce of real GPUs through NVIDIA's NCCL (built when
// CMake finds it). One communicator per set of GPUs, made on first use and
// kept: making one costs milliseconds, a training step reuses it every time.
#include <nccl.h>
#include <pthread.h>

#include <cstdlib>
#include <cstring>

#include "cuda_internal.h"

namespace
{

struct comm_set {
    int n;
    int devices[LABKIT_MAX_CUDA_DEVICES];
    ncclComm_t comms[LABKIT_MAX_CUDA_DEVICES];
};

constexpr int max_sets = 8;
comm_set sets[max_sets];
int nsets;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

status nccl_failure(const char *call, ncclResult_t r)
{
    return fail(STATUS_BACKEND_FAILED, "%s failed: %s\n  hint: NCCL_DEBUG=WARN says more", call,
                ncclGetErrorString(r));
}

void destroy_all()
{
    for (int s = 0; s < nsets; ++s)
        for (int i = 0; i < sets[s].n; ++i) ncclCommDestroy(sets[s].comms[i]);
    nsets = 0;
}

// The communicators of exactly these GPUs in this order, made the first time.
status communicators(const int *indices, int n, ncclComm_t **out)
{
    for (int s = 0; s < nsets; ++s)
        if (sets[s].n == n && std::memcmp(sets[s].devices, indices, sizeof(int) * (size_t)n) == 0) {
            *out = sets[s].comms;
            return STATUS_OK;
        }
    if (nsets == max_sets)
        return fail(STATUS_BACKEND_FAILED, "all_reduce_sum: more than %d different sets of GPUs", max_sets);
    comm_set *set = &sets[nsets];
    set->n = n;
    std::memcpy(set->devices, indices, sizeof(int) * (size_t)n);
    const ncclResult_t r = ncclCommInitAll(set->comms, n, indices);
    if (r != ncclSuccess) return nccl_failure("ncclCommInitAll", r);
    if (nsets++ == 0) std::atexit(destroy_all);
    *out = set->comms;
    return STATUS_OK;
}

status all_reduce_locked(const int *indices, float *const *data, const cudaStream_t *streams, int n,
                         size_t count)
{
    ncclComm_t *comms = nullptr;
    status s = communicators(indices, n, &comms);
    if (s != STATUS_OK) return s;
    // One group: NCCL starts the n reductions together, none waiting for another.
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; r == ncclSuccess && i < n; ++i)
        r = ncclAllReduce(data[i], data[i], count, ncclFloat, ncclSum, comms[i], streams[i]);
    const ncclResult_t end = ncclGroupEnd();
    if (r != ncclSuccess) return nccl_failure("ncclAllReduce", r);
    if (end != ncclSuccess) return nccl_failure("ncclGroupEnd", end);
    return STATUS_OK;
}

} // namespace

status nccl_all_reduce_sum(const int *indices, float *const *data, const cudaStream_t *streams, int n,
                           size_t count)
{
    pthread_mutex_lock(&lock);
    const status s = all_reduce_locked(indices, data, streams, n, count);
    pthread_mutex_unlock(&lock);
    return s;
}
