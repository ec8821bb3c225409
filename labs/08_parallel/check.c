/* check.c: lab 08's claims, on the device given with --device (default: cpu).
 *
 *   - step 1, everywhere: your OpenMP loop gives matmul_ikj's c bit for bit
 *     with 1, 2 and 3 threads; on the CPU, with the CPU time each thread of
 *     the team spent (what other programs on the cores cannot fake): the loop
 *     runs on the threads it is given, each doing its share of the rows, no
 *     row twice, and with 2 threads the rows are shared so that it can run
 *     1.6x as fast as with one (the team's CPU time over its busier thread's;
 *     the speed-up measured, by CPU time and wall clock, is printed beside it);
 *     OMP_DYNAMIC is turned off for the check, and an OMP_THREAD_LIMIT under
 *     3 fails a claim that says so: no team of 3 threads can be had there;
 *   - steps 2 and 4, everywhere: speed-up, efficiency and the slices of a
 *     batch on exact inputs (a slow-down, an empty batch, more rows than an
 *     int holds);
 *   - step 3, on a GPU and another of its kind (sim:0 with sim:1, cuda:0 with
 *     cuda:1): every device's products queued and waited for, the devices
 *     busy at the same time (on simulated GPUs: the times their workers ran
 *     the kernels overlap; on real ones: at once takes at most 0.65 of one
 *     after the other), the products right; everywhere, a device's refusal
 *     to queue its products, and a wait that reports a failed kernel, are
 *     returned (on a pair, once every device queued was waited for);
 *   - step 5: on one device, your data-parallel step is lab 05's step, bit for
 *     bit, and a batch of 0 rows is refused; on two devices (two of one kind
 *     where there are, else d and the cpu or sim:0), a batch of 1 row, whose
 *     second slice is empty, steps every replica as one device on that row;
 *     on two devices of one kind, every device holds the whole batch's
 *     gradient after a step and the parameters of one device on whole
 *     batches after three, the same parameters bit for bit on every device,
 *     the all-reduce's copies are counted (through the host), or none (NCCL),
 *     and so are the bytes each device uploads (its own slice's rows, not the
 *     batch's), and no device is waited for between the slices' passes; a
 *     step whose pass, weighting (op_scale), sum or SGD step fails returns
 *     the failure, and no replica steps before every sum is done;
 *     once the replicas are freed, no memory is left on any device.
 *
 * A claim that needs two GPUs of one kind where the device checked has none
 * beside it prints a line "(no second GPU here: ... is not tried)" (unless
 * the run on sim:0 tries it): ./lab check then says "not yet", since a claim
 * no run tried does not hold.
 *
 * lab.cmake compiles your lab.c as `./lab run 08` does, at -O3, but without
 * two facts the optimiser would otherwise use (-fno-strict-aliasing
 * -fno-tree-pta), so that a data race shows in the results instead of being
 * hidden in each thread's registers. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "given.h"
#include "lab.h"

/* ---- calls of the student's ---------------------------------------------------- */

/* A call of the student's that the claims after it need: a failure fails
 * `claim` (CHECK_CALL, labkit/check.h) and ends the check, since what follows
 * cannot be measured. */
#define MUST(call, claim)                                                \
    do {                                                                 \
        if (!CHECK_CALL(call, claim)) exit(check_finish("08_parallel")); \
    } while (0)

/* Host arrays end at a page that may not be touched (host_alloc): a loop of
 * the student's that runs past the end of one stops at its own line, with a
 * crash report that says so, instead of writing over the heap. */
static float *host_floats(int64_t count)
{
    float *p = host_alloc((size_t)count * sizeof *p, 0);
    if (!p) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for %lld floats", (long long)count));
    return p;
}

static void host_floats_free(float *p) { host_free(p, 0); }

/* Uniform values in [-1, 1) from a seed (splitmix64), the same on every run. */
static void fill_uniform(float *x, int64_t count, uint64_t seed)
{
    for (int64_t i = 0; i < count; ++i) {
        uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        x[i] = (float)((double)((z ^ (z >> 31)) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
}

/* ---- what the student's functions call ------------------------------------------ */

/* lab.cmake links this check with -Wl,--wrap for six calls of steps 3 and
 * 5 (queue_products, device_synchronize, replica_forward_backward, op_scale,
 * all_reduce_sum, replica_sgd_step): the student's calls of them come here
 * first. While a step
 * is tried with a failure, the refuse_at-th of them fails, as a device that
 * refuses its work would; and the forward and backward passes note the waits
 * between them. */

/* The waits of the devices of a data-parallel step between its slices'
 * passes: from the end of one device's replica_forward_backward to the start
 * of the next one's (the waits inside a pass, its blocking uploads, are not
 * the step's). */
static struct {
    int devices; /* 0: nothing is watched */
    device dev[DP_MAX_DEVICES];
    int passes;             /* replica_forward_backward calls seen */
    uint64_t syncs_then;    /* the devices' waits at the end of the last pass */
    uint64_t waits_between; /* waits between two passes of one step */
} watch;

static uint64_t watched_syncs(void)
{
    uint64_t syncs = 0;
    for (int i = 0; i < watch.devices; ++i) {
        device_counters c;
        CHECK(counters_read(watch.dev[i], &c));
        syncs += c.syncs;
    }
    return syncs;
}

/* While step 3 watches a call of lab_run_at_once: each device's waits
 * (device_counters.syncs: device_synchronize, or any blocking read) counted
 * right after its products were last queued. A device not waited for since
 * is not done on return, whatever its kernels happen to have finished by the
 * time the check looks (a worker may finish while the host thread waits for
 * a core). */
enum { ORDER_DEVICES = 8 };
static struct {
    bool on;
    bool queued[ORDER_DEVICES]; /* its products queued, not refused */
    uint64_t syncs_when_queued[ORDER_DEVICES];
} order;

status __real_queue_products(const product_work *w);
status __wrap_queue_products(const product_work *w);
status __wrap_queue_products(const product_work *w)
{
    if (!check_refuse("queue_products")) {
        const status s = __real_queue_products(w);
        device_counters c;
        if (order.on && s == STATUS_OK && w && w->dev.index >= 0 && w->dev.index < ORDER_DEVICES &&
            counters_read(w->dev, &c) == STATUS_OK) {
            order.queued[w->dev.index] = true;
            order.syncs_when_queued[w->dev.index] = c.syncs;
        }
        return s;
    }
    return fail(STATUS_BACKEND_FAILED, "queue_products: %s refused the products (the check refused them)",
                w ? device_name(w->dev) : "the device");
}

/* Every call of device_synchronize in the program comes here, the check's,
 * the given code's and the library's among them: only while step 3's
 * failures are tried is one counted, and refused. A refused wait waits all
 * the same, then reports what a kernel that failed on the device reports
 * when it is waited for. */
static bool refusing_waits;

status __real_device_synchronize(device d);
status __wrap_device_synchronize(device d);
status __wrap_device_synchronize(device d)
{
    const status s = __real_device_synchronize(d);
    if (s != STATUS_OK || !refusing_waits || !check_refuse("device_synchronize")) return s;
    return fail(STATUS_BACKEND_FAILED,
                "device_synchronize: a kernel failed on %s while it ran (the check made it fail)",
                device_name(d));
}

/* Inside a given call (a pass, a sum, a step): the kit's own calls there
 * are not the student's, and are never refused. */
static int given_depth;

status __real_replica_forward_backward(replica *r, const float *images, const int32_t *labels, int64_t rows);
status __wrap_replica_forward_backward(replica *r, const float *images, const int32_t *labels, int64_t rows);
status __wrap_replica_forward_backward(replica *r, const float *images, const int32_t *labels, int64_t rows)
{
    if (given_depth == 0 && check_refuse("replica_forward_backward"))
        return fail(STATUS_OUT_OF_MEMORY,
                    "replica_forward_backward: %s has no memory left for the slice (the check refused it)",
                    r ? device_name(r->net.dev) : "the device");
    if (watch.devices && watch.passes > 0) watch.waits_between += watched_syncs() - watch.syncs_then;
    given_depth++;
    const status s = __real_replica_forward_backward(r, images, labels, rows);
    given_depth--;
    if (watch.devices) watch.passes++, watch.syncs_then = watched_syncs();
    return s;
}

status __real_all_reduce_sum(tensor *const *tensors, int n);
status __wrap_all_reduce_sum(tensor *const *tensors, int n);
status __wrap_all_reduce_sum(tensor *const *tensors, int n)
{
    if (given_depth == 0 && check_refuse("all_reduce_sum"))
        return fail(STATUS_BACKEND_FAILED, "all_reduce_sum: a copy was refused (the check refused it)");
    given_depth++;
    const status s = __real_all_reduce_sum(tensors, n);
    given_depth--;
    return s;
}

/* The weighting of each slice's gradients (op_scale) and each replica's SGD
 * step, refused in their turn: a scale that fails on a device (its kernel
 * refused), or a step that does. Only the calls a lab.c makes are refused:
 * the given passes, sums and steps make calls of their own (given_depth). */
status __real_op_scale(const tensor *x, float alpha, tensor *out);
status __wrap_op_scale(const tensor *x, float alpha, tensor *out);
status __wrap_op_scale(const tensor *x, float alpha, tensor *out)
{
    if (given_depth == 0 && check_refuse("op_scale"))
        return fail(STATUS_BACKEND_FAILED, "op_scale: %s refused the kernel (the check refused it)",
                    x ? device_name(tensor_device(x)) : "the device");
    return __real_op_scale(x, alpha, out);
}

status __real_replica_sgd_step(replica *r, float lr, float momentum);
status __wrap_replica_sgd_step(replica *r, float lr, float momentum);
status __wrap_replica_sgd_step(replica *r, float lr, float momentum)
{
    if (given_depth == 0 && check_refuse("replica_sgd_step"))
        return fail(STATUS_BACKEND_FAILED, "replica_sgd_step: %s refused the update (the check refused it)",
                    r ? device_name(r->net.dev) : "the device");
    given_depth++;
    const status s = __real_replica_sgd_step(r, lr, momentum);
    given_depth--;
    return s;
}

/* ---- step 1: the loop on every core ---------------------------------------------- */

#define STEP1_CLAIM "your OpenMP loop gives the serial loop's c bit for bit, with 1, 2 and 3 threads"

/* The operands of the loop, [m, k] x [k, n], the serial loop's c, and c.
 * a, b and c are followed by SLACK_ROWS rows of NaN, then the guard page of
 * host_alloc. Why the rows: a counter that the threads share (a data race)
 * runs a row or two past the end of a, b and c, a few threads' increments
 * beyond the loop's bound; in the rows the race stays what it is, a wrong c
 * (NaN read, or a row past c written) that the claim names, instead of a
 * crash reported as an index one past the end. An index further off still
 * stops at the guard page, at its line. */
enum { SLACK_ROWS = 4 };
typedef struct loop_operands {
    int64_t m, n, k;
    float *a, *b, *c, *want;
} loop_operands;

static float *with_slack(int64_t count, int64_t row)
{
    float *p = host_floats(count + SLACK_ROWS * row);
    for (int64_t i = count; i < count + SLACK_ROWS * row; ++i) p[i] = NAN;
    return p;
}

static loop_operands operands_make(int64_t m, int64_t n, int64_t k)
{
    loop_operands o = {
        m, n, k, with_slack(m * k, k), with_slack(k * n, n), with_slack(m * n, n), host_floats(m * n)
    };
    fill_uniform(o.a, m * k, 11), fill_uniform(o.b, k * n, 12);
    matmul_ikj(o.a, o.b, o.want, m, n, k);
    return o;
}

static void operands_free(loop_operands *o)
{
    host_floats_free(o->a), host_floats_free(o->b), host_floats_free(o->c), host_floats_free(o->want);
}

/* One run of the student's loop with `threads` threads: what each thread of
 * the team spent, the whole process, and the wall clock. */
typedef struct team_run {
    int threads;
    double cpu[TEAM_MAX_THREADS]; /* CPU seconds of each thread of the team */
    double team, process, wall;   /* their sum, the process's CPU seconds, the wall clock's */
    bool same_team;               /* the readings before and after were of the same threads */
    bool exact;                   /* c equals the serial loop's bit for bit */
    int64_t wrong, first;         /* cells of c (and rows past it) that differ, the first of them */
    float got, want;              /* the first one's value, and the serial loop's (NaN past c) */
} team_run;

/* c starts as NaN, so that a cell no thread wrote shows. */
static team_run run_team(const loop_operands *o, int threads)
{
    const int64_t m = o->m, n = o->n;
    team_run t = { .threads = threads, .same_team = true };
    double before[TEAM_MAX_THREADS], after[TEAM_MAX_THREADS];
    long tid_before[TEAM_MAX_THREADS], tid_after[TEAM_MAX_THREADS];
    for (int64_t i = 0; i < m * n + SLACK_ROWS * n; ++i) o->c[i] = NAN;
    CHECK(team_cpu_seconds(threads, before, tid_before));
    const double process = process_cpu_seconds(), wall = wall_seconds();
    MUST(lab_matmul_omp(o->a, o->b, o->c, m, n, o->k, threads), STEP1_CLAIM);
    t.wall = wall_seconds() - wall, t.process = process_cpu_seconds() - process;
    CHECK(team_cpu_seconds(threads, after, tid_after));
    for (int i = 0; i < threads; ++i) {
        t.cpu[i] = after[i] - before[i], t.team += t.cpu[i];
        t.same_team = t.same_team && tid_after[i] == tid_before[i];
    }
    t.first = -1;
    for (int64_t i = 0; i < m * n + SLACK_ROWS * n; ++i) {
        const float want = i < m * n ? o->want[i] : NAN; /* past c: never written */
        if (i < m * n ? memcmp(&o->c[i], &want, sizeof want) == 0 : isnan(o->c[i])) continue;
        if (t.wrong++ == 0) t.first = i, t.got = o->c[i], t.want = want;
    }
    t.exact = t.wrong == 0;
    return t;
}

/* Where the first run of runs[0..count-1] that was not exact went wrong:
 * "with 2 threads, c[3][17] = ... (the serial loop's ...), 12 cells differ".
 * A thread that shares another's row pointer, or its a[i][p], adds into the
 * wrong row, or the wrong values into its own. */
static void describe_wrong(const loop_operands *o, const team_run *runs, int count, char *text, size_t size)
{
    for (int r = 0; r < count; ++r) {
        const team_run *t = &runs[r];
        if (t->exact) continue;
        const int64_t i = t->first / o->n, j = t->first % o->n;
        if (i < o->m)
            check_append(
                text, size,
                "; with %d thread%s, c[%lld][%lld] = %.9g (the serial loop's %.9g), %lld cells differ",
                t->threads, t->threads > 1 ? "s" : "", (long long)i, (long long)j, (double)t->got,
                (double)t->want, (long long)t->wrong);
        else
            check_append(text, size,
                         "; with %d thread%s, row %lld, past the %lld rows of c, was written (%.9g at column "
                         "%lld)",
                         t->threads, t->threads > 1 ? "s" : "", (long long)i, (long long)o->m, (double)t->got,
                         (long long)j);
        return;
    }
}

/* The loop's results with 1, 2 and 3 threads; runs[] gets the three runs. */
static bool exact_everywhere(const loop_operands *o, team_run *runs)
{
    bool exact = true;
    for (int threads = 1; threads <= 3; ++threads) {
        runs[threads - 1] = run_team(o, threads);
        exact = exact && runs[threads - 1].exact;
    }
    return exact;
}

/* The speed-up two threads allow: the team's CPU time over its busier
 * thread's, 2x when the rows are shared evenly. Measured again up to 4 times
 * while under 1.6x, keeping the best: a program beside this one (the suite
 * runs two checks at once), or a virtual machine's two cores that share one
 * physical core, slows a thread's own work through the caches and the memory
 * it shares, and its CPU time with it, but no more often the one thread than
 * the other. Returns the tries made after the first. */
static int retry_two_threads(const loop_operands *o, double *allowed)
{
    int tries = 0;
    while (tries < 4 && *allowed < 1.6) {
        const team_run pair = run_team(o, 2);
        const double busier = fmax(pair.cpu[0], pair.cpu[1]);
        if (busier > 0) *allowed = fmax(*allowed, pair.team / busier);
        ++tries;
    }
    return tries;
}

/* How much more CPU time 2 and 3 threads spent than 1, the larger of the two
 * ratios, from each team's CPU time (`team`: 1, 2 and 3 threads): 1 when no
 * row is done twice, 2 or 3 when every thread does every row. */
static double extra_cpu(const double *team)
{
    return team[0] > 0 ? fmax(team[1], team[2]) / team[0] : INFINITY;
}

/* extra_cpu measured again, 1, 2 and 3 threads each time, up to 4 times while
 * over 1.8x, from the least CPU time each count of threads took: the loop is
 * compiled as `./lab run 08` compiles it (-O3), and at its speed (about 0.03 s
 * a run here) a moment that other programs take the cores, or its threads'
 * memory, weighs on one run and not on the next. Other programs only ever add
 * time, so each count's least is closest to its own cost; the least of the
 * ratios kept a try whose one-thread run alone was slowed, and a loop doing
 * every row on every thread once read 1.75x so. A loop that does rows twice
 * spends 2x in every try. Returns the tries made after the first. */
static int retry_extra_cpu(const loop_operands *o, const team_run *runs, double *ratio)
{
    double least[3] = { runs[0].team, runs[1].team, runs[2].team };
    *ratio = extra_cpu(least);
    int tries = 0;
    while (tries < 4 && *ratio > 1.8) {
        for (int threads = 1; threads <= 3; ++threads)
            least[threads - 1] = fmin(least[threads - 1], run_team(o, threads).team);
        *ratio = extra_cpu(least);
        ++tries;
    }
    return tries;
}

/* Each thread of the run spent 0.5/T to 1.5/T of the team's CPU time, and the
 * team most of the process's. */
static bool fair_shares(const team_run *t)
{
    bool fair = t->same_team && t->team >= 0.8 * t->process;
    for (int i = 0; i < t->threads; ++i)
        fair = fair && t->cpu[i] >= 0.5 * t->team / t->threads && t->cpu[i] <= 1.5 * t->team / t->threads;
    return fair;
}

/* The shares of 1, 2 and 3 threads measured again, up to 4 times while one
 * of them is unfair, keeping the first fair set: a run takes about 0.03 s, so
 * a thread that another program delays by a few milliseconds (a team's first
 * thread also starts the others) looks busier than its share. A loop whose
 * threads all do every row, or one thread all of them, is unfair in every try.
 * Returns the tries made after the first. */
static int retry_shares(const loop_operands *o, team_run *runs)
{
    int tries = 0;
    while (tries < 4 && !(fair_shares(&runs[0]) && fair_shares(&runs[1]) && fair_shares(&runs[2]))) {
        for (int threads = 1; threads <= 3; ++threads) runs[threads - 1] = run_team(o, threads);
        ++tries;
    }
    return tries;
}

/* The claims on the threads' CPU time; m is odd and no multiple of 3, so
 * that no count of threads divides the rows evenly. */
static void check_step1_cores(const loop_operands *o, const team_run *first_runs)
{
    team_run runs[3] = { first_runs[0], first_runs[1], first_runs[2] };
    const int share_tries = retry_shares(o, runs);
    bool shares = true;
    char figures[512] = "";
    for (int r = 0; r < 3; ++r) {
        const team_run *t = &runs[r];
        shares = shares && fair_shares(t);
        int used = (int)strlen(figures);
        used += snprintf(figures + used, sizeof figures - (size_t)used, "%s%d thread%s:", r ? "; " : "",
                         t->threads, t->threads > 1 ? "s" : "");
        for (int i = 0; i < t->threads && used < (int)sizeof figures; ++i)
            used += snprintf(figures + used, sizeof figures - (size_t)used, " %.3f", t->cpu[i]);
        if (used < (int)sizeof figures)
            snprintf(figures + used, sizeof figures - (size_t)used, " s (%.0f%% of the process's CPU%s)",
                     100.0 * t->team / t->process, t->same_team ? "" : ", not the same threads after");
    }
    check_that(shares,
               "with T threads the loop runs on T threads, each doing its share of the rows (CPU time 1/T "
               "each, within 0.5/T to 1.5/T)",
               "%s%s", figures, share_tries ? " (measured again while unfair)" : "");
    double ratio = 0.0;
    const int extra_tries = retry_extra_cpu(o, runs, &ratio);
    const bool once = ratio <= 1.8;
    check_that(
        once, "the threads add no work: together they spend the one-thread loop's CPU time (at most 1.8x)",
        "1 thread %.3f s of CPU, 2 threads %.3f s, 3 threads %.3f s the first time; the largest ratio, "
        "each team's least CPU time against one thread's, over %d tr%s: %.2fx%s",
        runs[0].team, runs[1].team, runs[2].team, 1 + extra_tries, extra_tries ? "ies" : "y", ratio,
        once ? ""
             : " (threads that each do every row spend that, and so do threads started again inside "
               "the loops over the row, which wait, spinning, for each short loop; share out the "
               "rows once)");
    const double busier = fmax(runs[1].cpu[0], runs[1].cpu[1]);
    double allowed = busier > 0 ? runs[1].team / busier : 0.0;
    const int tries = 1 + (allowed >= 1.6 ? 0 : retry_two_threads(o, &allowed));
    check_that(allowed >= 1.6,
               "with 2 threads the rows are shared so that the loop can run at least 1.6x as fast as on one "
               "(the team's CPU time over its busier thread's; 2x when even)",
               "%.2fx, the best of %d tr%s (%.3f s over %.3f s the first time)", allowed, tries,
               tries > 1 ? "ies" : "y", runs[1].team, busier);
    printf(
        "        (what it did: one thread's CPU time over the busier of two %.2fx, the wall clock %.2fx (1 "
        "thread %.3f s, 2 threads %.3f s) on %d cores; two cores of their own give close to 2x, other "
        "programs on them or cores that share one physical core give less)\n",
        runs[0].team / busier, runs[0].wall / runs[1].wall, runs[0].wall, runs[1].wall, cores_here());
}

/* Whether OpenMP may give this process the teams the check measures: your
 * loop on 1, 2 and 3 threads. OMP_DYNAMIC=true lets OpenMP give a loop fewer
 * threads than num_threads asks for (libgomp gives fewer on a busy machine):
 * the check turns that off for itself, since it measures the loop on the
 * threads it asks for. OMP_THREAD_LIMIT caps every team of the process, and
 * nothing inside a program can raise it: the check says so and measures
 * nothing on threads. */
static bool openmp_gives_teams(void)
{
    if (omp_get_dynamic()) {
        omp_set_dynamic(0);
        printf("  (OMP_DYNAMIC is on in this environment: the check turns it off for itself, so that a loop "
               "asked for T threads gets T)\n");
    }
    const int limit = omp_get_thread_limit();
    if (limit >= 3) return true;
    const char *setting = getenv("OMP_THREAD_LIMIT");
    check_that(false, "OpenMP may start the 3 threads the check runs your loop on",
               "OMP_THREAD_LIMIT=%s in the environment limits every OpenMP team of this process to %d "
               "thread%s, so your loop cannot be measured on 2 and 3 threads (step 1 is not checked): check "
               "again without it (env -u OMP_THREAD_LIMIT ./lab check 08)",
               setting ? setting : "(set)", limit, limit == 1 ? "" : "s");
    return false;
}

static void check_step1(device d)
{
    team_run small[3], large[3];
    if (!openmp_gives_teams()) return;
    /* OpenBLAS's pool stays asleep while OpenMP's works: one thread from now
     * on, and its threads, which spin for a while after any earlier product
     * (starting the devices may make one), given time to stop. */
    blas_threads(1);
    pools_settle();
    char figures[320] = "[37x53]x[53x29]";
    loop_operands o = operands_make(37, 29, 53);
    bool exact = exact_everywhere(&o, small);
    describe_wrong(&o, small, 3, figures, sizeof figures);
    operands_free(&o);
    if (d.kind != DEVICE_CPU) {
        check_that(exact, STEP1_CLAIM, "%s%s", figures, exact ? ": equal" : "");
        printf("  (the loop's threads and their CPU time: check on the CPU, --device cpu)\n");
        blas_threads(0);
        return;
    }
    /* 385 x 1024 x 1024: about 0.03 s a run at -O3, so that what OpenMP's
     * waiting threads spin at the team's end (a few ms under load) stays
     * small beside the work (at 385 x 512 x 512, 0.008 s, two threads spent
     * 2x one thread's CPU time beside two busy loops). */
    o = operands_make(385, 1024, 1024);
    const bool exact_large = exact_everywhere(&o, large);
    if (exact) {
        snprintf(figures, sizeof figures, "[37x53]x[53x29]%s[385x1024]x[1024x1024]",
                 exact_large ? " and " : " equal; ");
        describe_wrong(&o, large, 3, figures, sizeof figures);
    }
    check_that(exact && exact_large, STEP1_CLAIM, "%s%s", figures, exact && exact_large ? ": equal" : "");
    check_step1_cores(&o, large);
    operands_free(&o);
    blas_threads(0);
    pools_settle();
}

/* ---- steps 2 and 4: formulas on exact inputs ---------------------------------------- */

static void check_scaling(void)
{
    double speedup = 0, efficiency = 0, s2 = 0, e2 = 0, s3 = 0, e3 = 0;
    /* The third is a slow-down, what a busy machine or work too small to
     * share out gives: a speed-up below 1, not an error. */
    const status first = CHECK_YOURS(lab_scaling(2.0, 0.5, 4, &speedup, &efficiency)),
                 second = CHECK_YOURS(lab_scaling(3.0, 2.0, 2, &s2, &e2)),
                 third = CHECK_YOURS(lab_scaling(1.0, 2.0, 2, &s3, &e3));
    const status failed = first != STATUS_OK ? first : second != STATUS_OK ? second : third;
    check_that(
        failed == STATUS_OK && speedup == 4.0 && efficiency == 1.0 && s2 == 1.5 && e2 == 0.75 && s3 == 0.5 &&
            e3 == 0.25,
        "speed-up is one worker's time over the workers', efficiency the speed-up per worker",
        "2 s on 1, 0.5 s on 4: %gx, %g (want 4x, 1); 3 s on 1, 2 s on 2: %gx, %g (want 1.5x, 0.75); 1 s "
        "on 1, 2 s on 2: %gx, %g (want 0.5x, 0.25: slower)%s",
        speedup, efficiency, s2, e2, s3, e3, check_failure_text(failed));
    const status refused[] = { lab_scaling(0.0, 1.0, 2, &speedup, &efficiency),
                               lab_scaling(1.0, -1.0, 2, &speedup, &efficiency),
                               lab_scaling(1.0, NAN, 2, &speedup, &efficiency),
                               lab_scaling(NAN, 1.0, 2, &speedup, &efficiency),
                               lab_scaling(1.0, 1.0, 0, &speedup, &efficiency) };
    /* NaN, a timer that failed, is not positive, though neither <= 0: a test
     * written with <= 0 lets it through, on either time. */
    bool all = true;
    for (int i = 0; i < 5; ++i) all = all && refused[i] == STATUS_BAD_ARGUMENT;
    check_that(all, "lab_scaling refuses times that are not positive and fewer than one worker",
               "0 s on one worker: %s; -1 s on the workers: %s; NaN s on the workers: %s; NaN s on one "
               "worker: %s; 0 workers: %s",
               status_name(refused[0]), status_name(refused[1]), status_name(refused[2]),
               status_name(refused[3]), status_name(refused[4]));
}

static void check_slices(void)
{
    static const struct {
        int64_t rows;
        int n;
        int64_t first[4], count[4];
    } cases[] = { { 128, 2, { 0, 64 }, { 64, 64 } },
                  { 37, 2, { 0, 19 }, { 19, 18 } },
                  { 10, 3, { 0, 4, 7 }, { 4, 3, 3 } },
                  { 11, 4, { 0, 3, 6, 9 }, { 3, 3, 3, 2 } },
                  /* the longer slices first: slices that start at ceil(i rows / n) give 2, 1, 2, 1 */
                  { 6, 4, { 0, 2, 4, 5 }, { 2, 2, 1, 1 } },
                  { 2, 3, { 0, 1, 2 }, { 1, 1, 0 } },
                  { 5, 1, { 0 }, { 5 } },
                  { 0, 2, { 0, 0 }, { 0, 0 } },
                  /* more rows than an int holds: a dataset sharded across the devices */
                  { 5000000001, 2, { 0, 2500000001 }, { 2500000001, 2500000000 } } };
    char figures[768] =
        "128 on 2, 37 on 2, 10 on 3, 11 on 4, 6 on 4, 2 on 3, 5 on 1, 0 on 2, 5000000001 on 2";
    bool all = true;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0] && all; ++c)
        for (int i = 0; i < cases[c].n && all; ++i) {
            int64_t first = -1, count = -1;
            const status s = CHECK_YOURS(lab_slice(cases[c].rows, cases[c].n, i, &first, &count));
            all = s == STATUS_OK && first == cases[c].first[i] && count == cases[c].count[i];
            if (!all)
                snprintf(figures, sizeof figures,
                         "%lld rows on %d: device %d got rows %lld + %lld (want %lld + %lld)%s",
                         (long long)cases[c].rows, cases[c].n, i, (long long)first, (long long)count,
                         (long long)cases[c].first[i], (long long)cases[c].count[i], check_failure_text(s));
        }
    check_that(all, "the slices follow each other and cover the batch, the first rows % n one row longer",
               "%s", figures);
    int64_t first, count;
    const status refused[] = { lab_slice(-1, 2, 0, &first, &count), lab_slice(10, 0, 0, &first, &count),
                               lab_slice(10, 2, 2, &first, &count), lab_slice(10, 2, -1, &first, &count) };
    bool none = true;
    for (int i = 0; i < 4; ++i) none = none && refused[i] == STATUS_BAD_ARGUMENT;
    check_that(none, "lab_slice refuses a negative batch, no devices and a device that is not one of them",
               "rows -1: %s; n 0: %s; i 2 of 2: %s; i -1: %s", status_name(refused[0]),
               status_name(refused[1]), status_name(refused[2]), status_name(refused[3]));
}

/* ---- step 3: two GPUs at once --------------------------------------------------------- */

enum { PRODUCT_N = 256, PRODUCTS = 3, CUDA_PRODUCT_N = 4096, CUDA_PRODUCTS = 8 };

/* Whether c = a b is right on the host (float64 reference, |error| within
 * k 1e-6 + 1e-5 |ref|), reading a, b, c of the work. */
static bool product_right(const product_work *w)
{
    const int64_t n = w->n, step = n > 512 ? n / 61 : 1; /* a big product: every 61st row and column */
    float *a = host_floats(n * n), *b = host_floats(n * n), *c = host_floats(n * n);
    CHECK(tensor_to_host(w->a, a, n * n));
    CHECK(tensor_to_host(w->b, b, n * n));
    CHECK(tensor_to_host(w->c, c, n * n));
    bool right = true;
    for (int64_t i = 0; i < n && right; i += step)
        for (int64_t j = 0; j < n && right; j += step) {
            double sum = 0.0;
            for (int64_t p = 0; p < n; ++p) sum += (double)a[i * n + p] * b[p * n + j];
            right = fabs(c[i * n + j] - sum) <= (double)n * 1e-6 + 1e-5 * fabs(sum);
        }
    host_floats_free(a), host_floats_free(b), host_floats_free(c);
    return right;
}

/* The share of the shorter of two intervals that the other covers. */
static double overlap(const product_timing *x, const product_timing *y)
{
    const double shorter = fmin(x->end - x->start, y->end - y->start);
    const double both = fmin(x->end, y->end) - fmax(x->start, y->start);
    return shorter > 0 ? fmax(both, 0.0) / shorter : 0.0;
}

/* Whether d has a second GPU of its kind, for the claims that need one
 * (`what`, and the claims themselves, n of them). Where it has none, and no
 * run of ./lab check tries them (the cpu's does not; on a real GPU, the run
 * on sim:0 does when there are two simulated GPUs), each claim gets a line
 * "... is not tried": ./lab check counts those and says "not yet", since a
 * claim no run tried does not hold. */
static bool second_gpu(device d, const char *what, const char *const *claims, int n)
{
    if (d.kind != DEVICE_CPU && device_count(d.kind) >= 2) return true;
    if (d.kind == DEVICE_CPU) {
        printf("  (%s: on two GPUs of one kind, --device sim:0 or cuda:0)\n", what);
        return false;
    }
    if (d.kind == DEVICE_CUDA && device_count(DEVICE_SIM) >= 2) {
        printf("  (one real GPU here: %s is tried on sim:0 and sim:1, --device sim:0)\n", what);
        return false;
    }
    for (int i = 0; i < n; ++i)
        printf("  (no second GPU here: \"%s\" is not tried; LABKIT_SIM_GPUS=2 simulates two)\n", claims[i]);
    return false;
}

#define AT_ONCE_QUEUED "lab_run_at_once queues every device's products and waits until all are done"
#define AT_ONCE_OVERLAP                                                                               \
    "the devices worked at the same time: the times their workers ran the kernels overlap (at least " \
    "half)"
#define AT_ONCE_SHARE                                                                                     \
    "with a core for each worker, two GPUs at once take at most 0.65 of the time of one after the other " \
    "(the busier worker's CPU time over both workers')"
#define AT_ONCE_REAL "two GPUs at once take at most 0.65 of the time of one after the other"
#define AT_ONCE_RIGHT "each device computed its own products, right (float64 reference)"
#define AT_ONCE_N "lab_run_at_once runs the n works it is given, no more: given 1, one device works"

static void check_step3(device d)
{
    const bool real = d.kind == DEVICE_CUDA;
    const char *const sim_claims[] = { AT_ONCE_QUEUED, AT_ONCE_OVERLAP, AT_ONCE_SHARE, AT_ONCE_RIGHT,
                                       AT_ONCE_N },
                      *const real_claims[] = { AT_ONCE_QUEUED, AT_ONCE_REAL, AT_ONCE_RIGHT, AT_ONCE_N };
    if (!second_gpu(d, "two GPUs at once", real ? real_claims : sim_claims, real ? 4 : 5)) return;
    const char *claim = AT_ONCE_QUEUED;
    product_work work[2];
    for (int i = 0; i < 2; ++i)
        CHECK(product_work_create(&work[i], (device){ d.kind, i }, real ? CUDA_PRODUCT_N : PRODUCT_N,
                                  real ? CUDA_PRODUCTS : PRODUCTS));
    MUST(lab_run_at_once(work, 2), claim);
    device_counters counted[2];
    for (int i = 0; i < 2; ++i) {
        /* What the first call may have left running counts for neither the
         * timings nor the counters of the second. */
        CHECK(device_synchronize(work[i].dev));
        product_timing_reset(&work[i]);
        CHECK(counters_reset(work[i].dev));
    }
    memset(&order, 0, sizeof order);
    order.on = true;
    double start = wall_seconds();
    MUST(lab_run_at_once(work, 2), claim);
    const double once = wall_seconds() - start;
    order.on = false;
    bool queued = true, waited_after = true;
    for (int i = 0; i < 2; ++i) {
        CHECK(counters_read(work[i].dev, &counted[i]));
        waited_after = waited_after && counted[i].syncs > order.syncs_when_queued[work[i].dev.index];
        queued = queued && counted[i].launches == (uint64_t)work[i].products && counted[i].syncs >= 1 &&
                 (real || work[i].timing->kernels == work[i].products);
    }
    check_that(queued && waited_after, claim,
               "%s: %llu launches, waited %llu times; %s: %llu launches, waited %llu times (want %d "
               "launches each, each device waited for after its products were queued, every kernel done on "
               "return)%s",
               device_name(work[0].dev), (unsigned long long)counted[0].launches,
               (unsigned long long)counted[0].syncs, device_name(work[1].dev),
               (unsigned long long)counted[1].launches, (unsigned long long)counted[1].syncs,
               work[0].products,
               waited_after ? ""
                            : ": a device was waited for only before its products were queued, so they may "
                              "still run when the call returns");
    product_timing at_once[2] = { *work[0].timing, *work[1].timing };
    start = wall_seconds();
    CHECK(run_on_one(work, 2));
    const double one = wall_seconds() - start;
    if (real)
        check_that(once <= 0.65 * one, AT_ONCE_REAL,
                   "%s and %s: %.1f ms at once, %.1f ms in sequence on one: %.2f", device_name(work[0].dev),
                   device_name(work[1].dev), once * 1e3, one * 1e3, once / one);
    else {
        const product_timing *t = at_once;
        const double origin = fmin(t[0].start, t[1].start), cpu = t[0].cpu_seconds + t[1].cpu_seconds;
        check_that(overlap(&t[0], &t[1]) >= 0.5, AT_ONCE_OVERLAP,
                   "%s ran its kernels from %.1f to %.1f ms, %s from %.1f to %.1f ms: %.0f%% overlap",
                   device_name(work[0].dev), (t[0].start - origin) * 1e3, (t[0].end - origin) * 1e3,
                   device_name(work[1].dev), (t[1].start - origin) * 1e3, (t[1].end - origin) * 1e3,
                   100.0 * overlap(&t[0], &t[1]));
        /* Lesson 003's "almost linear scaling", measured by what each worker
         * computed: with a core each, at once lasts as long as the busier. */
        const double share = cpu > 0 ? fmax(t[0].cpu_seconds, t[1].cpu_seconds) / cpu : 1.0;
        check_that(share <= 0.65, AT_ONCE_SHARE, "%s %.1f ms of CPU, %s %.1f ms: %.2f",
                   device_name(work[0].dev), t[0].cpu_seconds * 1e3, device_name(work[1].dev),
                   t[1].cpu_seconds * 1e3, share);
        printf(
            "        (the wall clock: at once %.1f ms, one after the other on %s %.1f ms: %.2f of the time; "
            "a quiet 2-core machine gives about the figure above, other programs on the cores raise it)\n",
            once * 1e3, device_name(work[0].dev), one * 1e3, once / one);
    }
    const bool right = product_right(&work[0]) && product_right(&work[1]);
    check_that(right, AT_ONCE_RIGHT, "%s and %s, %lldx%lld", device_name(work[0].dev),
               device_name(work[1].dev), (long long)work[0].n, (long long)work[0].n);
    /* n is the works' count: given 1 of the 2, the first device runs its
     * products and waits, and the second is not touched. */
    for (int i = 0; i < 2; ++i) CHECK(counters_reset(work[i].dev));
    const status one_status = CHECK_YOURS(lab_run_at_once(work, 1));
    for (int i = 0; i < 2; ++i) CHECK(counters_read(work[i].dev, &counted[i]));
    check_that(one_status == STATUS_OK && counted[0].launches == (uint64_t)work[0].products &&
                   counted[0].syncs >= 1 && counted[1].launches == 0,
               AT_ONCE_N,
               "given 1 work of 2: %s %llu launches, waited %llu times; %s %llu launches (want %d, at least "
               "once, and 0: the second work is not one of the n)%s",
               device_name(work[0].dev), (unsigned long long)counted[0].launches,
               (unsigned long long)counted[0].syncs, device_name(work[1].dev),
               (unsigned long long)counted[1].launches, work[0].products, check_failure_text(one_status));
    for (int i = 0; i < 2; ++i) product_work_free(&work[i]);
}

/* Every call lab_run_at_once makes of queue_products and device_synchronize
 * refused in turn (one device on the CPU, whose products run at once; two
 * GPUs of one kind): a device that refuses its products, or whose kernels
 * fail while they run (reported by the wait), must have its failure
 * returned, not STATUS_OK; with nothing refused the call works. */
#define AT_ONCE_FAILS "lab_run_at_once returns a device's failure, to queue its products or to finish them"
#define AT_ONCE_FAILS_WAITS \
    "on a failure, lab_run_at_once returns only once every device it queued is done, as lab.h asks"

/* The devices of work[0..n-1] that were queued during the watched call and
 * not waited for since, into text ("" when none). */
static void queued_not_waited(const product_work *work, int n, char *text, size_t size)
{
    text[0] = '\0';
    for (int i = 0; i < n; ++i) {
        const int index = work[i].dev.index;
        device_counters c;
        if (index < 0 || index >= ORDER_DEVICES || !order.queued[index]) continue;
        CHECK(counters_read(work[i].dev, &c));
        if (c.syncs <= order.syncs_when_queued[index])
            check_append(text, size, "%s%s", text[0] ? " and " : "", device_name(work[i].dev));
    }
}

static void check_step3_failure(device d)
{
    const bool pair = d.kind != DEVICE_CPU && device_count(d.kind) >= 2;
    const int n = pair ? 2 : 1;
    product_work work[2];
    for (int i = 0; i < n; ++i) CHECK(product_work_create(&work[i], pair ? (device){ d.kind, i } : d, 32, 1));
    char figures[512], unwaited[64], waits[320] = "";
    bool passed_on = true;
    int tried = 0;
    for (int at = 1; at <= 16 && passed_on; ++at) {
        memset(&order, 0, sizeof order);
        order.on = true;
        check_refuse_call(at);
        refusing_waits = true;
        const status s = CHECK_YOURS(lab_run_at_once(work, n));
        refusing_waits = false;
        check_refuse_call(0);
        order.on = false;
        const char *refused = check_refused_call();
        queued_not_waited(work, n, unwaited, sizeof unwaited);
        if (refused && unwaited[0] && !waits[0])
            snprintf(waits, sizeof waits,
                     "its call %d refused (%s): returned %s with %s queued and not waited for (their kernels "
                     "may still be running on the caller's tensors)",
                     at, refused, status_name(s), unwaited);
        for (int i = 0; i < n; ++i) CHECK(device_synchronize(work[i].dev));
        passed_on = refused ? s != STATUS_OK : s == STATUS_OK;
        if (!passed_on && refused)
            snprintf(figures, sizeof figures,
                     "on %s%s%s, its call %d refused (%s: %s): returned %s (want the failure)",
                     device_name(work[0].dev), pair ? " and " : "", pair ? device_name(work[1].dev) : "", at,
                     refused,
                     strcmp(refused, "device_synchronize") == 0 ? "a kernel failed while it ran"
                                                                : "the device refused its products",
                     status_name(s));
        else if (!passed_on)
            snprintf(figures, sizeof figures, "with nothing refused: returned %s (want STATUS_OK)%s",
                     status_name(s), check_failure_text(s));
        if (!refused) break;
        ++tried;
    }
    if (passed_on)
        snprintf(figures, sizeof figures,
                 "on %s%s%s: %d calls of queue_products and device_synchronize refused in turn, each failure "
                 "returned",
                 device_name(work[0].dev), pair ? " and " : "", pair ? device_name(work[1].dev) : "", tried);
    check_that(passed_on, AT_ONCE_FAILS, "%s", figures);
    if (pair)
        check_that(!waits[0], AT_ONCE_FAILS_WAITS, "on %s and %s: %s", device_name(work[0].dev),
                   device_name(work[1].dev),
                   waits[0] ? waits : "after every refusal, each device that was queued was waited for");
    for (int i = 0; i < n; ++i) product_work_free(&work[i]);
}

/* ---- step 5: data-parallel training -------------------------------------------------- */

enum { DP_ROWS = 37, DP_STEPS = 3 };
#define DP_LR 0.05f
#define DP_MOMENTUM 0.9f
static const int64_t dp_sizes[] = { 784, 64, 32, 10 };
enum { DP_NSIZES = 3 + 1 };

/* The gradients of one float32 sum over rows differ from another order's by
 * float32 rounding: about 1e-7 of their norm for 37 rows. A slice weighted
 * wrongly (1/2 instead of 19/37) is off by about 1e-2. */
#define GRAD_RTOL 1e-4
/* After 3 steps, each parameter has moved by a few 1e-3 and is stored near
 * 0.05, whose float32 spacing is 4e-9: rounding differences of the two runs
 * stay under 1e-5 of the move; a wrong weight gives 1e-2. */
#define PARAM_RTOL 1e-4

typedef struct dp_data {
    dataset data;
    float *images[DP_STEPS];
    int32_t *labels[DP_STEPS];
} dp_data;

/* Each step's batch in host arrays of its own that end at a guard page
 * (host_alloc): a slice that reads past the batch stops there. */
static void dp_data_make(dp_data *x)
{
    CHECK(dataset_synthetic(&x->data, DP_ROWS * DP_STEPS, 5));
    const int64_t pixels = dataset_pixels(&x->data);
    for (int s = 0; s < DP_STEPS; ++s) {
        x->images[s] = host_floats(DP_ROWS * pixels);
        x->labels[s] = host_alloc(DP_ROWS * sizeof *x->labels[s], 0);
        if (!x->labels[s]) CHECK(fail(STATUS_OUT_OF_MEMORY, "no host memory for %d labels", DP_ROWS));
        memcpy(x->images[s], x->data.images + s * DP_ROWS * pixels,
               (size_t)(DP_ROWS * pixels) * sizeof(float));
        memcpy(x->labels[s], x->data.labels + s * DP_ROWS, DP_ROWS * sizeof *x->labels[s]);
    }
}

static void dp_data_free(dp_data *x)
{
    for (int s = 0; s < DP_STEPS; ++s) host_floats_free(x->images[s]), host_free(x->labels[s], 0);
    dataset_free(&x->data);
}

/* The device's bytes in use once its queue is done. */
static size_t bytes_in_use(device d)
{
    device_counters c;
    CHECK(device_synchronize(d));
    CHECK(counters_read(d, &c));
    return c.memory_current;
}

/* Whether every device's memory was back where it was once the replicas of
 * each part of step 5 were freed, what was left where it was not, and the
 * parts tried ("3 steps on one device; ..."). */
static bool dp_memory_back = true;
static char dp_memory_figures[512], dp_parts[256];

static void note_memory(const char *part, device d, size_t before)
{
    const size_t after = bytes_in_use(d);
    const size_t seen = strlen(dp_parts), length = strlen(part);
    if (seen < length || strcmp(dp_parts + seen - length, part) != 0)
        check_append(dp_parts, sizeof dp_parts, "%s%s", seen ? "; " : "", part);
    if (after == before) return;
    if (dp_memory_back)
        snprintf(dp_memory_figures, sizeof dp_memory_figures,
                 "%s: %lld bytes more in use on %s than before the replicas were made (want 0)", part,
                 (long long)after - (long long)before, device_name(d));
    dp_memory_back = false;
}

/* lab.h's slices, the check's own: the first rows % n devices get one row
 * more. Step 5's claims expect them whatever lab_slice gives (step 4's
 * claim tries lab_slice). */
static int64_t slice_rows(int64_t rows, int n, int i) { return rows / n + (i < rows % n ? 1 : 0); }

/* ||x - y|| / ||y|| over n floats (y - y0 and x - y0 when y0 is given). */
static double relative_difference(const float *x, const float *y, const float *y0, int64_t n)
{
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double base = y0 ? y0[i] : 0.0, a = x[i] - base, b = y[i] - base;
        diff += (a - b) * (a - b), norm += b * b;
    }
    return norm > 0 ? sqrt(diff / norm) : sqrt(diff);
}

/* One replica per device, from the same seed: the same network everywhere. */
static void replicas_make(replica *r, replica **all, const device *devices, int n)
{
    for (int d = 0; d < n; ++d) CHECK(replica_create(all[d] = &r[d], devices[d], dp_sizes, DP_NSIZES, 3));
}

/* Lab 05's step, on whole batches of `rows` rows, `steps` times, on one
 * replica: the reference. Writes its losses, its gradients after the first
 * step and its parameters after each. */
static void reference_run(device d, const dp_data *x, int64_t rows, int steps, float *losses, float *grads,
                          float *params)
{
    replica r;
    CHECK(replica_create(&r, d, dp_sizes, DP_NSIZES, 3));
    const int64_t count = replica_parameter_count(&r);
    for (int s = 0; s < steps; ++s) {
        CHECK(replica_forward_backward(&r, x->images[s], x->labels[s], rows));
        if (s == 0) CHECK(replica_read(&r, true, grads, count));
        CHECK(replica_sgd_step(&r, DP_LR, DP_MOMENTUM));
        CHECK(tensor_item(r.loss, &losses[s]));
    }
    CHECK(replica_read(&r, false, params, count));
    replica_free(&r);
}

static void check_step5_one(device d, const dp_data *x)
{
    const char *claim =
        "on one device your data-parallel step is lab 05's step: the same losses and parameters, "
        "bit for bit";
    replica r, *all[1];
    const size_t in_use = bytes_in_use(d);
    replicas_make(&r, all, &d, 1);
    const int64_t count = replica_parameter_count(&r);
    float want_loss[DP_STEPS], got_loss[DP_STEPS], *grads = host_floats(count), *want = host_floats(count),
                                                   *got = host_floats(count);
    reference_run(d, x, DP_ROWS, DP_STEPS, want_loss, grads, want);
    for (int s = 0; s < DP_STEPS; ++s) {
        MUST(lab_data_parallel_step(all, 1, x->images[s], x->labels[s], DP_ROWS, DP_LR, DP_MOMENTUM), claim);
        CHECK(tensor_item(r.loss, &got_loss[s]));
    }
    CHECK(replica_read(&r, false, got, count));
    const bool same = memcmp(got_loss, want_loss, sizeof got_loss) == 0 &&
                      memcmp(got, want, (size_t)count * sizeof *got) == 0;
    check_that(same, claim,
               "%s, %d steps of %d rows: losses %.6f %.6f %.6f (lab 05's %.6f %.6f %.6f); parameters "
               "differ by %.2g of their norm",
               device_name(d), DP_STEPS, DP_ROWS, got_loss[0], got_loss[1], got_loss[2], want_loss[0],
               want_loss[1], want_loss[2], relative_difference(got, want, NULL, count));
    replica_free(&r);
    note_memory("3 steps on one device", d, in_use);
    host_floats_free(grads), host_floats_free(want), host_floats_free(got);
}

/* lab.h: a batch of 0 rows has no mean loss, and is refused; a step that
 * took it would scale every gradient by 0 / 0 and leave NaN parameters. */
static void check_step5_empty_batch(device d, const dp_data *x)
{
    const char *claim = "a batch of 0 rows is refused (STATUS_BAD_ARGUMENT), and no replica takes a step";
    replica r, *all[1];
    const size_t in_use = bytes_in_use(d);
    replicas_make(&r, all, &d, 1);
    const int64_t count = replica_parameter_count(&r);
    float *before = host_floats(count), *after = host_floats(count);
    CHECK(replica_read(&r, false, before, count));
    const status s =
        CHECK_YOURS(lab_data_parallel_step(all, 1, x->images[0], x->labels[0], 0, DP_LR, DP_MOMENTUM));
    CHECK(replica_read(&r, false, after, count));
    const bool stepped = memcmp(after, before, (size_t)count * sizeof *after) != 0;
    int64_t nans = 0;
    for (int64_t i = 0; i < count; ++i) nans += isnan(after[i]);
    check_that(s == STATUS_BAD_ARGUMENT && !stepped, claim, "0 rows on %s: returned %s; %s", device_name(d),
               status_name(s),
               !stepped ? "the replica did not step"
               : nans   ? "the replica stepped, and its parameters hold NaN (a mean over 0 rows)"
                        : "the replica stepped");
    replica_free(&r);
    note_memory("a batch of 0 rows", d, in_use);
    host_floats_free(before), host_floats_free(after);
}

/* Two devices for a batch smaller than the devices: two GPUs of d's kind
 * where there are, else d and another kind (the cpu beside a GPU, a GPU
 * beside the cpu, whose all-reduce goes through the host), so that every
 * run tries it, with one GPU too. */
static bool two_devices(device d, device *devices)
{
    devices[0] = d;
    if (d.kind != DEVICE_CPU && device_count(d.kind) >= 2) {
        devices[0] = (device){ d.kind, 0 }, devices[1] = (device){ d.kind, 1 };
        return true;
    }
    if (d.kind != DEVICE_CPU) {
        devices[1] = device_cpu();
        return true;
    }
    const device_kind kinds[] = { DEVICE_SIM, DEVICE_CUDA };
    for (int k = 0; k < 2; ++k)
        if (device_count(kinds[k]) > 0) {
            devices[1] = (device){ kinds[k], 0 };
            return true;
        }
    return false;
}

/* 1 row on 2 devices: the second slice is empty (lab_slice gives it 0 rows).
 * lab.h: its replica takes part all the same, and every replica steps as
 * one device on that row would. */
#define DP_EMPTY_SLICE                                                                             \
    "a batch of fewer rows than devices (1 row on 2: one slice empty) steps every replica as one " \
    "device on the batch would"

static void check_step5_empty_slice(device d, const dp_data *x)
{
    device devices[2];
    if (!two_devices(d, devices)) {
        printf("  (no second device here: \"" DP_EMPTY_SLICE "\" is not tried)\n");
        return;
    }
    const size_t in_use[2] = { bytes_in_use(devices[0]), bytes_in_use(devices[1]) };
    replica r[2], *all[2];
    replicas_make(r, all, devices, 2);
    const int64_t count = replica_parameter_count(&r[0]);
    float loss, *grads = host_floats(count), *want = host_floats(count), *start = host_floats(count),
                *got = host_floats(count);
    reference_run(devices[0], x, 1, 1, &loss, grads, want);
    CHECK(replica_read(&r[0], false, start, count));
    char figures[256];
    snprintf(figures, sizeof figures, "1 row on %s and %s:", device_name(devices[0]),
             device_name(devices[1]));
    if (CHECK_CALL(lab_data_parallel_step(all, 2, x->images[0], x->labels[0], 1, DP_LR, DP_MOMENTUM),
                   DP_EMPTY_SLICE)) {
        bool right = true;
        for (int i = 0; i < 2; ++i) {
            CHECK(replica_read(&r[i], false, got, count));
            const double error = relative_difference(got, want, start, count);
            right = right && error <= PARAM_RTOL;
            check_append(figures, sizeof figures, "%s %s's parameters %.2g of one device's move away from it",
                         i ? ";" : "", device_name(devices[i]), error);
        }
        check_that(right, DP_EMPTY_SLICE, "%s (at most %g)", figures, PARAM_RTOL);
    }
    for (int i = 0; i < 2; ++i) replica_free(&r[i]);
    for (int i = 0; i < 2; ++i) note_memory("1 row on two devices", devices[i], in_use[i]);
    host_floats_free(grads), host_floats_free(want), host_floats_free(start), host_floats_free(got);
}

#define DP_GRADIENT "after one step every device holds the whole batch's gradient (within float32 rounding)"
#define DP_PARAMETERS                                                                                  \
    "after three steps (momentum 0.9) the parameters and losses are those of one device on the whole " \
    "batch"
#define DP_SAME "every device holds the same parameters, bit for bit"
#define DP_OWN_SLICE "each device uploads its own slice of the batch, not the whole batch"
#define DP_AT_ONCE                                                                            \
    "the devices compute their slices at the same time: no device is waited for until every " \
    "device's slice is queued"

static void check_step5_two(device d, const dp_data *x)
{
    const char *const claims[] = {
        DP_GRADIENT,  DP_PARAMETERS,
        DP_SAME,      "the all-reduce's copies are counted: through the host, or none with NCCL",
        DP_OWN_SLICE, DP_AT_ONCE
    };
    if (!second_gpu(d, "data-parallel training on two devices", claims, 6)) return;
    const device devices[2] = { { d.kind, 0 }, { d.kind, 1 } };
    replica r[2], *all[2];
    const size_t in_use[2] = { bytes_in_use(devices[0]), bytes_in_use(devices[1]) };
    replicas_make(r, all, devices, 2);
    const int64_t count = replica_parameter_count(&r[0]);
    float want_loss[DP_STEPS], *want_grads = host_floats(count), *want = host_floats(count),
                               *start = host_floats(count),
                               *got[2] = { host_floats(count), host_floats(count) };
    reference_run(d, x, DP_ROWS, DP_STEPS, want_loss, want_grads, want);
    CHECK(replica_read(&r[0], false, start, count));
    tensor *grads[REPLICA_MAX_GRADIENTS];
    const int ngrads = replica_gradients(&r[0], grads);
    const bool nccl =
        all_reduce_uses_nccl((tensor *const[]){ r[0].net.layers[0].dW, r[1].net.layers[0].dW }, 2);
    device_counters counted[2];
    for (int i = 0; i < 2; ++i) CHECK(counters_reset(devices[i]));
    double grad_error = INFINITY;
    double loss = 0.0, loss_error = 0.0;
    const char *claim = DP_GRADIENT;
    const int64_t rows[2] = { slice_rows(DP_ROWS, 2, 0), slice_rows(DP_ROWS, 2, 1) }; /* 19 and 18 */
    watch.devices = 2, watch.dev[0] = devices[0], watch.dev[1] = devices[1], watch.waits_between = 0;
    for (int s = 0; s < DP_STEPS; ++s) {
        watch.passes = 0;
        MUST(lab_data_parallel_step(all, 2, x->images[s], x->labels[s], DP_ROWS, DP_LR, DP_MOMENTUM), claim);
        if (s == 0) {
            for (int i = 0; i < 2; ++i) CHECK(counters_read(devices[i], &counted[i]));
            grad_error = 0.0;
            for (int i = 0; i < 2; ++i) {
                CHECK(replica_read(&r[i], true, got[i], count));
                grad_error = fmax(grad_error, relative_difference(got[i], want_grads, NULL, count));
            }
        }
        float part[2]; /* the batch's mean loss: the slices' losses weighted by their rows */
        for (int i = 0; i < 2; ++i) CHECK(tensor_item(r[i].loss, &part[i]));
        loss = (rows[0] * (double)part[0] + rows[1] * (double)part[1]) / DP_ROWS;
        loss_error = fmax(loss_error, fabs(loss - want_loss[s]) / want_loss[s]);
    }
    watch.devices = 0;
    check_that(grad_error <= GRAD_RTOL, claim,
               "%s and %s, %d rows in slices of %lld and %lld: %.2g of the gradient's norm (at most %g)",
               device_name(devices[0]), device_name(devices[1]), DP_ROWS, (long long)rows[0],
               (long long)rows[1], grad_error, GRAD_RTOL);
    for (int i = 0; i < 2; ++i) CHECK(replica_read(&r[i], false, got[i], count));
    const double param_error = relative_difference(got[0], want, start, count);
    check_that(param_error <= PARAM_RTOL && loss_error <= GRAD_RTOL, DP_PARAMETERS,
               "the parameters moved by %.2g of one device's move away from it (at most %g); the losses, "
               "each slice's weighted by its rows (lab.h's slices, %lld and %lld), within %.2g (at most %g)",
               param_error, PARAM_RTOL, (long long)rows[0], (long long)rows[1], loss_error, GRAD_RTOL);
    const bool same = memcmp(got[0], got[1], (size_t)count * sizeof *got[0]) == 0;
    check_that(same, DP_SAME, "%s and %s differ by %.2g of the parameters' norm", device_name(devices[0]),
               device_name(devices[1]), relative_difference(got[1], got[0], NULL, count));
    /* One step's copies on each device: its slice (images and labels) up,
     * and for the all-reduce through the host each gradient down and the sum
     * back up; NCCL moves the gradients between the GPUs without the host. */
    const uint64_t want_d2h = nccl ? 0 : (uint64_t)ngrads, want_h2d = 2 + want_d2h;
    bool counted_right = true;
    for (int i = 0; i < 2; ++i)
        counted_right =
            counted_right && counted[i].d2h_copies == want_d2h && counted[i].h2d_copies == want_h2d;
    check_that(
        counted_right,
        nccl ? "the all-reduce runs through NCCL: no copy through the host, only each slice's upload"
             : "the all-reduce sums through the host, its copies counted: each gradient down and the sum "
               "back up, on each device",
        "one step, %d gradient tensors: %s %llu down, %llu up; %s %llu down, %llu up (want %llu down, %llu "
        "up: the slice's images and labels%s)",
        ngrads, device_name(devices[0]), (unsigned long long)counted[0].d2h_copies,
        (unsigned long long)counted[0].h2d_copies, device_name(devices[1]),
        (unsigned long long)counted[1].d2h_copies, (unsigned long long)counted[1].h2d_copies,
        (unsigned long long)want_d2h, (unsigned long long)want_h2d, nccl ? "" : " and the sums");
    /* The bytes of those copies: a device that trained on the whole batch
     * instead of its slice gives the same losses and parameters, and the same
     * number of copies, but uploads every row. */
    const uint64_t row_bytes = (uint64_t)replica_inputs(&r[0]) * sizeof(float) + sizeof(int32_t),
                   gradient_bytes = nccl ? 0 : (uint64_t)count * sizeof(float);
    bool own_slice = true;
    char bytes[2][96];
    for (int i = 0; i < 2; ++i) {
        const uint64_t slice = (uint64_t)rows[i];
        own_slice = own_slice && counted[i].h2d_bytes == slice * row_bytes + gradient_bytes &&
                    counted[i].d2h_bytes == gradient_bytes;
        snprintf(bytes[i], sizeof bytes[i], "%s %llu up (want %llu: %llu rows), %llu down (want %llu)",
                 device_name(devices[i]), (unsigned long long)counted[i].h2d_bytes,
                 (unsigned long long)(slice * row_bytes + gradient_bytes), (unsigned long long)slice,
                 (unsigned long long)counted[i].d2h_bytes, (unsigned long long)gradient_bytes);
    }
    check_that(own_slice, DP_OWN_SLICE,
               "one step, bytes copied: %s; %s (a row is %llu bytes of image and label%s)", bytes[0],
               bytes[1], (unsigned long long)row_bytes,
               nccl ? "" : "; the sums of the gradients add the network's gradient size to each upload");
    check_that(
        watch.waits_between == 0, DP_AT_ONCE,
        "%d steps on %s and %s: %llu waits between one device's forward and backward pass and the next "
        "device's (want 0: each pass is queued and returns, and the next device starts at once)",
        DP_STEPS, device_name(devices[0]), device_name(devices[1]), (unsigned long long)watch.waits_between);
    for (int i = 0; i < 2; ++i) replica_free(&r[i]), host_floats_free(got[i]);
    for (int i = 0; i < 2; ++i) note_memory("3 steps on two devices", devices[i], in_use[i]);
    host_floats_free(want_grads), host_floats_free(want), host_floats_free(start);
}

/* Each device's forward and backward pass and each all-reduce refused in
 * turn, on the device checked (one replica) or on two of its kind: the step
 * must return a failure, and no replica may have stepped, since every
 * replica steps only once every gradient is summed. With nothing refused
 * the step works. */
static void check_step5_failures(device d, const dp_data *x)
{
    const bool pair = d.kind != DEVICE_CPU && device_count(d.kind) >= 2;
    const int n = pair ? 2 : 1;
    const device devices[2] = { pair ? (device){ d.kind, 0 } : d, { d.kind, 1 } };
    size_t in_use[2];
    for (int i = 0; i < n; ++i) in_use[i] = bytes_in_use(devices[i]);
    replica r[2], *all[2];
    replicas_make(r, all, devices, n);
    const int64_t count = replica_parameter_count(&r[0]);
    float *before[2] = { host_floats(count), host_floats(count) }, *after = host_floats(count);
    char figures[768];
    bool right = true;
    int tried = 0;
    for (int at = 1; at <= 32 && right; ++at) {
        for (int i = 0; i < n; ++i) CHECK(replica_read(&r[i], false, before[i], count));
        check_refuse_call(at);
        const status s = CHECK_YOURS(
            lab_data_parallel_step(all, n, x->images[0], x->labels[0], DP_ROWS, DP_LR, DP_MOMENTUM));
        check_refuse_call(0);
        const char *refused = check_refused_call();
        int stepped = -1; /* a replica whose parameters changed */
        for (int i = 0; i < n; ++i) {
            CHECK(device_synchronize(devices[i]));
            CHECK(replica_read(&r[i], false, after, count));
            if (memcmp(after, before[i], (size_t)count * sizeof *after) != 0) stepped = i;
        }
        if (!refused) { /* every call went through: the step as it runs */
            right = s == STATUS_OK && stepped >= 0;
            if (!right)
                snprintf(figures, sizeof figures, "with nothing refused, the step returned %s and %s%s",
                         status_name(s), stepped >= 0 ? "stepped" : "no replica stepped",
                         check_failure_text(s));
            break;
        }
        ++tried;
        /* A refused SGD step comes once every gradient is summed: the
         * replicas before it have stepped, and that one's failure must come
         * back. Any other refusal comes before every step. */
        const bool at_step = strcmp(refused, "replica_sgd_step") == 0;
        right = s != STATUS_OK && (at_step || stepped < 0);
        if (!right)
            snprintf(figures, sizeof figures, "on %s%s, its call %d (%s) refused: the step returned %s%s%s%s",
                     device_name(devices[0]), pair ? " and its pair" : "", at, refused, status_name(s),
                     s == STATUS_OK ? " (the failure was not passed on)" : "",
                     stepped >= 0 && !at_step ? "; the replica on " : "",
                     stepped >= 0 && !at_step ? device_name(devices[stepped]) : "");
        if (!right && stepped >= 0 && !at_step)
            check_append(figures, sizeof figures, " took a step all the same (before every sum was done)");
    }
    if (right)
        snprintf(figures, sizeof figures,
                 "on %s%s%s: %d refusals, each device's pass, each weighting, each sum and each SGD step in "
                 "turn; each returned, no replica stepped before the sums",
                 device_name(devices[0]), pair ? " and " : "", pair ? device_name(devices[1]) : "", tried);
    check_that(
        right,
        "a data-parallel step that fails (a device's forward and backward pass, a slice's weighting, a "
        "sum or an SGD step) returns the failure, and no replica steps before every sum is done",
        "%s", figures);
    for (int i = 0; i < n; ++i) replica_free(&r[i]);
    for (int i = 0; i < n; ++i) note_memory("the refused steps", devices[i], in_use[i]);
    host_floats_free(before[0]), host_floats_free(before[1]), host_floats_free(after);
}

int main(int argc, char **argv)
{
    const device d = check_device(argc, argv);
    check_step1(d);
    check_scaling();
    check_step3(d);
    check_step3_failure(d);
    check_slices();
    dp_data x;
    dp_data_make(&x);
    check_step5_one(d, &x);
    check_step5_empty_batch(d, &x);
    check_step5_empty_slice(d, &x);
    check_step5_two(d, &x);
    check_step5_failures(d, &x);
    check_that(dp_memory_back,
               "your data-parallel step leaves no memory behind: once the replicas are freed, every device's "
               "bytes in use are back where they were",
               "%s%s", dp_memory_back ? "after each of: " : "",
               dp_memory_back ? dp_parts : dp_memory_figures);
    dp_data_free(&x);
    return check_finish("08_parallel");
}
