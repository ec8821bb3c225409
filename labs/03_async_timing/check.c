/* check.c: does lab 03's lesson hold on this device? Uses your lab.c.
 *
 *   check03 --device sim:0      (or cpu, cuda:0)
 *
 * On a GPU, real or simulated: launches return before the work is done, so the
 * host clock alone lies; synchronising or reading one value tells the truth; a
 * read in every step makes the loop blocking; events measure the device's time;
 * the memory peak is exactly the tensors alive at once; the host can work while
 * the device computes; and a device kept "busy" by tiny launches does almost no
 * arithmetic. On the CPU nothing is asynchronous, and the check says exactly that.
 *
 * Why it can be trusted on a busy machine: no claim compares two wall-clock
 * times that another program could stretch. The check wraps the workload's run()
 * so that it records two events of its own, just before and just after the work
 * (a probe). A clock that started before the first event and stopped after the
 * device reached the second cannot read less than the time between them; a clock
 * that stopped while the device was still working must. Nor can a clock read
 * inside one of your calls say more than the check's own clock around that call
 * (both read wall_seconds, which never goes back): a clock in milliseconds does,
 * a thousand times over. On a simulated GPU the probe also queues 0.1 s of
 * device work in front of the workload (a kernel that sleeps), so that "still
 * working" holds by a wide margin however loaded the machine; a real GPU's
 * products take that long by themselves. Everything else is counts (copies,
 * waits, events, bytes), exact values, and the arithmetic of step 6 on made-up
 * measurements. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lab.h"

/* The lesson's loop: MATMULS products of n x n matrices, n = N_SIMULATED on the
 * CPU and simulated GPUs, N_REAL on a real GPU (the lesson's size, ~45 ms on an
 * H100, so that launching the work takes a tiny part of its time there too). */
#define N_SIMULATED 384
#define N_REAL 4096
#define MATMULS 16
#define HOLD_SECONDS 0.1 /* device work the probe queues first on a simulated GPU */
/* How far two clocks may disagree on one instant: CUDA stamps events to about
 * half a microsecond; the CPU and simulated GPUs use the host's own clock. */
#define SLACK_SECONDS 1e-5
#if defined(__SANITIZE_ADDRESS__)
#define LAUNCHES 20000 /* the sanitizers slow every launch down */
#else
#define LAUNCHES 100000 /* the lesson's x = x + 1 loop */
#endif

/* ---- the probe: the check's own events around the work ----------------------- */

typedef struct probed {
    workload w;                  /* first: run() gets &w and finds the probe around it */
    status (*inner)(workload *); /* the workload's own run() */
    event *before, *after;       /* recorded just before and just after the work */
    double hold_seconds;         /* device time queued in front of the work (simulated GPUs) */
    uint64_t syncs_at_run;       /* the device's blocking waits counted when run() began */
    bool fails;                  /* run() queues its work, then fails (an error path) */
} probed;

/* A kernel that occupies the device's queue for a given time. On a simulated
 * GPU it runs on the device's worker thread; sleeping, it leaves the cores to
 * the host. */
static void hold_device(const void *args, void *stream)
{
    (void)stream;
    double seconds;
    memcpy(&seconds, args, sizeof seconds);
    const double until = wall_seconds() + seconds;
    const struct timespec tick = { 0, 1000000 }; /* 1 ms */
    while (wall_seconds() < until) nanosleep(&tick, NULL);
}

/* The status a failing run() returns: what an allocation on a full device
 * gives, the most common failure inside real work. */
#define RUN_FAILURE STATUS_OUT_OF_MEMORY

static status probed_run(workload *w)
{
    probed *p = (probed *)w;
    device_counters c;
    /* Where a timing waits matters, not only how often: a wait counted before
     * run() began is one that no clock around run() can need. */
    p->syncs_at_run = counters_read(w->dev, &c) == STATUS_OK ? c.syncs : UINT64_MAX;
    status s = event_record(p->before);
    if (s == STATUS_OK && p->hold_seconds > 0)
        s = device_enqueue(w->dev, hold_device, &p->hold_seconds, sizeof p->hold_seconds);
    if (s == STATUS_OK) s = p->inner(w);
    if (s == STATUS_OK) s = event_record(p->after);
    if (s == STATUS_OK && p->fails)
        s = fail(RUN_FAILURE,
                 "%s: run() failed on purpose after queueing its work (the check's error path, as "
                 "an allocation on a full device would)",
                 w->name);
    return s;
}

static void probe_attach(probed *p)
{
    CHECK(event_create(&p->before, p->w.dev));
    CHECK(event_create(&p->after, p->w.dev));
    p->inner = p->w.run;
    p->hold_seconds = p->w.dev.kind == DEVICE_SIM ? HOLD_SECONDS : 0.0;
    p->w.run = probed_run;
}

static void probe_detach(probed *p)
{
    CHECK(device_synchronize(p->w.dev));
    p->w.run = p->inner;
    event_destroy(p->before);
    event_destroy(p->after);
}

/* The device's time for the last run's work, between the probe's events. */
static double probed_seconds(probed *p)
{
    double ms = 0.0;
    CHECK(device_synchronize(p->w.dev));
    CHECK(event_elapsed_ms(p->before, p->after, &ms));
    return ms / 1e3;
}

/* ---- what your functions ask of the library ------------------------------------
 *
 * lab.cmake links the check with -Wl,--wrap= for event_elapsed_ms,
 * host_work_chunk and device_get_properties: every call to them, yours
 * included, comes here first. While the check watches a call of yours, it keeps
 * what the events said and counts the chunks of host work, so that what you
 * report can be held against what happened: a device time that never came from
 * the events, or chunks of another size, could pass every bound. And it can
 * make a device's peak unknown, which no device here is. */
typedef struct watch {
    bool on;             /* a call of yours is being watched */
    int elapsed_calls;   /* calls of event_elapsed_ms that worked */
    double elapsed_ms;   /* what the last of them gave */
    int64_t chunk_calls; /* calls of host_work_chunk */
    int64_t odd_chunks;  /* those of them not of HOST_WORK_STEPS steps */
    int64_t odd_steps;   /* the steps of the last such call */
} watch;
static watch watched;

status __real_event_elapsed_ms(const event *start, const event *end, double *ms);
status __wrap_event_elapsed_ms(const event *start, const event *end, double *ms);
status __wrap_event_elapsed_ms(const event *start, const event *end, double *ms)
{
    const status s = __real_event_elapsed_ms(start, end, ms);
    if (watched.on && s == STATUS_OK) {
        ++watched.elapsed_calls;
        watched.elapsed_ms = *ms;
    }
    return s;
}

uint64_t __real_host_work_chunk(uint64_t state, int64_t count);
uint64_t __wrap_host_work_chunk(uint64_t state, int64_t count);
uint64_t __wrap_host_work_chunk(uint64_t state, int64_t count)
{
    if (watched.on) {
        ++watched.chunk_calls;
        if (count != HOST_WORK_STEPS) {
            ++watched.odd_chunks;
            watched.odd_steps = count;
        }
    }
    return __real_host_work_chunk(state, count);
}

/* The call of event_create, counted from the next, that the check refuses (0:
 * none), as a GPU out of event resources would: what a step made before it
 * must be destroyed all the same, and the refusal returned. */
static int refuse_event_in;

status __real_event_create(event **out, device d);
status __wrap_event_create(event **out, device d);
status __wrap_event_create(event **out, device d)
{
    if (refuse_event_in > 0 && --refuse_event_in == 0) {
        if (out) *out = NULL;
        return fail(STATUS_BACKEND_FAILED,
                    "event_create: no event can be made on %s (the check's refusal, as a GPU out of event "
                    "resources gives)",
                    device_name(d));
    }
    return __real_event_create(out, d);
}

static void watch_start(void) { watched = (watch){ .on = true }; }
static void watch_stop(void) { watched.on = false; }

/* Equal but for rounding: ms / 1e3 and ms * 1e-3 may differ in the last bit, as
 * may two orders of the same arithmetic. */
static bool near(double got, double want) { return fabs(got - want) <= 1e-12 * fabs(want); }

/* ---- steps 1 to 3: the naive clock, and two ways to make it honest ----------- */

/* A clock t that holds the whole work (the device's time between the probe's
 * events) and no more than the call (the check's own clock around it): a
 * time in seconds, taken after the device finished. */
static bool holds_the_work(double t, double work, double call)
{
    return t + SLACK_SECONDS >= work && t <= call + SLACK_SECONDS;
}

static void check_naive(device d, probed *p)
{
    device_counters c;
    double t = NAN;
    CHECK(counters_reset(d));
    /* The check's own clock around your call: yours, read inside it, can only say less. */
    const double started = wall_seconds();
    CHECK(lab_time_naive(&p->w, &t));
    const double call = wall_seconds() - started;
    const bool idle = event_done(p->after); /* asks; never waits */
    CHECK(counters_read(d, &c));
    const double work = probed_seconds(p);
    if (device_is_gpu(d)) {
        check_that(
            t < work && t <= call + SLACK_SECONDS,
            "launches return at once: the unsynchronised clock stops before the device has done the work",
            "%s: the clock says %.3f ms, the device worked %.3f ms between the events around run() "
            "(needs less: %.0fx), the check's clock around lab_time_naive %.3f ms (needs at most that)",
            p->w.name, 1e3 * t, 1e3 * work, work / t, 1e3 * call);
        /* A wait before run() leaves this run's work queued behind the call: the
         * next timing would start on a busy device and count it too. */
        const uint64_t before_run = p->syncs_at_run <= c.syncs ? p->syncs_at_run : c.syncs;
        check_that(
            c.syncs == 1 && before_run == 0 && idle,
            "the naive timing then waits for the device once, after run(), so that the next one starts "
            "on an idle device",
            "%llu blocking waits before run() began and %llu after it (expected 0 and 1: "
            "device_synchronize once the clock has stopped); when lab_time_naive returned, the device "
            "had %s the work run() queued",
            (unsigned long long)before_run, (unsigned long long)(c.syncs - before_run),
            idle ? "done" : "not yet done");
    } else {
        check_that(
            holds_the_work(t, work, call),
            "nothing is asynchronous on the CPU: the unsynchronised clock already contains the whole work",
            "%s: the clock says %.3f ms, the events around the work %.3f ms (needs at least as much; on a "
            "GPU it sees a tiny fraction), the check's clock around lab_time_naive %.3f ms (needs at most "
            "that: a time in seconds)",
            p->w.name, 1e3 * t, 1e3 * work, 1e3 * call);
    }
}

static void check_synchronized(probed *p)
{
    double t = NAN;
    const double started = wall_seconds();
    CHECK(lab_time_synchronized(&p->w, &t));
    const double call = wall_seconds() - started;
    const double work = probed_seconds(p);
    check_that(
        holds_the_work(t, work, call),
        "synchronising before the clock stops makes it contain the whole work, and no more than the call",
        "%s: the clock says %.3f ms, the device worked %.3f ms between the events around run(), the "
        "check's clock around lab_time_synchronized %.3f ms (needs work <= clock <= call: a time in "
        "seconds)",
        p->w.name, 1e3 * t, 1e3 * work, 1e3 * call);
}

static void check_read_one(device d, probed *p)
{
    device_counters c;
    double t = NAN;
    float value = NAN;
    /* w->expected is there for you to read too: during your call it says
     * nothing, so that only the value read from the device can match. */
    const float expected = p->w.expected;
    p->w.expected = NAN;
    CHECK(counters_reset(d));
    const double started = wall_seconds();
    CHECK(lab_time_read_one(&p->w, &t, &value));
    const double call = wall_seconds() - started;
    p->w.expected = expected;
    CHECK(counters_read(d, &c));
    const double work = probed_seconds(p);
    check_that(value == expected && holds_the_work(t, work, call),
               "reading one value waits for the whole loop, as synchronising does",
               "read %.0f (expected %.0f) after %.3f ms; the device worked %.3f ms, the check's clock around "
               "lab_time_read_one %.3f ms (needs work <= clock <= call: a time in seconds)",
               (double)value, (double)expected, 1e3 * t, 1e3 * work, 1e3 * call);
    if (device_is_gpu(d))
        check_that(c.d2h_copies == 1 && c.syncs == 1,
                   "the read is the only wait: one copy to the host, one blocking wait, no synchronize",
                   "%llu device-to-host copies, %llu blocking waits (expected 1 and 1)",
                   (unsigned long long)c.d2h_copies, (unsigned long long)c.syncs);
}

/* ---- step 4: the benchmark -------------------------------------------------------- */

/* lab_benchmark, where a failure other than an unwritten step is a failed claim
 * (reading the events before the device reached the end, say), not an abort.
 * The claim is shown once, on the first call. *call is the check's clock
 * around it (when call is not NULL). */
static bool benchmark(workload *w, measurement *m, bool show, double *call)
{
    const double started = wall_seconds();
    const status s = lab_benchmark(w, m);
    if (call) *call = wall_seconds() - started;
    if (s == STATUS_TODO) CHECK(s);
    if (show || s != STATUS_OK)
        check_that(s == STATUS_OK,
                   "the benchmark waits for the device to reach its end event before it reads the events",
                   "lab_benchmark on %s returned %s%s%s", w->name, status_name(s), s == STATUS_OK ? "" : ": ",
                   s == STATUS_OK ? "" : last_error());
    if (s != STATUS_OK) CHECK(device_synchronize(w->dev));
    return s == STATUS_OK;
}

static void check_benchmark(device d, probed *p)
{
    measurement m;
    double call = NAN;
    device_counters before, after;
    /* A tensor larger than x and y together, made and freed first: a peak that the
     * benchmark did not restart shows it. */
    tensor *other = NULL;
    CHECK(tensor_zeros(&other, d, shape1(2 * p->w.n * p->w.n + 1)));
    tensor_free(other);
    CHECK(counters_read(d, &before));
    watch_start();
    const bool measured = benchmark(&p->w, &m, true, &call);
    watch_stop();
    if (!measured) return;
    CHECK(counters_read(d, &after));
    const double work = probed_seconds(p);
    if (device_is_gpu(d))
        check_that(m.launch_seconds < work,
                   "the benchmark's clock at run()'s return misses the work, as the naive clock does",
                   "%.3f ms when run() returned; the device worked %.3f ms (needs less)",
                   1e3 * m.launch_seconds, 1e3 * work);
    check_that(
        m.device_seconds + SLACK_SECONDS >= work && m.device_seconds <= m.host_seconds + SLACK_SECONDS,
        "events measure the device's time: they span the work and lie within the host's clock",
        "events %.3f ms; the work %.3f ms between the check's events inside yours, the host's clock %.3f "
        "ms (needs work <= events <= host)",
        1e3 * m.device_seconds, 1e3 * work, 1e3 * m.host_seconds);
    char said[120] = "event_elapsed_ms was never called during lab_benchmark";
    if (watched.elapsed_calls > 0)
        snprintf(said, sizeof said,
                 "%d call%s of event_elapsed_ms during lab_benchmark, the last gave %.6f ms",
                 watched.elapsed_calls, watched.elapsed_calls == 1 ? "" : "s", watched.elapsed_ms);
    check_that(
        watched.elapsed_calls > 0 && near(m.device_seconds, watched.elapsed_ms / 1e3),
        "the device's time is the events' own: device_seconds is what event_elapsed_ms gave, in seconds",
        "%s; device_seconds %.6f ms", said, 1e3 * m.device_seconds);
    check_that(
        m.launch_seconds >= 0 && m.launch_seconds <= m.host_seconds + SLACK_SECONDS &&
            m.host_seconds <= call + SLACK_SECONDS,
        "the benchmark's host clocks lie within its call: run()'s return, then the end event, in seconds",
        "launch_seconds %.3f ms, host_seconds %.3f ms, the check's clock around lab_benchmark %.3f ms "
        "(needs 0 <= launch <= host <= call: times in seconds)",
        1e3 * m.launch_seconds, 1e3 * m.host_seconds, 1e3 * call);
    /* Alive at the peak: the result (kept) and x and y (made and freed by run()). */
    const size_t matrix = (size_t)(p->w.n * p->w.n) * sizeof(float);
    const size_t expected = tensor_bytes(p->w.result) + 2 * matrix;
    check_that(m.peak_bytes == expected && after.memory_current == tensor_bytes(p->w.result),
               "peak memory after a reset is exactly the tensors alive together: x, y and the result",
               "peak %zu bytes, expected %zu = 4 + 2 x %zu; %zu bytes left in use afterwards (expected %zu)",
               m.peak_bytes, expected, matrix, after.memory_current, tensor_bytes(p->w.result));
    check_that(m.busy_seconds == after.busy_seconds,
               "the benchmark reports the device's busy time over this run, read once the device is done",
               "busy_seconds %.6f s, the counter now %.6f s (0 where the device does not count it)",
               m.busy_seconds, after.busy_seconds);
    check_that(after.events == before.events, "the benchmark destroys every event it creates",
               "%llu events alive on %s before it, %llu after", (unsigned long long)before.events,
               device_name(d), (unsigned long long)after.events);
}

/* A read in every step: the given loop's own counts, then your benchmark of it. */
static void check_reading_loop(device d, int64_t n)
{
    probed p = { 0 };
    device_counters c;
    measurement m;
    CHECK(workload_matmuls_reading(&p.w, d, n, MATMULS));
    CHECK(counters_reset(d));
    CHECK(p.w.run(&p.w));
    CHECK(device_synchronize(d));
    CHECK(counters_read(d, &c));
    if (device_is_gpu(d)) {
        check_that(
            c.d2h_copies == (uint64_t)MATMULS && c.syncs == (uint64_t)MATMULS + 1,
            "a read in every step is a blocking copy in every step",
            "%d steps: %llu device-to-host copies, %llu blocking waits (expected %d and %d, the last one "
            "the final synchronize)",
            MATMULS, (unsigned long long)c.d2h_copies, (unsigned long long)c.syncs, MATMULS, MATMULS + 1);
        probe_attach(&p);
        if (benchmark(&p.w, &m, false, NULL)) {
            const double work = probed_seconds(&p);
            check_that(m.launch_seconds >= work / 2,
                       "with a read in every step even the clock at run()'s return sees the work",
                       "%s: %.1f ms when run() returned; the device worked %.1f ms (needs at least half)",
                       p.w.name, 1e3 * m.launch_seconds, 1e3 * work);
        }
        probe_detach(&p);
    } else {
        check_that(c.d2h_copies == 0 && c.d2d_copies == (uint64_t)MATMULS && c.syncs == 0,
                   "on the CPU a read is a plain copy in host memory, with nothing to wait for",
                   "%d steps: %llu copies, %llu device-to-host, %llu blocking waits", MATMULS,
                   (unsigned long long)c.d2d_copies, (unsigned long long)c.d2h_copies,
                   (unsigned long long)c.syncs);
    }
    workload_free(&p.w);
}

/* ---- step 5: the host keeps working ----------------------------------------------- */

static void check_host_work(device d, probed *p)
{
    int64_t chunks = -1;
    device_counters before, after;
    CHECK(counters_read(d, &before));
    watch_start();
    CHECK(lab_count_host_work(&p->w, &chunks));
    watch_stop();
    const bool work_done = event_done(p->after); /* asks; never waits */
    CHECK(counters_read(d, &after));
    if (device_is_gpu(d))
        check_that(chunks >= 50, "the host keeps working while the device computes",
                   "%lld chunks of host work fitted inside %s (needs >= 50; 0 if the host waited first)",
                   (long long)chunks, p->w.name);
    else
        check_that(chunks == 0,
                   "on the CPU no host work fits inside the device's work: it was done before run() returned",
                   "%lld chunks (expected 0)", (long long)chunks);
    /* The chunk is the unit of the count: its size is the lesson's, or the
     * count means nothing. */
    char odd[120] = "";
    if (watched.odd_chunks > 0)
        snprintf(odd, sizeof odd, ", %lld of them of %lld step%s", (long long)watched.odd_chunks,
                 (long long)watched.odd_steps, watched.odd_steps == 1 ? "" : "s");
    check_that(chunks == watched.chunk_calls && watched.odd_chunks == 0,
               "every chunk counted is one call of host_work_chunk with HOST_WORK_STEPS steps",
               "%lld chunks counted, %lld calls of host_work_chunk%s (want one call a chunk, each of "
               "HOST_WORK_STEPS = %d steps)",
               (long long)chunks, (long long)watched.chunk_calls, odd, HOST_WORK_STEPS);
    check_that(work_done, "the host stops working only once the device has done the work",
               "when lab_count_host_work returned (%lld chunks), the device had %s the work run() queued",
               (long long)chunks, work_done ? "done" : "not yet done");
    check_that(after.events == before.events, "counting host work destroys its event",
               "%llu events alive on %s before it, %llu after", (unsigned long long)before.events,
               device_name(d), (unsigned long long)after.events);
}

/* ---- error paths: a run() that fails ------------------------------------------- */

/* Every step once more, with a run() that queues its work and then fails (an
 * allocation on a full device, say): lab.h promises the status of the first
 * call that failed, never STATUS_OK over a run that did not happen, a time
 * from each clock of steps 1 to 3 all the same (a caller that prints it must
 * not print garbage), and the events a step made are destroyed on this path
 * too. */
static void check_failed_run(device d, probed *p)
{
    static const char *const names[] = { "lab_time_naive", "lab_time_synchronized", "lab_time_read_one",
                                         "lab_benchmark", "lab_count_host_work" };
    enum { STEPS = sizeof names / sizeof names[0], CLOCKS = 3 };
    device_counters before, after;
    double seconds[CLOCKS], calls[CLOCKS];
    float value = NAN;
    measurement m;
    int64_t chunks = -1;
    status got[STEPS];
    CHECK(device_synchronize(d));
    CHECK(counters_read(d, &before));
    p->fails = true;
    for (int i = 0; i < STEPS; ++i) {
        const double started = wall_seconds();
        if (i < CLOCKS) seconds[i] = NAN; /* NaN: never written */
        switch (i) {
        case 0: got[i] = CHECK_YOURS(lab_time_naive(&p->w, &seconds[i])); break;
        case 1: got[i] = CHECK_YOURS(lab_time_synchronized(&p->w, &seconds[i])); break;
        case 2: got[i] = CHECK_YOURS(lab_time_read_one(&p->w, &seconds[i], &value)); break;
        case 3: got[i] = CHECK_YOURS(lab_benchmark(&p->w, &m)); break;
        default: got[i] = CHECK_YOURS(lab_count_host_work(&p->w, &chunks)); break;
        }
        if (i < CLOCKS) calls[i] = wall_seconds() - started;
        CHECK(device_synchronize(d)); /* the failed run's work, before the next step */
    }
    p->fails = false;
    CHECK(counters_read(d, &after));
    bool reported = true;
    char figures[400] = "";
    for (int i = 0; i < STEPS; ++i) {
        reported = reported && got[i] == RUN_FAILURE;
        check_append(figures, sizeof figures, "%s%s %s", i ? ", " : "", names[i], status_name(got[i]));
    }
    check_that(reported, "a run() that fails is reported: every step returns run()'s status, never STATUS_OK",
               "run() failed with %s after queueing its work: %s", status_name(RUN_FAILURE), figures);
    bool timed = true;
    char times[400] = "";
    for (int i = 0; i < CLOCKS; ++i) {
        timed = timed && seconds[i] >= 0 && seconds[i] <= calls[i] + SLACK_SECONDS;
        check_append(times, sizeof times, "%s%s wrote %.3f ms (the check's clock around it %.3f ms)",
                     i ? ", " : "", names[i], 1e3 * seconds[i], 1e3 * calls[i]);
    }
    check_that(timed, "a clock of steps 1 to 3 writes *seconds even when run() fails",
               "run() failed: %s (want a time from 0 to the check's clock; nan: *seconds never written)",
               times);
    check_that(
        after.events == before.events && after.memory_current == before.memory_current,
        "after a failed run() no event is left behind, and the device's bytes in use are back where they "
        "were",
        "%llu events alive on %s before the five steps, %llu after; %zu bytes in use before, %zu after",
        (unsigned long long)before.events, device_name(d), (unsigned long long)after.events,
        before.memory_current, after.memory_current);
}

/* Each event a step makes refused in turn: lab_benchmark's first and second,
 * lab_count_host_work's one. The refusal is the first call that failed, so it
 * is returned as it is, and an event made before it is destroyed. */
static void check_event_refused(device d, probed *p)
{
    static const char *const names[] = { "lab_benchmark, its first event", "lab_benchmark, its second event",
                                         "lab_count_host_work, its event" };
    enum { TRIES = sizeof names / sizeof names[0] };
    bool all = true;
    char figures[600] = "";
    for (int i = 0; i < TRIES; ++i) {
        device_counters before, after;
        measurement m;
        int64_t chunks = -1;
        CHECK(device_synchronize(d));
        CHECK(counters_read(d, &before));
        refuse_event_in = i == 1 ? 2 : 1;
        const status s =
            i < 2 ? CHECK_YOURS(lab_benchmark(&p->w, &m)) : CHECK_YOURS(lab_count_host_work(&p->w, &chunks));
        const bool refused = refuse_event_in == 0;
        refuse_event_in = 0;
        CHECK(device_synchronize(d)); /* a run() queued all the same, before the count */
        CHECK(counters_read(d, &after));
        const bool held = refused && s == STATUS_BACKEND_FAILED && after.events == before.events;
        all = all && held;
        check_append(figures, sizeof figures, "%s%s refused: %s, %lld event%s left behind", i ? "; " : "",
                     names[i], refused ? status_name(s) : "never asked for",
                     (long long)after.events - (long long)before.events,
                     after.events - before.events == 1 ? "" : "s");
    }
    check_that(all,
               "an event that cannot be made is returned as the failure, and the events made before it are "
               "destroyed",
               "%s (want STATUS_BACKEND_FAILED, event_create's own, and 0 left behind)", figures);
}

/* ---- the workload's own device, when it is not the first GPU ------------------- */

/* A PyTorch habit, torch.cuda.synchronize() with no device, becomes
 * device_synchronize(try_gpu(0)) in C: right on the first GPU, and a wait for
 * nothing on the second, where the work is. So the steps run once more on
 * another GPU of the same kind (sim:1 beside sim:0), on smaller products: the
 * probe's hold keeps that device busy long enough by itself. */
static void check_second_gpu(device d)
{
    const device other = { d.kind, d.index == 0 ? 1 : 0 };
    if (!device_is_gpu(d)) return;
    if (!device_exists(other)) {
        /* Said, not left out in silence: with one GPU, a wait on the first GPU
         * passes everything else, and ./lab check must not call that done. */
        check_second_gpu_absent(d, "whether every step waits for the workload's own device");
        return;
    }
    probed q = { 0 };
    device_counters c;
    measurement m;
    double naive = NAN, synced = NAN;
    int64_t chunks = -1;
    CHECK(workload_matmuls(&q.w, other, d.kind == DEVICE_CUDA ? N_REAL : 128, MATMULS));
    CHECK(q.w.run(&q.w)); /* a warm-up */
    CHECK(device_synchronize(other));
    probe_attach(&q);

    CHECK(counters_reset(other));
    CHECK(lab_time_naive(&q.w, &naive));
    const bool naive_idle = event_done(q.after);
    CHECK(counters_read(other, &c));
    const uint64_t naive_waits = c.syncs;
    probed_seconds(&q);

    CHECK(lab_time_synchronized(&q.w, &synced));
    const double synced_work = probed_seconds(&q);

    const bool measured = benchmark(&q.w, &m, false, NULL);
    device_counters counted;
    CHECK(counters_read(other, &counted)); /* the benchmark reset them; the device is done */
    const double benchmark_work = probed_seconds(&q);

    CHECK(lab_count_host_work(&q.w, &chunks));
    const bool worked_until_done = event_done(q.after);
    probed_seconds(&q);

    const bool holds = naive_waits == 1 && naive_idle && synced + SLACK_SECONDS >= synced_work && measured &&
                       m.device_seconds + SLACK_SECONDS >= benchmark_work &&
                       m.host_seconds + SLACK_SECONDS >= benchmark_work && worked_until_done;
    check_that(holds, "every step waits for the workload's own device (w->dev), not for the first GPU",
               "%s on %s: the naive timing waited %llu times there (want 1) and left it %s; the synchronised "
               "clock %.3f ms for %.3f ms of work; the benchmark's events %.3f ms and host clock %.3f ms for "
               "%.3f ms; the host work stopped with the work %s",
               q.w.name, device_name(other), (unsigned long long)naive_waits, naive_idle ? "idle" : "busy",
               1e3 * synced, 1e3 * synced_work, measured ? 1e3 * m.device_seconds : NAN,
               measured ? 1e3 * m.host_seconds : NAN, 1e3 * benchmark_work,
               worked_until_done ? "done" : "not yet done");
    /* The benchmark's memory peak and busy time are w->dev's too: counters
     * reset and read on the first GPU describe a device that did nothing. */
    const size_t matrix = (size_t)(q.w.n * q.w.n) * sizeof(float);
    const size_t expected = tensor_bytes(q.w.result) + 2 * matrix;
    check_that(measured && m.peak_bytes == expected && m.busy_seconds == counted.busy_seconds,
               "the benchmark's memory peak and busy time are those of the workload's own device (w->dev)",
               "%s on %s: peak %zu bytes (want %zu, x, y and the result), busy %.6f s (%s's counter: %.6f s)",
               q.w.name, device_name(other), measured ? m.peak_bytes : 0, expected,
               measured ? m.busy_seconds : NAN, device_name(other), counted.busy_seconds);
    probe_detach(&q);
    workload_free(&q.w);
}

/* ---- step 6: the utilisation illusion ----------------------------------------------- */

/* A device of the other kind, for what must follow the workload's own device:
 * the CPU beside a GPU, the first GPU beside the CPU (the CPU itself when
 * there is none). Their peaks differ (a simulated GPU models a card of its own). */
static device other_kind(device d) { return device_is_gpu(d) ? device_cpu() : try_gpu(0); }

/* The arithmetic, on a made-up measurement whose answers are exact: on the
 * checked device, and on one of the other kind, whose peak differs. */
static void check_utilisation_arithmetic(device d)
{
    const measurement counted = {
        .launch_seconds = 0.001, .host_seconds = 2.0, .device_seconds = 1.5, .busy_seconds = 0.5
    };
    measurement uncounted = counted;
    uncounted.busy_seconds = 0.0;
    const workload w = { .name = "made up: 4 GFLOP", .dev = d, .flops = 4e9 };
    utilisation a, b;
    status s = lab_utilisation(&w, &counted, &a);
    if (s == STATUS_TODO) CHECK(s);
    if (s == STATUS_OK) s = lab_utilisation(&w, &uncounted, &b);
    const bool ok = s == STATUS_OK;
    /* The fraction from the peak the function reports: whichever device that
     * is, it must be GFLOP/s over it, not a percentage. */
    check_that(
        ok && near(a.busy_fraction, 0.25) && near(b.busy_fraction, 0.75) && near(a.achieved_gflops, 2.0) &&
            a.peak_gflops > 0 && near(a.peak_fraction, 2.0 / a.peak_gflops),
        "busy fraction = busy time (else the events' time) over the host's time; GFLOP/s over the host's "
        "time; the peak as a fraction",
        "4 GFLOP, host 2 s, events 1.5 s, busy 0.5 s: busy %.4g (want 0.25), without a busy time %.4g "
        "(want 0.75), %.4g GFLOP/s (want 2), %.4g of a %.4g GFLOP/s peak (want %.4g)%s",
        ok ? a.busy_fraction : NAN, ok ? b.busy_fraction : NAN, ok ? a.achieved_gflops : NAN,
        ok ? a.peak_fraction : NAN, ok ? a.peak_gflops : NAN, ok ? 2.0 / a.peak_gflops : NAN,
        check_failure_text(s));

    /* The same measurement of a workload on each device: the peak is w->dev's. */
    const device devices[2] = { d, other_kind(d) };
    const int count = device_equal(devices[0], devices[1]) ? 1 : 2;
    bool own = true;
    char figures[400] = "";
    for (int i = 0; i < count; ++i) {
        device_properties props;
        utilisation u = { 0 };
        CHECK(device_get_properties(devices[i], &props));
        const workload on = { .name = "made up: 4 GFLOP", .dev = devices[i], .flops = 4e9 };
        const status si = CHECK_YOURS(lab_utilisation(&on, &counted, &u));
        const double want = props.peak_gflops > 0 ? 2.0 / props.peak_gflops : 0.0;
        const bool holds =
            si == STATUS_OK && u.peak_gflops == props.peak_gflops && near(u.peak_fraction, want);
        own = own && holds;
        check_append(figures, sizeof figures, "%s%s's %.1f GFLOP/s: peak %.1f, %.4g of it (want %.4g)%s",
                     i ? "; " : "", device_name(devices[i]), props.peak_gflops, u.peak_gflops,
                     u.peak_fraction, want, check_failure_text(si));
    }
    check_that(own, "the peak is that of the workload's own device (w->dev), not another's",
               "2 GFLOP/s on %s", figures);

    /* A device whose peak the kit does not know (a GPU it has no figures for)
     * reports 0; the check makes w->dev report it. */
    utilisation unknown = { 0 };
    check_pretend_unknown_peak(true);
    const status su = CHECK_YOURS(lab_utilisation(&w, &counted, &unknown));
    check_pretend_unknown_peak(false);
    check_that(su == STATUS_OK && unknown.peak_gflops == 0.0 && unknown.peak_fraction == 0.0,
               "an unknown peak (0) gives a fraction of 0, not a division by 0",
               "2 GFLOP/s on %s, made to report a peak of 0 (unknown): peak %g, fraction %g (want 0 and 0)%s",
               device_name(d), unknown.peak_gflops, unknown.peak_fraction, check_failure_text(su));

    /* A workload on a device that does not exist has no peak: the library's
     * refusal is the first call that failed, and so the answer (lab.h). */
    const workload nowhere = { .name = "made up: 4 GFLOP",
                               .dev = { DEVICE_SIM, device_count(DEVICE_SIM) },
                               .flops = 4e9 };
    device_properties none;
    const status library = device_get_properties(nowhere.dev, &none);
    utilisation missing = { 0 };
    clear_error();
    const status sm = CHECK_YOURS(lab_utilisation(&nowhere, &counted, &missing));
    check_note_refusal(sm, "lab_utilisation (a device that does not exist)");
    check_that(
        library != STATUS_OK && sm == library,
        "the utilisation of a workload on a device that does not exist is refused with "
        "device_get_properties's own failure",
        "a workload on %s, which does not exist here: %s (want %s, device_get_properties's, returned as "
        "it is)",
        device_name(nowhere.dev), status_name(sm), status_name(library));

    /* A time that is not above 0 is no measurement: 0, a negative one, and NaN
     * (what a clock never written gives), which is not above 0 either. */
    const double bad_times[] = { 0.0, -2.0, NAN };
    bool refused = true;
    char said[160] = "";
    for (size_t i = 0; i < sizeof bad_times / sizeof bad_times[0]; ++i) {
        measurement unmeasured = counted;
        utilisation u;
        unmeasured.host_seconds = bad_times[i];
        const status si = lab_utilisation(&w, &unmeasured, &u);
        refused = refused && si == STATUS_BAD_ARGUMENT;
        check_append(said, sizeof said, "%shost %g s: %s", i ? ", " : "", bad_times[i], status_name(si));
    }
    check_that(refused, "a host time that is not above 0 is refused: no utilisation without a measurement",
               "%s (want STATUS_BAD_ARGUMENT for each)", said);
}

/* The lesson's x = x + 1 loop, measured. The busy time (counted on a simulated
 * GPU; the events' span elsewhere, at most what a meter such as nvidia-smi could
 * see) only grows on a loaded machine, and the arithmetic's least time is fixed:
 * their ratio cannot be pushed under the bar by another program. */
static void check_illusion(device d)
{
    workload w;
    measurement m;
    utilisation u = { 0 };
    float value = NAN;
    CHECK(workload_increments(&w, d, LAUNCHES));
    if (benchmark(&w, &m, false, NULL)) {
        CHECK(tensor_item(w.result, &value));
        CHECK(lab_utilisation(&w, &m, &u));
        const double arithmetic = u.peak_gflops > 0 ? w.flops / (1e9 * u.peak_gflops) : NAN;
        const double busy = u.busy_fraction * m.host_seconds;
        const bool far_more = !(arithmetic > 0) || busy >= 1000 * arithmetic; /* an unknown peak: no bar */
        check_that(
            value == (float)LAUNCHES && u.peak_fraction < 1e-3 && far_more,
            "the utilisation illusion: a device kept busy by tiny launches does almost no arithmetic",
            "x = %.0f after %d launches; busy %.0f%% of %.1f ms, %.0fx the %.3f us its arithmetic needs at "
            "the peak (needs >= 1000x), yet %.2g GFLOP/s = %.5f%% of the %.0f GFLOP/s peak (needs < 0.1%%)",
            (double)value, LAUNCHES, 100 * u.busy_fraction, 1e3 * m.host_seconds, busy / arithmetic,
            1e6 * arithmetic, u.achieved_gflops, 100 * u.peak_fraction, u.peak_gflops);
    }
    workload_free(&w);
}

int main(int argc, char **argv)
{
    const device d = check_device(argc, argv);
    const int64_t n = d.kind == DEVICE_CUDA ? N_REAL : N_SIMULATED;
    probed p = { 0 };
    CHECK(workload_matmuls(&p.w, d, n, MATMULS));
    CHECK(p.w.run(&p.w)); /* a warm-up: the first run starts OpenBLAS's threads */
    CHECK(device_synchronize(d));
    probe_attach(&p);
    check_naive(d, &p);
    check_synchronized(&p);
    check_read_one(d, &p);
    check_benchmark(d, &p);
    check_reading_loop(d, n);
    check_host_work(d, &p);
    check_failed_run(d, &p);
    check_event_refused(d, &p);
    probe_detach(&p);
    workload_free(&p.w);
    check_utilisation_arithmetic(d);
    check_illusion(d);
    check_second_gpu(d);
    return check_finish("03_async_timing");
}
