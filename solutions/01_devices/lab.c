/* lab.c: lab 01, devices. Each function is one step of README.md; lab.h says
 * what each must do. Build and run: ./lab run 01; check: ./lab check 01. */
#include "lab.h"

#include <stdio.h>

/* ==== Step 1: try_gpu and try_all_gpus (README, "Step 1") ================== */

/* Goal: the lessons' try_gpu(i): GPU i when the machine has at least i + 1
 * GPUs, else the CPU, whatever i is. The README says which GPUs count and how
 * the lessons build a device from its name. Look up: gpu_count, device_count,
 * device_parse (labkit/device.h). */
status lab_try_gpu(int i, device *out)
{
    if (!out) return fail(STATUS_BAD_ARGUMENT, "lab_try_gpu: out is NULL; pass the address of a device");
    /* The lesson's test, device_count() >= i + 1, written so that it cannot
     * overflow; a negative i names no GPU either. */
    if (i < 0 || i >= gpu_count()) {
        *out = device_cpu();
        return STATUS_OK;
    }
    /* gpu_count() counts the real GPUs where there is one, else the simulated ones. */
    char name[32];
    snprintf(name, sizeof name, "%s:%d", device_count(DEVICE_CUDA) > 0 ? "cuda" : "sim", i);
    return device_parse(name, out);
}

/* Goal: every GPU, or a list of just the CPU when there is none, so that a
 * loop over it always has somewhere to run. An array too small for the whole
 * answer is refused, not cut short or overrun. */
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

/* ==== Step 2: cores per multiprocessor (README, "Step 2") ================== */

/* Goal: the FP32 cores of one multiprocessor for a compute capability, from
 * the README's table (Turing to Blackwell). Whatever the table does not name
 * exactly is unknown: 0, never a guess. */
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

/* ==== Step 3: the FP32 peak (README, "Step 3") ============================= */

/* Goal: the theoretical FP32 peak in GFLOP/s from what the GPU is made of; the
 * README's formula says why there is a factor of 2. An unknown (0) figure
 * makes the peak unknown; a negative one, even beside a 0, and a NaN clock are
 * refused with a message (fail in labkit/status.h). */
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

/* ==== Step 4: a tensor on a device (README, "Step 4") ====================== */

/* Goal: torch.rand(rows, cols, device=d): seeded uniform values in [0, 1),
 * made on d itself, never on the CPU first. Look up: the seeded creators in
 * labkit/tensor.h. */
status lab_rand_on(device d, int64_t rows, int64_t cols, uint64_t seed, tensor **out)
{
    return tensor_uniform(out, d, shape2(rows, cols), 0.0f, 1.0f, seed);
}

/* ==== Step 5: a layer on a device (README, "Step 5") ======================= */

/* Goal: nn.Linear(in, out) as PyTorch makes it, on the CPU: lab.h gives the
 * shapes and the values. If anything fails, leave the layer empty. */
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

/* Goal: net.to(d): every parameter on d, nothing left behind on the old
 * device. Look up: tensor_to in labkit/tensor.h, and what it hands back. */
status lab_linear_to(lab_linear *layer, device d)
{
    if (!layer || !layer->weight || !layer->bias)
        return fail(STATUS_BAD_ARGUMENT, "lab_linear_to: the layer is NULL or empty; create it first");
    tensor **parameters[] = { &layer->weight, &layer->bias };
    for (size_t k = 0; k < sizeof parameters / sizeof parameters[0]; ++k) {
        tensor *moved = NULL;
        status s = tensor_to(*parameters[k], d, &moved);
        if (s != STATUS_OK) return s;
        /* tensor_to hands back a new reference (the same tensor when it is
         * already on d): the old one is ours to release. */
        tensor_free(*parameters[k]);
        *parameters[k] = moved;
    }
    return STATUS_OK;
}

/* Goal: where the layer lives, read from its parameters; a half-moved layer
 * lives nowhere and is refused, saying which device holds the weight and which
 * the bias. Look up: tensor_device, device_equal, device_name. */
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

/* Goal: net(X), y = x W^T + b, on the layer's device. Look up: op_matmul in
 * labkit/ops.h. */
status lab_linear_forward(const lab_linear *layer, const tensor *x, tensor *y)
{
    if (!layer || !layer->weight || !layer->bias)
        return fail(STATUS_BAD_ARGUMENT, "lab_linear_forward: the layer is NULL or empty; create it first");
    /* W is stored [out, in], so x [batch, in] meets its transpose. */
    return op_matmul(x, false, layer->weight, true, layer->bias, y);
}
