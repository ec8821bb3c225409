/* test_graph.c: a device's work captured once and launched as one launch.
 *
 * On the device given as argv[1] (cpu, sim:0 or cuda:0): a captured sequence
 * launched N times gives bit for bit what the same calls give run one by one;
 * each launch counts one launch; recording runs nothing; every call a graph
 * cannot hold is refused with a message that names it and the device, and the
 * capture and the device go on. argv[2] is another device, for the copies
 * across devices and to show that it is left alone. */
#include "harness.h"
#include "labkit/counters.h"
#include "labkit/cuda_emulation.h"
#include "labkit/event.h"
#include "labkit/graph.h"
#include "labkit/kernel.h"
#include "labkit/ops.h"
#include "labkit/tensor.h"

#include "graph_kernel.cuh"
#include "graph_kernel.h"

static device under_test, other;

/* ============================================================================
 * the kernel of one's own, on each kind of device
 * ========================================================================== */

void scale_add_index_on_sim(const void *raw, void *stream)
{
    const scale_add_index_args *a = raw;
    const dim3 grid = { (unsigned)((a->n + 127) / 128), 1, 1 }, block = { 128, 1, 1 };
    LAUNCH(scale_add_index_kernel, grid, block, stream, a->out, a->scale, a->n);
}

#ifdef TEST_GRAPH_WITH_CUDA
#define SCALE_ADD_INDEX_ON_CUDA scale_add_index_on_cuda
#else
#define SCALE_ADD_INDEX_ON_CUDA NULL
#endif

static const kernel_launchers scale_add_index = { "scale_add_index_kernel", scale_add_index_on_sim,
                                                  SCALE_ADD_INDEX_ON_CUDA };

/* ============================================================================
 * a small training step: every kind of work a graph records
 * ========================================================================== */

enum { B = 8, IN = 12, OUT = 5, LOG = 4 };

typedef struct step {
    float *host_x;                /* [B, IN] pinned: uploaded at every step */
    int32_t *host_y;              /* [B] pinned */
    tensor *x, *labels;           /* [B, IN], int32 [B] */
    tensor *W, *bias;             /* [IN, OUT], [OUT] */
    tensor *z, *z_copy;           /* [B, OUT] */
    tensor *acc;                  /* [B, OUT]: sums z over the steps, then the kernel */
    tensor *probs, *grad;         /* [B, OUT] */
    tensor *loss, *loss_sum, *dW; /* [1], [1], [IN, OUT] */
    tensor *log;                  /* [LOG]: the last loss in slot 1 */
} step;

/* The operations and kernels of one step (not its 4 copies). */
#define STEP_OPERATIONS 10

static void step_free(step *s)
{
    tensor *all[] = { s->x,     s->labels, s->W,    s->bias,     s->z,  s->z_copy, s->acc,
                      s->probs, s->grad,   s->loss, s->loss_sum, s->dW, s->log };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) tensor_free(all[i]);
    host_free(s->host_x, 1);
    host_free(s->host_y, 1);
    memset(s, 0, sizeof *s);
}

/* The batch of step `i`: different values at every step. */
static void write_batch(step *s, int i)
{
    for (int k = 0; k < B * IN; ++k) s->host_x[k] = (float)((k * 7 + i * 13) % 23) / 23.0f - 0.4f;
    for (int r = 0; r < B; ++r) s->host_y[r] = (r + i) % OUT;
}

static bool step_create(step *s, device d)
{
    memset(s, 0, sizeof *s);
    s->host_x = host_alloc(B * IN * sizeof(float), 1);
    s->host_y = host_alloc(B * sizeof(int32_t), 1);
    status st = s->host_x && s->host_y ? STATUS_OK : fail(STATUS_OUT_OF_MEMORY, "no pinned memory");
    if (st == STATUS_OK) st = tensor_zeros(&s->x, d, shape2(B, IN));
    if (st == STATUS_OK) st = tensor_empty(&s->labels, d, DTYPE_I32, shape1(B));
    if (st == STATUS_OK) st = op_fill(s->labels, 0.0f);
    if (st == STATUS_OK) st = tensor_uniform(&s->W, d, shape2(IN, OUT), -0.5f, 0.5f, 11);
    if (st == STATUS_OK) st = tensor_uniform(&s->bias, d, shape1(OUT), -0.1f, 0.1f, 12);
    if (st == STATUS_OK) st = tensor_zeros(&s->z, d, shape2(B, OUT));
    if (st == STATUS_OK) st = tensor_zeros(&s->z_copy, d, shape2(B, OUT));
    if (st == STATUS_OK) st = tensor_zeros(&s->acc, d, shape2(B, OUT));
    if (st == STATUS_OK) st = tensor_zeros(&s->probs, d, shape2(B, OUT));
    if (st == STATUS_OK) st = tensor_zeros(&s->grad, d, shape2(B, OUT));
    if (st == STATUS_OK) st = tensor_zeros(&s->loss, d, shape1(1));
    if (st == STATUS_OK) st = tensor_zeros(&s->loss_sum, d, shape1(1));
    if (st == STATUS_OK) st = tensor_zeros(&s->dW, d, shape2(IN, OUT));
    if (st == STATUS_OK) st = tensor_zeros(&s->log, d, shape1(LOG));
    if (st == STATUS_OK) write_batch(s, 0);
    if (st == STATUS_OK) st = device_synchronize(d);
    if (st == STATUS_OK) return true;
    harness_fail(__FILE__, __LINE__, "making a step on %s: %s", device_name(d), last_error());
    step_free(s);
    return false;
}

/* One step, queued: upload the batch, forward, loss, a gradient, an SGD step,
 * a kernel of one's own, the loss logged on the device. */
static status step_queue(step *s, device d)
{
    scale_add_index_args k = { tensor_data(s->acc), 0.5f, B * OUT };
    status st = tensor_copy_from_host_async(s->x, s->host_x, B * IN);
    if (st == STATUS_OK) st = tensor_copy_from_host_async_i32(s->labels, s->host_y, B);
    if (st == STATUS_OK) st = op_fill(s->z, NAN); /* overwritten next: a replay out of order shows */
    if (st == STATUS_OK) st = op_matmul(s->x, false, s->W, false, s->bias, s->z);
    if (st == STATUS_OK) st = op_relu(s->z, s->z);
    if (st == STATUS_OK) st = op_add(s->z, s->acc, s->acc);
    if (st == STATUS_OK) st = op_softmax_cross_entropy(s->z, s->labels, s->probs, s->loss);
    if (st == STATUS_OK) st = op_softmax_cross_entropy_backward(s->probs, s->labels, s->grad);
    if (st == STATUS_OK) st = op_matmul(s->x, true, s->grad, false, NULL, s->dW);
    if (st == STATUS_OK) st = op_axpy(-0.5f, s->dW, s->W);
    if (st == STATUS_OK) st = device_launch(d, &scale_add_index, &k, sizeof k);
    if (st == STATUS_OK) st = op_add(s->loss_sum, s->loss, s->loss_sum);
    if (st == STATUS_OK) st = tensor_copy_slice(s->log, 1, s->loss, 0, 1);
    if (st == STATUS_OK) st = tensor_copy(s->z_copy, s->z);
    return st;
}

/* Every tensor the step writes, bit for bit. */
static void expect_same_state(const step *got, const step *want)
{
    const tensor *g[] = { got->W, got->z_copy, got->acc, got->probs, got->dW, got->loss_sum, got->log };
    const tensor *w[] = {
        want->W, want->z_copy, want->acc, want->probs, want->dW, want->loss_sum, want->log
    };
    const char *names[] = { "W", "z_copy", "acc", "probs", "dW", "loss_sum", "log" };
    float a[IN * OUT], b[IN * OUT];
    for (size_t i = 0; i < sizeof g / sizeof g[0]; ++i) {
        const int64_t n = tensor_numel(g[i]);
        if (tensor_to_host(g[i], a, n) != STATUS_OK || tensor_to_host(w[i], b, n) != STATUS_OK) {
            harness_fail(__FILE__, __LINE__, "reading %s: %s", names[i], last_error());
            continue;
        }
        EXPECT_BITWISE_EQUAL(names[i], a, b, n);
    }
}

/* ============================================================================
 * replays
 * ========================================================================== */

static void test_launching_a_captured_step_equals_running_its_calls_bit_for_bit(void)
{
    enum { STEPS = 5 };
    step eager, replayed;
    graph *g = NULL;
    bool made_eager = step_create(&eager, under_test);
    bool made_replayed = made_eager && step_create(&replayed, under_test);
    if (!made_replayed) goto cleanup;
    for (int i = 0; i < STEPS; ++i) {
        write_batch(&eager, i);
        REQUIRE_OK(step_queue(&eager, under_test));
        REQUIRE_OK(device_synchronize(under_test)); /* done with host_x: the next batch may go in */
    }
    REQUIRE_OK(graph_begin_capture(under_test));
    REQUIRE_OK(step_queue(&replayed, under_test));
    REQUIRE_OK(graph_end_capture(under_test, &g));
    EXPECT_EQ_I64(graph_operations(g), STEP_OPERATIONS);
    EXPECT(device_equal(graph_device(g), under_test));
    for (int i = 0; i < STEPS; ++i) {
        write_batch(&replayed, i); /* the same pinned buffer, new values: read again by each launch */
        REQUIRE_OK(graph_launch(g));
        REQUIRE_OK(device_synchronize(under_test));
    }
    expect_same_state(&replayed, &eager);
    float loss_sum = 0.0f;
    REQUIRE_OK(tensor_item(replayed.loss_sum, &loss_sum));
    EXPECT_MSG(isfinite(loss_sum) && loss_sum > 0.0f, "the loss summed over %d steps is %g", STEPS,
               (double)loss_sum);
cleanup:
    graph_free(g);
    if (made_replayed) step_free(&replayed);
    if (made_eager) step_free(&eager);
}

static void test_recording_runs_nothing_until_the_graph_is_launched(void)
{
    tensor *t = NULL;
    graph *g = NULL;
    float value = 0.0f;
    REQUIRE_OK(tensor_full(&t, under_test, shape1(1), 1.0f));
    REQUIRE_OK(graph_begin_capture(under_test));
    EXPECT(graph_capturing(under_test));
    REQUIRE_OK(op_scale(t, 3.0f, t));
    REQUIRE_OK(graph_end_capture(under_test, &g));
    EXPECT(!graph_capturing(under_test));
    REQUIRE_OK(tensor_item(t, &value));
    EXPECT_MSG(value == 1.0f, "after recording 3 * t, t is %g: the recording ran", (double)value);
    REQUIRE_OK(graph_launch(g));
    REQUIRE_OK(graph_launch(g));
    REQUIRE_OK(tensor_item(t, &value));
    EXPECT_MSG(value == 9.0f, "after two launches of t = 3 * t, t is %g, want 9", (double)value);
    REQUIRE_OK(op_scale(t, 2.0f, t)); /* after the capture, calls run as they come again */
    REQUIRE_OK(tensor_item(t, &value));
    EXPECT(value == 18.0f);
cleanup:
    graph_free(g);
    tensor_free(t);
}

/* graph.h: K launches run eagerly, 1 launch and K replayed as a graph. */
static void test_a_launch_counts_one_launch_and_its_operations_as_replayed(void)
{
    enum { LAUNCHES = 4 };
    step s;
    graph *g = NULL;
    device_counters c;
    if (!step_create(&s, under_test)) return;
    REQUIRE_OK(counters_reset(under_test));
    REQUIRE_OK(step_queue(&s, under_test));
    REQUIRE_OK(counters_read(under_test, &c));
    const uint64_t eager_launches = c.launches;
    EXPECT_EQ_I64(eager_launches, STEP_OPERATIONS);

    REQUIRE_OK(device_synchronize(under_test));
    REQUIRE_OK(counters_reset(under_test));
    REQUIRE_OK(graph_begin_capture(under_test));
    REQUIRE_OK(step_queue(&s, under_test));
    REQUIRE_OK(graph_end_capture(under_test, &g));
    REQUIRE_OK(counters_read(under_test, &c));
    EXPECT_MSG(c.launches == 0 && c.replayed == 0 && c.h2d_copies == 0 && c.d2d_copies == 0,
               "recording counted %llu launches, %llu replayed, %llu + %llu copies",
               (unsigned long long)c.launches, (unsigned long long)c.replayed,
               (unsigned long long)c.h2d_copies, (unsigned long long)c.d2d_copies);

    for (int i = 0; i < LAUNCHES; ++i) REQUIRE_OK(graph_launch(g));
    REQUIRE_OK(counters_read(under_test, &c));
    EXPECT_EQ_I64(c.launches, LAUNCHES);
    EXPECT_EQ_I64(c.replayed, LAUNCHES * eager_launches);
    EXPECT_EQ_I64(c.syncs, 0);
    /* its copies, as the same calls count them: 2 uploads (copies within the
     * CPU, on the CPU) and 2 copies within the device per launch */
    const bool gpu = device_is_gpu(under_test);
    EXPECT_EQ_I64(c.h2d_copies, gpu ? 2 * LAUNCHES : 0);
    EXPECT_EQ_I64(c.h2d_bytes, gpu ? LAUNCHES * (B * IN + B) * 4 : 0);
    EXPECT_EQ_I64(c.d2d_copies, (gpu ? 2 : 4) * LAUNCHES);
    REQUIRE_OK(device_synchronize(under_test));
cleanup:
    graph_free(g);
    step_free(&s);
}

/* A graph's launches queued back to back, then the graph freed at once: it
 * goes in queue order, after them. */
static void test_freeing_a_graph_with_launches_still_queued_is_safe(void)
{
    enum { LAUNCHES = 50 };
    tensor *t = NULL;
    graph *g = NULL;
    float value = 0.0f;
    REQUIRE_OK(tensor_zeros(&t, under_test, shape1(1)));
    REQUIRE_OK(graph_begin_capture(under_test));
    for (int i = 0; i < 10; ++i) REQUIRE_OK(op_add(t, t, t)); /* doubles, ten times */
    REQUIRE_OK(graph_end_capture(under_test, &g));
    REQUIRE_OK(op_fill(t, 1.0f));
    for (int i = 0; i < LAUNCHES / 10; ++i) REQUIRE_OK(graph_launch(g)); /* 2^50: exact in float */
    graph_free(g);
    g = NULL;
    REQUIRE_OK(tensor_item(t, &value));
    EXPECT_MSG(value == 0x1p50f, "t is %g, want 2^50", (double)value);
cleanup:
    graph_free(g);
    tensor_free(t);
}

/* tensor_free during a capture: the recorded work may use the memory at every
 * launch, so the graph keeps it until graph_free. */
static void test_a_tensor_freed_during_the_capture_lives_as_long_as_the_graph(void)
{
    tensor *tmp = NULL, *out = NULL;
    graph *g = NULL;
    device_counters before, during, after;
    float got[64];
    REQUIRE_OK(tensor_zeros(&out, under_test, shape1(64)));
    REQUIRE_OK(tensor_zeros(&tmp, under_test, shape1(64)));
    const size_t bytes = tensor_bytes(tmp);
    REQUIRE_OK(counters_read(under_test, &before));
    REQUIRE_OK(graph_begin_capture(under_test));
    REQUIRE_OK(op_fill(tmp, 3.0f));
    REQUIRE_OK(op_add(tmp, out, out));
    tensor_free(tmp);
    tmp = NULL;
    REQUIRE_OK(counters_read(under_test, &during));
    EXPECT_EQ_I64(during.memory_current, before.memory_current);
    REQUIRE_OK(graph_end_capture(under_test, &g));
    REQUIRE_OK(graph_launch(g));
    REQUIRE_OK(graph_launch(g));
    REQUIRE_OK(tensor_to_host(out, got, 64));
    EXPECT_MSG(got[63] == 6.0f, "out[63] is %g after two launches of out += 3, want 6", (double)got[63]);
    graph_free(g);
    g = NULL;
    REQUIRE_OK(counters_read(under_test, &after));
    EXPECT_EQ_I64(after.memory_current, before.memory_current - bytes);
cleanup:
    graph_free(g);
    tensor_free(tmp);
    tensor_free(out);
}

/* An empty capture makes a graph that does nothing; launching it is one launch. */
static void test_an_empty_capture_makes_a_graph_that_does_nothing(void)
{
    graph *g = NULL;
    device_counters c;
    REQUIRE_OK(graph_begin_capture(under_test));
    REQUIRE_OK(graph_end_capture(under_test, &g));
    REQUIRE(g != NULL);
    EXPECT_EQ_I64(graph_operations(g), 0);
    REQUIRE_OK(counters_reset(under_test));
    EXPECT_OK(graph_launch(g));
    REQUIRE_OK(counters_read(under_test, &c));
    EXPECT_EQ_I64(c.launches, 1);
    EXPECT_EQ_I64(c.replayed, 0);
cleanup:
    graph_free(g);
}

/* The counters keep the graphs alive on a device, as they do its events: one
 * more from graph_end_capture to graph_free, through a counters_reset, so
 * that a check can see a graph that was never freed. */
static void test_the_counters_count_the_graphs_alive(void)
{
    graph *g = NULL;
    device_counters before, made, reset, freed;
    REQUIRE_OK(counters_read(under_test, &before));
    REQUIRE_OK(graph_begin_capture(under_test));
    REQUIRE_OK(graph_end_capture(under_test, &g));
    REQUIRE_OK(counters_read(under_test, &made));
    EXPECT_EQ_I64(made.graphs, before.graphs + 1);
    REQUIRE_OK(counters_reset(under_test));
    REQUIRE_OK(counters_read(under_test, &reset));
    EXPECT_EQ_I64(reset.graphs, before.graphs + 1);
    graph_free(g);
    g = NULL;
    REQUIRE_OK(counters_read(under_test, &freed));
    EXPECT_EQ_I64(freed.graphs, before.graphs);
cleanup:
    graph_free(g);
}

/* ============================================================================
 * refusals: each names the call, the device and the way out; the capture and
 * the device go on
 * ========================================================================== */

/* The message of a refusal during a capture of `d`. */
#define EXPECT_CAPTURE_REFUSAL(call, name, d)                              \
    do {                                                                   \
        EXPECT_REFUSED(call, STATUS_BAD_ARGUMENT);                         \
        EXPECT_CONTAINS(last_error(), name);                               \
        EXPECT_CONTAINS(last_error(), device_name(d));                     \
        EXPECT_CONTAINS(last_error(), "capturing a graph");                \
        EXPECT_CONTAINS(last_error(), "graph_end_capture");                \
        EXPECT_OK(op_scale(t, 2.0f, t)); /* recorded: one more doubling */ \
        doublings++;                                                       \
    } while (0)

static void test_what_a_graph_cannot_hold_is_refused_and_the_capture_goes_on(void)
{
    tensor *t = NULL, *one = NULL, *ti = NULL, *there = NULL, *made = NULL;
    event *e = NULL;
    graph *g = NULL, *earlier = NULL;
    float buf[4] = { 1, 2, 3, 4 }, value = 0.0f;
    int32_t ibuf[4] = { 0, 1, 2, 3 };
    int doublings = 0;
    device_counters before, after;
    REQUIRE_OK(tensor_full(&t, under_test, shape1(4), 1.0f));
    REQUIRE_OK(tensor_zeros(&one, under_test, shape1(1)));
    REQUIRE_OK(tensor_empty(&ti, under_test, DTYPE_I32, shape1(4)));
    REQUIRE_OK(op_fill(ti, 0.0f));
    REQUIRE_OK(tensor_zeros(&there, other, shape1(4)));
    REQUIRE_OK(event_create(&e, under_test));
    REQUIRE_OK(event_record(e));
    REQUIRE_OK(graph_begin_capture(under_test));
    REQUIRE_OK(graph_end_capture(under_test, &earlier));
    REQUIRE_OK(device_synchronize(under_test));
    REQUIRE_OK(counters_read(under_test, &before));

    REQUIRE_OK(graph_begin_capture(under_test));
    /* reads on the host */
    EXPECT_CAPTURE_REFUSAL(tensor_item(one, &value), "tensor_item", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_to_host(t, buf, 4), "tensor_to_host", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_to_host_i32(ti, ibuf, 4), "tensor_to_host_i32", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_to(t, other, &made), "tensor_to", under_test);
    EXPECT(made == NULL);
    /* blocking copies */
    EXPECT_CAPTURE_REFUSAL(tensor_copy_from_host(t, buf, 4), "tensor_copy_from_host", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_copy_from_host_i32(ti, ibuf, 4), "tensor_copy_from_host_i32", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_copy(there, t), "tensor_copy", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_copy(t, there), "tensor_copy", under_test);
    /* waits */
    EXPECT_CAPTURE_REFUSAL(device_synchronize(under_test), "device_synchronize", under_test);
    EXPECT_CAPTURE_REFUSAL(event_synchronize(e), "event_synchronize", under_test);
    EXPECT_CAPTURE_REFUSAL(event_record(e), "event_record", under_test);
    /* new tensors there */
    EXPECT_CAPTURE_REFUSAL(tensor_empty(&made, under_test, DTYPE_F32, shape1(4)), "tensor_empty", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_zeros(&made, under_test, shape1(4)), "tensor_zeros", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_ones(&made, under_test, shape1(4)), "tensor_ones", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_full(&made, under_test, shape1(4), 2.0f), "tensor_full", under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_from_host(&made, under_test, shape1(4), buf), "tensor_from_host",
                           under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_from_host_i32(&made, under_test, shape1(4), ibuf), "tensor_from_host_i32",
                           under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_uniform(&made, under_test, shape1(4), 0.0f, 1.0f, 1), "tensor_uniform",
                           under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_normal(&made, under_test, shape1(4), 0.0f, 1.0f, 1), "tensor_normal",
                           under_test);
    EXPECT_CAPTURE_REFUSAL(tensor_to(there, under_test, &made), "tensor_to", under_test);
    EXPECT(made == NULL);
    /* graphs */
    EXPECT_CAPTURE_REFUSAL(graph_launch(earlier), "graph_launch", under_test);
    EXPECT_REFUSED(graph_begin_capture(under_test), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "already capturing");
    EXPECT(graph_capturing(under_test));

    /* nothing was copied, waited for or allocated */
    REQUIRE_OK(counters_read(under_test, &after));
    EXPECT_EQ_I64(after.h2d_copies + after.d2h_copies + after.d2d_copies,
                  before.h2d_copies + before.d2h_copies + before.d2d_copies);
    EXPECT_EQ_I64(after.syncs, before.syncs);
    EXPECT_EQ_I64(after.memory_current, before.memory_current);

    REQUIRE_OK(graph_end_capture(under_test, &g));
    EXPECT_EQ_I64(graph_operations(g), doublings);
    REQUIRE_OK(graph_launch(g));
    REQUIRE_OK(tensor_to_host(t, buf, 4));
    EXPECT_MSG(buf[3] == ldexpf(1.0f, doublings), "t is %g after the graph of %d doublings, want %g",
               (double)buf[3], doublings, (double)ldexpf(1.0f, doublings));
    REQUIRE_OK(event_record(e)); /* and the device is as usable as before */
    REQUIRE_OK(event_synchronize(e));
cleanup:
    if (graph_capturing(under_test)) {
        graph *abandoned = NULL;
        graph_end_capture(under_test, &abandoned);
        graph_free(abandoned);
    }
    graph_free(g);
    graph_free(earlier);
    event_destroy(e);
    tensor_free(t);
    tensor_free(one);
    tensor_free(ti);
    tensor_free(there);
    tensor_free(made);
}

/* Pinned memory is the fast way, but ordinary memory is recorded too, and read
 * again at every launch (CUDA 13 captures it as a copy node that does so). */
static void test_a_queued_upload_from_ordinary_memory_is_read_again_at_every_launch(void)
{
    float pageable[4] = { 5, 6, 7, 8 }, got[4];
    tensor *t = NULL;
    graph *g = NULL;
    REQUIRE_OK(tensor_zeros(&t, under_test, shape1(4)));
    REQUIRE_OK(graph_begin_capture(under_test));
    REQUIRE_OK(tensor_copy_from_host_async(t, pageable, 4));
    REQUIRE_OK(graph_end_capture(under_test, &g));
    for (int launch = 0; launch < 2; ++launch) {
        pageable[2] = (float)(10 + launch);
        REQUIRE_OK(graph_launch(g));
        REQUIRE_OK(tensor_to_host(t, got, 4)); /* waits for the launch: pageable may change again */
        EXPECT_BITWISE_EQUAL("the values uploaded at this launch", got, pageable, 4);
    }
cleanup:
    graph_free(g);
    tensor_free(t);
}

static void test_misused_captures_and_graphs_are_refused_with_a_way_out(void)
{
    const device absent = { DEVICE_SIM, 7 };
    graph *g = NULL;
    EXPECT_REFUSED(graph_end_capture(under_test, &g), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "graph_begin_capture");
    EXPECT(g == NULL);
    EXPECT_REFUSED(graph_begin_capture(absent), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(graph_end_capture(absent, &g), STATUS_WRONG_DEVICE);
    EXPECT_REFUSED(graph_launch(NULL), STATUS_BAD_ARGUMENT);
    graph_free(NULL);
    EXPECT_EQ_I64(graph_operations(NULL), 0);
    EXPECT(!graph_capturing(absent));

    /* out == NULL leaves the capture going, so that it can still be ended */
    REQUIRE_OK(graph_begin_capture(under_test));
    EXPECT_REFUSED(graph_end_capture(under_test, NULL), STATUS_BAD_ARGUMENT);
    EXPECT(graph_capturing(under_test));
    REQUIRE_OK(graph_end_capture(under_test, &g));
    EXPECT(!graph_capturing(under_test));
cleanup:
    graph_free(g);
}

/* A capture is one device's: the other one runs, reads and waits as usual. */
static void test_a_capture_leaves_the_other_device_alone(void)
{
    tensor *mine = NULL, *theirs = NULL;
    graph *g = NULL;
    float value = 0.0f;
    REQUIRE_OK(tensor_full(&mine, under_test, shape1(1), 1.0f));
    REQUIRE_OK(graph_begin_capture(under_test));
    EXPECT(!graph_capturing(other));
    REQUIRE_OK(tensor_full(&theirs, other, shape1(1), 4.0f));
    REQUIRE_OK(op_scale(theirs, 0.5f, theirs));
    REQUIRE_OK(op_add(mine, mine, mine)); /* recorded */
    REQUIRE_OK(device_synchronize(other));
    REQUIRE_OK(tensor_item(theirs, &value));
    EXPECT(value == 2.0f);
    REQUIRE_OK(graph_end_capture(under_test, &g));
    EXPECT_EQ_I64(graph_operations(g), 1);
    REQUIRE_OK(graph_launch(g));
    REQUIRE_OK(tensor_item(mine, &value));
    EXPECT(value == 2.0f);
cleanup:
    if (graph_capturing(under_test)) {
        graph *abandoned = NULL;
        graph_end_capture(under_test, &abandoned);
        graph_free(abandoned);
    }
    graph_free(g);
    tensor_free(mine);
    tensor_free(theirs);
}

/* sim: a launch is one item on the queue, but each operation in it still
 * occupies the device at least its least kernel time (2 us). */
static void test_a_replay_occupies_the_simulated_gpu_for_each_of_its_operations(void)
{
    enum { OPS = 200 };
    tensor *t = NULL;
    graph *g = NULL;
    event *start = NULL, *end = NULL;
    double ms = 0.0;
    if (under_test.kind != DEVICE_SIM) {
        harness_skip("only a simulated GPU models the least time of a kernel");
        return;
    }
    REQUIRE_OK(tensor_zeros(&t, under_test, shape1(1)));
    REQUIRE_OK(event_create(&start, under_test));
    REQUIRE_OK(event_create(&end, under_test));
    REQUIRE_OK(graph_begin_capture(under_test));
    for (int i = 0; i < OPS; ++i) REQUIRE_OK(op_add(t, t, t));
    REQUIRE_OK(graph_end_capture(under_test, &g));
    REQUIRE_OK(event_record(start));
    REQUIRE_OK(graph_launch(g));
    REQUIRE_OK(event_record(end));
    REQUIRE_OK(event_synchronize(end));
    REQUIRE_OK(event_elapsed_ms(start, end, &ms));
    EXPECT_MSG(ms >= OPS * 2e-3, "a graph of %d operations occupied sim:0 %.3f ms, want at least %.3f", OPS,
               ms, OPS * 2e-3);
cleanup:
    graph_free(g);
    event_destroy(start);
    event_destroy(end);
    tensor_free(t);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_graph DEVICE OTHER_DEVICE (e.g. sim:0 sim:1)\n");
        return 2;
    }
    const int found = test_device_or_skip(argv[1], &under_test);
    if (found != 0) return found;
    if (device_parse(argv[2], &other) != STATUS_OK || device_equal(other, under_test)) {
        fprintf(stderr, "test_graph: the other device \"%s\" must exist and differ from %s: %s\n", argv[2],
                argv[1], last_error());
        return 2;
    }
    printf("graphs on %s (the other device: %s)\n", device_name(under_test), device_name(other));
    RUN_TEST(test_launching_a_captured_step_equals_running_its_calls_bit_for_bit);
    RUN_TEST(test_recording_runs_nothing_until_the_graph_is_launched);
    RUN_TEST(test_a_launch_counts_one_launch_and_its_operations_as_replayed);
    RUN_TEST(test_freeing_a_graph_with_launches_still_queued_is_safe);
    RUN_TEST(test_a_tensor_freed_during_the_capture_lives_as_long_as_the_graph);
    RUN_TEST(test_an_empty_capture_makes_a_graph_that_does_nothing);
    RUN_TEST(test_the_counters_count_the_graphs_alive);
    RUN_TEST(test_what_a_graph_cannot_hold_is_refused_and_the_capture_goes_on);
    RUN_TEST(test_a_queued_upload_from_ordinary_memory_is_read_again_at_every_launch);
    RUN_TEST(test_misused_captures_and_graphs_are_refused_with_a_way_out);
    RUN_TEST(test_a_capture_leaves_the_other_device_alone);
    RUN_TEST(test_a_replay_occupies_the_simulated_gpu_for_each_of_its_operations);
    return harness_finish();
}
