/* main.c: lab 10's experiment. Every rank of the run (./lab run 10 -- --ranks
 * 4, or mpiexec -n 4 lab10) says which device it picked (step 1); then your
 * ring all-reduce (step 2) and MPI's own MPI_Allreduce sum buffers of 4 bytes
 * to 16 MiB on every rank, timed, and a line t = a + bytes / B is fitted to
 * each: a is the latency (every step's fixed cost: the ring pays it 2 (p - 1)
 * times), B the bandwidth; then a few steps of data-parallel training (step 3)
 * on the rank's device. Rank 0 prints; the figure is time against size. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lab.h"
#include "nccl_mpi.h"

static int rank_, size_;

static const results_column columns[] = {
    { "method", RESULTS_TEXT, "all-reduce", "%s", 13 }, { "bytes", RESULTS_BYTES, "buffer", NULL, 8 },
    { "us", RESULTS_NUMBER, "time (us)", "%.1f", 10 },  { "fit_us", RESULTS_NUMBER, "fit (us)", "%.1f", 9 },
    { "gbps", RESULTS_NUMBER, "GB/s", "%.3f", 7 },
};
#define NCOLUMNS 5
#define MAX_SIZES 32

/* On real GPUs with a GPU per rank: NCCL on device buffers (method 2). */
static dist_nccl *nccl;
static device nccl_device;

/* Seconds for one all-reduce of n floats by `method` (0: yours, 1: MPI's,
 * 2: NCCL's on the device), the slowest rank's, best of a few rounds. */
static double time_all_reduce(int method, float *x, int64_t n, int calls)
{
    tensor *view = NULL;
    if (method == 2) CHECK(tensor_zeros(&view, nccl_device, shape1(n)));
    double best = INFINITY;
    for (int round = 0; round < 3; ++round) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        for (int c = 0; c < calls; ++c) {
            if (method == 0)
                CHECK(lab_ring_all_reduce(x, n, MPI_COMM_WORLD));
            else if (method == 1)
                MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else
                CHECK(dist_nccl_all_reduce_sum(nccl, view));
            for (int64_t i = 0; i < n; i += 1024) x[i] = 1.0f; /* keep the values finite */
        }
        if (method == 2) CHECK(device_synchronize(tensor_device(view)));
        double seconds = (MPI_Wtime() - start) / calls, slowest = 0;
        MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (slowest < best) best = slowest;
    }
    tensor_free(view);
    return best;
}

/* t = a + b bytes by least squares weighted by 1/t^2 (each point's relative
 * error counts, from 4 bytes to 16 MiB alike). */
static void fit_line(const double *bytes, const double *t, int n, double *a, double *b)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; ++i) {
        const double w = 1.0 / (t[i] * t[i]);
        sw += w, sx += w * bytes[i], sy += w * t[i], sxx += w * bytes[i] * bytes[i],
            sxy += w * bytes[i] * t[i];
    }
    const double det = sw * sxx - sx * sx;
    *b = det > 0 ? (sw * sxy - sx * sy) / det : 0;
    *a = (sy - *b * sx) / sw;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (rank_ != 0 && !freopen("/dev/null", "w", stdout)) return 1; /* rank 0 speaks for all */
    const cli_program program = { "10_distributed",
                                  "ranks and devices, a ring all-reduce against MPI_Allreduce (latency and "
                                  "bandwidth), data-parallel training over processes",
                                  NULL, 0 };
    cli_args args;
    const int code = cli_parse(&program, argc, argv, &args);
    if (code >= 0) {
        MPI_Finalize();
        return code;
    }
    rank_info info;
    CHECK(lab_ranks(MPI_COMM_WORLD, &info));
    device d;
    CHECK(lab_pick_device(args.dev, info.local_rank, device_count(DEVICE_CUDA), &d));
    int picks[2 * 64] = { 0 }, mine[2] = { d.kind, d.index };
    if (size_ <= 64) MPI_Gather(mine, 2, MPI_INT, picks, 2, MPI_INT, 0, MPI_COMM_WORLD);
    printf("%d ranks; device of each:", size_);
    for (int r = 0; r < size_ && r < 64; ++r)
        printf(" %d:%s", r, device_name((device){ picks[2 * r], picks[2 * r + 1] }));
    printf("\n\n");

    results *r;
    CHECK(results_create(&r, &args, columns, NCOLUMNS));
    CHECK(results_mention_device(r, d));
    const int64_t largest = args.quick ? (1 << 18) : (1 << 22); /* floats: 1 MiB or 16 MiB */
    float *x = calloc((size_t)largest, sizeof(float));
    if (!x) return fprintf(stderr, "rank %d: no room for %lld floats\n", rank_, (long long)largest), 1;
    const char *names[3] = { "your ring", "MPI_Allreduce", "NCCL" };
    double bytes[MAX_SIZES], t[3][MAX_SIZES];
    /* NCCL where every rank has a real GPU of its own (it refuses two ranks on one). */
    int methods = 2,
        own = d.kind == DEVICE_CUDA && info.local_size <= device_count(DEVICE_CUDA) && dist_nccl_built();
    MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (own) {
        CHECK(dist_nccl_create(MPI_COMM_WORLD, d, &nccl));
        nccl_device = d;
        methods = 3;
    }
    int nsizes = 0;
    for (int64_t n = 1; n <= largest && nsizes < MAX_SIZES; n *= args.quick ? 16 : 4, ++nsizes) {
        bytes[nsizes] = 4.0 * (double)n;
        const int calls = n < 4096 ? 50 : n < (1 << 18) ? 10 : 3;
        for (int m = 0; m < methods; ++m) t[m][nsizes] = time_all_reduce(m, x, n, calls);
    }
    double a[3], b[3];
    for (int m = 0; m < methods; ++m) {
        fit_line(bytes, t[m], nsizes, &a[m], &b[m]);
        for (int i = 0; i < nsizes; ++i) {
            results_row(r);
            results_text(r, "method", names[m]);
            results_number(r, "bytes", bytes[i]);
            results_number(r, "us", 1e6 * t[m][i]);
            results_number(r, "fit_us", 1e6 * (a[m] + b[m] * bytes[i]));
            results_number(r, "gbps", bytes[i] / t[m][i] / 1e9);
        }
    }
    CHECK(results_print(r));
    for (int m = 0; m < methods; ++m)
        printf("%-13s latency a = %.1f us, bandwidth 1/b = %.2f GB/s (t = a + bytes / B)\n", names[m],
               1e6 * a[m], b[m] > 0 ? 1e-9 / b[m] : INFINITY);

    /* A few steps of data-parallel training, every rank on its own slice. */
    const int64_t sizes[] = { SYNTHETIC_SIDE * SYNTHETIC_SIDE, 64, DATA_CLASSES };
    const int64_t batch = 64 * size_, steps = args.quick ? 3 : 20;
    dataset data;
    CHECK(dataset_synthetic(&data, batch * steps, 1));
    dist_model m;
    CHECK(dist_create(&m, d, sizes, 3, 42 + (uint64_t)rank_));
    CHECK(lab_broadcast_parameters(&m.net, MPI_COMM_WORLD));
    float first_loss = 0, last_loss = 0;
    for (int64_t s = 0; s < steps; ++s) {
        CHECK(dist_step(&m, &data, s * batch, batch, 0.1f, MPI_COMM_WORLD));
        float loss = 0;
        MPI_Allreduce(&m.loss, &loss, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (s == 0) first_loss = loss / size_;
        last_loss = loss / size_;
    }
    printf(
        "\ntraining on %d ranks, %lld rows a step: mean slice loss %.3f after step 1, %.3f after step %lld\n",
        size_, (long long)batch, first_loss, last_loss, (long long)steps);
    printf(
        "takeaway: a small all-reduce costs its latency (your ring pays it 2 (p - 1) = %d times: %.0f us), a "
        "large one its bytes; the ring sends 2 (p - 1) / p of the buffer per rank, whatever p.\n",
        2 * (size_ - 1), 1e6 * a[0]);
    /* The fitted lines, for plot.gp to draw as functions of the size. */
    char fits[4][64];
    snprintf(fits[0], sizeof fits[0], "ring_a=%.9g", 1e6 * a[0]);
    snprintf(fits[1], sizeof fits[1], "ring_b=%.9g", 1e6 * b[0]);
    snprintf(fits[2], sizeof fits[2], "mpi_a=%.9g", 1e6 * a[1]);
    snprintf(fits[3], sizeof fits[3], "mpi_b=%.9g", 1e6 * b[1]);
    const char *const vars[] = { fits[0], fits[1], fits[2], fits[3], NULL };
    if (rank_ == 0) CHECK(results_finish(r, vars));
    results_free(r);
    dist_free(&m);
    dist_nccl_free(nccl);
    dataset_free(&data);
    free(x);
    MPI_Finalize();
    return 0;
}
