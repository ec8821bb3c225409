/* measure.c: lab 06's shared measurements (measure.h). */
#include "measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/precision.h"

const lab_precision all_precisions[LAB_PRECISIONS] = { LAB_FP32, LAB_TF32, LAB_BF16, LAB_F16 };

const char *precision_name(lab_precision p)
{
    switch (p) {
    case LAB_FP32: return "FP32";
    case LAB_TF32: return "TF32";
    case LAB_BF16: return "BF16";
    case LAB_F16: return "F16";
    }
    return "?";
}

status random_host(float **out, int64_t count, float low, float high, uint64_t seed)
{
    if (!out || count < 1) return fail(STATUS_BAD_ARGUMENT, "random_host: out is NULL or count < 1");
    *out = NULL;
    tensor *t = NULL;
    float *host = malloc((size_t)count * sizeof *host);
    if (!host)
        return fail(STATUS_OUT_OF_MEMORY, "random_host: no host memory for %lld floats", (long long)count);
    status s = tensor_uniform(&t, device_cpu(), shape1(count), low, high, seed);
    if (s == STATUS_OK) s = tensor_to_host(t, host, count);
    tensor_free(t);
    if (s != STATUS_OK) {
        free(host);
        return s;
    }
    *out = host;
    return STATUS_OK;
}

void product_case_free(product_case *c)
{
    if (!c) return;
    free(c->a), free(c->b), free(c->bias), free(c->ref), free(c->mag);
    memset(c, 0, sizeof *c);
}

/* ref and mag in float64: the exact products of float32 values, summed with
 * 53 bits, far beyond any error measured here. */
static void reference(product_case *c)
{
    for (int64_t i = 0; i < c->m; ++i)
        for (int64_t j = 0; j < c->n; ++j) {
            double sum = c->bias ? c->bias[j] : 0.0, mag = c->bias ? fabs(c->bias[j]) : 0.0;
            for (int64_t p = 0; p < c->k; ++p) {
                const double x = c->trans_a ? c->a[p * c->m + i] : c->a[i * c->k + p];
                const double y = c->trans_b ? c->b[j * c->k + p] : c->b[p * c->n + j];
                sum += x * y;
                mag += fabs(x * y);
            }
            c->ref[i * c->n + j] = sum, c->mag[i * c->n + j] = mag;
        }
}

status product_case_make(product_case *c, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                         bool with_bias, uint64_t seed)
{
    if (!c || m < 1 || n < 1 || k < 1)
        return fail(STATUS_BAD_ARGUMENT, "product_case_make: c is NULL or a size is below 1");
    memset(c, 0, sizeof *c);
    c->m = m, c->n = n, c->k = k, c->trans_a = trans_a, c->trans_b = trans_b;
    status s = random_host(&c->a, m * k, -1.0f, 1.0f, seed);
    if (s == STATUS_OK) s = random_host(&c->b, k * n, -1.0f, 1.0f, seed + 1);
    if (s == STATUS_OK && with_bias) s = random_host(&c->bias, n, -1.0f, 1.0f, seed + 2);
    if (s == STATUS_OK) {
        c->ref = malloc((size_t)(m * n) * sizeof *c->ref);
        c->mag = malloc((size_t)(m * n) * sizeof *c->mag);
        if (!c->ref || !c->mag) s = fail(STATUS_OUT_OF_MEMORY, "product_case_make: no host memory");
    }
    if (s != STATUS_OK) {
        product_case_free(c);
        return s;
    }
    reference(c);
    return STATUS_OK;
}

status product_case_run(const product_case *c, device d, lab_precision p, float *got)
{
    if (!c || !got) return fail(STATUS_BAD_ARGUMENT, "product_case_run: c or got is NULL");
    const shape a_shape = c->trans_a ? shape2(c->k, c->m) : shape2(c->m, c->k);
    const shape b_shape = c->trans_b ? shape2(c->n, c->k) : shape2(c->k, c->n);
    tensor *a = NULL, *b = NULL, *bias = NULL, *out = NULL, *a_p = NULL, *b_p = NULL;
    status s = tensor_from_host(&a, d, a_shape, c->a);
    if (s == STATUS_OK) s = tensor_from_host(&b, d, b_shape, c->b);
    if (s == STATUS_OK && c->bias) s = tensor_from_host(&bias, d, shape1(c->n), c->bias);
    if (s == STATUS_OK) s = tensor_full(&out, d, shape2(c->m, c->n), NAN); /* a cell never written: NaN */
    if (s == STATUS_OK) s = lab_operand(a, p, &a_p);
    if (s == STATUS_OK) s = lab_operand(b, p, &b_p);
    if (s == STATUS_OK) s = lab_matmul_at(a_p, c->trans_a, b_p, c->trans_b, bias, out, p);
    if (s == STATUS_OK) s = tensor_to_host(out, got, c->m * c->n);
    tensor_free(a_p), tensor_free(b_p);
    tensor_free(a), tensor_free(b), tensor_free(bias), tensor_free(out);
    return s;
}

status time_product(tensor *a, tensor *b, tensor *out, lab_precision p, int reps, double *seconds)
{
    enum { MAX_REPS = 32 };
    if (!a || !b || !out || !seconds || reps < 1 || reps > MAX_REPS)
        return fail(STATUS_BAD_ARGUMENT, "time_product: a tensor or seconds is NULL, or reps is not 1..%d",
                    MAX_REPS);
    const device d = tensor_device(out);
    tensor *a_p = NULL, *b_p = NULL;
    event *start[MAX_REPS] = { 0 }, *end[MAX_REPS] = { 0 };
    double ms[MAX_REPS];
    status s = lab_operand(a, p, &a_p);
    if (s == STATUS_OK) s = lab_operand(b, p, &b_p);
    if (s == STATUS_OK) s = lab_matmul_at(a_p, false, b_p, false, NULL, out, p); /* not timed */
    for (int r = 0; s == STATUS_OK && r < reps; ++r) {
        s = event_create(&start[r], d);
        if (s == STATUS_OK) s = event_create(&end[r], d);
        if (s == STATUS_OK) s = event_record(start[r]);
        if (s == STATUS_OK) s = lab_matmul_at(a_p, false, b_p, false, NULL, out, p);
        if (s == STATUS_OK) s = event_record(end[r]);
    }
    for (int r = 0; s == STATUS_OK && r < reps; ++r) {
        s = event_synchronize(end[r]);
        if (s == STATUS_OK) s = event_elapsed_ms(start[r], end[r], &ms[r]);
    }
    if (s == STATUS_OK) *seconds = median_of(ms, (size_t)reps) / 1000.0;
    for (int r = 0; r < reps; ++r) event_destroy(start[r]), event_destroy(end[r]);
    tensor_free(a_p), tensor_free(b_p);
    return s;
}

status time_copy(tensor *dst, const tensor *src, int reps, double *seconds, double *bytes)
{
    if (!dst || !src || !seconds || reps < 1)
        return fail(STATUS_BAD_ARGUMENT, "time_copy: a tensor or seconds is NULL, or reps < 1");
    const device d = tensor_device(dst);
    /* Without a real GPU the copy is a memcpy by this very thread (a simulated
     * GPU's memory is host memory): its CPU time, which other programs cannot
     * inflate, is the copy's time. */
    double (*clock)(void) =
        d.kind == DEVICE_CUDA || tensor_device(src).kind == DEVICE_CUDA ? wall_seconds : thread_cpu_seconds;
    device_counters before, after;
    status s = counters_read(d, &before);
    double fastest = INFINITY;
    for (int r = 0; s == STATUS_OK && r < reps; ++r) {
        s = device_synchronize(d);
        const double start = clock();
        if (s == STATUS_OK) s = tensor_copy(dst, src);
        if (s == STATUS_OK) s = device_synchronize(d);
        fastest = fmin(fastest, clock() - start);
    }
    if (s == STATUS_OK) s = counters_read(d, &after);
    if (s != STATUS_OK) return s;
    *seconds = fastest;
    /* A copy to a GPU counts as host-to-device there; within the CPU, as device-to-device. */
    if (bytes)
        *bytes = (double)(after.h2d_bytes - before.h2d_bytes + after.d2d_bytes - before.d2d_bytes) / reps;
    return STATUS_OK;
}

double sweep_seconds(int64_t max_n, double gflops)
{
    const double sizes[3] = { (double)(max_n / 8), (double)(max_n / 2), (double)max_n };
    double flop = 0;
    for (int i = 0; i < 3; ++i) flop += 6.0 * LAB_PRECISIONS * 2.0 * sizes[i] * sizes[i] * sizes[i];
    return 10 + flop / (0.1 * gflops * 1e9);
}

status card_properties(const char *name, int cc_major, int cc_minor, int multiprocessors, int cores_per_mp,
                       double clock_ghz, device_properties *out)
{
    if (!name || !out) return fail(STATUS_BAD_ARGUMENT, "card_properties: name or out is NULL");
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    out->cc_major = cc_major, out->cc_minor = cc_minor;
    out->multiprocessors = multiprocessors, out->cores_per_mp = cores_per_mp, out->clock_ghz = clock_ghz;
    out->peak_gflops = peak_fp32_gflops(multiprocessors, cores_per_mp, clock_ghz);
    return tensor_core_properties(out);
}

status h100_properties(device_properties *out)
{
    return card_properties("NVIDIA H100 80GB HBM3", 9, 0, 132, 128, 1.98, out);
}

const int64_t h100_pytorch_sizes[3] = { 1024, 4096, 8192 };

double h100_pytorch_tflops(lab_precision p, int64_t n)
{
    /* TFLOP/s, N = 1024, 4096, 8192, median of 10 (the lab's issue). */
    static const double measured[LAB_PRECISIONS][3] = {
        [LAB_FP32] = { 30.7, 51.1, 51.9 },
        [LAB_TF32] = { 62.4, 394, 431 },
        [LAB_BF16] = { 94.1, 766, 825 },
        [LAB_F16] = { 106, 708, 742 },
    };
    if ((int)p < 0 || (int)p >= LAB_PRECISIONS) return NAN;
    for (int i = 0; i < 3; ++i)
        if (h100_pytorch_sizes[i] == n) return measured[p][i];
    return NAN;
}

status show_your_rounding(void)
{
    const float values[] = { 1.0f + 0x1p-8f, 1.0f + 0x3p-8f, 3.14159265f, 3.4e38f, -0x1p-130f };
    const char *what[] = { "1 + 2^-8: halfway, to even", "1 + 3 x 2^-8: halfway, to even", "pi",
                           "above the largest bf16", "a subnormal" };
    printf("step 1: your lab_float_to_bf16 (the library's float_to_bf16 in brackets)\n");
    for (int i = 0; i < 5; ++i) {
        uint16_t mine = 0;
        status s = lab_float_to_bf16(values[i], &mine);
        if (s != STATUS_OK) return s;
        printf("  %-13.7g -> 0x%04X = %-12.6g (0x%04X)  %s\n", (double)values[i], (unsigned)mine,
               (double)bf16_to_float(mine), (unsigned)float_to_bf16(values[i]), what[i]);
    }
    printf("\n");
    return STATUS_OK;
}
