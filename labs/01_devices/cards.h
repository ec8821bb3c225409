/* cards.h: real GPUs and their published FP32 figures, to hold your steps 2
 * and 3 against (given: main.c prints them, check.c checks them within 1%).
 *
 * Each card gives what goes into the formula (multiprocessors, compute
 * capability, boost clock) and the FP32 figure its maker or a card database
 * publishes, which was worked out with the same formula, so the two must
 * agree. cards.c names the source of every figure. */
#ifndef LAB01_CARDS_H
#define LAB01_CARDS_H

#include <stdbool.h>

typedef struct known_card {
    const char *name;
    int multiprocessors;
    int cc_major, cc_minor;
    double boost_ghz;
    double published_tflops; /* FP32, without tensor cores */
    bool beyond_table;       /* older than Turing: step 2 must say "unknown" */
} known_card;

/* From the slowest published FP32 peak to the fastest. */
extern const known_card known_cards[];
extern const int known_card_count;

/* Lesson 001 multiplies 70 SMs x 128 cores x 1.71 GHz for the RTX 3080 12 GB
 * and quotes this figure, counting one operation per core and cycle where a
 * fused multiply-add does two. */
#define LESSON_001_RTX3080_TFLOPS 15.32

#endif
