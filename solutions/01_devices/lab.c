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
    if (!out) return fail(STATUS_BAD_ARGUMENT, "lab_try_gpu: out is NULL; pass the address of a device");
    /* The lesson's test, device_count() >= i + 1, written so that it cannot
     * overflow; a negative i names no GPU either. */
    if (i < 0 || i >= gpu_count()) {
        *out = device_cpu();
        return STATUS_OK;
    }
    const device first_cuda = { DEVICE_CUDA, 0 };
    char name[32];
    snprintf(name, sizeof name, "%s:%d", device_exists(first_cuda) ? "cuda" : "sim", i);
    return device_parse(name, out);
}

/* Step 1 (README, "Step 1: try_gpu and try_all_gpus"): every GPU, or [cpu]
 * when there is none. Refuse a `capacity` too small for the answer rather than
 * cutting the list short. */
status lab_try_all_gpus(device *out, int capacity, int *count)
{
    if (!out || !count) return fail(STATUS_BAD_ARGUMENT, "lab_try_all_gpus: out and count must not be NULL");
    const int gpus = gpu_count();
    const int needed = gpus > 0 ? gpus : 1;
    if (capacity < needed)
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_try_all_gpus: room for %d device%s, but the answer holds %d.\n"
                    "  hint: pass an array of LABKIT_MAX_DEVICES devices",
                    capacity, capacity == 1 ? "" : "s", needed);
    if (gpus == 0) {
        out[0] = device_cpu();
        *count = 1;
        return STATUS_OK;
    }
    for (int i = 0; i < gpus; ++i) {
        status s = lab_try_gpu(i, &out[i]);
        if (s != STATUS_OK) return s;
    }
    *count = gpus;
    return STATUS_OK;
}

/* Step 2 (README, "Step 2: cores per multiprocessor"): a table from the
 * compute capability to the FP32 cores of one multiprocessor, Turing to
 * Blackwell. Anything not in it is unknown: *cores = 0. */
status lab_fp32_cores_per_sm(int cc_major, int cc_minor, int *cores)
{
    if (!cores) return fail(STATUS_BAD_ARGUMENT, "lab_fp32_cores_per_sm: cores is NULL");
    /* FP32 add/multiply/multiply-add results per clock per multiprocessor, from
     * the throughput table of NVIDIA's CUDA C++ Programming Guide ("Arithmetic
     * Instructions"); one result per core and cycle. */
    static const struct {
        int major, minor, cores;
    } table[] = {
        { 7, 5, 64 },   /* Turing: T4, RTX 20xx                          */
        { 8, 0, 64 },   /* Ampere for data centres: A100, A30            */
        { 8, 6, 128 },  /* Ampere: RTX 30xx, A10, A40                    */
        { 8, 7, 128 },  /* Ampere: Jetson Orin                           */
        { 8, 9, 128 },  /* Ada Lovelace: RTX 40xx, L4, L40               */
        { 9, 0, 128 },  /* Hopper: H100, H200                            */
        { 10, 0, 128 }, /* Blackwell: B200                               */
        { 10, 1, 128 }, /* Blackwell: Jetson Thor (before CUDA 13)       */
        { 10, 3, 128 }, /* Blackwell: B300                               */
        { 11, 0, 128 }, /* Blackwell: Jetson Thor (CUDA 13)              */
        { 12, 0, 128 }, /* Blackwell: RTX 50xx, RTX PRO 6000             */
        { 12, 1, 128 }, /* Blackwell: GB10 (DGX Spark)                   */
    };
    *cores = 0; /* unknown unless the table knows it */
    for (size_t k = 0; k < sizeof table / sizeof table[0]; ++k)
        if (table[k].major == cc_major && table[k].minor == cc_minor) *cores = table[k].cores;
    return STATUS_OK;
}

/* Step 3 (README, "Step 3: the FP32 peak"): multiprocessors x cores x clock x 2.
 * The clock is in GHz, so the result is in GFLOP/s. */
status lab_peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz, double *gflops)
{
    if (!gflops) return fail(STATUS_BAD_ARGUMENT, "lab_peak_fp32_gflops: gflops is NULL");
    if (multiprocessors < 0 || cores_per_mp < 0 || !(clock_ghz >= 0))
        return fail(STATUS_BAD_ARGUMENT,
                    "lab_peak_fp32_gflops: %d multiprocessors x %d cores x %g GHz: no figure may be negative",
                    multiprocessors, cores_per_mp, clock_ghz);
    /* A zero is an unknown figure, and an unknown factor makes the peak unknown. */
    if (multiprocessors == 0 || cores_per_mp == 0 || clock_ghz == 0) {
        *gflops = 0.0;
        return STATUS_OK;
    }
    /* Each core finishes one fused multiply-add per cycle: two operations. */
    *gflops = (double)multiprocessors * cores_per_mp * clock_ghz * 2.0;
    return STATUS_OK;
}

/* Step 4 (README, "Step 4: a tensor on a device"): create the tensor on d
 * directly, not on the CPU and then copied. */
status lab_rand_on(device d, int64_t rows, int64_t cols, uint64_t seed, tensor **out)
{
    return tensor_uniform(out, d, shape2(rows, cols), 0.0f, 1.0f, seed);
}

/* Step 5 (README, "Step 5: a layer on a device"): both parameters on the CPU,
 * weight [out, in] normal(0, 0.1), bias [out] zeros. Leave the layer empty if
 * anything fails. */
status lab_linear_create(lab_linear *layer, int64_t in_features, int64_t out_features, uint64_t seed)
{
    if (!layer) return fail(STATUS_BAD_ARGUMENT, "lab_linear_create: layer is NULL");
    layer->weight = layer->bias = NULL;
    status s =
        tensor_normal(&layer->weight, device_cpu(), shape2(out_features, in_features), 0.0f, 0.1f, seed);
    if (s == STATUS_OK) s = tensor_zeros(&layer->bias, device_cpu(), shape1(out_features));
    if (s != STATUS_OK) lab_linear_free(layer);
    return s;
}

/* Step 5: tensor_to each parameter. It hands back a new reference (the very
 * same tensor when it is already on d), so release the old one each time. */
status lab_linear_to(lab_linear *layer, device d)
{
    if (!layer || !layer->weight || !layer->bias)
        return fail(STATUS_BAD_ARGUMENT, "lab_linear_to: the layer is NULL or empty; create it first");
    tensor **parameters[] = { &layer->weight, &layer->bias };
    for (size_t k = 0; k < sizeof parameters / sizeof parameters[0]; ++k) {
        tensor *moved = NULL;
        status s = tensor_to(*parameters[k], d, &moved);
        if (s != STATUS_OK) return s;
        tensor_free(*parameters[k]);
        *parameters[k] = moved;
    }
    return STATUS_OK;
}

/* Step 5: ask each parameter where it lives (tensor_device); they must agree. */
status lab_linear_device(const lab_linear *layer, device *out)
{
    if (!layer || !layer->weight || !layer->bias || !out)
        return fail(STATUS_BAD_ARGUMENT, "lab_linear_device: the layer is NULL or empty, or out is NULL");
    const device w = tensor_device(layer->weight), b = tensor_device(layer->bias);
    if (!device_equal(w, b))
        return fail(STATUS_WRONG_DEVICE,
                    "lab_linear_device: the weight lives on %s but the bias on %s.\n"
                    "  hint: move the whole layer with lab_linear_to(layer, device)",
                    device_name(w), device_name(b));
    *out = w;
    return STATUS_OK;
}

/* Step 5: one matrix product with the bias added, W transposed because it is
 * stored [out, in]. The library refuses operands on different devices. */
status lab_linear_forward(const lab_linear *layer, const tensor *x, tensor *y)
{
    if (!layer || !layer->weight || !layer->bias)
        return fail(STATUS_BAD_ARGUMENT, "lab_linear_forward: the layer is NULL or empty; create it first");
    return op_matmul(x, false, layer->weight, true, layer->bias, y);
}

/* Given: releases both tensors (either may be NULL) and empties the layer. */
void lab_linear_free(lab_linear *layer)
{
    if (!layer) return;
    tensor_free(layer->weight);
    tensor_free(layer->bias);
    layer->weight = layer->bias = NULL;
}
