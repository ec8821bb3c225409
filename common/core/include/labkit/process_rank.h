/* process_rank.h: which of a launch's processes this one is.
 *
 * Lab 10 runs as several processes started by mpiexec, each running the same
 * code: what one of them would say the same as the others (a TODO of the
 * skeleton, the notice of what a simulated GPU is) is said by rank 0 alone,
 * and what one says of itself (a crash) names its rank. The launcher tells a
 * process its rank before MPI_Init, in its environment: Open MPI sets
 * OMPI_COMM_WORLD_RANK, MPICH PMI_RANK, PMIx-based launchers PMIX_RANK. */
#ifndef LABKIT_PROCESS_RANK_H
#define LABKIT_PROCESS_RANK_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This process's rank in its launch, or -1 where no launcher started it (a
 * program run by itself). Reads the environment: call it outside signal
 * handlers. */
int process_rank(void);

/* Whether this process is a launched rank other than 0: it leaves to rank 0
 * what every rank would say alike. */
bool process_rank_is_quiet(void);

#ifdef __cplusplus
}
#endif
#endif
