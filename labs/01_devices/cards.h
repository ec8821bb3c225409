/* cards.h: real GPUs and their published FP32 figures, to hold your step 2
 * and step 3 against (main.c prints them; check.c checks them within 1%).
 *
 * Each entry gives what goes into the formula (multiprocessors, compute
 * capability, boost clock) and the FP32 figure the maker or a card database
 * publishes, which was worked out from the same formula, so the two must agree.
 * Sources are named beside each card. */
#ifndef LAB01_CARDS_H
#define LAB01_CARDS_H

#include <stdbool.h>

typedef struct known_card {
    const char *name;
    const char *label; /* short, for a bar of the figure; NULL: no bar */
    int multiprocessors;
    int cc_major, cc_minor;
    double boost_ghz;
    double published_tflops; /* FP32, without tensor cores */
    bool beyond_table;       /* older than Turing: step 2 must say "unknown" */
} known_card;

static const known_card known_cards[] = {
    /* Lesson 001's card. GeForce RTX 3080 12 GB (GA102-220, January 2022): 70 SMs
     * (8960 CUDA cores), boost 1710 MHz; FP32 30.64 TFLOPS in TechPowerUp's GPU
     * database, "30.6 shader TFLOPS" on NVIDIA's RTX 30 series page. */
    { "RTX 3080 12 GB", "RTX 3080", 70, 8, 6, 1.71, 30.6, false },
    /* NVIDIA A100 Tensor Core GPU datasheet (SXM4 and PCIe, 40 and 80 GB): FP32
     * 19.5 TFLOPS; 108 SMs (6912 FP32 cores), boost 1410 MHz (NVIDIA Ampere
     * architecture whitepaper, table 3). */
    { "A100 SXM/PCIe", "A100", 108, 8, 0, 1.41, 19.5, false },
    /* NVIDIA H100 Tensor Core GPU datasheet: H100 SXM FP32 67 TFLOPS; the Hopper
     * architecture whitepaper gives 132 SMs (16896 FP32 cores) and 66.9 TFLOPS at
     * the 1.98 GHz boost clock. */
    { "H100 SXM", "H100", 132, 9, 0, 1.98, 66.9, false },
    /* NVIDIA T4 datasheet: single precision 8.1 TFLOPS; 40 SMs (2560 CUDA
     * cores), boost 1590 MHz (TechPowerUp: 8.141 TFLOPS). */
    { "T4", "T4", 40, 7, 5, 1.59, 8.1, false },
    /* NVIDIA H100 datasheet: H100 PCIe FP32 51 TFLOPS; 114 SMs, boost 1755 MHz. */
    { "H100 PCIe", NULL, 114, 9, 0, 1.755, 51.0, false },
    /* NVIDIA Ada Lovelace architecture whitepaper: GeForce RTX 4090, 128 SMs
     * (16384 CUDA cores), boost 2520 MHz, 82.6 TFLOPS FP32. */
    { "RTX 4090", "RTX 4090", 128, 8, 9, 2.52, 82.6, false },
    /* GeForce RTX 5090 (GB202): 170 SMs (21760 CUDA cores), boost 2407 MHz;
     * FP32 104.8 TFLOPS (TechPowerUp's GPU database). */
    { "RTX 5090", "RTX 5090", 170, 12, 0, 2.407, 104.8, false },
    /* Lesson 003's card (its nvidia-smi). GeForce RTX 2060: 30 SMs (1920 CUDA
     * cores), boost 1680 MHz; FP32 6.451 TFLOPS (TechPowerUp's GPU database). */
    { "RTX 2060", "RTX 2060", 30, 7, 5, 1.68, 6.45, false },
    /* Outside step 2's range on purpose: Tesla V100 (Volta, compute capability
     * 7.0, 80 SMs, 1530 MHz; datasheet 15.7 TFLOPS). Volta is older than the
     * table, so its cores per SM must come out unknown, not guessed. */
    { "V100 SXM2 (Volta)", "V100", 80, 7, 0, 1.53, 15.7, true },
};

#define KNOWN_CARDS ((int)(sizeof known_cards / sizeof known_cards[0]))

/* Lesson 001 multiplies 70 SMs x 128 cores x 1.71 GHz and quotes this figure,
 * counting one operation per core and cycle where a fused multiply-add does two. */
#define LESSON_001_RTX3080_TFLOPS 15.32

#endif
