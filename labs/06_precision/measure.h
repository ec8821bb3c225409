/* measure.h: what lab 06's experiment and its check share, given, not a step:
 * the precisions' names, random matrices, float64 references, timing a
 * product and a copy, and the figures of a GPU that has tensor cores (an H100
 * SXM), with what PyTorch measured on one. */
#ifndef LAB06_MEASURE_H
#define LAB06_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "lab.h"

/* Every precision, from the most exact to the fastest. */
extern const lab_precision all_precisions[LAB_PRECISIONS];

/* A new host array of `count` uniform values in [low, high) drawn from `seed`
 * (the library's generator: the same values a tensor_uniform would hold);
 * free() it. */
status random_host(float **out, int64_t count, float low, float high, uint64_t seed);

/* One product's operands and its float64 answer: ref [M, N] = op(a) op(b)
 * (+ bias), and mag [M, N] = sum over k of |op(a)[i,k]| |op(b)[k,j]| (+ |bias|),
 * the scale of each element's rounding error. a is [M, K], or [K, M] when
 * trans_a; b is [K, N], or [N, K] when trans_b; bias [N] or NULL. */
typedef struct product_case {
    int64_t m, n, k;
    bool trans_a, trans_b;
    float *a, *b, *bias; /* host; bias NULL: none */
    double *ref, *mag;   /* host, [M, N] */
} product_case;

/* Draws a, b (uniform in [-1, 1)) and, when with_bias, a bias from `seed`, and
 * works out ref and mag. */
status product_case_make(product_case *c, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                         bool with_bias, uint64_t seed);
void product_case_free(product_case *c);

/* The product of c at precision p on device d, through your lab_operand and
 * lab_matmul_at: the operands uploaded as float32, made into p's operands
 * there, multiplied; the result copied to got [M, N] (host). */
status product_case_run(const product_case *c, device d, lab_precision p, float *got);

/* Step 1's listing: a few values through your lab_float_to_bf16, beside the
 * library's float_to_bf16 (halfway cases, pi, a float beyond bf16's largest,
 * a subnormal). */
status show_your_rounding(void);

/* Seconds of one product a [N, N] b [N, N] -> out at precision p on their
 * device, the operands made once by lab_operand: the median of `reps` timed by
 * device events, after one product that is not timed (cuBLAS picks its kernel
 * on the first call). */
status time_product(tensor *a, tensor *b, tensor *out, lab_precision p, int reps, double *seconds);

/* Seconds of the fastest of `reps` copies of src into dst (tensor_copy, then a
 * synchronisation of dst's device): the least disturbed one. Timed by the wall
 * clock where a real GPU takes part; elsewhere the copy is a memcpy by this
 * thread, timed by the thread's CPU time, which other programs competing for
 * the cores cannot inflate (CLOCK_THREAD_CPUTIME_ID). *bytes (unless NULL):
 * the bytes dst's device counted per copy. */
status time_copy(tensor *dst, const tensor *src, int reps, double *seconds, double *bytes);

/* About how many seconds the experiment's speed sweep takes: products of N =
 * max_n / 8, max_n / 2 and max_n, six of each at four precisions, at a tenth
 * of `gflops` (a device's FP32 peak: a loaded machine, and the conversions of
 * the low precisions where there are no tensor cores), plus ten for the rest. */
double sweep_seconds(int64_t max_n, double gflops);

/* The properties of a GPU that is not here, as the library would report them:
 * name, compute capability, SMs, FP32 cores per SM and boost clock in; FP32
 * and tensor-core peaks out (tensor_core_properties). */
status card_properties(const char *name, int cc_major, int cc_minor, int multiprocessors, int cores_per_mp,
                       double clock_ghz, device_properties *out);

/* An H100 SXM (80 GB HBM3), the GPU the lesson's figures come from. */
status h100_properties(device_properties *out);

/* What PyTorch 2.11 measured on one H100 SXM (the lab's issue): TFLOP/s of an
 * N x N product at precision p, median of 10, for N = 1024, 4096 and 8192;
 * NaN for any other N. */
double h100_pytorch_tflops(lab_precision p, int64_t n);
extern const int64_t h100_pytorch_sizes[3];

#endif
