/* check.c: does lab 02's lesson hold on the device of --device?
 *
 * The claims: the same-device rule (a refusal naming both devices, nothing
 * copied, the message cut to the buffer given; a sum on one device is no
 * refusal, and neither is any other failure; after a copy on purpose the sum
 * is right and the copy is released; with b already on a's device nothing is
 * copied and no reference kept; across sim:0 and sim:1 too), tensor_to (the
 * same tensor, or exactly one copy of the right bytes), a bit-exact round
 * trip, a whole layer moved (each parameter copied once, a half-moved layer
 * made whole, nothing left behind), many small copies vs one big one, the
 * lesson's norm log (a read every step vs one read, the two logs bitwise
 * equal, nothing left behind), and the bandwidth of small vs large copies.
 * The counters of counters.h are the proof; the two timing claims are ratios
 * with margins of ten or more.
 *
 * Failures are tried too: a simulated GPU filled to its last bytes makes the
 * copy of lab_add_across, a move of lab_linear_to and each allocation of
 * lab_norms_logged_on_device in turn fail for want of memory, as on a full GPU; the
 * failure must be returned, every byte come back, and the device work again
 * once there is room. So does a sum that fails after its copy was made.
 *
 * Your functions are called through CHECK_CALL and CHECK_YOURS (labkit/check.h):
 * a failure of yours fails the claim it was called for, with the library's
 * message; only an unwritten step stops the check, at its TODO.
 *
 * With --device cpu the partner device is GPU 0 when there is one (ctest sets
 * LABKIT_SIM_GPUS=2), else there is only the CPU and the claims say what is
 * true there: nothing to refuse, nothing crosses a bus. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "given.h"
#include "lab.h"
#include "labkit/check_full_device.h"
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

/* Whether every value of the [2, 3] tensor `sum` is va + vb, exactly. */
static int wrong_sums(const tensor *sum, const float *va, const float *vb)
{
    enum { N = 6 };
    float got[N];
    CHECK(tensor_to_host(sum, got, N));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += got[i] != va[i] + vb[i];
    return wrong;
}

/* Every copy counted on one device since counters_reset, of any kind. */
static uint64_t copies_on(device d)
{
    device_counters c;
    CHECK(counters_read(d, &c));
    return c.h2d_copies + c.d2h_copies + c.d2d_copies;
}

/* ---- two GPUs ------------------------------------------------------------------ */

/* d and a second GPU of its kind (sim:1 beside sim:0) where there is one; else
 * GPUs 0 and 1 of a kind that has two (sim:0 and sim:1 beside the CPU or one
 * real GPU). */
static bool two_gpus_of_one_kind(device d, device *first, device *second)
{
    const device sibling = { d.kind, d.index == 0 ? 1 : 0 };
    if (device_is_gpu(d) && device_exists(sibling)) {
        *first = d;
        *second = sibling;
        return true;
    }
    const device_kind kinds[] = { DEVICE_CUDA, DEVICE_SIM };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        if (device_count(kinds[k]) >= 2) {
            *first = (device){ kinds[k], 0 };
            *second = (device){ kinds[k], 1 };
            return true;
        }
    return false;
}

/* ---- the same-device rule and copying on purpose (steps 1 and 2) ------------- */

static void check_refusal(device d, device other, tensor *a, const float *va)
{
    enum { N = 6, MESSAGE = 512 };
    const float vb[N] = { 0.5f, -1, 0.25f, 1e-3f, -7, 1e6f };
    tensor *b, *b_here, *wrong_shape, *sum;
    CHECK(tensor_from_host(&b, other, shape2(2, 3), vb));
    CHECK(tensor_from_host(&b_here, d, shape2(2, 3), vb));
    CHECK(tensor_zeros(&wrong_shape, d, shape2(3, 2)));
    CHECK(tensor_full(&sum, d, shape2(2, 3), -99.0f));
    /* Ends at a guard page: a message written past it stops at its line. */
    char *message = host_alloc(MESSAGE, 0);
    if (!message) CHECK(fail(STATUS_OUT_OF_MEMORY, "check02: no host memory for a message buffer"));

    /* The library's own refusal of the same sum: the message lab_try_add must
     * hand on, word for word (lab.h), not one of its own. Only across two
     * devices: on one, op_add would fill the sum that lab_try_add must fill. */
    char library[MESSAGE] = "";
    if (!device_equal(d, other) && op_add(a, b, sum) == STATUS_WRONG_DEVICE)
        snprintf(library, sizeof library, "%s", last_error());

    bool refused = false;
    snprintf(message, MESSAGE, "untouched");
    CHECK(reset_pair(d, other));
    status s = CHECK_YOURS(lab_try_add(a, b, sum, &refused, message, MESSAGE));
    const copy_tally after_try = tally(d, other);
    if (!device_equal(d, other)) {
        check_that(s == STATUS_OK && refused && strstr(message, device_name(d)) &&
                       strstr(message, device_name(other)),
                   "a + b across two devices is refused, the message naming both",
                   "a on %s, b on %s: returned %s, refused: %s; message: \"%.*s\"", device_name(d),
                   device_name(other), status_name(s), refused ? "yes" : "no", (int)strcspn(message, "\n"),
                   message);
        const char *own =
            "a refusal's message is the library's own, last_error() after op_add, word for word";
        if (s == STATUS_OK && refused && strcmp(message, library) == 0)
            check_that(true, own, "\"%.*s\"", (int)strcspn(message, "\n"), message);
        else if (s == STATUS_OK && refused) {
            /* Where they part, in case the first lines shown are the same. */
            size_t k = 0;
            while (message[k] && message[k] == library[k]) ++k;
            check_that(false, own, "yours: \"%.*s\"; the library's: \"%.*s\"; they differ from character %zu",
                       (int)strcspn(message, "\n"), message, (int)strcspn(library, "\n"), library, k + 1);
        }
        check_that(after_try.copies == 0, "the library copies nothing behind your back", "copies: %llu",
                   (unsigned long long)after_try.copies);

        /* A buffer of 16 bytes inside a larger one: the message must be cut to
         * 15 characters and a NUL, and the bytes after the 16 left alone. The
         * 15 are the library's first 15: as much of it as fits, not less, and
         * not nothing (the library's message is longer than 15). */
        enum { SMALL = 16 };
        memset(message, 0xAB, MESSAGE);
        refused = false;
        s = CHECK_YOURS(lab_try_add(a, b, sum, &refused, message, SMALL));
        int past = 0;
        for (int i = SMALL; i < MESSAGE; ++i) past += (unsigned char)message[i] != 0xAB;
        const bool ended = memchr(message, '\0', SMALL) != NULL;
        const size_t kept = ended ? strlen(message) : 0;
        const bool fills = ended && strlen(library) >= SMALL && kept == SMALL - 1 &&
                           strncmp(message, library, SMALL - 1) == 0;
        check_that(
            s == STATUS_OK && refused && ended && fills && past == 0,
            "a refusal's message is cut to the buffer's size, ending in a NUL, nothing written past it",
            "message_size %d: returned %s, refused: %s, %s, %zu character%s of the library's message kept "
            "(want its first %d: as much as fits), %d byte%s written past the %d",
            SMALL, status_name(s), refused ? "yes" : "no", ended ? "a NUL within it" : "no NUL within it",
            kept, kept == 1 ? "" : "s", SMALL - 1, past, past == 1 ? "" : "s", SMALL);
    }

    refused = true;
    snprintf(message, MESSAGE, "untouched");
    s = CHECK_YOURS(lab_try_add(a, b_here, sum, &refused, message, MESSAGE));
    const int wrong = wrong_sums(sum, va, vb);
    check_that(s == STATUS_OK && !refused && message[0] == '\0' && wrong == 0,
               "a + b on one device is computed, not refused, with an empty message",
               "both on %s: returned %s, refused: %s, message: \"%.40s\", %d of %d values wrong",
               device_name(d), status_name(s), refused ? "yes" : "no", message, wrong, N);

    refused = true;
    s = CHECK_YOURS(lab_try_add(a, wrong_shape, sum, &refused, message, MESSAGE));
    check_that(
        s == STATUS_BAD_ARGUMENT && !refused,
        "any other failure (shapes [2, 3] + [3, 2] on one device) is returned as it is, not called a refusal",
        "returned %s, refused: %s (op_add's own status is STATUS_BAD_ARGUMENT)", status_name(s),
        refused ? "yes" : "no");
    host_free(message, 0);
    tensor_free(b), tensor_free(b_here), tensor_free(wrong_shape), tensor_free(sum);
}

/* a on one GPU, b on another of the same kind (sim:0 and sim:1): op_add
 * refuses them as it refuses the CPU and a GPU, and a refusal told apart by
 * the kinds of the two devices alone misses it. */
static void check_refusal_across_gpus(device d)
{
    enum { N = 6, MESSAGE = 512 };
    device first, second;
    if (!two_gpus_of_one_kind(d, &first, &second)) {
        printf("  (no two GPUs of one kind here: lab_try_add across sim:0 and sim:1 is not tried)\n");
        return;
    }
    const float va[N] = { 1, -2, 3, -4, 5, -6 }, vb[N] = { 0.5f, 0.25f, -1, 2, 1e-3f, 7 };
    tensor *a, *b, *sum;
    CHECK(tensor_from_host(&a, first, shape2(2, 3), va));
    CHECK(tensor_from_host(&b, second, shape2(2, 3), vb));
    CHECK(tensor_full(&sum, first, shape2(2, 3), -99.0f));
    char message[MESSAGE] = "untouched";
    bool refused = false;
    const status s = CHECK_YOURS(lab_try_add(a, b, sum, &refused, message, MESSAGE));
    check_that(s == STATUS_OK && refused && strstr(message, device_name(first)) &&
                   strstr(message, device_name(second)),
               "a + b across two GPUs of one kind is refused too, the message naming both",
               "a on %s, b on %s: returned %s, refused: %s; message: \"%.*s\"", device_name(first),
               device_name(second), status_name(s), refused ? "yes" : "no", (int)strcspn(message, "\n"),
               message);
    tensor_free(a), tensor_free(b), tensor_free(sum);
}

/* b from `other` (or, with d == other, from d itself) added to a on d. */
static void check_add_across(device d, device other, tensor *a, const float *va)
{
    enum { N = 6 };
    const char *claim = "after copying b across on purpose, a + b is right";
    const float vb[N] = { 2, 0.5f, -3, 1e-3f, 8, -1e6f };
    tensor *b, *sum;
    CHECK(tensor_from_host(&b, other, shape2(2, 3), vb));
    CHECK(tensor_full(&sum, d, shape2(2, 3), -99.0f));
    const size_t memory_before = in_use(d);
    CHECK(reset_pair(d, other));
    if (CHECK_CALL(lab_add_across(a, b, sum), claim)) {
        const copy_tally after_add = tally(d, other);
        const size_t memory_after = in_use(d);
        const int wrong = wrong_sums(sum, va, vb);
        const uint64_t expected = device_equal(d, other) ? 0 : 1;
        check_that(wrong == 0 && after_add.copies == expected &&
                       after_add.bytes == expected * tensor_bytes(b),
                   claim, "%d of %d values wrong; copies: %llu of %llu bytes, expected %llu of %zu", wrong, N,
                   (unsigned long long)after_add.copies, (unsigned long long)after_add.bytes,
                   (unsigned long long)expected, (size_t)expected * tensor_bytes(b));
        check_that(memory_after == memory_before, "the copy of b is released after the sum",
                   "%zu bytes in use on %s before, %zu after", memory_before, device_name(d), memory_after);
    }
    tensor_free(b), tensor_free(sum);
}

/* The branch where b is already on a's device: tensor_to hands back b itself,
 * so nothing may be copied, and the reference it handed over must be dropped:
 * once its owner frees b, b's bytes come back. */
static void check_add_in_place(device d, tensor *a, const float *va)
{
    enum { N = 6 };
    const char *claim = "with b already on a's device, a + b is right and nothing is copied";
    const float vb[N] = { -2, 0.25f, 3, 5e-4f, -8, 2e6f };
    tensor *sum;
    CHECK(tensor_full(&sum, d, shape2(2, 3), -99.0f));
    const size_t before_b = in_use(d);
    tensor *b;
    CHECK(tensor_from_host(&b, d, shape2(2, 3), vb));
    CHECK(counters_reset(d));
    if (CHECK_CALL(lab_add_across(a, b, sum), claim)) {
        const uint64_t copies = copies_on(d);
        const int wrong = wrong_sums(sum, va, vb);
        check_that(wrong == 0 && copies == 0, claim, "both on %s: %d of %d values wrong, %llu cop%s",
                   device_name(d), wrong, N, (unsigned long long)copies, copies == 1 ? "y" : "ies");
    }
    tensor_free(b);
    const size_t after_b = in_use(d);
    check_that(
        after_b == before_b,
        "with b already on a's device, no reference to b is kept: freed by its owner, b gives back its "
        "bytes",
        "%zu bytes in use on %s before b was made, %zu after it was freed (b is %zu bytes)", before_b,
        device_name(d), after_b, (size_t)N * sizeof(float));
    tensor_free(sum);
}

/* a on one GPU, b on another of the same kind (sim:0 and sim:1): a test of
 * kinds alone would call them one device, and op_add would refuse. */
static void check_add_across_gpus(device d)
{
    enum { N = 6 };
    device first, second;
    if (!two_gpus_of_one_kind(d, &first, &second)) {
        printf("  (no two GPUs of one kind here: a + b across sim:0 and sim:1 is not tried)\n");
        return;
    }
    char claim[128];
    snprintf(claim, sizeof claim, "a + b across two GPUs of one kind (%s and %s) copies b once and is right",
             device_name(first), device_name(second));
    const float va[N] = { 1, -2, 3, -4, 5, -6 }, vb[N] = { 0.5f, 0.25f, -1, 2, 1e-3f, 7 };
    tensor *a, *b, *sum;
    CHECK(tensor_from_host(&a, first, shape2(2, 3), va));
    CHECK(tensor_from_host(&b, second, shape2(2, 3), vb));
    CHECK(tensor_full(&sum, first, shape2(2, 3), -99.0f));
    const size_t before = in_use(first);
    CHECK(counters_reset(first));
    if (CHECK_CALL(lab_add_across(a, b, sum), claim)) {
        device_counters c;
        CHECK(counters_read(first, &c));
        const int wrong = wrong_sums(sum, va, vb);
        check_that(wrong == 0 && c.d2d_copies == 1 && c.d2d_bytes == tensor_bytes(b) &&
                       in_use(first) == before,
                   claim,
                   "%d of %d values wrong; %llu cop%s of %llu bytes into %s; %zu bytes in use there before, "
                   "%zu after",
                   wrong, N, (unsigned long long)c.d2d_copies, c.d2d_copies == 1 ? "y" : "ies",
                   (unsigned long long)c.d2d_bytes, device_name(first), before, in_use(first));
    }
    tensor_free(a), tensor_free(b), tensor_free(sum);
}

/* Failures on the way: a sum that fails after b was copied ([2, 3] + [3, 2])
 * must still release the copy; a copy that cannot be made (a full GPU) is the
 * failure returned, and the device works once there is room. */
static void check_add_across_failures(device d, device other, tensor *a)
{
    if (!device_equal(d, other)) {
        tensor *wrong_shape, *sum;
        CHECK(tensor_zeros(&wrong_shape, other, shape2(3, 2)));
        CHECK(tensor_full(&sum, d, shape2(2, 3), -99.0f));
        const size_t before = in_use(d);
        const status s = CHECK_YOURS(lab_add_across(a, wrong_shape, sum));
        const size_t after = in_use(d);
        check_that(s != STATUS_OK && after == before,
                   "when the sum fails after b was copied, the failure is returned and the copy released",
                   "a [2, 3] on %s, b [3, 2] on %s: %s; %zu bytes in use on %s before, %zu after",
                   device_name(d), device_name(other), status_name(s), before, device_name(d), after);
        tensor_free(wrong_shape), tensor_free(sum);
    }

    device target;
    if (!full_device_target(d, &target)) {
        printf("  (no simulated GPU here: a + b on a full device is not tried)\n");
        return;
    }
    enum { N = 6 };
    const char *claim =
        "on a full device lab_add_across returns the copy's failure, and works once there is room";
    const float va[N] = { 1, 2, 3, 4, 5, 6 }, vb[N] = { 6, 5, 4, 3, 2, 1 };
    tensor *at, *b, *sum;
    CHECK(tensor_from_host(&at, target, shape2(2, 3), va));
    CHECK(tensor_from_host(&b, device_cpu(), shape2(2, 3), vb));
    CHECK(tensor_full(&sum, target, shape2(2, 3), -99.0f));
    const size_t target_before = in_use(target), cpu_before = in_use(device_cpu());
    tensor *filler;
    if (!fill_device(target, 0, &filler)) {
        tensor_free(at), tensor_free(b), tensor_free(sum);
        return;
    }
    const status s = CHECK_YOURS(lab_add_across(at, b, sum));
    tensor_free(filler);
    const size_t target_after = in_use(target), cpu_after = in_use(device_cpu());
    const status later = CHECK_YOURS(lab_add_across(at, b, sum));
    const int wrong = later == STATUS_OK ? wrong_sums(sum, va, vb) : N;
    check_that(
        s == STATUS_OUT_OF_MEMORY && target_after == target_before && cpu_after == cpu_before &&
            later == STATUS_OK && wrong == 0,
        claim,
        "no byte free on %s for b's copy: %s; in use there %zu -> %zu bytes, on cpu %zu -> %zu; with room "
        "again: %s, %d of %d values wrong",
        device_name(target), status_name(s), target_before, target_after, cpu_before, cpu_after,
        status_name(later), wrong, N);
    tensor_free(at), tensor_free(b), tensor_free(sum);
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

/* y = x W^T + b of a layer [LAYER_OUT, LAYER_IN] on a batch of BATCH computed here in double
 * against what linear_forward gave: the largest relative error. */
enum { LAYER_IN = 4, LAYER_OUT = 3, BATCH = 2 };
static const float layer_w[LAYER_OUT * LAYER_IN] = {
    0.5f, 0.25f, -0.5f, 1, -1, 0, 3, 1, 2, 1, -2, 0.125f
}; /* [out, in] */
static const float layer_b[LAYER_OUT] = { 0.1f, -0.2f, 0.3f },
                   layer_x[BATCH * LAYER_IN] = { 1, 2, 3, 4, -1, 0.5f, 0, 2 };

static double forward_error(const lab_linear *net, device d)
{
    tensor *xt, *y;
    CHECK(tensor_from_host(&xt, d, shape2(BATCH, LAYER_IN), layer_x));
    CHECK(tensor_empty(&y, d, DTYPE_F32, shape2(BATCH, LAYER_OUT)));
    CHECK(linear_forward(net, xt, y)); /* net(X) on d */
    float got[BATCH * LAYER_OUT];
    CHECK(tensor_to_host(y, got, BATCH * LAYER_OUT));
    double worst = 0.0;
    for (int r = 0; r < BATCH; ++r)
        for (int c = 0; c < LAYER_OUT; ++c) {
            double want = layer_b[c];
            for (int k = 0; k < LAYER_IN; ++k)
                want += (double)layer_x[r * LAYER_IN + k] * layer_w[c * LAYER_IN + k];
            worst = fmax(worst, fabs(got[r * LAYER_OUT + c] - want) / (1e-6 + fabs(want)));
        }
    tensor_free(xt), tensor_free(y);
    return worst;
}

/* Moves one parameter to `to` behind the student's back: a half-moved layer. */
static void move_parameter(tensor **parameter, device to)
{
    tensor *moved;
    CHECK(tensor_to(*parameter, to, &moved));
    tensor_free(*parameter);
    *parameter = moved;
}

static void check_layer(device d, device other)
{
    const char *claim = "moving a layer moves every parameter, each copied once";
    const size_t d_base = in_use(d), other_base = in_use(other);
    lab_linear net;
    CHECK(tensor_from_host(&net.weight, other, shape2(LAYER_OUT, LAYER_IN), layer_w));
    CHECK(tensor_from_host(&net.bias, other, shape1(LAYER_OUT), layer_b));
    const size_t layer = sizeof layer_w + sizeof layer_b;

    CHECK(reset_pair(d, other));
    if (!CHECK_CALL(lab_linear_to(&net, d), claim)) {
        tensor_free(net.weight), tensor_free(net.bias);
        return;
    }
    const copy_tally moved = tally(d, other);
    const uint64_t expected = device_equal(d, other) ? 0 : 2;
    check_that(device_equal(tensor_device(net.weight), d) && device_equal(tensor_device(net.bias), d) &&
                   moved.copies == expected && moved.bytes == expected / 2 * layer,
               claim,
               "from %s to %s: weight on %s, bias on %s; copies: %llu of %llu bytes (expected %llu of %zu)",
               device_name(other), device_name(d), device_name(tensor_device(net.weight)),
               device_name(tensor_device(net.bias)), (unsigned long long)moved.copies,
               (unsigned long long)moved.bytes, (unsigned long long)expected, (size_t)expected / 2 * layer);
    /* What each device should hold now: d the layer, other nothing more than before. */
    const size_t d_want = d_base + layer, other_want = device_equal(d, other) ? d_want : other_base;
    const size_t d_now = in_use(d), other_now = in_use(other);
    check_that(d_now == d_want && other_now == other_want,
               "moving a layer leaves nothing behind: the old parameters are released",
               "%s holds %zu bytes of tensors (expected %zu: the layer); %s holds %zu (expected %zu)",
               device_name(d), d_now, d_want, device_name(other), other_now, other_want);

    /* net(X) runs only on a layer whose parameters are both on d. */
    const bool on_d = device_equal(tensor_device(net.weight), d) && device_equal(tensor_device(net.bias), d);
    const double worst = on_d ? forward_error(&net, d) : INFINITY;
    check_that(worst < 1e-5, "the moved layer computes net(X) on the device", "largest relative error %.2g%s",
               worst, on_d ? "" : " (not run: the layer is not on the device)");

    tensor *weight = net.weight, *bias = net.bias;
    CHECK(reset_pair(d, other));
    claim = "moving a layer onto its own device keeps its tensors and copies nothing";
    if (CHECK_CALL(lab_linear_to(&net, d), claim)) {
        const copy_tally again = tally(d, other);
        check_that(net.weight == weight && net.bias == bias && again.copies == 0 && in_use(d) == d_now, claim,
                   "same tensors: %s; %llu copies; %zu bytes in use on %s before, %zu after",
                   net.weight == weight && net.bias == bias ? "yes" : "no", (unsigned long long)again.copies,
                   d_now, device_name(d), in_use(d));
    }

    /* Half moved: the weight on d, the bias back on the other device. The
     * weight stays as it is; the bias alone crosses, once. */
    if (!device_equal(d, other)) {
        claim = "a half-moved layer is made whole: the bias copied once, the weight kept";
        move_parameter(&net.bias, other);
        weight = net.weight;
        CHECK(reset_pair(d, other));
        if (CHECK_CALL(lab_linear_to(&net, d), claim)) {
            const copy_tally half = tally(d, other);
            check_that(net.weight == weight && device_equal(tensor_device(net.bias), d) && half.copies == 1 &&
                           half.bytes == sizeof layer_b,
                       claim,
                       "weight on %s, bias on %s: afterwards the weight %s, the bias on %s; %llu cop%s of "
                       "%llu bytes (expected 1 of %zu)",
                       device_name(d), device_name(other),
                       net.weight == weight ? "the same tensor" : "replaced",
                       device_name(tensor_device(net.bias)), (unsigned long long)half.copies,
                       half.copies == 1 ? "y" : "ies", (unsigned long long)half.bytes, sizeof layer_b);
        }
    }

    /* A reference kept by mistake (when a parameter was already on d, say)
     * keeps its tensor alive after its owner frees it. */
    tensor_free(net.weight), tensor_free(net.bias);
    const size_t d_end = in_use(d), other_end = in_use(other);
    check_that(d_end == d_base && other_end == other_base,
               "freed, the moved layer gives back every byte: no reference to a parameter is kept",
               "in use before the layer was made and after it was freed: %s %zu -> %zu bytes, %s %zu -> %zu",
               device_name(d), d_base, d_end, device_name(other), other_base, other_end);
}

/* A layer on one GPU moved to another of the same kind (sim:1 to sim:0): a
 * test of kinds alone would call it there already, and leave it where it was. */
static void check_layer_across_gpus(device d)
{
    device first, second;
    if (!two_gpus_of_one_kind(d, &first, &second)) {
        printf("  (no two GPUs of one kind here: a layer moved across sim:1 and sim:0 is not tried)\n");
        return;
    }
    char claim[128];
    snprintf(claim, sizeof claim,
             "moving a layer across two GPUs of one kind (%s to %s) moves every parameter, each copied once",
             device_name(second), device_name(first));
    const size_t first_base = in_use(first), second_base = in_use(second);
    lab_linear net;
    CHECK(tensor_from_host(&net.weight, second, shape2(LAYER_OUT, LAYER_IN), layer_w));
    CHECK(tensor_from_host(&net.bias, second, shape1(LAYER_OUT), layer_b));
    const size_t layer = sizeof layer_w + sizeof layer_b;
    CHECK(counters_reset(first));
    if (CHECK_CALL(lab_linear_to(&net, first), claim)) {
        device_counters c;
        CHECK(counters_read(first, &c));
        const bool there =
            device_equal(tensor_device(net.weight), first) && device_equal(tensor_device(net.bias), first);
        check_that(
            there && c.d2d_copies == 2 && c.d2d_bytes == layer && in_use(first) == first_base + layer &&
                in_use(second) == second_base,
            claim,
            "weight on %s, bias on %s; %llu copies of %llu bytes into %s (expected 2 of %zu); %s holds "
            "%zu bytes more than before (expected %zu), %s %zu more (expected 0)",
            device_name(tensor_device(net.weight)), device_name(tensor_device(net.bias)),
            (unsigned long long)c.d2d_copies, (unsigned long long)c.d2d_bytes, device_name(first), layer,
            device_name(first), in_use(first) - first_base, layer, device_name(second),
            in_use(second) - second_base);
    }
    tensor_free(net.weight), tensor_free(net.bias);
}

/* lab_linear_to onto a GPU with room for some of the layer but not all of it:
 * for nothing, for the bias alone, for the weight alone, and for all but 4
 * bytes, so that whichever parameter it copies first, each copy in turn is the
 * one that fails. The library's STATUS_OUT_OF_MEMORY is returned, the layer
 * keeps both parameters, each where it was or on the GPU, and moves and
 * computes once there is room; freed, it gives back every byte. */
static void check_layer_full(device d)
{
    device target;
    if (!full_device_target(d, &target)) {
        printf("  (no simulated GPU here: a move onto a full device is not tried)\n");
        return;
    }
    enum { ROOMS = 4 };
    const char *claim = "a move onto a full device returns the library's failure and keeps the layer whole";
    const char *freed = "after a failed move, freeing the layer gives back every byte";
    const device cpu = device_cpu();
    const size_t weight = sizeof layer_w, bias = sizeof layer_b;
    const size_t rooms[ROOMS] = { 0, bias, weight, weight + bias - sizeof(float) };
    bool kept = true, back = true;
    char said[400] = "", memory_said[400] = "";
    for (int r = 0; r < ROOMS; ++r) {
        const size_t target_base = in_use(target), cpu_base = in_use(cpu), room = rooms[r];
        lab_linear net;
        CHECK(tensor_from_host(&net.weight, cpu, shape2(LAYER_OUT, LAYER_IN), layer_w));
        CHECK(tensor_from_host(&net.bias, cpu, shape1(LAYER_OUT), layer_b));
        tensor *filler;
        if (!fill_device(target, room, &filler)) {
            tensor_free(net.weight), tensor_free(net.bias);
            return;
        }
        const status s = CHECK_YOURS(lab_linear_to(&net, target));
        char held[96];
        const bool whole = layer_whole(net.weight, net.bias, cpu, target, held, sizeof held);
        tensor_free(filler);
        status later = STATUS_BAD_ARGUMENT;
        double worst = INFINITY;
        if (whole) later = CHECK_YOURS(lab_linear_to(&net, target));
        const bool moved = later == STATUS_OK && device_equal(tensor_device(net.weight), target) &&
                           device_equal(tensor_device(net.bias), target);
        if (moved) worst = forward_error(&net, target);
        if (!(s == STATUS_OUT_OF_MEMORY && whole && moved && worst < 1e-5) && kept) {
            snprintf(said, sizeof said,
                     "%zu bytes free on %s for a layer of %zu (a weight of %zu, a bias of %zu): %s, then %s; "
                     "with room again: %s, net(X)'s largest relative error %.2g",
                     room, device_name(target), weight + bias, weight, bias, status_name(s), held,
                     whole ? status_name(later) : "not tried", worst);
            kept = false;
        }
        tensor_free(net.weight), tensor_free(net.bias);
        const size_t target_end = in_use(target), cpu_end = in_use(cpu);
        if (!(target_end == target_base && cpu_end == cpu_base) && back) {
            snprintf(memory_said, sizeof memory_said,
                     "%zu bytes free on %s for the move; in use before the layer was made and after it was "
                     "freed: %s %zu -> %zu bytes, cpu %zu -> %zu",
                     room, device_name(target), device_name(target), target_base, target_end, cpu_base,
                     cpu_end);
            back = false;
        }
    }
    check_that(
        kept, claim, "%s",
        kept ? "room on the full device for nothing, the bias alone, the weight alone, all but 4 bytes: "
               "each STATUS_OUT_OF_MEMORY, the layer whole, then moved and right once there was room"
             : said);
    check_that(back, freed, "%s",
               back ? "each of the four failed moves: every byte back once the layer was freed"
                    : memory_said);
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
            "%d steps: %llu copies within %s, %llu device-to-host cop%s of %llu bytes (the log is %llu), "
            "%llu blocking wait%s",
            steps, (unsigned long long)device_c->d2d_copies, device_name(d),
            (unsigned long long)device_c->d2h_copies, device_c->d2h_copies == 1 ? "y" : "ies",
            (unsigned long long)device_c->d2h_bytes, (unsigned long long)log_bytes,
            (unsigned long long)device_c->syncs, device_c->syncs == 1 ? "" : "s");
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
     * wait on its worker threads when other programs hold the cores. 37 steps:
     * neither the 200 of the full-device claim below nor main.c's 10 and 1000,
     * so that a log sized by a constant instead of `steps` shows. */
    enum { N = 64, STEPS = 37 };
    /* End at a guard page: norms[STEPS] written by mistake stops at its line. */
    float *on_host = host_alloc(STEPS * sizeof(float), 0), *on_device = host_alloc(STEPS * sizeof(float), 0);
    if (!on_host || !on_device) CHECK(fail(STATUS_OUT_OF_MEMORY, "check02: no host memory for the two logs"));
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
        host_free(on_host, 0), host_free(on_device, 0);
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
    host_free(on_host, 0), host_free(on_device, 0);
    tensor_free(x), tensor_free(w);
}

/* The device-log loop on a GPU with room for some of its tensors but not all:
 * one of its allocations fails, and every tensor made before it must be
 * released. Which one fails depends on the order the loop makes them in, so
 * the room is each sum of a subset of the four sizes the loop needs (two
 * products, a norm, the log): whatever the order, the room after its first j
 * tensors is one of them, and the (j + 1)th fails. The failure is returned,
 * every tensor made before it released, and the loop runs once there is room. */
static void check_norm_log_full(device d)
{
    device target;
    if (!full_device_target(d, &target)) {
        printf("  (no simulated GPU here: the device log on a full device is not tried)\n");
        return;
    }
    enum { N = 64, STEPS = 200, SIZES = 4 };
    const char *claim = "when the device has no room for one of its tensors, the loop returns the failure "
                        "and releases what it made";
    float *norms = host_alloc(STEPS * sizeof(float), 0);
    if (!norms) CHECK(fail(STATUS_OUT_OF_MEMORY, "check02: no host memory for the log"));
    tensor *x, *w;
    CHECK(norm_log_inputs(target, N, &x, &w));
    /* Two products [N, N], a norm and the log of STEPS: the least any way of
     * writing the loop needs at once. */
    const size_t sizes[SIZES] = { N * N * sizeof(float), N * N * sizeof(float), sizeof(float),
                                  STEPS * sizeof(float) };
    const size_t needed = sizes[0] + sizes[1] + sizes[2] + sizes[3];
    const size_t before = in_use(target);
    bool all = true;
    char figures[400] = "";
    int tried = 0;
    /* Every subset but the whole: the room it leaves is less than needed. The
     * two products are alike, so subsets with the second and not the first
     * repeat others. */
    for (unsigned subset = 0; subset < (1u << SIZES) - 1; ++subset) {
        if ((subset & 2u) && !(subset & 1u)) continue;
        size_t room = 0;
        for (int k = 0; k < SIZES; ++k)
            if (subset & (1u << k)) room += sizes[k];
        tensor *filler;
        if (!fill_device(target, room, &filler)) { /* it said why: the claim is not tried */
            host_free(norms, 0);
            tensor_free(x), tensor_free(w);
            return;
        }
        const status s = CHECK_YOURS(lab_norms_logged_on_device(x, w, STEPS, norms));
        tensor_free(filler);
        const size_t after = in_use(target);
        ++tried;
        if (s != STATUS_OUT_OF_MEMORY || after != before) {
            if (all)
                snprintf(figures, sizeof figures,
                         "%zu bytes free on %s for the %zu the loop needs: %s; in use %zu -> %zu bytes (%zu "
                         "left behind)",
                         room, device_name(target), needed, status_name(s), before, after,
                         after > before ? after - before : 0);
            all = false;
        }
    }
    for (int i = 0; i < STEPS; ++i) norms[i] = NAN;
    const status later = CHECK_YOURS(lab_norms_logged_on_device(x, w, STEPS, norms));
    int written = 0;
    for (int i = 0; i < STEPS; ++i) written += isfinite(norms[i]) && norms[i] > 0;
    if (all)
        snprintf(figures, sizeof figures,
                 "%d rooms from 0 to %zu bytes on %s, short of the %zu the loop needs: each "
                 "STATUS_OUT_OF_MEMORY, %zu bytes in use after each",
                 tried, needed - sizeof(float), device_name(target), needed, before);
    check_that(all && later == STATUS_OK && written == STEPS, claim,
               "%s; with room again: %s, %d of %d norms written", figures, status_name(later), written,
               STEPS);
    host_free(norms, 0);
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
    /* The full-device claims fill a simulated GPU to the byte. A capacity of
     * 256 MiB, where LABKIT_SIM_MEMORY does not say otherwise, keeps the filler
     * cheap: under AddressSanitizer its shadow memory grows with it (4 GiB cost
     * 8 s and 512 MiB each time), and a small machine lends its addresses. */
    setenv("LABKIT_SIM_MEMORY", "256M", 0);
    const device d = check_device(argc, argv);
    const device other = partner_of(d);
    const float va[6] = { 1, 2, 3, 4, 5, 6 };
    tensor *a;
    CHECK(tensor_from_host(&a, d, shape2(2, 3), va));
    check_refusal(d, other, a, va);
    check_refusal_across_gpus(d);
    check_add_across(d, other, a, va);
    check_add_in_place(d, a, va);
    check_add_across_gpus(d);
    check_add_across_failures(d, other, a);
    tensor_free(a);
    check_to(d, other);
    check_round_trip(d);
    check_layer(d, other);
    check_layer_across_gpus(d);
    check_layer_full(d);
    check_one_vs_many(d);
    check_norm_log(d);
    check_norm_log_full(d);
    check_bandwidth(d);
    return check_finish("02_copying");
}
