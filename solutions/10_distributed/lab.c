/* lab.c: lab 10, training over processes with MPI (the reference solution). */
#include "lab.h"

#include <stdlib.h>

/* ==== Step 1: ranks and devices (README, "Step 1") ========================= */

status lab_ranks(MPI_Comm comm, rank_info *out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "lab_ranks: out is NULL");
    if (MPI_Comm_rank(comm, &out->rank) != MPI_SUCCESS || MPI_Comm_size(comm, &out->size) != MPI_SUCCESS)
        return fail(STATUS_BAD_ARGUMENT, "lab_ranks: MPI_Comm_rank or MPI_Comm_size failed: is comm valid?");
    MPI_Comm local;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, out->rank, MPI_INFO_NULL, &local) != MPI_SUCCESS)
        return fail(STATUS_BAD_ARGUMENT, "lab_ranks: MPI_Comm_split_type failed");
    MPI_Comm_rank(local, &out->local_rank);
    MPI_Comm_size(local, &out->local_size);
    MPI_Comm_free(&local);
    return STATUS_OK;
}

status lab_pick_device(device requested, int local_rank, int gpus_here, device *out)
{
    if (!out || local_rank < 0 || gpus_here < 0)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_pick_device: out must not be NULL, local_rank (%d) and gpus_here (%d) >= 0",
                    local_rank, gpus_here);
    if (requested.kind == DEVICE_CPU) {
        *out = device_cpu();
        return STATUS_OK;
    }
    if (requested.kind == DEVICE_SIM) {
        *out = (device){ DEVICE_SIM, 0 };
        return STATUS_OK;
    }
    if (gpus_here < 1)
        return fail(STATUS_WRONG_DEVICE, "lab_pick_device: %s asked for, but this machine has no real GPU",
                    device_name(requested));
    *out = (device){ DEVICE_CUDA, local_rank % gpus_here };
    return STATUS_OK;
}

/* ==== Step 2: a ring all-reduce by hand (README, "Step 2") ================= */

status lab_chunk(int64_t n, int p, int i, int64_t *first, int64_t *count)
{
    if (n < 0 || p < 1 || i < 0 || i >= p || !first || !count)
        return fail(STATUS_BAD_ARGUMENT, "lab_chunk: n >= 0 (%lld), p >= 1 (%d), 0 <= i < p (%d)",
                    (long long)n, p, i);
    const int64_t base = n / p, extra = n % p;
    *first = i * base + (i < extra ? i : extra);
    *count = base + (i < extra ? 1 : 0);
    return STATUS_OK;
}

status lab_ring_all_reduce(float *data, int64_t n, MPI_Comm comm)
{
    if (n < 0 || (n > 0 && !data))
        return fail(STATUS_BAD_ARGUMENT, "lab_ring_all_reduce: n >= 0 (%lld) and data", (long long)n);
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (p == 1 || n == 0) return STATUS_OK;
    if (n / p + 1 > INT32_MAX)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_ring_all_reduce: chunks of %lld floats are more than MPI's int count",
                    (long long)(n / p + 1));
    const int right = (rank + 1) % p, left = (rank + p - 1) % p;
    float *in = malloc(sizeof(float) * (size_t)(n / p + 1));
    if (!in)
        return fail(STATUS_OUT_OF_MEMORY, "lab_ring_all_reduce: no room for a chunk of %lld floats",
                    (long long)(n / p + 1));
    int64_t sf = 0, sc = 0, rf = 0, rc = 0;
    for (int s = 0; s < p - 1; ++s) { /* reduce-scatter: chunk rank - s goes right, rank - s - 1 comes in */
        lab_chunk(n, p, (rank - s + p) % p, &sf, &sc);
        lab_chunk(n, p, (rank - s - 1 + 2 * p) % p, &rf, &rc);
        MPI_Sendrecv(data + sf, (int)sc, MPI_FLOAT, right, 0, in, (int)rc, MPI_FLOAT, left, 0, comm,
                     MPI_STATUS_IGNORE);
        for (int64_t j = 0; j < rc; ++j) data[rf + j] += in[j];
    }
    for (int s = 0; s < p - 1; ++s) { /* all-gather: rank + 1 - s is finished here, pass it on */
        lab_chunk(n, p, (rank + 1 - s + p) % p, &sf, &sc);
        lab_chunk(n, p, (rank - s + p) % p, &rf, &rc);
        MPI_Sendrecv(data + sf, (int)sc, MPI_FLOAT, right, 1, data + rf, (int)rc, MPI_FLOAT, left, 1, comm,
                     MPI_STATUS_IGNORE);
    }
    free(in);
    return STATUS_OK;
}

/* ==== Step 3: data-parallel training across processes (README, "Step 3") == */

status lab_broadcast_parameters(mlp *net, MPI_Comm comm)
{
    if (!net) return fail(STATUS_BAD_ARGUMENT, "lab_broadcast_parameters: net is NULL");
    for (int i = 0; i < net->nlayers; ++i) {
        tensor *params[2] = { net->layers[i].W, net->layers[i].b };
        for (int j = 0; j < 2; ++j) {
            const int64_t n = tensor_numel(params[j]);
            float *host = malloc(sizeof(float) * (size_t)n);
            if (!host)
                return fail(STATUS_OUT_OF_MEMORY, "lab_broadcast_parameters: no room for %lld floats",
                            (long long)n);
            status s = tensor_to_host(params[j], host, n);
            if (s == STATUS_OK) MPI_Bcast(host, (int)n, MPI_FLOAT, 0, comm);
            if (s == STATUS_OK) s = tensor_copy_from_host(params[j], host, n);
            free(host);
            TRY(s);
        }
    }
    return STATUS_OK;
}

status lab_average_gradients(mlp *net, int64_t my_rows, int64_t batch_rows, MPI_Comm comm)
{
    if (!net || my_rows < 0 || batch_rows < 1 || my_rows > batch_rows)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_average_gradients: net, 0 <= my_rows (%lld) <= batch_rows (%lld), batch_rows >= 1",
                    (long long)my_rows, (long long)batch_rows);
    int64_t total = 0;
    for (int i = 0; i < net->nlayers; ++i)
        total += tensor_numel(net->layers[i].dW) + tensor_numel(net->layers[i].db);
    float *host = malloc(sizeof(float) * (size_t)total);
    if (!host)
        return fail(STATUS_OUT_OF_MEMORY, "lab_average_gradients: no room for %lld floats", (long long)total);
    status s = STATUS_OK;
    int64_t at = 0;
    for (int i = 0; i < net->nlayers && s == STATUS_OK; ++i) {
        tensor *g[2] = { net->layers[i].dW, net->layers[i].db };
        for (int j = 0; j < 2 && s == STATUS_OK; ++j) {
            s = tensor_to_host(g[j], host + at, tensor_numel(g[j]));
            at += tensor_numel(g[j]);
        }
    }
    /* Each rank's mean, weighted by its rows: the sum over the ranks is then
     * the whole batch's sum of per-row gradients, whatever the slices' sizes. */
    for (int64_t k = 0; k < total && s == STATUS_OK; ++k) host[k] *= (float)my_rows;
    if (s == STATUS_OK) s = lab_ring_all_reduce(host, total, comm);
    for (int64_t k = 0; k < total && s == STATUS_OK; ++k) host[k] /= (float)batch_rows;
    at = 0;
    for (int i = 0; i < net->nlayers && s == STATUS_OK; ++i) {
        tensor *g[2] = { net->layers[i].dW, net->layers[i].db };
        for (int j = 0; j < 2 && s == STATUS_OK; ++j) {
            s = tensor_copy_from_host(g[j], host + at, tensor_numel(g[j]));
            at += tensor_numel(g[j]);
        }
    }
    free(host);
    return s;
}
