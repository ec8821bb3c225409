/* lab.c: lab 01, devices. Each function is one step of README.md; lab.h says
 * what each must do. Build and run: ./lab run 01; check: ./lab check 01. */
#include "lab.h"

#include <stdio.h>

/* Step 1 (README, "Step 1: try_gpu and try_all_gpus"): GPU i if there are at
 * least i + 1 GPUs, else the CPU. Use gpu_count(), and make the GPU from its
 * name: real GPUs are "cuda:N"; simulated ones, "sim:N", stand in only where
 * there is no real one (device_exists tells whether cuda:0 is there).
 * device_parse turns a name into a device. */
status lab_try_gpu(int i, device *out)
{
    /* TODO: your code here */
    (void)i, (void)out;
    return todo("step 1: lab_try_gpu");
}

/* Step 1 (README, "Step 1: try_gpu and try_all_gpus"): every GPU, or [cpu]
 * when there is none. Refuse a `capacity` too small for the answer rather than
 * cutting the list short. */
status lab_try_all_gpus(device *out, int capacity, int *count)
{
    /* TODO: your code here */
    (void)out, (void)capacity, (void)count;
    return todo("step 1: lab_try_all_gpus");
}

/* Step 2 (README, "Step 2: cores per multiprocessor"): a table from the
 * compute capability to the FP32 cores of one multiprocessor, Turing to
 * Blackwell. Anything not in it is unknown: *cores = 0. */
status lab_fp32_cores_per_sm(int cc_major, int cc_minor, int *cores)
{
    /* TODO: your code here */
    (void)cc_major, (void)cc_minor, (void)cores;
    return todo("step 2: lab_fp32_cores_per_sm");
}

/* Step 3 (README, "Step 3: the FP32 peak"): multiprocessors x cores x clock x 2.
 * The clock is in GHz, so the result is in GFLOP/s. */
status lab_peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz, double *gflops)
{
    /* TODO: your code here */
    (void)multiprocessors, (void)cores_per_mp, (void)clock_ghz, (void)gflops;
    return todo("step 3: lab_peak_fp32_gflops");
}

/* Step 4 (README, "Step 4: a tensor on a device"): create the tensor on d
 * directly, not on the CPU and then copied. */
status lab_rand_on(device d, int64_t rows, int64_t cols, uint64_t seed, tensor **out)
{
    /* TODO: your code here */
    (void)d, (void)rows, (void)cols, (void)seed, (void)out;
    return todo("step 4: lab_rand_on");
}

/* Step 5 (README, "Step 5: a layer on a device"): both parameters on the CPU,
 * weight [out, in] normal(0, 0.1), bias [out] zeros. Leave the layer empty if
 * anything fails. */
status lab_linear_create(lab_linear *layer, int64_t in_features, int64_t out_features, uint64_t seed)
{
    /* TODO: your code here */
    (void)layer, (void)in_features, (void)out_features, (void)seed;
    return todo("step 5: lab_linear_create");
}

/* Step 5: tensor_to each parameter. It hands back a new reference (the very
 * same tensor when it is already on d), so release the old one each time. */
status lab_linear_to(lab_linear *layer, device d)
{
    /* TODO: your code here */
    (void)layer, (void)d;
    return todo("step 5: lab_linear_to");
}

/* Step 5: ask each parameter where it lives (tensor_device); they must agree. */
status lab_linear_device(const lab_linear *layer, device *out)
{
    /* TODO: your code here */
    (void)layer, (void)out;
    return todo("step 5: lab_linear_device");
}

/* Step 5: one matrix product with the bias added, W transposed because it is
 * stored [out, in]. The library refuses operands on different devices. */
status lab_linear_forward(const lab_linear *layer, const tensor *x, tensor *y)
{
    /* TODO: your code here */
    (void)layer, (void)x, (void)y;
    return todo("step 5: lab_linear_forward");
}

/* Given: releases both tensors (either may be NULL) and empties the layer. */
void lab_linear_free(lab_linear *layer)
{
    if (!layer) return;
    tensor_free(layer->weight);
    tensor_free(layer->bias);
    layer->weight = layer->bias = NULL;
}
