/* test_collective.c: the all-reduce of data-parallel training (collective.h).
 *
 *   test_collective DEVICE     (sim:0, cuda:0: a GPU; its partners are the CPU
 *                              and a second GPU, harness.h's test_second_gpu)
 *
 * Every replica ends with the sum, bit for bit what the host computes in device
 * order; the host path's copies are counted; mistakes are refused, and a
 * capturing device refuses it. Where two real GPUs exist in a build with NCCL,
 * NCCL does it, with no copy through the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "labkit/collective.h"
#include "labkit/counters.h"
#include "labkit/device.h"
#include "labkit/graph.h"
#include "labkit/tensor.h"

static device cpu, dev, peer;

enum { ROWS = 37, COLS = 53, N = ROWS * COLS };

/* Replica i's values: different on every device, exact in float32. */
static void replica_values(int i, float *out)
{
    for (int k = 0; k < N; ++k) out[k] = (float)((k % 97) - 48) * 0.25f + (float)(i * 1000 + k % 7);
}

static bool make_replicas(const device *devices, int n, tensor **out)
{
    float values[N];
    for (int i = 0; i < n; ++i) out[i] = NULL;
    for (int i = 0; i < n; ++i) {
        replica_values(i, values);
        if (tensor_from_host(&out[i], devices[i], shape2(ROWS, COLS), values) != STATUS_OK) return false;
    }
    return true;
}

static void free_replicas(tensor **t, int n)
{
    for (int i = 0; i < n; ++i) tensor_free(t[i]);
}

/* Every replica holds the sum of the values, added in device order in float32. */
static void expect_sum_everywhere(tensor **t, int n)
{
    float want[N], part[N], got[N];
    replica_values(0, want);
    for (int i = 1; i < n; ++i) {
        replica_values(i, part);
        for (int k = 0; k < N; ++k) want[k] += part[k];
    }
    for (int i = 0; i < n; ++i) {
        memset(got, 0, sizeof got);
        if (tensor_to_host(t[i], got, N) != STATUS_OK) {
            harness_fail(__FILE__, __LINE__, "tensor_to_host of replica %d: %s", i, last_error());
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "the sum on replica %d (%s)", i, device_name(tensor_device(t[i])));
        EXPECT_BITWISE_EQUAL(what, got, want, N);
    }
}

static void test_every_replica_gets_the_sum_of_all(void)
{
    const device devices[3] = { dev, peer, cpu };
    tensor *t[3];
    REQUIRE(make_replicas(devices, 3, t));
    EXPECT_OK(all_reduce_sum(t, 3));
    expect_sum_everywhere(t, 3);
cleanup:
    free_replicas(t, 3);
}

/* Through the host: one copy out of and one copy into every device, each the
 * tensor's bytes; on a GPU those cross the bus and the host waits. */
static void test_the_host_path_counts_one_copy_each_way_per_device(void)
{
    const device devices[2] = { dev, cpu };
    tensor *t[2];
    device_counters on_dev, on_cpu;
    REQUIRE(make_replicas(devices, 2, t));
    REQUIRE(!all_reduce_uses_nccl(t, 2));
    REQUIRE_OK(counters_reset(dev));
    REQUIRE_OK(counters_reset(cpu));
    EXPECT_OK(all_reduce_sum(t, 2));
    REQUIRE_OK(counters_read(dev, &on_dev));
    REQUIRE_OK(counters_read(cpu, &on_cpu));
    EXPECT_EQ_I64(on_dev.d2h_copies, 1);
    EXPECT_EQ_I64(on_dev.d2h_bytes, N * 4);
    EXPECT_EQ_I64(on_dev.h2d_copies, 1);
    EXPECT_EQ_I64(on_dev.h2d_bytes, N * 4);
    EXPECT(on_dev.syncs >= 1);
    EXPECT_EQ_I64(on_cpu.d2d_copies, 2); /* host memory <-> the cpu: within it */
    expect_sum_everywhere(t, 2);
cleanup:
    free_replicas(t, 2);
}

static void test_one_replica_is_left_alone(void)
{
    tensor *t[1];
    device_counters c;
    REQUIRE(make_replicas(&dev, 1, t));
    REQUIRE_OK(counters_reset(dev));
    EXPECT_OK(all_reduce_sum(t, 1));
    REQUIRE_OK(counters_read(dev, &c));
    EXPECT_EQ_I64(c.d2h_copies + c.h2d_copies + c.d2d_copies + c.launches, 0);
    expect_sum_everywhere(t, 1);
cleanup:
    free_replicas(t, 1);
}

static void test_mistakes_are_refused_naming_them(void)
{
    const device devices[2] = { dev, peer };
    tensor *t[2], *odd = NULL, *ints = NULL, *twice[2];
    REQUIRE(make_replicas(devices, 2, t));
    EXPECT_REFUSED(all_reduce_sum(NULL, 2), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(all_reduce_sum(t, 0), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(all_reduce_sum(t, LABKIT_MAX_DEVICES + 1), STATUS_BAD_ARGUMENT);
    REQUIRE_OK(tensor_zeros(&odd, peer, shape2(COLS, ROWS)));
    tensor *shapes[2] = { t[0], odd };
    EXPECT_REFUSED(all_reduce_sum(shapes, 2), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "one shape");
    REQUIRE_OK(tensor_empty(&ints, peer, DTYPE_I32, shape2(ROWS, COLS)));
    tensor *dtypes[2] = { t[0], ints };
    EXPECT_REFUSED(all_reduce_sum(dtypes, 2), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "float32");
    twice[0] = twice[1] = t[0];
    EXPECT_REFUSED(all_reduce_sum(twice, 2), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), device_name(dev));
    tensor *holes[2] = { t[0], NULL };
    EXPECT_REFUSED(all_reduce_sum(holes, 2), STATUS_BAD_ARGUMENT);
    /* nothing was summed by the refusals */
    float first[N], got[N];
    replica_values(0, first);
    REQUIRE_OK(tensor_to_host(t[0], got, N));
    EXPECT_BITWISE_EQUAL("replica 0 after the refusals", got, first, N);
cleanup:
    free_replicas(t, 2);
    tensor_free(odd);
    tensor_free(ints);
}

static void test_a_capturing_device_refuses_it_and_captures_on(void)
{
    const device devices[2] = { dev, peer };
    tensor *t[2];
    graph *g = NULL;
    REQUIRE(make_replicas(devices, 2, t));
    REQUIRE_OK(graph_begin_capture(dev));
    EXPECT_REFUSED(all_reduce_sum(t, 2), STATUS_BAD_ARGUMENT);
    EXPECT_OK(graph_end_capture(dev, &g));
    EXPECT_OK(all_reduce_sum(t, 2)); /* and after the capture it works */
    expect_sum_everywhere(t, 2);
cleanup:
    graph_free(g);
    free_replicas(t, 2);
}

/* Two real GPUs in a build with NCCL: the GPUs sum among themselves, and the
 * host copies nothing. */
static void test_two_real_gpus_use_nccl_and_copy_nothing_through_the_host(void)
{
    const device second = { DEVICE_CUDA, 1 };
    if (dev.kind != DEVICE_CUDA || !device_exists(second)) {
        harness_skip("NCCL needs two real GPUs");
        return;
    }
    const device devices[2] = { dev, second };
    tensor *t[2];
    device_counters c;
    REQUIRE(make_replicas(devices, 2, t));
    if (!all_reduce_uses_nccl(t, 2)) {
        harness_skip("this build has no NCCL: the host sums (tested above)");
        goto cleanup;
    }
    REQUIRE_OK(counters_reset(dev));
    EXPECT_OK(all_reduce_sum(t, 2));
    REQUIRE_OK(counters_read(dev, &c));
    EXPECT_EQ_I64(c.d2h_copies + c.h2d_copies, 0);
    expect_sum_everywhere(t, 2);
cleanup:
    free_replicas(t, 2);
}

int main(int argc, char **argv)
{
    int rc = test_device_argument(argc, argv, "GPU   (sim:0, cuda:0, ...)", &dev);
    if (rc != 0) return rc;
    cpu = device_cpu();
    if (!device_is_gpu(dev) || !test_second_gpu(dev, &peer)) {
        fprintf(stderr, "test_collective needs a GPU and a second one (LABKIT_SIM_GPUS=2), not %s alone\n",
                argv[1]);
        return 2;
    }
    printf("all-reduce on %s, beside %s and cpu\n", device_name(dev), device_name(peer));
    RUN_TEST(test_every_replica_gets_the_sum_of_all);
    RUN_TEST(test_the_host_path_counts_one_copy_each_way_per_device);
    RUN_TEST(test_one_replica_is_left_alone);
    RUN_TEST(test_mistakes_are_refused_naming_them);
    RUN_TEST(test_a_capturing_device_refuses_it_and_captures_on);
    RUN_TEST(test_two_real_gpus_use_nccl_and_copy_nothing_through_the_host);
    return harness_finish();
}
