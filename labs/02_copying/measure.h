/* measure.h: the timed copies that lab 02's experiment (main.c) and its check
 * (check.c) share. Nothing here is part of your work; read it to see how a copy
 * is timed honestly: buffers allocated and touched first, one warm-up, then the
 * median of several runs. */
#ifndef LAB02_MEASURE_H
#define LAB02_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labkit/labkit.h"

/* The device a lab demo pairs with d to cross a device boundary: the CPU when d
 * is a GPU; GPU 0 when d is the CPU (the CPU itself when there is no GPU). */
device partner_of(device d);

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

/* The lesson's exercise's inputs on d: x [n, n] uniform in [-1, 1], and
 * w = I + a little noise, so that the norm of x w w ... w drifts slowly over a
 * thousand products instead of running off to infinity (as it would for a
 * purely random w: its largest eigenvalue, a bit above 1, compounds). */
status norm_log_inputs(device d, int64_t n, tensor **x, tensor **w);

#endif
