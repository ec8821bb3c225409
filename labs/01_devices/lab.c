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
    /* TODO: your code here */
    (void)i, (void)out;
    return todo("step 1: lab_try_gpu");
}

/* Goal: every GPU, or a list of just the CPU when there is none, so that a
 * loop over it always has somewhere to run. An array too small for the whole
 * answer is refused, not cut short or overrun. */
status lab_try_all_gpus(device *out, int capacity, int *count)
{
    /* TODO: your code here */
    (void)out, (void)capacity, (void)count;
    return todo("step 1: lab_try_all_gpus");
}

/* ==== Step 2: cores per multiprocessor (README, "Step 2") ================== */

/* Goal: the FP32 cores of one multiprocessor for a compute capability, from
 * the README's table (Turing to Blackwell). Whatever the table does not name
 * exactly is unknown: 0, never a guess. */
status lab_fp32_cores_per_sm(int cc_major, int cc_minor, int *cores)
{
    /* TODO: your code here */
    (void)cc_major, (void)cc_minor, (void)cores;
    return todo("step 2: lab_fp32_cores_per_sm");
}

/* ==== Step 3: the FP32 peak (README, "Step 3") ============================= */

/* Goal: the theoretical FP32 peak in GFLOP/s from what the GPU is made of; the
 * README's formula says why there is a factor of 2. An unknown (0) figure
 * makes the peak unknown; a negative one, even beside a 0, and a NaN clock are
 * refused with a message (fail in labkit/status.h). */
status lab_peak_fp32_gflops(int multiprocessors, int cores_per_mp, double clock_ghz, double *gflops)
{
    /* TODO: your code here */
    (void)multiprocessors, (void)cores_per_mp, (void)clock_ghz, (void)gflops;
    return todo("step 3: lab_peak_fp32_gflops");
}

/* ==== Step 4: a tensor on a device (README, "Step 4") ====================== */

/* Goal: torch.rand(rows, cols, device=d): seeded uniform values in [0, 1),
 * made on d itself, never on the CPU first. Look up: the seeded creators in
 * labkit/tensor.h. */
status lab_rand_on(device d, int64_t rows, int64_t cols, uint64_t seed, tensor **out)
{
    /* TODO: your code here */
    (void)d, (void)rows, (void)cols, (void)seed, (void)out;
    return todo("step 4: lab_rand_on");
}

/* ==== Step 5: a layer on a device (README, "Step 5") ======================= */

/* Goal: nn.Linear(in, out) as PyTorch makes it, on the CPU: lab.h gives the
 * shapes and the values. If anything fails, leave the layer empty. */
status lab_linear_create(lab_linear *layer, int64_t in_features, int64_t out_features, uint64_t seed)
{
    /* TODO: your code here */
    (void)layer, (void)in_features, (void)out_features, (void)seed;
    return todo("step 5: lab_linear_create");
}

/* Goal: net.to(d): every parameter on d, nothing left behind on the old
 * device. Look up: tensor_to in labkit/tensor.h, and what it hands back. */
status lab_linear_to(lab_linear *layer, device d)
{
    /* TODO: your code here */
    (void)layer, (void)d;
    return todo("step 5: lab_linear_to");
}

/* Goal: where the layer lives, read from its parameters; a half-moved layer
 * lives nowhere and is refused, saying which device holds the weight and which
 * the bias. Look up: tensor_device, device_equal, device_name. */
status lab_linear_device(const lab_linear *layer, device *out)
{
    /* TODO: your code here */
    (void)layer, (void)out;
    return todo("step 5: lab_linear_device");
}

/* Goal: net(X), y = x W^T + b, on the layer's device. Look up: op_matmul in
 * labkit/ops.h. */
status lab_linear_forward(const lab_linear *layer, const tensor *x, tensor *y)
{
    /* TODO: your code here */
    (void)layer, (void)x, (void)y;
    return todo("step 5: lab_linear_forward");
}
