/* given.h: the code of lab 02 that you read but do not write (given.c).
 *
 * - norms_logged_on_host: the lesson's exercise done the slow way, which step 4
 *   rewrites the fast way (lab_norms_logged_on_device);
 * - norm_log_inputs: the exercise's two matrices;
 * - linear_forward: a layer's y = x W^T + b, to run the layer step 3 moves. */
#ifndef LAB02_GIVEN_H
#define LAB02_GIVEN_H

#include <stdint.h>

#include "lab.h"

/* The slow way of the lesson's exercise. Starting from y = x, computes `steps`
 * products y = y w (x and w are [n, n], on one device) and reads the Frobenius
 * norm of each product on the host at once, into norms[i]: every step the host
 * waits for the device, and on a GPU each read is a copy across the bus. */
status norms_logged_on_host(const tensor *x, const tensor *w, int steps, float *norms);

/* The exercise's inputs on d: x [n, n] uniform in [-1, 1], and w = I plus a
 * little noise, so that the norm of x w w ... w drifts slowly over a thousand
 * products instead of running off to infinity (as it would for a purely random
 * w: its largest eigenvalue, a bit above 1, compounds). */
status norm_log_inputs(device d, int64_t n, tensor **x, tensor **w);

/* y [batch, out] = x [batch, in] W^T + b on the layer's device (the lessons'
 * net(X)): one matrix product, W transposed because nn.Linear stores it
 * [out, in]. x and y must live where the layer does. */
status linear_forward(const lab_linear *layer, const tensor *x, tensor *y);

#endif
