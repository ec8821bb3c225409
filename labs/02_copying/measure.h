/* measure.h: how lab 02's experiment (main.c) and its check (check.c) count and
 * time copies (measure.c). Nothing here is part of your work; read it to see
 * how copies are counted (counters.h) and how a copy is timed honestly: buffers
 * allocated and touched first, one warm-up, then the median of several runs. */
#ifndef LAB02_MEASURE_H
#define LAB02_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labkit/labkit.h"

/* The device a lab demo pairs with d to cross a device boundary: the CPU when d
 * is a GPU; GPU 0 when d is the CPU (the CPU itself when there is no GPU). */
device partner_of(device d);

/* The copies counted on d and other since reset_pair(d, other), and their
 * bytes. A copy between the host (or the cpu) and a GPU is counted on the GPU
 * only (counters.h), so summing the two devices counts each copy once; with
 * d == other, d is counted once. */
typedef struct copy_tally {
    uint64_t copies, bytes; /* every kind */
    uint64_t h2d, d2h;      /* of which host -> GPU, GPU -> host */
} copy_tally;

status reset_pair(device d, device other);
status copies_between(device d, device other, copy_tally *out);

/* Moves total_bytes between the host and device d (to_device: host -> d, else
 * d -> host) once as one tensor and once as `pieces` tensors of
 * total_bytes / pieces each. Writes the median seconds of `reps` runs of each. */
status time_one_vs_many(device d, int64_t total_bytes, int pieces, bool to_device, int reps,
                        double *one_seconds, double *many_seconds);

/* The four columns of a bandwidth table, as in CUDA's bandwidthTest. */
enum { BW_H2D_PAGEABLE, BW_H2D_PINNED, BW_D2H_PAGEABLE, BW_D2H_PINNED, BW_KINDS };
extern const char *const bw_kind_names[BW_KINDS]; /* "host->device, pageable", ... */

/* GB/s (1 GB = 1e9 bytes) of copies of `bytes` between host buffers and one
 * tensor on d, each direction from pageable (malloc) and pinned
 * (host_alloc(bytes, 1)) memory: the median of `reps` copies of each kind. */
status bandwidth_point(device d, size_t bytes, int reps, double gbps[BW_KINDS]);

#endif
