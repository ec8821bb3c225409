/* lab.h: what you write in lab 10 (training over processes with MPI). Each
 * function belongs to one step of README.md; your code goes in lab.c.
 *
 * One process per device, started by a launcher (mpiexec -n 4 ./lab10), every
 * process running this same program: MPI numbers them, its ranks. Step 1 finds
 * each rank's number and device; step 2 sums a buffer over every rank with a
 * ring of MPI_Sendrecv calls, the all-reduce of data-parallel training; step 3
 * trains lab 05's network with it, each rank on its own slice of every batch.
 *
 * Every function returns a status: STATUS_OK, or a failure with a message made
 * by fail() (labkit/status.h). The untouched lab.c returns todo(...) everywhere,
 * so the programs tell you which step comes next instead of crashing. */
#ifndef LAB10_LAB_H
#define LAB10_LAB_H

#include <mpi.h>
#include <stdint.h>

#include "labkit/labkit.h"
#include "train.h"

/* ==== Step 1: ranks and devices (README, "Step 1") ========================= */

typedef struct rank_info {
    int rank, size;             /* this process's number in comm, 0..size-1, and how many there are */
    int local_rank, local_size; /* the same among the processes of this machine alone */
} rank_info;

/* This process's place in `comm`, among all its processes and among those on
 * its own machine (the ones that can share memory with it). */
status lab_ranks(MPI_Comm comm, rank_info *out);

/* The device of the rank whose number on its machine is local_rank, when the
 * program was asked for `requested`: the CPU for cpu; this process's own first
 * simulated GPU for sim:N (every process has simulated GPUs of its own);
 * for cuda:N, one of the `gpus_here` real GPUs of this machine, a different
 * one for each rank of the machine while there are enough (cuda:local_rank,
 * then round again). cuda with gpus_here = 0 is refused (STATUS_WRONG_DEVICE). */
status lab_pick_device(device requested, int local_rank, int gpus_here, device *out);

/* ==== Step 2: a ring all-reduce by hand (README, "Step 2") ================= */

/* Chunk i of n elements shared out among p ranks: elements *first ..
 * *first + *count - 1. The chunks follow each other, cover the n elements and
 * differ in size by at most one: the first n % p chunks get one more. */
status lab_chunk(int64_t n, int p, int i, int64_t *first, int64_t *count);

/* data[0..n-1] on every rank of comm becomes the element-wise sum over all
 * ranks, the same bits on every rank: a reduce-scatter (p - 1 steps, each rank
 * sending one chunk to its right neighbour and receiving one from its left
 * with MPI_Sendrecv, adding it to its own) then an all-gather (p - 1 steps,
 * each passing on a finished chunk). Each rank sends 2 (p - 1) chunks.
 * Chunks longer than INT_MAX elements, more than MPI's int counts can say,
 * are refused (STATUS_BAD_ARGUMENT) before anything is allocated or sent. */
status lab_ring_all_reduce(float *data, int64_t n, MPI_Comm comm);

/* ==== Step 3: data-parallel training across processes (README, "Step 3") == */

/* Every weight and bias of net (on its own device) made equal to rank 0's.
 * Here and in lab_average_gradients, a call that fails (a copy, an
 * allocation) returns its failure, having freed what it allocated. */
status lab_broadcast_parameters(mlp *net, MPI_Comm comm);

/* Every layer's dW and db holds the gradient of the mean loss over this rank's
 * `my_rows` rows of the batch; afterwards every rank of comm holds the
 * gradient of the mean loss over the whole batch of `batch_rows` rows (the sum
 * of my_rows over the ranks of comm), the same bits on every rank. Through
 * host memory, with your lab_ring_all_reduce. my_rows may be 0 (a batch of
 * fewer rows than ranks): that rank's gradients are 0, and it takes part in
 * the sum all the same. */
status lab_average_gradients(mlp *net, int64_t my_rows, int64_t batch_rows, MPI_Comm comm);

#endif
