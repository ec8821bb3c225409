/* given.h: lab 08's given code for the cores (given.c): you read it, you do
 * not write it.
 *
 * - matmul_ikj: your own loop of lab 04's step 3 (the order i, p, j), on one
 *   core: the serial loop your step 1 shares out among threads, and the
 *   results it must equal (so lab 04's step 3 comes first);
 * - the clocks that tell work from waiting: a thread's own CPU time, the
 *   process's, and what every thread of an OpenMP team has spent so far;
 * - OpenBLAS's threads: how many it uses, and a pause that lets them (and
 *   OpenMP's) fall asleep, so that the two pools never spin at once.
 *
 * Why the pools matter. Debian's OpenBLAS keeps one thread per core; after
 * each call they keep spinning for about a tenth of a second, waiting for the
 * next one, and OpenMP's threads spin for a moment after each parallel loop
 * too. Two pools busy on the same cores share them and lose more than their
 * share (on 2 quiet cores here: the OpenMP loop 1.4 to 2.6 times slower
 * beside OpenBLAS at work, OpenBLAS 2.6 to 3.3 times slower beside it), and
 * a loop timed while the other pool still spins is timed wrong. So the lab never runs one pool while the other is awake. */
#ifndef LAB08_GIVEN_H
#define LAB08_GIVEN_H

#include <stddef.h>
#include <stdint.h>

#include "labkit/labkit.h"

/* Lab 04's i-k-j loop: c [m, n] = a [m, k] b [k, n], row by row, on the
 * calling thread alone: your lab_matmul_ikj of lab 04. Where that step is
 * still a TODO (or fails), the program stops here and says so. */
void matmul_ikj(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k);

/* Lab 04's step 3, in labs/04_matmul/lab.c (lab 04's lab.h says what it does):
 * yours in your programs, the solution's in the solution's. */
status lab_matmul_ikj(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k);

/* ---- clocks ---------------------------------------------------------------- */

/* thread_cpu_seconds and process_cpu_seconds: labkit/timer.h. */

/* The largest OpenMP team team_cpu_seconds reads. */
#define TEAM_MAX_THREADS 64

/* For every thread t of an OpenMP team of `threads` threads: cpu[t], the CPU
 * seconds it has used so far, and tid[t], which thread of the system it is.
 * OpenMP keeps its threads from one parallel region to the next, so two
 * readings of a team of the same size, before and after a parallel loop of
 * that size, give what each of its threads spent on the loop (where a tid
 * differs, the team was not the same one). */
status team_cpu_seconds(int threads, double *cpu, long *tid);

/* ---- OpenBLAS -------------------------------------------------------------- */

/* How many threads OpenBLAS's products use from now on (1: the calling thread
 * alone; 0: one per core, its default). */
void blas_threads(int threads);

/* The cores OpenMP and OpenBLAS see (omp_get_num_procs). */
int cores_here(void);

/* How many cores' worth of work other programs were doing during the
 * quarter of a second this call waits (/proc/stat: the cores' busy time over
 * that quarter, this process asleep): 0 on a quiet machine, up to every core
 * on a busy one. -1 where it cannot be read. */
double cores_busy_elsewhere(void);

/* Sleeps long enough (a quarter of a second) for the threads of both pools
 * to stop spinning and go to sleep: call it between work of one pool and
 * timed work of the other. */
void pools_settle(void);

/* c = a b, all n x n, with OpenBLAS (cblas_sgemm) on the threads
 * blas_threads allows. */
void blas_matmul(const float *a, const float *b, float *c, int64_t n);

/* ---- devices -------------------------------------------------------------- */

/* The GPUs to compare, all of one kind: those of `asked`'s kind when it is
 * a GPU (--device sim:0: every simulated GPU), none when it is the CPU, and
 * without `asked` (NULL) the real ones where there are two or more (or one,
 * and fewer than two simulated ones), else the simulated ones. Two devices of two kinds, cuda:0 beside sim:0, are no pair:
 * one computes far faster than the other. Writes at most `capacity` to out
 * and returns how many; `note` gets a sentence for the reader where the
 * choice needs one ("" where not). */
int gpus_to_compare(const device *asked, device *out, int capacity, char *note, size_t size);

/* "sim:0+sim:1" into out; returns out. */
const char *device_names_joined(const device *d, int n, char *out, size_t size);

#endif
