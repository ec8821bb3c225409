/* devices.c: every device this machine offers, the CPU included, in the spirit
 * of CUDA's deviceQuery and nvidia-smi: what each one is made of and the FP32
 * peak that follows from it. */
#include <stdio.h>
#include <string.h>

#include "labkit/labkit.h"

static void print_device(device d)
{
    device_properties p;
    CHECK(device_get_properties(d, &p));
    printf("%-7s %s\n", device_name(d), p.name);
    printf("        memory           %.1f GiB\n", (double)p.memory_bytes / (1u << 30));
    const bool gpu = device_is_gpu(d);
    if (gpu)
        printf("        compute cap.     %d.%d%s\n", p.cc_major, p.cc_minor,
               d.kind == DEVICE_SIM ? " (modelled)" : "");
    printf("        %-16s %d\n", gpu ? "multiprocessors" : "cores", p.multiprocessors);
    printf("        %-16s %d\n", gpu ? "FP32 cores/SM" : "FP32 lanes/core", p.cores_per_mp);
    printf("        clock            %.2f GHz\n", p.clock_ghz);
    if (p.peak_gflops > 0)
        printf("        FP32 peak        %.1f GFLOP/s\n", p.peak_gflops);
    else
        printf("        FP32 peak        unknown\n");
    double gbs = 0.0;
    CHECK(device_memory_bandwidth(d, &gbs));
    if (gbs > 0)
        printf("        memory bandwidth %.1f GB/s%s\n", gbs,
               d.kind == DEVICE_CPU ? " (measured: the best of four 64 MiB copies)" : "");
    printf("        (%s)\n", p.notes);
    if (!p.tensor_cores)
        printf("        tensor cores     none\n");
    else if (p.peak_bf16_gflops > 0 || p.peak_fp16_gflops > 0)
        printf("        tensor peaks     TF32 %.1f, FP16 %.1f, BF16 %.1f TFLOP/s\n", p.peak_tf32_gflops / 1e3,
               p.peak_fp16_gflops / 1e3, p.peak_bf16_gflops / 1e3);
    else
        printf("        tensor peaks     unknown\n");
    printf("        (%s)\n", p.tensor_notes);
}

static int usage(FILE *to, int code)
{
    fprintf(to, "usage: labkit-devices [--openblas-coretype | --cuda-count]\n"
                "  lists the CPU and every GPU, real or simulated (LABKIT_SIM_GPUS=N simulates N)\n"
                "  --openblas-coretype  prints the OPENBLAS_CORETYPE this CPU needs, or nothing when\n"
                "                       OpenBLAS already chose the right kernels (./lab uses it)\n"
                "  --cuda-count         prints how many real NVIDIA GPUs this build sees (./lab uses it)\n");
    return code;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return usage(stdout, 0);
    /* A setting that cannot be honoured stops every use, the driver's too. */
    if (environment_check() != STATUS_OK) {
        fprintf(stderr, "labkit-devices: %s\n", last_error());
        return 2;
    }
    if (argc == 2 && strcmp(argv[1], "--openblas-coretype") == 0) {
        const char *better = cpu_blas_better_coretype();
        if (better) printf("%s\n", better);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--cuda-count") == 0) {
        printf("%d\n", device_count(DEVICE_CUDA));
        return 0;
    }
    if (argc > 1) return usage(stderr, 2);
    device all[LABKIT_MAX_DEVICES];
    int n = device_list(all, LABKIT_MAX_DEVICES);
    for (int i = 0; i < n; ++i) print_device(all[i]);
    device gpus[LABKIT_MAX_DEVICES];
    int g = try_all_gpus(gpus, LABKIT_MAX_DEVICES);
    printf("\ntry_gpu(0) = %s, try_all_gpus() = [", device_name(try_gpu(0)));
    for (int i = 0; i < g; ++i) printf("%s%s", i ? ", " : "", device_name(gpus[i]));
    printf("]\n");
    if (gpu_count() == 0)
        printf("no GPU here: everything runs on the CPU. LABKIT_SIM_GPUS=2 adds two simulated GPUs.\n");
    else if (device_count(DEVICE_CUDA) > 0 && device_count(DEVICE_SIM) > 0)
        printf("the lessons' try_gpu sees the real GPUs; the simulated ones are there by name (--device "
               "sim:0).\n");
    return 0;
}
