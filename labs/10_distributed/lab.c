/* lab.c: lab 10, training over processes with MPI. Each function is one step
 * of README.md; lab.h says what each must do. The given code is in train.h.
 * Build and run: ./lab run 10 (-- --ranks 4); check: ./lab check 10; stuck:
 * ./lab hint 10. */
#include "lab.h"

/* ==== Step 1: ranks and devices (README, "Step 1") ========================= */

/* Goal: this process's number and the world's size, and the same among the
 * processes of its own machine. Look up MPI_Comm_rank, MPI_Comm_size and
 * MPI_Comm_split_type with MPI_COMM_TYPE_SHARED (README, "Step 1"). */
status lab_ranks(MPI_Comm comm, rank_info *out)
{
    /* TODO: your code here */
    (void)comm, (void)out;
    return todo("step 1: lab_ranks");
}

/* Goal: which device this rank trains on. A simulated GPU belongs to its
 * process; a real GPU to its machine, shared by the ranks there. */
status lab_pick_device(device requested, int local_rank, int gpus_here, device *out)
{
    /* TODO: your code here */
    (void)requested, (void)local_rank, (void)gpus_here, (void)out;
    return todo("step 1: lab_pick_device");
}

/* ==== Step 2: a ring all-reduce by hand (README, "Step 2") ================= */

/* Goal: chunk i of n elements among p ranks, the first n % p one longer. */
status lab_chunk(int64_t n, int p, int i, int64_t *first, int64_t *count)
{
    /* TODO: your code here */
    (void)n, (void)p, (void)i, (void)first, (void)count;
    return todo("step 2: lab_chunk");
}

/* Goal: the sum over every rank of data, on every rank: p - 1 steps of
 * reduce-scatter, then p - 1 of all-gather, each one MPI_Sendrecv to the
 * right neighbour and from the left (README, "Step 2", draws the chunks'
 * journey). Look up MPI_Sendrecv. */
status lab_ring_all_reduce(float *data, int64_t n, MPI_Comm comm)
{
    /* TODO: your code here */
    (void)data, (void)n, (void)comm;
    return todo("step 2: lab_ring_all_reduce");
}

/* ==== Step 3: data-parallel training across processes (README, "Step 3") == */

/* Goal: rank 0's weights and biases on every rank. Parameters live on the
 * device; MPI reads host memory. Look up MPI_Bcast, tensor_to_host and
 * tensor_copy_from_host. */
status lab_broadcast_parameters(mlp *net, MPI_Comm comm)
{
    /* TODO: your code here */
    (void)net, (void)comm;
    return todo("step 3: lab_broadcast_parameters");
}

/* Goal: from each rank's mean gradient over its own rows to the mean over
 * the whole batch, on every rank. Think about slices of different sizes. */
status lab_average_gradients(mlp *net, int64_t my_rows, int64_t batch_rows, MPI_Comm comm)
{
    /* TODO: your code here */
    (void)net, (void)my_rows, (void)batch_rows, (void)comm;
    return todo("step 3: lab_average_gradients");
}
