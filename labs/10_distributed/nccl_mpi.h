/* nccl_mpi.h: NVIDIA's NCCL bootstrapped over MPI, the way real trainers
 * start it (given: the check and the experiment use it on real GPUs).
 *
 * NCCL moves device buffers between GPUs itself (NVLink, PCIe, InfiniBand),
 * the host never touching the data. Its ranks find each other through one
 * "unique id" that rank 0 makes and every other rank must receive: MPI
 * broadcasts it, then each rank joins the communicator on its own GPU.
 *
 *   dist_nccl *nccl;
 *   CHECK(dist_nccl_create(MPI_COMM_WORLD, d, &nccl));   // d: this rank's cuda:N
 *   CHECK(dist_nccl_all_reduce_sum(nccl, grad));         // queued on grad's device
 *   dist_nccl_free(nccl);
 *
 * Built where CMake found NCCL and CUDA (LABKIT_HAVE_NCCL); elsewhere every
 * call fails with a message that says so. */
#ifndef LAB10_NCCL_MPI_H
#define LAB10_NCCL_MPI_H

#include <mpi.h>
#include <stdbool.h>

#include "labkit/labkit.h"

typedef struct dist_nccl dist_nccl;

/* Whether this build has NCCL. */
bool dist_nccl_built(void);

/* Every rank of comm calls it with its own real GPU d: rank 0's unique id,
 * broadcast over MPI, then one NCCL rank per MPI rank on d. */
status dist_nccl_create(MPI_Comm comm, device d, dist_nccl **out);

/* t (float32, on the communicator's GPU) becomes the sum of every rank's t,
 * in place; queued on t's device like any operation. */
status dist_nccl_all_reduce_sum(dist_nccl *c, tensor *t);

void dist_nccl_free(dist_nccl *c);

#endif
