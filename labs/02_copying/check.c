/* check.c: does lab 02's lesson hold on the device of --device?
 *
 * The claims: the same-device rule (a refusal naming both devices, nothing
 * copied; a sum on one device is no refusal, and neither is any other failure;
 * after a copy on purpose the sum is right and the copy is released),
 * tensor_to (the same tensor, or exactly one copy of the right bytes), a
 * bit-exact round trip, a whole layer moved (each parameter copied once,
 * nothing left behind), many small copies vs one big one, the lesson's norm log
 * (a read every step vs one read, the two logs bitwise equal, nothing left
 * behind), and the bandwidth of small vs large copies. The counters of
 * counters.h are the proof; the two timing claims are ratios with margins of
 * ten or more.
 *
 * With --device cpu the partner device is GPU 0 when there is one (ctest sets
 * LABKIT_SIM_GPUS=2), else there is only the CPU and the claims say what is
 * true there: nothing to refuse, nothing crosses a bus. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "given.h"
#include "lab.h"
#include "measure.h"

static copy_tally tally(device d, device other)
{
    copy_tally t;
    CHECK(copies_between(d, other, &t));
    return t;
}

/* Bytes of tensors alive on d (counted when a tensor is made or freed). */
static size_t in_use(device d)
{
    device_counters c;
    CHECK(counters_read(d, &c));
    return c.memory_current;
}

/* The student's calls go through CHECK_YOURS and CHECK_CALL (check.h): an
 * unwritten step stops the check at its TODO, any other failure is a failed
 * claim named with the call and its message, never an abort. Step 1 returns
 * its status to the claims, which say what it should have been. */
static status try_add(const tensor *a, const tensor *b, tensor *sum, bool *refused, char *message,
                      size_t size)
{
    return CHECK_YOURS(lab_try_add(a, b, sum, refused, message, size));
}

/* ---- the same-device rule and copying on purpose (steps 1 and 2) ------------- */

static void check_refusal(device d, device other, tensor *a, const float *va)
{
    enum { N = 6 };
    const float vb[N] = { 0.5f, -1, 0.25f, 1e-3f, -7, 1e6f };
    tensor *b, *b_here, *wrong_shape, *sum;
    CHECK(tensor_from_host(&b, other, shape2(2, 3), vb));
    CHECK(tensor_from_host(&b_here, d, shape2(2, 3), vb));
    CHECK(tensor_zeros(&wrong_shape, d, shape2(3, 2)));
    CHECK(tensor_full(&sum, d, shape2(2, 3), -99.0f));

    bool refused = false;
    char message[512] = "untouched";
    CHECK(reset_pair(d, other));
    status s = try_add(a, b, sum, &refused, message, sizeof message);
    const copy_tally after_try = tally(d, other);
    if (!device_equal(d, other)) {
        check_that(s == STATUS_OK && refused && strstr(message, device_name(d)) &&
                       strstr(message, device_name(other)),
                   "a + b across two devices is refused, the message naming both",
                   "a on %s, b on %s: returned %s, refused: %s; message: \"%.*s\"", device_name(d),
                   device_name(other), status_name(s), refused ? "yes" : "no", (int)strcspn(message, "\n"),
                   message);
        check_that(after_try.copies == 0, "the library copies nothing behind your back", "copies: %llu",
                   (unsigned long long)after_try.copies);
    }

    refused = true;
    snprintf(message, sizeof message, "untouched");
    s = try_add(a, b_here, sum, &refused, message, sizeof message);
    float got[N];
    CHECK(tensor_to_host(sum, got, N));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += got[i] != va[i] + vb[i];
    check_that(s == STATUS_OK && !refused && message[0] == '\0' && wrong == 0,
               "a + b on one device is computed, not refused, with an empty message",
               "both on %s: returned %s, refused: %s, message: \"%.40s\", %d of %d values wrong",
               device_name(d), status_name(s), refused ? "yes" : "no", message, wrong, N);

    refused = true;
    s = try_add(a, wrong_shape, sum, &refused, message, sizeof message);
    check_that(
        s == STATUS_BAD_ARGUMENT && !refused,
        "any other failure (shapes [2, 3] + [3, 2] on one device) is returned as it is, not called a refusal",
        "returned %s, refused: %s (op_add's own status is STATUS_BAD_ARGUMENT)", status_name(s),
        refused ? "yes" : "no");
    tensor_free(b), tensor_free(b_here), tensor_free(wrong_shape), tensor_free(sum);
}

static void check_add_across(device d, device other, tensor *a, const float *va)
{
    enum { N = 6 };
    const float vb[N] = { 2, 0.5f, -3, 1e-3f, 8, -1e6f };
    tensor *b, *sum;
    CHECK(tensor_from_host(&b, other, shape2(2, 3), vb));
    CHECK(tensor_full(&sum, d, shape2(2, 3), -99.0f));
    const size_t memory_before = in_use(d);
    CHECK(reset_pair(d, other));
    if (!CHECK_CALL(lab_add_across(a, b, sum), "after copying b across on purpose, a + b is right")) {
        tensor_free(b), tensor_free(sum);
        return;
    }
    const copy_tally after_add = tally(d, other);
    const size_t memory_after = in_use(d);
    float got[N];
    CHECK(tensor_to_host(sum, got, N));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += got[i] != va[i] + vb[i];
    const uint64_t expected = device_equal(d, other) ? 0 : 1;
    check_that(wrong == 0 && after_add.copies == expected && after_add.bytes == expected * tensor_bytes(b),
               "after copying b across on purpose, a + b is right",
               "%d of %d values wrong (first %g); copies: %llu of %llu bytes, expected %llu of %zu", wrong, N,
               (double)got[0], (unsigned long long)after_add.copies, (unsigned long long)after_add.bytes,
               (unsigned long long)expected, (size_t)expected * tensor_bytes(b));
    check_that(memory_after == memory_before, "the copy of b is released after the sum",
               "%zu bytes in use on %s before, %zu after", memory_before, device_name(d), memory_after);
    tensor_free(b), tensor_free(sum);
}

/* ---- tensor_to and a round trip (the library) ----------------------------------- */

static void check_to(device d, device other)
{
    tensor *t, *same, *there;
    CHECK(tensor_uniform(&t, d, shape2(64, 64), -1.0f, 1.0f, 11));
    CHECK(reset_pair(d, other));
    CHECK(tensor_to(t, d, &same));
    const copy_tally own = tally(d, other);
    check_that(same == t && own.copies == 0, "to() onto the tensor's own device returns the same tensor",
               "same tensor: %s; copies: %llu", same == t ? "yes" : "no", (unsigned long long)own.copies);
    tensor_free(same);
    if (device_equal(d, other)) {
        printf("  (only the cpu here: to() onto another device needs a GPU; LABKIT_SIM_GPUS=2 gives two)\n");
        tensor_free(t);
        return;
    }
    CHECK(reset_pair(d, other));
    CHECK(tensor_to(t, other, &there));
    const copy_tally across = tally(d, other);
    const bool right_way = device_is_gpu(d) ? across.d2h == 1 : across.h2d == 1;
    check_that(there != t && device_equal(tensor_device(there), other) && across.copies == 1 &&
                   across.bytes == tensor_bytes(t) && right_way,
               "to() onto another device copies exactly once, the whole tensor",
               "%s -> %s: copies: %llu, %llu bytes for a tensor of %zu (%s)", device_name(d),
               device_name(other), (unsigned long long)across.copies, (unsigned long long)across.bytes,
               tensor_bytes(t), across.d2h ? "device to host" : "host to device");
    tensor_free(t), tensor_free(there);
}

static void check_round_trip(device d)
{
    enum { N = 4096 };
    static float sent[N], back[N];
    const float special[] = { -0.0f,        INFINITY, -INFINITY, NAN, 1e-45f /* the smallest subnormal */,
                              3.4028235e38f };
    uint32_t bits = 12345u;
    for (int i = 0; i < N; ++i) { /* every kind of bit pattern, NaNs with payloads included */
        bits = bits * 1664525u + 1013904223u;
        memcpy(&sent[i], &bits, sizeof bits);
    }
    memcpy(sent, special, sizeof special);
    memset(back, 0xAB, sizeof back);
    tensor *t;
    CHECK(counters_reset(d));
    CHECK(tensor_from_host(&t, d, shape1(N), sent));
    CHECK(tensor_to_host(t, back, N));
    device_counters c;
    CHECK(counters_read(d, &c));
    const bool counted = device_is_gpu(d)
                             ? c.h2d_bytes == sizeof sent && c.d2h_bytes == sizeof sent
                             : c.d2d_bytes == 2 * sizeof sent && c.h2d_copies + c.d2h_copies == 0;
    const bool same = memcmp(sent, back, sizeof sent) == 0;
    check_that(same && counted, "a round trip host -> device -> host is bit-exact",
               "%d floats (NaN, -0, inf, subnormals among them), %s; %llu bytes each way", N,
               same ? "identical bits" : "bits differ",
               (unsigned long long)(device_is_gpu(d) ? c.h2d_bytes : c.d2d_bytes / 2));
    tensor_free(t);
}

/* ---- a whole layer (step 3) ------------------------------------------------------ */

static void check_layer(device d, device other)
{
    enum { IN = 4, OUT = 3, B = 2 };
    const float w[OUT * IN] = { 0.5f, 0.25f, -0.5f, 1, -1, 0, 3, 1, 2, 1, -2, 0.125f }; /* [out, in] */
    const float b[OUT] = { 0.1f, -0.2f, 0.3f }, x[B * IN] = { 1, 2, 3, 4, -1, 0.5f, 0, 2 };
    const size_t d_base = in_use(d), other_base = in_use(other);
    lab_linear net;
    tensor *xt, *y;
    CHECK(tensor_from_host(&net.weight, other, shape2(OUT, IN), w));
    CHECK(tensor_from_host(&net.bias, other, shape1(OUT), b));
    CHECK(tensor_from_host(&xt, d, shape2(B, IN), x));
    CHECK(tensor_empty(&y, d, DTYPE_F32, shape2(B, OUT)));
    const size_t data = sizeof x + B * OUT * sizeof(float), layer = sizeof w + sizeof b;

    CHECK(reset_pair(d, other));
    if (!CHECK_CALL(lab_linear_to(&net, d), "moving a layer moves every parameter, each copied once")) {
        tensor_free(net.weight), tensor_free(net.bias), tensor_free(xt), tensor_free(y);
        return;
    }
    const copy_tally moved = tally(d, other);
    const uint64_t expected = device_equal(d, other) ? 0 : 2;
    check_that(device_equal(tensor_device(net.weight), d) && device_equal(tensor_device(net.bias), d) &&
                   moved.copies == expected && moved.bytes == expected / 2 * layer,
               "moving a layer moves every parameter, each copied once",
               "from %s to %s: weight on %s, bias on %s; copies: %llu of %llu bytes (expected %llu of %zu)",
               device_name(other), device_name(d), device_name(tensor_device(net.weight)),
               device_name(tensor_device(net.bias)), (unsigned long long)moved.copies,
               (unsigned long long)moved.bytes, (unsigned long long)expected, (size_t)expected / 2 * layer);
    /* What each device should hold now: d the layer and its data, other nothing more than before. */
    const size_t d_want = d_base + data + layer, other_want = device_equal(d, other) ? d_want : other_base;
    const size_t d_now = in_use(d), other_now = in_use(other);
    check_that(
        d_now == d_want && other_now == other_want,
        "moving a layer leaves nothing behind: the old parameters are released",
        "%s holds %zu bytes of tensors (expected %zu: the layer and its data); %s holds %zu (expected %zu)",
        device_name(d), d_now, d_want, device_name(other), other_now, other_want);

    CHECK(linear_forward(&net, xt, y)); /* net(X) on d */
    float got[B * OUT];
    double worst = 0.0;
    CHECK(tensor_to_host(y, got, B * OUT));
    for (int r = 0; r < B; ++r)
        for (int c = 0; c < OUT; ++c) {
            double want = b[c];
            for (int k = 0; k < IN; ++k) want += (double)x[r * IN + k] * w[c * IN + k];
            worst = fmax(worst, fabs(got[r * OUT + c] - want) / (1e-6 + fabs(want)));
        }
    check_that(worst < 1e-5, "the moved layer computes net(X) on the device", "largest relative error %.2g",
               worst);

    tensor *weight = net.weight, *bias = net.bias;
    CHECK(reset_pair(d, other));
    const bool moved_again = CHECK_CALL(
        lab_linear_to(&net, d), "moving a layer onto its own device keeps its tensors and copies nothing");
    const copy_tally again = tally(d, other);
    if (moved_again)
        check_that(net.weight == weight && net.bias == bias && again.copies == 0 && in_use(d) == d_now,
                   "moving a layer onto its own device keeps its tensors and copies nothing",
                   "same tensors: %s; %llu copies; %zu bytes in use on %s before, %zu after",
                   net.weight == weight && net.bias == bias ? "yes" : "no", (unsigned long long)again.copies,
                   d_now, device_name(d), in_use(d));
    tensor_free(net.weight), tensor_free(net.bias), tensor_free(xt), tensor_free(y);
}

/* ---- many small copies vs one big one (the library) ------------------------------ */

static void check_one_vs_many(device d)
{
    const int64_t total = (int64_t)256 << 10;
    const int pieces = 256, reps = 5, runs = reps + 1; /* the helper warms up once */
    for (int to_device = 1; to_device >= 0; --to_device) {
        const char *way = to_device ? "host->device" : "device->host";
        double one, many;
        CHECK(counters_reset(d));
        CHECK(time_one_vs_many(d, total, pieces, to_device, reps, &one, &many));
        device_counters c;
        CHECK(counters_read(d, &c));
        const uint64_t want_copies = (uint64_t)runs * (uint64_t)(pieces + 1);
        const uint64_t want_bytes = (uint64_t)runs * 2u * (uint64_t)total;
        if (!device_is_gpu(d)) {
            check_that(
                c.h2d_copies + c.d2h_copies == 0 && c.d2d_copies == want_copies,
                "on cpu no transfer happens: every copy is a memcpy within RAM",
                "%s: %llu host<->device copies, %llu within the cpu; 1 copy %.3f ms, %d copies %.2f ms "
                "(%.1fx, not claimed)",
                way, (unsigned long long)(c.h2d_copies + c.d2h_copies), (unsigned long long)c.d2d_copies,
                one * 1e3, pieces, many * 1e3, many / one);
            continue;
        }
        const uint64_t copies = to_device ? c.h2d_copies : c.d2h_copies;
        const uint64_t bytes = to_device ? c.h2d_bytes : c.d2h_bytes;
        check_that(copies == want_copies && bytes == want_bytes,
                   "the same bytes moved as 1 copy and as many small ones (counted)",
                   "%s: %llu copies of %llu bytes in %d runs of 1 + %d", way, (unsigned long long)copies,
                   (unsigned long long)bytes, runs, pieces);
        /* Each small copy pays the latency (about 10 us): 256 of them take
         * 2.5 ms or more, the one copy of 256 KiB some tens of microseconds. */
        check_that(many > 3.0 * one, "many small copies are much slower than one big one (> 3x)",
                   "%s, 256 KiB: 1 copy %.3f ms, %d copies of 1 KiB %.2f ms: %.0fx", way, one * 1e3, pieces,
                   many * 1e3, many / one);
    }
}

/* ---- the lesson's exercise: the norm log (step 4) ----------------------------- */

static void check_log_counts(device d, const device_counters *host_c, const device_counters *device_c,
                             int steps)
{
    const uint64_t log_bytes = (uint64_t)steps * sizeof(float);
    if (device_is_gpu(d)) {
        /* A read on a GPU is a blocking device-to-host copy; a slot write is a
         * copy within the GPU, queued, that the host does not wait for. */
        check_that(host_c->d2h_copies == (uint64_t)steps && host_c->syncs == (uint64_t)steps,
                   "logging on the host reads and blocks once every step",
                   "%d steps: %llu device-to-host copies, %llu blocking waits", steps,
                   (unsigned long long)host_c->d2h_copies, (unsigned long long)host_c->syncs);
        check_that(
            device_c->d2h_copies == 1 && device_c->d2h_bytes == log_bytes && device_c->syncs == 1 &&
                device_c->d2d_copies == (uint64_t)steps,
            "the log on the device is written in place every step and read once, whole",
            "%d steps: %llu copies within %s, %llu device-to-host copy of %llu bytes (the log is %llu), "
            "%llu blocking wait",
            steps, (unsigned long long)device_c->d2d_copies, device_name(d),
            (unsigned long long)device_c->d2h_copies, (unsigned long long)device_c->d2h_bytes,
            (unsigned long long)log_bytes, (unsigned long long)device_c->syncs);
        return;
    }
    /* counters.h: on the cpu a copy to the host is counted as a copy within the
     * cpu, and nothing ever waits. The host log makes one 4-byte read a step;
     * the device log a 4-byte slot write a step, then one read of all of it:
     * steps + 1 copies, twice the log's bytes. */
    check_that(host_c->h2d_copies + host_c->d2h_copies == 0 && host_c->d2d_copies == (uint64_t)steps &&
                   host_c->d2d_bytes == log_bytes && host_c->syncs == 0,
               "on cpu logging on the host reads every step, with no transfer and no wait",
               "%d steps: %llu copies within the cpu (%llu bytes), %llu host<->device, %llu waits", steps,
               (unsigned long long)host_c->d2d_copies, (unsigned long long)host_c->d2d_bytes,
               (unsigned long long)(host_c->h2d_copies + host_c->d2h_copies),
               (unsigned long long)host_c->syncs);
    check_that(
        device_c->h2d_copies + device_c->d2h_copies == 0 && device_c->d2d_copies == (uint64_t)steps + 1 &&
            device_c->d2d_bytes == 2 * log_bytes && device_c->syncs == 0,
        "the log on the device is written in place every step and read once, whole",
        "on cpu, where a read is a copy within the cpu and nothing waits: %d steps, %llu copies within "
        "the cpu (%llu bytes; expected %d slot writes and 1 read, %llu bytes), %llu waits",
        steps, (unsigned long long)device_c->d2d_copies, (unsigned long long)device_c->d2d_bytes, steps,
        (unsigned long long)(2 * log_bytes), (unsigned long long)device_c->syncs);
}

static void check_norm_log(device d)
{
    /* 64 x 64: OpenBLAS multiplies it on one thread, so that the loops do not
     * wait on its worker threads when other programs hold the cores. */
    enum { N = 64, STEPS = 200 };
    static float on_host[STEPS], on_device[STEPS];
    tensor *x, *w;
    CHECK(norm_log_inputs(d, N, &x, &w));

    device_counters host_c, device_c;
    CHECK(counters_reset(d));
    CHECK(norms_logged_on_host(x, w, STEPS, on_host));
    CHECK(counters_read(d, &host_c));

    for (int i = 0; i < STEPS; ++i) on_device[i] = NAN; /* a log never read back cannot pass */
    const size_t memory_before = in_use(d);
    CHECK(counters_reset(d));
    if (!CHECK_CALL(lab_norms_logged_on_device(x, w, STEPS, on_device),
                    "the log on the device is written in place every step and read once, whole")) {
        tensor_free(x), tensor_free(w);
        return;
    }
    CHECK(counters_read(d, &device_c));
    const size_t memory_after = in_use(d);
    check_log_counts(d, &host_c, &device_c, STEPS);

    /* Tolerance zero: both loops run the same kernels on the same inputs in the
     * same order, and a slot write copies bits without rounding, so the logs
     * must be bitwise equal. Any difference means different work was done (a
     * product missed, a norm written to the wrong slot, a slot never written). */
    int differ = 0, first = -1;
    bool sane = true;
    for (int i = 0; i < STEPS; ++i) {
        if (memcmp(&on_host[i], &on_device[i], sizeof(float)) != 0 && differ++ == 0) first = i;
        sane = sane && isfinite(on_host[i]) && on_host[i] > 0.0f;
    }
    char where[160] = "";
    if (first >= 0)
        snprintf(where, sizeof where, "; the first after product %d: %.9g on the device, %.9g on the host",
                 first + 1, (double)on_device[first], (double)on_host[first]);
    check_that(sane && differ == 0,
               "the log kept on the device equals the one read step by step, bit for bit",
               "%d of %d norms differ%s; norm 1: %.6g, norm %d: %.6g", differ, STEPS, where,
               (double)on_host[0], STEPS, (double)on_host[STEPS - 1]);
    check_that(memory_after == memory_before,
               "the device-log loop releases every tensor it made, the log too",
               "%zu bytes in use on %s before, %zu after", memory_before, device_name(d), memory_after);
    tensor_free(x), tensor_free(w);
}

/* ---- bandwidth: small copies vs large ones (the library) ------------------------ */

static void check_bandwidth(device d)
{
    double small[BW_KINDS], large[BW_KINDS];
    CHECK(counters_reset(d));
    CHECK(bandwidth_point(d, 4096, 20, small));
    device_counters c;
    CHECK(counters_read(d, &c));
    CHECK(bandwidth_point(d, (size_t)4 << 20, 5, large));
    if (!device_is_gpu(d)) {
        check_that(
            c.h2d_copies + c.d2h_copies == 0 && c.d2d_copies == BW_KINDS * 21,
            "on cpu the bandwidth table measures memcpy in RAM: no transfer happens",
            "%llu host<->device copies; 4 KiB at %.2f GB/s, 4 MiB at %.2f GB/s (host->device, pageable)",
            (unsigned long long)(c.h2d_copies + c.d2h_copies), small[0], large[0]);
        return;
    }
    double worst = INFINITY;
    int worst_kind = 0;
    for (int k = 0; k < BW_KINDS; ++k)
        if (large[k] / small[k] < worst) worst = large[k] / small[k], worst_kind = k;
    check_that(worst > 3.0, "large copies reach far higher bandwidth than small ones (latency, > 3x)",
               "least gain %s: 4 KiB at %.3f GB/s, 4 MiB at %.2f GB/s (%.0fx)", bw_kind_names[worst_kind],
               small[worst_kind], large[worst_kind], worst);
}

int main(int argc, char **argv)
{
    const device d = check_device(argc, argv);
    const device other = partner_of(d);
    const float va[6] = { 1, 2, 3, 4, 5, 6 };
    tensor *a;
    CHECK(tensor_from_host(&a, d, shape2(2, 3), va));
    check_refusal(d, other, a, va);
    check_add_across(d, other, a, va);
    tensor_free(a);
    check_to(d, other);
    check_round_trip(d);
    check_layer(d, other);
    check_one_vs_many(d);
    check_norm_log(d);
    check_bandwidth(d);
    return check_finish("02_copying");
}
