/* cards.c: the published cards of cards.h, slowest first, each with the
 * source of its figures (given). */
#include "cards.h"

const known_card known_cards[] = {
    /* Lesson 003's card (its nvidia-smi). GeForce RTX 2060: 30 SMs (1920 CUDA
     * cores), boost 1680 MHz; FP32 6.451 TFLOPS (TechPowerUp's GPU database). */
    { "RTX 2060", 30, 7, 5, 1.68, 6.45, false },
    /* NVIDIA T4 datasheet: single precision 8.1 TFLOPS; 40 SMs (2560 CUDA
     * cores), boost 1590 MHz (TechPowerUp: 8.141 TFLOPS). */
    { "T4", 40, 7, 5, 1.59, 8.1, false },
    /* Outside step 2's range on purpose: Tesla V100 (Volta, compute capability
     * 7.0, 80 SMs, 1530 MHz; datasheet 15.7 TFLOPS). Volta is older than the
     * table, so its cores per SM must come out unknown, not guessed. */
    { "V100 SXM2 (Volta)", 80, 7, 0, 1.53, 15.7, true },
    /* NVIDIA A100 Tensor Core GPU datasheet (SXM4 and PCIe, 40 and 80 GB): FP32
     * 19.5 TFLOPS; 108 SMs (6912 FP32 cores), boost 1410 MHz (NVIDIA Ampere
     * architecture whitepaper, table 3). */
    { "A100", 108, 8, 0, 1.41, 19.5, false },
    /* Lesson 001's card. GeForce RTX 3080 12 GB (GA102-220, January 2022): 70 SMs
     * (8960 CUDA cores), boost 1710 MHz; FP32 30.64 TFLOPS in TechPowerUp's GPU
     * database, "30.6 shader TFLOPS" on NVIDIA's RTX 30 series page. */
    { "RTX 3080 12 GB", 70, 8, 6, 1.71, 30.6, false },
    /* NVIDIA H100 datasheet: H100 PCIe FP32 51 TFLOPS; 114 SMs, boost 1755 MHz. */
    { "H100 PCIe", 114, 9, 0, 1.755, 51.0, false },
    /* NVIDIA H100 Tensor Core GPU datasheet: H100 SXM FP32 67 TFLOPS; the Hopper
     * architecture whitepaper gives 132 SMs (16896 FP32 cores) and 66.9 TFLOPS at
     * the 1.98 GHz boost clock. */
    { "H100 SXM", 132, 9, 0, 1.98, 66.9, false },
    /* NVIDIA Ada Lovelace architecture whitepaper: GeForce RTX 4090, 128 SMs
     * (16384 CUDA cores), boost 2520 MHz, 82.6 TFLOPS FP32. */
    { "RTX 4090", 128, 8, 9, 2.52, 82.6, false },
    /* GeForce RTX 5090 (GB202): 170 SMs (21760 CUDA cores), boost 2407 MHz;
     * FP32 104.8 TFLOPS (TechPowerUp's GPU database). */
    { "RTX 5090", 170, 12, 0, 2.407, 104.8, false },
};

const int known_card_count = (int)(sizeof known_cards / sizeof known_cards[0]);
