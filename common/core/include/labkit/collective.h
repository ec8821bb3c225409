/* collective.h: one tensor on several devices, combined: the all-reduce of
 * data-parallel training.
 *
 * Each device holds a replica of the network and computes the gradients of its
 * slice of every batch; before the optimiser steps, the gradients are summed
 * across the devices and every device gets the sum, so that every replica
 * takes the same step and the parameters stay equal everywhere.
 *
 *   tensor *grads[2] = {grad_on_gpu0, grad_on_gpu1};   // one per device, same shape
 *   CHECK(all_reduce_sum(grads, 2));                   // each now holds the sum
 *
 * On real GPUs, when the kit was built with NCCL, NVIDIA's collective library
 * does it: queued on every GPU's stream, the GPUs exchanging the data among
 * themselves (NVLink or PCIe), the host never touching it. Everywhere else (the
 * CPU, simulated GPUs, real GPUs without NCCL, or a mix of kinds) the library
 * reduces through the host: it waits for every device, copies each tensor to
 * the host, adds them up in device order and copies the sum back to every
 * device; each of those copies is counted (counters.h), which is what such a
 * reduction costs and what NCCL avoids. */
#ifndef LABKIT_COLLECTIVE_H
#define LABKIT_COLLECTIVE_H

#include "labkit/status.h"
#include "labkit/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tensors[0..n-1]: float32, one shape, each on its own device. Afterwards every
 * one holds the element-wise sum of all of them. n = 1 is the tensor itself
 * (nothing moves). */
status all_reduce_sum(tensor *const *tensors, int n);

/* Whether all_reduce_sum goes through NVIDIA's NCCL for these tensors (all on
 * real GPUs, in a build with NCCL), or through the host. */
bool all_reduce_uses_nccl(tensor *const *tensors, int n);

#ifdef __cplusplus
}
#endif
#endif
