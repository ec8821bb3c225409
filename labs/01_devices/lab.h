/* lab.h: what you write in lab 01 (devices). Each function belongs to one step
 * of README.md; your code goes in lab.c.
 *
 * Every function returns a status: STATUS_OK, or a failure with a message made
 * by fail() (labkit/status.h). The untouched lab.c returns todo(...) everywhere,
 * so the programs tell you which step comes next instead of crashing. */
#ifndef LAB01_LAB_H
#define LAB01_LAB_H

#include <stdint.h>

#include "labkit/labkit.h"

/* ==== Step 1: try_gpu and try_all_gpus (README, "Step 1") ================== */

/* GPU i if this machine has at least i + 1 GPUs, otherwise the CPU: the
 * lessons' try_gpu(i). The GPUs are the real ones ("cuda:N") where there is
 * one, else the simulated ones ("sim:N"), as gpu_count() counts them. Do not
 * call the library's own try_gpu: it is the answer. */
status lab_try_gpu(int i, device *out);

/* Every GPU, in order, or just the CPU when there is none: the lessons'
 * try_all_gpus(). Writes the devices to out[0..*count-1] and nothing beyond;
 * fails with STATUS_BAD_ARGUMENT, writing nothing, when `capacity` is too small
 * to hold them all. Do not call the library's try_all_gpus or try_gpu. */
status lab_try_all_gpus(device *out, int capacity, int *count);

/* ==== Step 2: cores per multiprocessor (README, "Step 2") ================== */

/* FP32 cores per streaming multiprocessor for compute capability
 * cc_major.cc_minor, Turing (7.5) to Blackwell (12.x). An architecture that is
 * not in your table gives *cores = 0, meaning "unknown": never a guess. The
 * table is yours to write: not the library's fp32_cores_per_multiprocessor. */
status lab_fp32_cores_per_sm(int cc_major, int cc_minor, int *cores);

/* ==== Step 3: the FP32 peak (README, "Step 3") ============================= */

/* multiprocessors x cores per multiprocessor x clock (GHz) x 2, in GFLOP/s.
 * The 2: one fused multiply-add, a*b + c, is two floating-point operations.
 * A figure of 0 means "unknown" and gives *gflops = 0; a negative one, any of
 * the three, is a mistake (STATUS_BAD_ARGUMENT), and so is a clock that is not
 * a number (NaN), each even beside a 0. Not the library's peak_fp32_gflops: the
 * formula is the step. */
status lab_peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz, double *gflops);

/* ==== Step 4: a tensor on a device (README, "Step 4") ====================== */

/* A new [rows, cols] tensor of uniform random values in [0, 1), drawn from
 * `seed`, created directly on device d, never on the CPU first (the lessons'
 * torch.rand(2, 3, device=try_gpu())). When d has no room for it, the
 * library's failure is the answer (STATUS_OUT_OF_MEMORY), not a tensor made
 * elsewhere. */
status lab_rand_on(device d, int64_t rows, int64_t cols, uint64_t seed, tensor **out);

/* ==== Step 5: a layer on a device (README, "Step 5") ======================= */

/* A fully connected layer y = x W^T + b, stored the way PyTorch's
 * nn.Linear(in, out) stores it. Both pointers are NULL in a layer that holds
 * nothing. */
typedef struct lab_linear {
    tensor *weight; /* [out_features, in_features] */
    tensor *bias;   /* [out_features] */
} lab_linear;

/* A new layer on the CPU, where a framework creates one: weight normal with
 * mean 0 and standard deviation 0.1 drawn from `seed`, bias zeros. If it
 * cannot be made, the failure is returned and the layer left empty (both
 * pointers NULL, whatever it held before). */
status lab_linear_create(lab_linear *layer, int64_t in_features, int64_t out_features, uint64_t seed);

/* Moves every parameter of the layer to device d (the lessons' net.to(device)).
 * A parameter already on d is not copied; nothing is left behind on the old
 * device. If a copy fails (no room on d), that failure is returned and the
 * layer still holds both its parameters, each on the old device or on d. */
status lab_linear_to(lab_linear *layer, device d);

/* The device where the layer lives, read back from its parameters. Fails with
 * STATUS_WRONG_DEVICE if weight and bias live on different ones (a half-moved
 * layer), with a message that says which device holds the weight and which the
 * bias: each device's name written after the word, "weight" or "bias", it
 * belongs to ("weight on cpu, bias on sim:0"). */
status lab_linear_device(const lab_linear *layer, device *out);

/* y [batch, out] = x [batch, in] W^T + b, on the layer's device (the lessons'
 * net(X)). x and y must live there too; y exists already. An x the product
 * cannot take (another width, another device) is the library's failure,
 * returned as it is: nothing is copied behind the caller's back. */
status lab_linear_forward(const lab_linear *layer, const tensor *x, tensor *y);

/* Given (given.c), not a step: releases both tensors (either may be NULL) and
 * empties the layer. */
void lab_linear_free(lab_linear *layer);

#endif
