/* given.h: what lab 09 gives you besides the launchers of launch.h (given:
 * not a step): device arrays with room after them, float64 references that
 * main.c and check.c hold your kernels against, inputs whose sums are exact,
 * the cost of the library's softmax, and the timing both programs share.
 *
 * The references work on host arrays (a tensor's values, copied with
 * host_copy). Each gives, with its value, the size of the terms it added up:
 * a float32 sum of m terms is off by at most about m x 6e-8 of that size, so
 * errors are measured relative to it. */
#ifndef LAB09_GIVEN_H
#define LAB09_GIVEN_H

#include <stdint.h>

/* time_call and host_copy: labs/common/, shared by labs 07 and 09 */
#include "host_copy.h"
#include "labkit/labkit.h"
#include "launch.h"
#include "timing.h"

/* ---- arrays -------------------------------------------------------------------------- */

/* *out = a 1-D tensor of count + slack floats on d: the first `count` are
 * values[0 .. count - 1] (NaN when values is NULL: a value never written
 * shows), the `slack` after them slack_value. A kernel given the first
 * `count` only must leave the slack as it is. Give an input NaN slack: a
 * kernel that reads past its end reads NaN, which shows in its result,
 * instead of memory the program needs; give an output another value, so that
 * a write past its end shows, whatever it writes. */
status device_array(device d, const float *values, int64_t count, int64_t slack, float slack_value,
                    tensor **out);

/* x[0 .. n-1] uniform in [low, high), the same for the same seed on every machine. */
void uniform_values(float *x, int64_t n, float low, float high, uint64_t seed);

/* x[0 .. n-1] multiples of 1/256 in [-127/256, 127/256]: every float32 sum of
 * up to 2^17 of them, added in any order, is exact (no partial sum needs more
 * than 24 bits), so a sum that is off by one element's worth is wrong, not
 * rounded. */
void exact_values(float *x, int64_t n, uint64_t seed);

/* ---- float64 references --------------------------------------------------------------- */

/* Cell (row, col) of a [m, k] b [k, n] in float64; *scale (may be NULL)
 * receives sum over p of |a[row, p] b[p, col]|. */
double product_reference(const float *a, const float *b, int64_t n, int64_t k, int64_t row, int64_t col,
                         double *scale);

/* The largest error of c [m, n] against product_reference, each cell's
 * relative to its scale (|c - ref| / scale; a cell whose terms are all 0 by
 * |c - ref|); NaN, a cell never written, counts as infinite. *worst (may be
 * NULL) receives that cell's index. */
double product_error(const float *a, const float *b, const float *c, int64_t m, int64_t n, int64_t k,
                     int64_t *worst);

/* The exact sum of x[0 .. n-1] (float64 sums of floats: exact to 2^-53 of
 * sum_abs, far below float32's rounding) and sum_abs = sum of |x|. */
void sum_reference(const float *x, int64_t n, double *sum, double *sum_abs);

/* ---- the library's softmax as a roofline point ---------------------------------------------- */

/* The FLOP and least bytes of op_softmax_cross_entropy on [rows, cols]
 * logits: 4 FLOP per element (subtract the row's maximum, exponentiate,
 * add to the row's sum, divide: an exp counted as one, as profilers count a
 * special-function instruction); the logits read once and the probabilities
 * written once, 8 bytes per element, plus the labels (4 bytes a row). */
void softmax_cost(int64_t rows, int64_t cols, double *flop, double *bytes);

#endif
