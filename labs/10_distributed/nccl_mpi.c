/* nccl_mpi.c: NCCL bootstrapped over MPI (nccl_mpi.h says what each does). */
#include "nccl_mpi.h"

#include <stdlib.h>

#ifdef LAB10_WITH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

struct dist_nccl {
    ncclComm_t comm;
    device dev;
};

bool dist_nccl_built(void) { return true; }

static status nccl_failure(const char *call, ncclResult_t r)
{
    return fail(STATUS_BACKEND_FAILED, "%s failed: %s (NCCL_DEBUG=INFO says more)", call,
                ncclGetErrorString(r));
}

status dist_nccl_create(MPI_Comm comm, device d, dist_nccl **out)
{
    if (!out || d.kind != DEVICE_CUDA || !device_exists(d))
        return fail(STATUS_WRONG_DEVICE, "dist_nccl_create: NCCL needs a real GPU (cuda:N), not %s",
                    device_name(d));
    *out = NULL;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* Rank 0 makes the id; MPI carries it to every rank (the bootstrap). */
    ncclUniqueId id;
    ncclResult_t r = ncclSuccess;
    if (rank == 0) r = ncclGetUniqueId(&id);
    int made = r == ncclSuccess;
    MPI_Bcast(&made, 1, MPI_INT, 0, comm);
    if (!made)
        return rank == 0 ? nccl_failure("ncclGetUniqueId", r)
                         : fail(STATUS_BACKEND_FAILED, "rank 0 could not make NCCL's unique id");
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
    dist_nccl *c = calloc(1, sizeof *c);
    if (!c) return fail(STATUS_OUT_OF_MEMORY, "dist_nccl_create: no host memory");
    c->dev = d;
    if (cudaSetDevice(d.index) != cudaSuccess) {
        free(c);
        return fail(STATUS_BACKEND_FAILED, "dist_nccl_create: cudaSetDevice(%d) failed", d.index);
    }
    r = ncclCommInitRank(&c->comm, size, id, rank);
    if (r != ncclSuccess) {
        free(c);
        return nccl_failure("ncclCommInitRank", r);
    }
    *out = c;
    return STATUS_OK;
}

typedef struct all_reduce_args {
    ncclComm_t comm;
    float *data;
    size_t count;
    ncclResult_t *result;
} all_reduce_args;

/* On the device's own stream (device_enqueue), so that it runs after what
 * was queued before it and before what comes after. */
static void all_reduce_on_stream(const void *args, void *stream)
{
    const all_reduce_args *a = args;
    *a->result = ncclAllReduce(a->data, a->data, a->count, ncclFloat, ncclSum, a->comm, (cudaStream_t)stream);
}

status dist_nccl_all_reduce_sum(dist_nccl *c, tensor *t)
{
    if (!c || !t || tensor_dtype(t) != DTYPE_F32 || !device_equal(tensor_device(t), c->dev))
        return fail(STATUS_BAD_ARGUMENT,
                    "dist_nccl_all_reduce_sum: a float32 tensor on the communicator's %s",
                    c ? device_name(c->dev) : "GPU");
    ncclResult_t result = ncclSuccess;
    const all_reduce_args args = { c->comm, tensor_data(t), (size_t)tensor_numel(t), &result };
    TRY(device_enqueue(c->dev, all_reduce_on_stream, &args, sizeof args));
    return result == ncclSuccess ? STATUS_OK : nccl_failure("ncclAllReduce", result);
}

void dist_nccl_free(dist_nccl *c)
{
    if (!c) return;
    ncclCommDestroy(c->comm);
    free(c);
}

#else /* a build without NCCL */

struct dist_nccl {
    int unused;
};

bool dist_nccl_built(void) { return false; }

static status not_built(const char *call)
{
    return fail(
        STATUS_BACKEND_FAILED,
        "%s: this build has no NCCL (it needs CUDA and NCCL's nccl.h and libnccl: the configure summary "
        "says whether it found them)",
        call);
}

status dist_nccl_create(MPI_Comm comm, device d, dist_nccl **out)
{
    (void)comm, (void)d;
    if (out) *out = NULL;
    return not_built("dist_nccl_create");
}

status dist_nccl_all_reduce_sum(dist_nccl *c, tensor *t)
{
    (void)c, (void)t;
    return not_built("dist_nccl_all_reduce_sum");
}

void dist_nccl_free(dist_nccl *c) { (void)c; }

#endif
