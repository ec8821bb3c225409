/* check.c: lab 10's claims, made by every rank of an MPI run (the launcher
 * starts LABKIT_RANKS copies: ./lab check 10 runs 2, then 3). Each rank checks
 * what it sees; the ranks agree on every verdict through a reduction before
 * rank 0 prints it, so that every rank counts the same claims and exits with
 * the same code. A rank that fails a call of the kit ends the whole run with
 * its message; a rank that waits too long (a deadlock) ends it with where it
 * waited, never a hang.
 *
 * The check counts what your ring sends through MPI's profiling interface:
 * its own MPI_Send, MPI_Recv and MPI_Sendrecv stand in front of the library's
 * (PMPI_*), count the bytes and wait with a deadline. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"
#include "nccl_mpi.h"

static int world_rank, world_size;
static const char *current_claim = "the check starts";
/* What a deadlock in the claim being checked most likely means. */
#define SENDS_FIRST "does every rank send before it receives? MPI_Sendrecv does both at once"
static const char *deadlock_hint = SENDS_FIRST;

/* ---- no hang, ever ---------------------------------------------------------- */

/* A blocking call of the ring waits at most this long: a partner that has
 * not answered by then never will (two ranks both sending first). */
#define WAIT_DEADLINE_S 10.0
/* The whole check takes about 2 s; past this, something waits forever. CTest
 * gives each test 120 s. */
#define WATCHDOG_S 50

/* A rank other than 0: its standard output before it went to /dev/null, for
 * the words of a rank that waits alone. */
static int rank_stdout = -1;

/* Ends the run with where this rank waited, as the failure of the claim being
 * checked. Rank 0 says it at once. Another rank says it on stderr, then waits
 * longer than ranks' deadlines can drift apart on a busy machine: in a
 * deadlock, rank 0 waits too and its words end the run; if the run is still
 * there, rank 0 is not waiting in a call of yours (it went on without this
 * rank, or waits in the check's own), and this rank's words, on the
 * standard output it had, are the verdict. */
static void stuck(const char *where, double waited)
{
    if (world_rank == 0) {
        printf(
            "  FAIL  %s: rank 0 waited %.0f s %s, and no rank answered: a deadlock (every rank waiting for "
            "another: %s)\n",
            current_claim, waited, where, deadlock_hint);
        fflush(stdout);
        sleep(1); /* the launcher forwards it before the abort kills the run (MPICH's drops it otherwise) */
        PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
    }
    fprintf(stderr, "rank %d: waited %.0f s %s\n", world_rank, waited, where);
    fflush(stderr);
    sleep(10);
    if (rank_stdout >= 0) {
        dprintf(
            rank_stdout,
            "  FAIL  %s: rank %d waited %.0f s %s, and no rank answered, while rank 0 waited in no call of "
            "yours: a rank went on without the send or receive this one waits for (does every rank make "
            "the same calls, the same number of steps?)\n",
            current_claim, world_rank, waited, where);
        sleep(1); /* as rank 0's: forwarded before the abort */
    }
    PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
}

/* Ends the run with an error MPI returned to one of your calls (the check
 * asks MPI to return errors, not to abort in its own words, which name
 * MPI_Testall, a call of the check's): the claim being checked, the call,
 * the rank and MPI's words, on this rank's standard output. */
static void mpi_failed(const char *call, int peer, int code)
{
    char words[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    PMPI_Error_string(code, words, &length);
    const int out = world_rank == 0 ? STDOUT_FILENO : rank_stdout;
    fflush(stdout);
    if (out >= 0)
        dprintf(
            out,
            "  FAIL  %s: rank %d's %s %d failed: %s (a message longer than its receive, a count or a type "
            "that differ between the two sides, a rank outside the communicator?)\n",
            current_claim, world_rank, call, peer, words);
    sleep(1); /* forwarded before the abort */
    PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
}

static char watchdog_where[200] = "in the check";

static void watchdog(int signal)
{
    (void)signal;
    char text[512];
    snprintf(text, sizeof text, "rank %d still waiting after %d s %s", world_rank, WATCHDOG_S,
             watchdog_where);
    stuck(text, WATCHDOG_S);
}

/* ---- MPI's profiling interface: what your ring sends ------------------------ */

static long long bytes_sent, sends;
/* MPI's own collective sums called by your code (the check's are PMPI_'s):
 * step 3 sums with your ring. */
static long long library_sums;

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    library_sums++;
    return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    library_sums++;
    return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

/* Receives from no rank of their communicator: a negative source (C's
 * (rank - 1) % p on rank 0 is -1, Open MPI's MPI_ANY_SOURCE, and a ring that
 * takes whatever comes works by accident; MPICH refuses it) or one past the
 * end. The first: the receiving rank, the source and the communicator's size. */
static struct {
    long long count;
    int rank, source, size;
} stray_sources;

static void note_source(int source, MPI_Comm comm)
{
    int size = 0;
    PMPI_Comm_size(comm, &size);
    if ((source < 0 || source >= size) && stray_sources.count++ == 0) {
        PMPI_Comm_rank(comm, &stray_sources.rank);
        stray_sources.source = source, stray_sources.size = size;
    }
}

/* While the ring is given chunks longer than MPI's int count: any send or
 * receive ends the run (every rank makes it alike), before a count cast to
 * int, wrapped, sends or receives garbage. */
static bool oversized;

static void sent_oversized(const char *call, int count)
{
    char text[600];
    snprintf(text, sizeof text,
             "  FAIL  %s: rank %d's ring called %s with a count of %d for chunks of more than INT_MAX = %d "
             "floats: the cast to MPI's int count wrapped; refuse such an n (STATUS_BAD_ARGUMENT) before "
             "allocating or sending\n",
             current_claim, world_rank, call, count, INT_MAX);
    fflush(stdout);
    if (world_rank == 0) {
        dprintf(STDOUT_FILENO, "%s", text);
        sleep(1); /* forwarded before the abort */
        PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
    }
    sleep(5); /* rank 0 makes the same call, and says it */
    if (rank_stdout >= 0) dprintf(rank_stdout, "%s", text);
    sleep(1);
    PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
}

static int type_bytes(MPI_Datatype type)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    return size;
}

/* Waits for requests as MPI_Waitall would, but sleeping between tests and
 * giving up after WAIT_DEADLINE_S with what it waited for. */
static int wait_for(MPI_Request *requests, int n, MPI_Status *statuses, const char *call, int peer,
                    long long bytes)
{
    const double start = PMPI_Wtime();
    for (long tries = 0;; ++tries) {
        int done = 0;
        const int code = PMPI_Testall(n, requests, &done, statuses);
        if (code == MPI_ERR_IN_STATUS && statuses != MPI_STATUSES_IGNORE)
            for (int i = 0; i < n; ++i)
                if (statuses[i].MPI_ERROR != MPI_SUCCESS) mpi_failed(call, peer, statuses[i].MPI_ERROR);
        if (code != MPI_SUCCESS) mpi_failed(call, peer, code);
        if (done) return code;
        const double waited = PMPI_Wtime() - start;
        if (waited > WAIT_DEADLINE_S) {
            char where[200];
            snprintf(where, sizeof where, "in %s %d (%lld bytes)", call, peer, bytes);
            stuck(where, waited);
        }
        if (tries > 50) nanosleep(&(struct timespec){ 0, 200000 }, NULL);
    }
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (oversized) sent_oversized("MPI_Send", count);
    bytes_sent += (long long)count * type_bytes(type);
    sends++;
    MPI_Request request;
    const int code = PMPI_Isend(buf, count, type, dest, tag, comm, &request);
    if (code != MPI_SUCCESS) return code;
    return wait_for(&request, 1, MPI_STATUSES_IGNORE, "MPI_Send to rank", dest,
                    (long long)count * type_bytes(type));
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (oversized) sent_oversized("MPI_Recv", count);
    note_source(source, comm);
    MPI_Request request;
    MPI_Status statuses[1];
    const int code = PMPI_Irecv(buf, count, type, source, tag, comm, &request);
    if (code != MPI_SUCCESS) return code;
    const int waited =
        wait_for(&request, 1, statuses, "MPI_Recv from rank", source, (long long)count * type_bytes(type));
    if (status != MPI_STATUS_IGNORE) *status = statuses[0];
    return waited;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Status *status)
{
    if (oversized) sent_oversized("MPI_Sendrecv", sendcount);
    bytes_sent += (long long)sendcount * type_bytes(sendtype);
    sends++;
    note_source(source, comm);
    MPI_Request requests[2];
    MPI_Status statuses[2];
    int code = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[0]);
    if (code == MPI_SUCCESS)
        code = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &requests[1]);
    if (code != MPI_SUCCESS) return code;
    char call[80]; /* both ranks: the one it waits for may be either */
    snprintf(call, sizeof call, "MPI_Sendrecv from rank %d, to rank", source);
    code = wait_for(requests, 2, statuses, call, dest, (long long)sendcount * type_bytes(sendtype));
    if (status != MPI_STATUS_IGNORE) *status = statuses[0];
    return code;
}

/* ---- what your calls leave allocated ---------------------------------------- */

/* lab.cmake links this check with -Wl,--wrap for malloc, calloc, realloc,
 * free and step 3's copies (tensor_to_host, tensor_copy_from_host,
 * tensor_copy_from_host_async): every call of them in this program (yours,
 * the kit's, not MPI's) comes here first. While the check watches a call of
 * yours, on this thread alone, each block allocated is noted until it is
 * freed; one still noted when the call has returned is a leak, which a
 * training loop repeats every step. (LeakSanitizer cannot say it: the
 * launcher turns it off, since Open MPI keeps allocations of its own to the
 * end.) check_refuse_call(at) makes the at-th allocation or copy fail, as a
 * full host or a failing device would. */

#define NOTED_BLOCKS 256

/* A queued upload from host memory, and how often the host had waited for
 * its device by then (device_counters.syncs: every blocking read, blocking
 * upload and synchronisation counts one). */
typedef struct queued_upload {
    uintptr_t src;
    size_t bytes;
    device dev;
    uint64_t syncs;
} queued_upload;

static _Thread_local bool watching; /* on the check's thread, during a call of yours */
static struct {
    const char *call; /* yours, watched */
    int blocks;       /* noted and not freed yet */
    void *block[NOTED_BLOCKS];
    size_t bytes[NOTED_BLOCKS];
    int in_kit;      /* inside a kit call of yours: what it allocates is the kit's */
    bool refuse_all; /* every allocation fails, as on a full host */
    size_t refused;  /* the largest refused */
    int comms;       /* communicators made, less those freed */
    int uploads;     /* queued uploads from host memory to a GPU */
    queued_upload upload[NOTED_BLOCKS];
    bool fenced; /* each block allocated is followed by a fence (below) */
} watch;

/* While the ring's sums are checked, each block it allocates is followed by
 * FENCE_BYTES of a pattern, looked at when the block is freed (or, kept from
 * call to call, after each call): a pattern changed is a write past the
 * block's end (a chunk buffer one float short, say), which malloc's own
 * slack otherwise hides. The fenced blocks live past the call that made them,
 * so they are listed apart from watch's. */
enum { FENCE_BYTES = 64, FENCED_BLOCKS = 64 };
#define FENCE_BYTE 0xA5
static struct {
    int count;
    void *block[FENCED_BLOCKS];
    size_t bytes[FENCED_BLOCKS];
} fenced;
static struct {
    long long count;    /* fences found changed */
    size_t bytes, past; /* the first such block's size, and how far past its end was written */
} overrun;

/* The first host buffer freed while an upload from it was still queued, in
 * any call of step 3 the check watched. */
static struct {
    long long count;
    char what[400];
} freed_early;

void *__real_malloc(size_t bytes);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *old, size_t bytes);
void __real_free(void *p);
void *__wrap_malloc(size_t bytes);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *old, size_t bytes);
void __wrap_free(void *p);

/* Whether this allocation fails: every one does while refuse_all, and the
 * at-th watched call does after check_refuse_call(at). */
static bool refused(const char *name, size_t bytes)
{
    if (check_refuse(name)) return true;
    if (!watch.refuse_all) return false;
    if (bytes > watch.refused) watch.refused = bytes;
    return true;
}

static void *noted(void *p, size_t bytes)
{
    if (p && watch.blocks < NOTED_BLOCKS) {
        watch.block[watch.blocks] = p;
        watch.bytes[watch.blocks++] = bytes;
    }
    return p;
}

static int noted_at(const void *p)
{
    for (int i = 0; i < watch.blocks; ++i)
        if (watch.block[i] == p) return i;
    return -1;
}

static void forget(int i)
{
    watch.block[i] = watch.block[--watch.blocks];
    watch.bytes[i] = watch.bytes[watch.blocks];
}

static bool yours(void) { return watching && watch.in_kit == 0; }

static int fenced_at(const void *p)
{
    for (int i = 0; i < fenced.count; ++i)
        if (fenced.block[i] == p) return i;
    return -1;
}

/* Whether block i's fence is as it was; notes the first that is not. */
static void fence_look(int i)
{
    const unsigned char *fence = (const unsigned char *)fenced.block[i] + fenced.bytes[i];
    size_t last = 0;
    for (size_t k = 0; k < FENCE_BYTES; ++k)
        if (fence[k] != FENCE_BYTE) last = k + 1;
    if (last && overrun.count++ == 0) overrun.bytes = fenced.bytes[i], overrun.past = last;
}

/* A block of `bytes` from malloc, its fence after it (while fenced). */
static void *fence_up(void *p, size_t bytes)
{
    if (!p || !watch.fenced || fenced.count == FENCED_BLOCKS) return p;
    memset((unsigned char *)p + bytes, FENCE_BYTE, FENCE_BYTES);
    fenced.block[fenced.count] = p, fenced.bytes[fenced.count++] = bytes;
    return p;
}

static void fence_down(int i)
{
    fence_look(i);
    fenced.block[i] = fenced.block[--fenced.count];
    fenced.bytes[i] = fenced.bytes[fenced.count];
}

static size_t fence_room(void) { return watch.fenced ? FENCE_BYTES : 0; }

void *__wrap_malloc(size_t bytes)
{
    if (!yours()) return __real_malloc(bytes);
    if (refused("malloc", bytes)) return NULL;
    return noted(fence_up(__real_malloc(bytes + fence_room()), bytes), bytes);
}

void *__wrap_calloc(size_t count, size_t size)
{
    if (!yours()) return __real_calloc(count, size);
    if (refused("calloc", count * size)) return NULL;
    return noted(fence_up(__real_calloc(1, count * size + fence_room()), count * size), count * size);
}

void *__wrap_realloc(void *old, size_t bytes)
{
    const int f = old && fenced.count ? fenced_at(old) : -1;
    if (f >= 0) { /* a fenced block grown: its fence looked at, and the new one set after it */
        fence_down(f);
        const bool was = watch.fenced;
        watch.fenced = true;
        void *p = __real_realloc(old, bytes + FENCE_BYTES);
        fence_up(p, bytes);
        watch.fenced = was;
        const int i = yours() ? noted_at(old) : -1;
        if (i >= 0 && p) watch.block[i] = p, watch.bytes[i] = bytes;
        return p;
    }
    if (!yours()) return __real_realloc(old, bytes);
    if (refused("realloc", bytes)) return NULL;
    const int i = old ? noted_at(old) : -1;
    void *p = __real_realloc(old, bytes + (old ? 0 : fence_room()));
    if (!old) fence_up(p, bytes);
    if (i >= 0 && p) watch.block[i] = p, watch.bytes[i] = bytes;
    if (i >= 0 && !p && bytes == 0) forget(i);
    /* A block from before the call, grown, is no new block. */
    return old ? p : noted(p, bytes);
}

/* tensor.h: a queued upload reads its source when the device reaches it, so
 * the source must stay until the host has waited for the device. Whether
 * the device happens to be there already is a race; whether the host waited
 * is not: a buffer freed with an upload from it queued, and no wait since,
 * is the mistake, on a simulated GPU as on a real one. */
static void freed(uintptr_t start, size_t bytes)
{
    for (int k = 0; k < watch.uploads; ++k) {
        const queued_upload *u = &watch.upload[k];
        device_counters now;
        if (u->src < start || u->src >= start + bytes || counters_read(u->dev, &now) != STATUS_OK ||
            now.syncs != u->syncs)
            continue;
        if (freed_early.count++ == 0)
            snprintf(freed_early.what, sizeof freed_early.what,
                     "rank %d's %s freed a host buffer of %zu bytes while an upload of %zu bytes from it to "
                     "%s (tensor_copy_from_host_async) was queued, with no wait for the device since: the "
                     "device may read freed memory",
                     world_rank, watch.call, bytes, u->bytes, device_name(u->dev));
    }
}

void __wrap_free(void *p)
{
    if (p && fenced.count) {
        const int f = fenced_at(p);
        if (f >= 0) fence_down(f);
    }
    if (yours() && p) {
        const int i = noted_at(p);
        if (i >= 0) {
            freed((uintptr_t)p, watch.bytes[i]);
            forget(i);
        }
    }
    __real_free(p);
}

/* The copies of step 3, through their wrappers too: each is counted, and
 * refused in its turn. */
status __real_tensor_to_host(const tensor *t, float *dst, int64_t count);
status __real_tensor_copy_from_host(tensor *t, const float *src, int64_t count);
status __real_tensor_copy_from_host_async(tensor *t, const float *src, int64_t count);
status __wrap_tensor_to_host(const tensor *t, float *dst, int64_t count);
status __wrap_tensor_copy_from_host(tensor *t, const float *src, int64_t count);
status __wrap_tensor_copy_from_host_async(tensor *t, const float *src, int64_t count);

static status refusal(const char *name) { return check_refusal_status(name, "a failing device"); }

status __wrap_tensor_to_host(const tensor *t, float *dst, int64_t count)
{
    if (!yours()) return __real_tensor_to_host(t, dst, count);
    if (check_refuse("tensor_to_host")) return refusal("tensor_to_host");
    watch.in_kit++;
    const status s = __real_tensor_to_host(t, dst, count);
    watch.in_kit--;
    return s;
}

status __wrap_tensor_copy_from_host(tensor *t, const float *src, int64_t count)
{
    if (!yours()) return __real_tensor_copy_from_host(t, src, count);
    if (check_refuse("tensor_copy_from_host")) return refusal("tensor_copy_from_host");
    watch.in_kit++;
    const status s = __real_tensor_copy_from_host(t, src, count);
    watch.in_kit--;
    return s;
}

status __wrap_tensor_copy_from_host_async(tensor *t, const float *src, int64_t count)
{
    if (!yours()) return __real_tensor_copy_from_host_async(t, src, count);
    if (check_refuse("tensor_copy_from_host_async")) return refusal("tensor_copy_from_host_async");
    watch.in_kit++;
    const status s = __real_tensor_copy_from_host_async(t, src, count);
    const device d = tensor_device(t);
    device_counters then;
    if (s == STATUS_OK && src && device_is_gpu(d) && watch.uploads < NOTED_BLOCKS &&
        counters_read(d, &then) == STATUS_OK)
        watch.upload[watch.uploads++] =
            (queued_upload){ (uintptr_t)src, sizeof(float) * (size_t)count, d, then.syncs };
    watch.in_kit--;
    return s;
}

static void watch_start(const char *call)
{
    watch.call = call;
    watch.blocks = watch.comms = watch.uploads = watch.in_kit = 0;
    watch.refuse_all = false, watch.refused = 0, watch.fenced = false;
    watching = true;
}

/* Stops watching; the bytes of the blocks left allocated. */
static size_t watch_stop(void)
{
    watching = false;
    size_t bytes = 0;
    for (int i = 0; i < watch.blocks; ++i) bytes += watch.bytes[i];
    return bytes;
}

/* Communicators are made and freed through MPI's profiling interface (the
 * check's own calls are PMPI_'s): each one a call of yours makes and does not
 * free stays with MPI to the end, as a block of memory would. */
static void made(int code, const MPI_Comm *made)
{
    if (watching && code == MPI_SUCCESS && made && *made != MPI_COMM_NULL) watch.comms++;
}

/* While set, MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) answers as on a
 * cluster whose every machine runs one rank: each rank alone. The check's
 * ranks all run on one machine, where the machine's ranks are the world's,
 * and a lab_ranks that copies the rank and size there looks right. */
static bool machine_per_rank;

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    const int code = machine_per_rank && split_type == MPI_COMM_TYPE_SHARED
                         ? PMPI_Comm_split(comm, world_rank, key, newcomm)
                         : PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    made(code, newcomm);
    return code;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    const int code = PMPI_Comm_split(comm, color, key, newcomm);
    made(code, newcomm);
    return code;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    const int code = PMPI_Comm_dup(comm, newcomm);
    made(code, newcomm);
    return code;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    const int code = PMPI_Comm_create(comm, group, newcomm);
    made(code, newcomm);
    return code;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    const bool freeing = watching && comm && *comm != MPI_COMM_NULL;
    const int code = PMPI_Comm_free(comm);
    if (freeing && code == MPI_SUCCESS) watch.comms--;
    return code;
}

/* The size of this thread's stack (the [stack] line of /proc/self/maps), -1
 * where there is none to read. It grows as the stack is used and never
 * shrinks. */
static long long stack_bytes(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) return -1;
    long long bytes = -1;
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        unsigned long long low, high;
        if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &low, &high) == 2)
            bytes = (long long)(high - low);
    }
    fclose(maps);
    return bytes;
}

/* ---- claims every rank agrees on -------------------------------------------- */

static bool all_agree(bool mine)
{
    int holds = mine, all = 0;
    PMPI_Allreduce(&holds, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all != 0;
}

/* The claim, held only if it holds on every rank; printed by rank 0 (the
 * others' standard output goes nowhere). */
static bool claim(bool mine, const char *name, const char *format, ...) __attribute__((format(printf, 3, 4)));
static bool claim(bool mine, const char *name, const char *format, ...)
{
    char figures[512];
    va_list args;
    va_start(args, format);
    vsnprintf(figures, sizeof figures, format, args);
    va_end(args);
    return check_that(all_agree(mine), name, "%s", figures);
}

/* The lowest rank for which `bad` holds, or -1. */
static int first_rank(bool bad)
{
    int mine = bad ? world_rank : world_size, first = 0;
    PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return first == world_size ? -1 : first;
}

static double max_over_ranks(double value)
{
    double max = 0;
    PMPI_Allreduce(&value, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

static const char *plural(long long count) { return count == 1 ? "" : "s"; }

/* A claim about what crosses between ranks: with one rank nothing does (a
 * ring of one sends nothing, a broadcast from itself changes nothing), so it
 * says that it is not tried, and ./lab check says "not yet". */
static bool across_ranks(const char *name)
{
    if (world_size > 1) return true;
    printf("  (1 rank: \"%s\" is not tried: it needs 2 ranks or more, as ./lab check 10 starts)\n", name);
    return false;
}

static void begin(const char *claim_name, const char *where)
{
    current_claim = claim_name;
    deadlock_hint = SENDS_FIRST;
    snprintf(watchdog_where, sizeof watchdog_where, "%s", where);
}

/* A kit call that fails ends the run with its message (not a claim of yours). */
#define KIT(call)                                                         \
    do {                                                                  \
        status kit_status_ = (call);                                      \
        if (kit_status_ != STATUS_OK) {                                   \
            fprintf(stderr, "rank %d: ", world_rank);                     \
            check_report_failure(__FILE__, __LINE__, #call, kit_status_); \
            PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);                      \
        }                                                                 \
    } while (0)

/* ---- step 1: ranks and devices ---------------------------------------------- */

static void check_ranks(device d)
{
    begin("lab_ranks gives every rank its own number, the world's size and its place on its machine",
          "in your lab_ranks");
    /* In the world, and in a communicator of the same processes numbered
     * backwards: the ranks are those of the communicator it is given. Then
     * in the world again, as on a cluster of one rank a machine (the
     * machine's communicator, MPI_Comm_split_type's, answers so): the place
     * on the machine is the machine's, not the world's. */
    MPI_Comm backwards;
    PMPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, &backwards);
    rank_info info = { -1, -1, -1, -1 };
    status s = STATUS_OK;
    bool right = true;
    int calls = 0, comms_left = 0;
    static const char *const where[3] = { "MPI_COMM_WORLD", "a communicator numbered backwards",
                                          "MPI_COMM_WORLD on a cluster of one rank a machine" };
    int tried = 0;
    for (int c = 0; c < 3; ++c) {
        if (!all_agree(right)) break; /* lab_ranks may be collective: every rank calls it, or none */
        const MPI_Comm comm = c == 1 ? backwards : MPI_COMM_WORLD;
        info = (rank_info){ -1, -1, -1, -1 };
        watch_start("lab_ranks");
        machine_per_rank = c == 2;
        s = CHECK_YOURS(lab_ranks(comm, &info));
        machine_per_rank = false;
        watch_stop();
        tried = c + 1;
        calls++, comms_left += watch.comms;
        int rank = 0, size = 0, local_rank = 0, local_size = 0;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Comm_size(comm, &size);
        MPI_Comm local;
        if (c == 2)
            PMPI_Comm_split(comm, world_rank, rank, &local);
        else
            PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
        PMPI_Comm_rank(local, &local_rank);
        PMPI_Comm_size(local, &local_size);
        PMPI_Comm_free(&local);
        right = s == STATUS_OK && info.rank == rank && info.size == size && info.local_rank == local_rank &&
                info.local_size == local_size;
        if (!right)
            fprintf(
                stderr,
                "rank %d: in %s, lab_ranks said rank %d of %d, %d of %d on this machine; MPI says %d of %d, "
                "%d of %d%s\n",
                world_rank, where[c], info.rank, info.size, info.local_rank, info.local_size, rank, size,
                local_rank, local_size, check_failure_text(s));
    }
    PMPI_Comm_free(&backwards);
    const int wrong = first_rank(!right);
    char figures[400] = "";
    if (wrong < 0)
        check_append(figures, sizeof figures,
                     "%d rank%s, in the world, numbered backwards, and on a cluster of one rank a machine",
                     world_size, plural(world_size));
    else
        check_append(figures, sizeof figures, "rank %d of %d is wrong in %s (its own words on stderr)%s",
                     wrong, world_size, where[tried - 1],
                     tried == 3 ? ": the place on the machine is among the ranks MPI says share its memory, "
                                  "which need not be all the world's"
                                : "");
    claim(right, "lab_ranks gives every rank its own number, the world's size and its place on its machine",
          "%s", figures);

    /* Hint 2: the communicator of the machine is read, then freed. */
    const char *freed = "lab_ranks frees the communicator it splits off";
    const int keeps = first_rank(comms_left != 0);
    int left = comms_left;
    if (keeps >= 0) PMPI_Bcast(&left, 1, MPI_INT, keeps, MPI_COMM_WORLD);
    if (keeps < 0)
        claim(true, freed, "%d call%s: every communicator made was freed", calls, plural(calls));
    else
        claim(false, freed,
              "%d call%s left rank %d with %d communicator%s made and never freed (each stays with MPI to "
              "the end: MPI_Comm_free)",
              calls, plural(calls), keeps, left, plural(left));

    begin("each rank picks its device: cpu, its own sim:0, or cuda:(local rank % GPUs here)",
          "in your lab_pick_device");
    struct {
        device requested;
        int local_rank, gpus;
        device expected;
        bool refused;
    } cases[] = {
        { { DEVICE_CPU, 0 }, 1, 0, { DEVICE_CPU, 0 }, false },
        { { DEVICE_SIM, 1 }, 2, 0, { DEVICE_SIM, 0 }, false },
        { { DEVICE_CUDA, 0 }, 1, 4, { DEVICE_CUDA, 1 }, false },
        { { DEVICE_CUDA, 0 }, 5, 4, { DEVICE_CUDA, 1 }, false },
        { { DEVICE_CUDA, 0 }, 0, 0, { DEVICE_CPU, 0 }, true },
    };
    figures[0] = 0;
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        device got = { DEVICE_CPU, -1 };
        const status t =
            CHECK_YOURS(lab_pick_device(cases[i].requested, cases[i].local_rank, cases[i].gpus, &got));
        const bool good = cases[i].refused ? t == STATUS_WRONG_DEVICE
                                           : t == STATUS_OK && device_equal(got, cases[i].expected);
        if (!good && ok)
            check_append(figures, sizeof figures, "for %s, local rank %d, %d real GPUs here: %s, not %s%s",
                         device_name(cases[i].requested), cases[i].local_rank, cases[i].gpus,
                         t == STATUS_OK ? device_name(got) : status_name(t),
                         cases[i].refused ? "STATUS_WRONG_DEVICE" : device_name(cases[i].expected),
                         check_failure_text(t));
        ok = ok && good;
    }
    device mine = { DEVICE_CPU, -1 };
    const status t = CHECK_YOURS(lab_pick_device(d, info.local_rank, device_count(DEVICE_CUDA), &mine));
    const bool here =
        t == STATUS_OK && (d.kind == DEVICE_CUDA ? mine.kind == DEVICE_CUDA && device_exists(mine)
                                                 : device_equal(mine, (device){ d.kind, 0 }));
    if (ok && !here)
        check_append(figures, sizeof figures, "asked for %s, rank %d picked %s", device_name(d), world_rank,
                     t == STATUS_OK ? device_name(mine) : status_name(t));
    claim(ok && here, "each rank picks its device: cpu, its own sim:0, or cuda:(local rank % GPUs here)",
          "%s", ok && here ? "5 cases and this run's" : figures);
}

/* ---- step 2: the ring ------------------------------------------------------- */

static void check_chunks(void)
{
    begin("lab_chunk splits n elements into p chunks that follow each other, the first n % p one longer",
          "in your lab_chunk");
    char figures[300] = "";
    bool ok = true;
    /* and more elements than an int holds: a buffer of 5 000 000 001 floats */
    const int64_t sizes[] = { 0, 1, 2, 7, 10, 1003, 5000000001 };
    for (int p = 1; p <= 4 && ok; ++p)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && ok; ++k) {
            const int64_t n = sizes[k];
            int64_t next = 0;
            for (int i = 0; i < p && ok; ++i) {
                int64_t first = -1, count = -1;
                const status s = CHECK_YOURS(lab_chunk(n, p, i, &first, &count));
                const int64_t want = n / p + (i < n % p ? 1 : 0);
                if (s != STATUS_OK || first != next || count != want) {
                    ok = false;
                    check_append(figures, sizeof figures,
                                 "n = %lld, p = %d, chunk %d: %lld..%lld, not %lld..%lld%s", (long long)n, p,
                                 i, (long long)first, (long long)(first + count - 1), (long long)next,
                                 (long long)(next + want - 1), check_failure_text(s));
                }
                next += want;
            }
        }
    claim(ok, "lab_chunk splits n elements into p chunks that follow each other, the first n % p one longer",
          "%s", ok ? "n = 0 to 1003 and 5000000001, p = 1 to 4" : figures);
}

/* A rank's own values, different on every rank and for every n. */
static void fill(float *x, int64_t n)
{
    uint64_t state = 0x9E3779B97F4A7C15ull * (uint64_t)(world_rank + 1) + (uint64_t)n;
    for (int64_t i = 0; i < n; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((state >> 40) % 2001) / 1000.0f - 1.0f;
    }
}

/* Runs your ring in comm on n values of this rank's own; *error: the largest
 * difference from MPI_Allreduce in comm, in units of its rounding bound;
 * *same: every rank of comm holds the same bits. */
static status ring_against_mpi(MPI_Comm comm, int64_t n, double *error, bool *same, long long *bytes,
                               long long *calls)
{
    float *mine = malloc(sizeof(float) * (size_t)(n ? n : 1)),
          *sum = malloc(sizeof(float) * (size_t)(n ? n : 1));
    float *magnitude = malloc(sizeof(float) * (size_t)(n ? n : 1)),
          *first = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!mine || !sum || !magnitude || !first) {
        fprintf(stderr, "rank %d: no room for 4 x %lld floats\n", world_rank, (long long)n);
        PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
    }
    int p = 1;
    PMPI_Comm_size(comm, &p);
    fill(mine, n);
    for (int64_t i = 0; i < n; ++i) magnitude[i] = fabsf(mine[i]);
    PMPI_Allreduce(mine, sum, (int)n, MPI_FLOAT, MPI_SUM, comm);
    PMPI_Allreduce(MPI_IN_PLACE, magnitude, (int)n, MPI_FLOAT, MPI_SUM, comm);
    bytes_sent = sends = 0;
    watch_start("lab_ring_all_reduce");
    watch.fenced = true;
    const long long overruns = overrun.count;
    const status s = CHECK_YOURS(lab_ring_all_reduce(mine, n, comm));
    watch_stop();
    for (int i = 0; i < fenced.count && overrun.count == overruns; ++i) fence_look(i); /* blocks kept */
    *bytes = bytes_sent, *calls = sends;
    *error = 0;
    for (int64_t i = 0; i < n; ++i) {
        /* Two orders of p additions differ by at most 2 p eps sum |x| each. */
        const double bound = 2.0 * p * FLT_EPSILON * magnitude[i] + FLT_MIN;
        const double e = fabs((double)mine[i] - sum[i]) / bound;
        if (!(e <= *error)) *error = isnan(e) ? INFINITY : e;
    }
    memcpy(first, mine, sizeof(float) * (size_t)n);
    PMPI_Bcast(first, (int)n, MPI_FLOAT, 0, comm);
    *same = memcmp(first, mine, sizeof(float) * (size_t)n) == 0;
    free(mine), free(sum), free(magnitude), free(first);
    return s;
}

/* Your ring in comm against MPI_Allreduce, on each of `count` sizes: appends
 * each size's figure, or the first failure's, to figures. Every rank calls it
 * (the verdicts are agreed on over the world). */
static bool ring_sizes_hold(MPI_Comm comm, const int64_t *sizes, size_t count, char *figures, size_t room)
{
    int p = 1;
    PMPI_Comm_size(comm, &p);
    bool ok = true;
    for (size_t k = 0; k < count; ++k) {
        double error;
        bool same;
        long long bytes, calls;
        const status s = ring_against_mpi(comm, sizes[k], &error, &same, &bytes, &calls);
        const bool good = s == STATUS_OK && error <= 1.0 && same;
        const double worst = max_over_ranks(s == STATUS_OK ? error : INFINITY);
        const bool all_same = all_agree(same);
        if (ok && !all_agree(good))
            check_append(figures, room, "n = %lld on %d rank%s: %s%s", (long long)sizes[k], p,
                         p == 1 ? "" : "s",
                         s != STATUS_OK ? "the call failed"
                         : worst > 1.0  ? "a sum off by more than float rounding"
                                        : "ranks hold different bits",
                         check_failure_text(s));
        else if (ok)
            check_append(figures, room, "%sn = %lld: %.2g of the rounding bound%s", k ? ", " : "",
                         (long long)sizes[k], worst, all_same ? "" : " (bits differ)");
        ok = ok && all_agree(good);
    }
    return ok;
}

/* A communicator of the world's processes, numbered backwards; with `halves`,
 * the even and the odd world ranks apart (with 2 ranks, each rank alone). */
static MPI_Comm backwards_communicator(bool halves)
{
    MPI_Comm comm;
    PMPI_Comm_split(MPI_COMM_WORLD, halves ? world_rank % 2 : 0, world_size - 1 - world_rank, &comm);
    return comm;
}

#define RING_EQUAL \
    "your ring all-reduce equals MPI_Allreduce within float rounding, the same bits on every rank"
#define RING_GIVEN "your ring all-reduce sums over the ranks of the communicator it is given"
#define RING_BYTES "your ring sends 2 (p - 1) / p of the buffer per rank"
#define RING_BIG "your ring runs on chunks of 1 MiB without a deadlock"
#define RING_BIG_SUMS "your ring's sums on chunks of 1 MiB equal MPI_Allreduce within float rounding"
#define RING_SOURCES "your ring receives only from ranks of its communicator, never from MPI_ANY_SOURCE"
#define RING_FREES "your ring frees all it allocates"
#define RING_BOUNDS "your ring writes nothing past the end of the blocks it allocates"
#define RING_STACK "your ring keeps its chunks off the stack"
#define RING_INT "your ring refuses chunks longer than MPI's int count, before it allocates or sends"
/* The most stack a ring may take: a few frames, and arrays of a fixed size. */
#define RING_STACK_BYTES (256 * 1024)

/* What the stack grew by, at most on a rank, while the ring ran on chunks
 * of 1 MiB. A stack usually holds 8 MiB (ulimit -s), and the experiment's
 * chunks reach 8 MiB (16 MiB on 2 ranks): a chunk there crashes
 * ./lab run 10. */
static void check_ring_stack(double grew)
{
    claim(grew <= RING_STACK_BYTES, RING_STACK,
          "on chunks of 1 MiB the stack grew by %.0f KiB, the most on a rank (a ring may take %d KiB%s)",
          grew / 1024, RING_STACK_BYTES / 1024,
          grew <= RING_STACK_BYTES ? ""
                                   : ": a chunk in a local array does not fit the stack once chunks reach 8 "
                                     "MiB, as in ./lab run 10; allocate it");
}

/* n = p 2^31 floats: chunks of 2^31, one past INT_MAX, which MPI's int
 * counts cannot say; then n = p INT_MAX + 1: every chunk INT_MAX floats but
 * the first, INT_MAX + 1 (n / p, the shorter chunks' length, is no more than
 * INT_MAX there: a guard on it lets the longer chunk through). lab.h: both
 * refused (STATUS_BAD_ARGUMENT) before anything is allocated or sent. data is
 * 16 floats that a refusal never touches (an index past them stops at its
 * line); every allocation fails meanwhile, and a send or receive ends the run
 * with this claim. */
static void check_ring_int_count(void)
{
    begin(RING_INT, "in your lab_ring_all_reduce, given chunks of more than INT_MAX floats");
    const int64_t sizes[2] = { (int64_t)world_size * ((int64_t)INT_MAX + 1),
                               (int64_t)world_size * (int64_t)INT_MAX + 1 };
    char figures[400] = "";
    int wrong = -1;
    for (int c = 0; c < 2 && wrong < 0; ++c) {
        const int64_t n = sizes[c];
        float *data = host_alloc(16 * sizeof(float), 0);
        if (!data) PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
        fill(data, 16);
        watch_start("lab_ring_all_reduce");
        watch.refuse_all = true;
        oversized = true;
        const status s = CHECK_YOURS(lab_ring_all_reduce(data, n, MPI_COMM_WORLD));
        oversized = false;
        watch_stop();
        host_free(data, 0);
        wrong = first_rank(s != STATUS_BAD_ARGUMENT);
        long long asked = (long long)watch.refused;
        int code = (int)s;
        if (wrong >= 0) {
            PMPI_Bcast(&asked, 1, MPI_LONG_LONG, wrong, MPI_COMM_WORLD);
            PMPI_Bcast(&code, 1, MPI_INT, wrong, MPI_COMM_WORLD);
        }
        check_append(figures, sizeof figures,
                     "%sn = %lld on %d ranks, the longest chunk %lld floats (INT_MAX = %d): ", c ? "; " : "",
                     (long long)n, world_size, (long long)((n + world_size - 1) / world_size), INT_MAX);
        if (wrong < 0)
            check_append(figures, sizeof figures, "refused, STATUS_BAD_ARGUMENT");
        else
            check_append(figures, sizeof figures, "rank %d's call returned %s, not STATUS_BAD_ARGUMENT%s%s",
                         wrong, status_name((status)code),
                         asked ? " (it asked for memory first, refused here: check n before allocating)" : "",
                         c ? " (the first n % p chunks are one float longer than n / p)" : "");
    }
    claim(wrong < 0, RING_INT, "%s", figures);
}

/* Every block the ring allocated while its sums were checked (n = 1 to
 * 1003 and 1 MiB chunks, in the world and in other communicators) was
 * written inside its bounds: its fence stayed as it was. */
static void check_ring_overrun(void)
{
    begin(RING_BOUNDS, "in your lab_ring_all_reduce");
    const int bad = first_rank(overrun.count > 0);
    long long about[3] = { overrun.count, (long long)overrun.bytes, (long long)overrun.past };
    if (bad >= 0) PMPI_Bcast(about, 3, MPI_LONG_LONG, bad, MPI_COMM_WORLD);
    if (bad < 0)
        claim(true, RING_BOUNDS,
              "every block it allocated, on every rank, in every call above: nothing written past its end");
    else
        claim(
            false, RING_BOUNDS,
            "rank %d: %lld block%s written past the end, the first of %lld bytes (%lld floats), up to %lld "
            "bytes "
            "past it: is the buffer as long as the longest chunk it receives (lab.h: the first n %% p chunks "
            "are one longer)?",
            bad, about[0], plural(about[0]), about[1], about[1] / 4, about[2]);
}

static void check_ring(void)
{
    const char *const ring_claims[] = { RING_EQUAL, RING_GIVEN,    RING_SOURCES, RING_FREES, RING_BYTES,
                                        RING_BIG,   RING_BIG_SUMS, RING_BOUNDS,  RING_STACK, RING_INT };
    if (world_size == 1) {
        for (size_t i = 0; i < sizeof ring_claims / sizeof ring_claims[0]; ++i) across_ranks(ring_claims[i]);
        return;
    }
    begin(RING_EQUAL, "in your lab_ring_all_reduce");
    stray_sources.count = 0;
    const int64_t sizes[] = { 1, 2, 7, 1003 }; /* chunks that every MPI buffers (its eager limit) */
    char figures[400] = "";
    claim(ring_sizes_hold(MPI_COMM_WORLD, sizes, 4, figures, sizeof figures), RING_EQUAL, "%s", figures);

    /* Other communicators than the world: a ring that numbers its ranks, or
     * sends and receives, in MPI_COMM_WORLD sums over the wrong ranks there
     * (or adds its own chunks twice), though it is right in the world. */
    begin(RING_GIVEN, "in your lab_ring_all_reduce, in a communicator other than the world");
    bool ok = true;
    figures[0] = 0;
    for (int c = 0; c < 2 && ok; ++c) {
        MPI_Comm comm = backwards_communicator(c == 1);
        check_append(figures, sizeof figures, "%s%s: ", c ? "; " : "",
                     c == 0            ? "the world numbered backwards"
                     : world_size == 2 ? "each rank alone"
                                       : "even and odd ranks apart, numbered backwards");
        ok = ring_sizes_hold(comm, sizes + 2, 2, figures, sizeof figures);
        PMPI_Comm_free(&comm);
    }
    claim(ok, RING_GIVEN, "%s", figures);

    /* Every receive above, in the world and in the communicators of
     * fewer ranks: each from a rank that is there. */
    const int stray = first_rank(stray_sources.count > 0);
    long long about[4] = { stray_sources.count, stray_sources.rank, stray_sources.source,
                           stray_sources.size };
    if (stray >= 0) PMPI_Bcast(about, 4, MPI_LONG_LONG, stray, MPI_COMM_WORLD);
    if (stray < 0)
        claim(true, RING_SOURCES, "every receive named a rank from 0 to p - 1");
    else
        claim(false, RING_SOURCES,
              "world rank %d made %lld receive%s from no rank: as rank %lld of %lld, from source %lld%s; the "
              "ranks are 0 to %lld (in C, a negative number %% p is negative or 0)",
              stray, about[0], plural(about[0]), about[1], about[3], about[2],
              about[2] == MPI_ANY_SOURCE ? ", which is MPI_ANY_SOURCE here: a message from any rank" : "",
              about[3] - 1);

    /* A buffer per call, never freed, is a leak every training step. A
     * call first, so that a buffer kept from call to call is no leak. */
    begin(RING_FREES, "in your lab_ring_all_reduce");
    const int64_t small = 1003;
    float *values = malloc(sizeof(float) * small);
    if (!values) PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
    fill(values, small);
    status s = CHECK_YOURS(lab_ring_all_reduce(values, small, MPI_COMM_WORLD));
    watch_start("lab_ring_all_reduce");
    for (int k = 0; k < 3 && s == STATUS_OK; ++k)
        s = CHECK_YOURS(lab_ring_all_reduce(values, small, MPI_COMM_WORLD));
    const size_t left = watch_stop();
    const int left_blocks = watch.blocks;
    free(values);
    const int leaky = first_rank(s != STATUS_OK || left_blocks > 0);
    long long leak[2] = { left_blocks, (long long)left };
    if (leaky >= 0) PMPI_Bcast(leak, 2, MPI_LONG_LONG, leaky, MPI_COMM_WORLD);
    if (leaky < 0)
        claim(true, RING_FREES, "3 calls on %lld floats, after one more: nothing left allocated",
              (long long)small);
    else
        claim(false, RING_FREES,
              "3 calls on %lld floats, after one more: rank %d was left with %lld block%s of %lld bytes, "
              "allocated in those calls and never freed (a leak every training step)%s",
              (long long)small, leaky, leak[0], plural(leak[0]), leak[1], check_failure_text(s));

    /* The bytes: reduce-scatter and all-gather each send p - 1 chunks. */
    begin(RING_BYTES, "in your lab_ring_all_reduce");
    const int64_t n = 1003;
    double error;
    bool same;
    long long bytes, calls;
    ring_against_mpi(MPI_COMM_WORLD, n, &error, &same, &bytes, &calls);
    long long total = 0, low = 2LL * (world_size - 1) * (n / world_size) * 4,
              high = 2LL * (world_size - 1) * ((n + world_size - 1) / world_size) * 4;
    PMPI_Allreduce(&bytes, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    const bool right = bytes >= low && bytes <= high && calls == 2LL * (world_size - 1);
    claim(right && total == 2LL * (world_size - 1) * n * 4, RING_BYTES,
          "rank 0 sent %lld bytes of a %lld-byte buffer in %lld sends (%.3gx; 2 (p - 1) / p = %.3g, in %d "
          "sends "
          "of one chunk); all ranks %lld bytes, 2 (p - 1) n = %lld",
          bytes, (long long)n * 4, calls, (double)bytes / (n * 4.0), 2.0 * (world_size - 1) / world_size,
          2 * (world_size - 1), total, 2LL * (world_size - 1) * n * 4);

    /* Chunks of 1 MiB: past every MPI's eager limit, a send waits until its
     * receiver is there, so a ring whose ranks all send first waits forever
     * (the deadline above ends it, failing the first claim below with where
     * each rank waited). Once every rank has returned there was no deadlock,
     * and the sums are a claim of their own: a wrong sum is not a deadlock. */
    begin(RING_BIG, "in your lab_ring_all_reduce on 1 MiB chunks");
    const int64_t big_n = (int64_t)world_size * 262144 + 1;
    char sums[400] = "";
    const long long stack_before = stack_bytes();
    const bool summed = ring_sizes_hold(MPI_COMM_WORLD, &big_n, 1, sums, sizeof sums);
    const long long stack_after = stack_bytes();
    claim(true, RING_BIG, "%d x 1 MiB: every rank's call returned", world_size);
    claim(summed, RING_BIG_SUMS, "%s", sums);
    check_ring_overrun();

    /* A stack usually holds 8 MiB (ulimit -s), and the experiment's chunks
     * reach 8 MiB (16 MiB on 2 ranks): a chunk there crashes ./lab run 10.
     * The check's own frames went as deep before, on small chunks, so what
     * the stack grew by on chunks of 1 MiB is the ring's. */
    if (!all_agree(stack_before > 0 && stack_after > 0))
        printf("  (this system shows no stack size in /proc/self/maps: \"%s\" is not tried)\n", RING_STACK);
    else
        check_ring_stack(max_over_ranks((double)(stack_after - stack_before)));
    check_ring_int_count();
}

/* ---- step 3: training across the ranks -------------------------------------- */

#define TRAIN_BATCH 61 /* 31 + 30 rows on 2 ranks, 21 + 20 + 20 on 3: slices of different sizes */
#define TRAIN_STEPS 3
#define TRAIN_LR 0.1f
#define TRAIN_SEED 100 /* rank r draws its network from TRAIN_SEED + r */

/* How many of this rank's n values differ from world rank root's (bits), and by how much at most. */
static int64_t differ_from_rank(const float *mine, int64_t n, int root, double *largest)
{
    float *zero = malloc(sizeof(float) * (size_t)n);
    if (!zero) PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
    memcpy(zero, mine, sizeof(float) * (size_t)n);
    PMPI_Bcast(zero, (int)n, MPI_FLOAT, root, MPI_COMM_WORLD);
    int64_t count = 0;
    *largest = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (memcmp(&zero[i], &mine[i], sizeof(float)) != 0) count++;
        const double d = fabs((double)zero[i] - mine[i]);
        if (!(d <= *largest)) *largest = isnan(d) ? INFINITY : d;
    }
    free(zero);
    return count;
}

/* Largest |a - b| over n values. */
static double largest_difference(const float *a, const float *b, int64_t n)
{
    double largest = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = fabs((double)a[i] - b[i]);
        if (!(d <= largest)) largest = isnan(d) ? INFINITY : d;
    }
    return largest;
}

/* Lab 05's network as rank `rank` draws it: weights from TRAIN_SEED + rank,
 * and biases of its own too (mlp_create starts every bias at 0, the same on
 * every rank, so a broadcast that forgot the biases went unseen). Small
 * biases, |b| < 0.05: the training below is the same lesson. */
static void create_model(dist_model *m, device d, const int64_t *sizes, int nsizes, int rank)
{
    KIT(dist_create(m, d, sizes, nsizes, TRAIN_SEED + (uint64_t)rank));
    uint64_t state = 0xD1B54A32D192ED03ull * (uint64_t)(rank + 1);
    for (int i = 0; i < m->net.nlayers; ++i) {
        tensor *b = m->net.layers[i].b;
        const int64_t count = tensor_numel(b);
        float *values = malloc(sizeof(float) * (size_t)count);
        if (!values) PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
        for (int64_t j = 0; j < count; ++j) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            values[j] = (float)((state >> 40) % 1001) / 10000.0f - 0.05f;
        }
        KIT(tensor_copy_from_host(b, values, count));
        free(values);
    }
}

/* How many of net's parameters are biases. */
static int64_t count_biases(const mlp *net)
{
    int64_t count = 0;
    for (int i = 0; i < net->nlayers; ++i) count += tensor_numel(net->layers[i].b);
    return count;
}

/* How many of this rank's weights and biases (dist_read's order: each
 * layer's W, then its b) differ in bits from world rank root's. */
static void apart_from_rank(const mlp *net, const float *mine, int root, float *scratch, int64_t *weights,
                            int64_t *biases)
{
    const int64_t n = dist_parameter_count(net);
    memcpy(scratch, mine, sizeof(float) * (size_t)n);
    PMPI_Bcast(scratch, (int)n, MPI_FLOAT, root, MPI_COMM_WORLD);
    *weights = *biases = 0;
    int64_t at = 0;
    for (int i = 0; i < net->nlayers; ++i) {
        const int64_t w = tensor_numel(net->layers[i].W), b = tensor_numel(net->layers[i].b);
        for (int64_t j = at; j < at + w; ++j) *weights += memcmp(&mine[j], &scratch[j], sizeof(float)) != 0;
        for (int64_t j = at + w; j < at + w + b; ++j)
            *biases += memcmp(&mine[j], &scratch[j], sizeof(float)) != 0;
        at += w + b;
    }
}

/* lab_broadcast_parameters in the world's processes numbered backwards: its
 * rank 0 is the world's last, whose parameters every rank must end with (a
 * broadcast over MPI_COMM_WORLD gives the world's rank 0's). On a network of
 * its own, so that the training below starts from rank 0's. */
static void check_broadcast_in(device d, const int64_t *sizes, int nsizes, float *mine, float *expected,
                               int64_t n)
{
    const char *name = "lab_broadcast_parameters broadcasts over the communicator it is given";
    if (!across_ranks(name)) return;
    begin(name, "in your lab_broadcast_parameters, in a communicator numbered backwards");
    dist_model m;
    create_model(&m, d, sizes, nsizes, world_rank);
    const int last = world_size - 1;
    KIT(dist_read(&m.net, 0, expected, n));
    PMPI_Bcast(expected, (int)n, MPI_FLOAT, last, MPI_COMM_WORLD); /* the world's last rank's, before */
    MPI_Comm backwards = backwards_communicator(false);
    watch_start("lab_broadcast_parameters");
    const status s = CHECK_YOURS(lab_broadcast_parameters(&m.net, backwards));
    watch_stop();
    PMPI_Comm_free(&backwards);
    KIT(dist_read(&m.net, 0, mine, n));
    int64_t after = 0;
    for (int64_t i = 0; i < n; ++i) after += memcmp(&mine[i], &expected[i], sizeof(float)) != 0;
    const int wrong = first_rank(s != STATUS_OK || after != 0);
    char figures[300] = "";
    if (wrong < 0)
        check_append(figures, sizeof figures, "%d ranks numbered backwards: all hold rank %d's, its rank 0",
                     world_size, last);
    else
        check_append(figures, sizeof figures,
                     "%d ranks numbered backwards: rank %d holds %lld of %lld values other than those of "
                     "rank %d, rank 0 there%s",
                     world_size, wrong, (long long)max_over_ranks(world_rank == wrong ? (double)after : 0),
                     (long long)n, last, check_failure_text(s));
    claim(s == STATUS_OK && after == 0, name, "%s", figures);
    dist_free(&m);
}

/* lab_broadcast_parameters in the world: every rank drew its own network,
 * and must end with rank 0's, which rank 0 keeps (`one` is rank 0's draw). */
static void check_same_start(dist_model *m, const dist_model *one, float *mine, float *theirs, float *scratch,
                             int64_t n)
{
    const char *same_start = "lab_broadcast_parameters gives every rank rank 0's weights and biases";
    begin(same_start, "in your lab_broadcast_parameters");
    KIT(dist_read(&m->net, 0, mine, n));
    int64_t weights_before, biases_before, weights_after, biases_after;
    apart_from_rank(&m->net, mine, 0, scratch, &weights_before, &biases_before);
    /* The check's own premise: every other rank starts apart from rank 0, in weights and in biases. */
    const bool seeded_apart = first_rank(world_rank > 0 && (weights_before == 0 || biases_before == 0)) < 0;
    const device d = tensor_device(m->net.layers[0].W);
    device_counters c0, c1;
    KIT(counters_read(d, &c0));
    watch_start("lab_broadcast_parameters");
    status s = CHECK_YOURS(lab_broadcast_parameters(&m->net, MPI_COMM_WORLD));
    watch_stop();
    KIT(counters_read(d, &c1));
    KIT(dist_read(&m->net, 0, mine, n));
    KIT(dist_read(&one->net, 0, theirs, n));
    apart_from_rank(&m->net, mine, 0, scratch, &weights_after, &biases_after);
    const bool kept = world_rank != 0 || memcmp(mine, theirs, sizeof(float) * (size_t)n) == 0;
    const bool equal = s == STATUS_OK && weights_after == 0 && biases_after == 0 && kept;
    const int wrong = first_rank(!equal);
    const int64_t biases = count_biases(&m->net);
    char figures[400] = "";
    check_append(
        figures, sizeof figures,
        "every rank drew its own (seed %d + rank: up to %lld of %lld weights and %lld of %lld biases "
        "differed from rank 0's); ",
        TRAIN_SEED, (long long)max_over_ranks((double)weights_before), (long long)(n - biases),
        (long long)max_over_ranks((double)biases_before), (long long)biases);
    if (wrong < 0)
        check_append(figures, sizeof figures, "all equal after");
    else
        check_append(figures, sizeof figures, "after it, rank %d: %lld weights and %lld biases differ%s%s",
                     wrong, (long long)max_over_ranks(world_rank == wrong ? (double)weights_after : 0),
                     (long long)max_over_ranks(world_rank == wrong ? (double)biases_after : 0),
                     all_agree(kept) ? "" : " (rank 0's own changed)", check_failure_text(s));
    claim(seeded_apart && equal, same_start, "%s", figures);
    /* MPI reads host memory (README, step 3): each parameter goes down to
     * the host and back up. A GPU's pointer handed to MPI_Bcast gives the
     * right weights where the device's memory is the host's (the CPU, a
     * simulated GPU) and is read as host memory on a real one. */
    if (device_is_gpu(d)) {
        const int tensors = 2 * m->net.nlayers;
        const uint64_t down = c1.d2h_copies - c0.d2h_copies, up = c1.h2d_copies - c0.h2d_copies;
        claim(down == (uint64_t)tensors && up == (uint64_t)tensors,
              "lab_broadcast_parameters copies each parameter to the host once and back once",
              "rank %d: %llu copies down, %llu up, for %d weight and bias tensors (MPI_Bcast reads host "
              "memory: a GPU's own memory handed to it is read as the host's)",
              world_rank, (unsigned long long)down, (unsigned long long)up, tensors);
    }
}

/* lab_average_gradients in a communicator of each rank alone: the batch is
 * the rank's own slice (lab.h's chunks of the check's batch), and its
 * average that slice's mean gradient. A ring over the world, whatever
 * communicator it is given, sums the other ranks' gradients in. From equal
 * networks (rank 0's, broadcast), against one process on the same rows. */
static void check_average_in(dist_model *m, dist_model *one, const dataset *data, float *mine, float *theirs,
                             int64_t n)
{
    const char *name = "lab_average_gradients averages over the communicator it is given";
    if (!across_ranks(name)) return;
    begin(name, "in your lab_average_gradients, each rank in a communicator of its own");
    const int64_t rows = TRAIN_BATCH / world_size + (world_rank < TRAIN_BATCH % world_size ? 1 : 0),
                  first = world_rank * (TRAIN_BATCH / world_size) +
                          (world_rank < TRAIN_BATCH % world_size ? world_rank : TRAIN_BATCH % world_size);
    const int64_t pixels = dataset_pixels(data);
    MPI_Comm alone;
    PMPI_Comm_split(MPI_COMM_WORLD, world_rank, 0, &alone);
    KIT(dist_slice_gradients(m, data->images + first * pixels, data->labels + first, rows));
    watch_start("lab_average_gradients");
    const status s = CHECK_YOURS(lab_average_gradients(&m->net, rows, rows, alone));
    watch_stop();
    PMPI_Comm_free(&alone);
    KIT(dist_read(&m->net, 1, mine, n));
    KIT(dist_slice_gradients(one, data->images + first * pixels, data->labels + first, rows));
    KIT(dist_read(&one->net, 1, theirs, n));
    const double error = max_over_ranks(s == STATUS_OK ? largest_difference(mine, theirs, n) : INFINITY);
    const int failed = first_rank(s != STATUS_OK);
    claim(
        failed < 0 && error <= 1e-5, name,
        "%d ranks, each alone in its communicator with its slice of the batch (%lld rows on rank 0): largest "
        "difference %.2g from its own slice's mean gradient (at most 1e-5)%s",
        world_size, (long long)rows, error,
        failed >= 0    ? "; a rank's call failed"
        : error > 1e-5 ? " (a ring over MPI_COMM_WORLD sums every rank's, whatever communicator is given)"
                       : "");
}

/* train.h: a batch may have fewer rows than there are ranks, and a rank
 * with none takes part all the same (the others wait for it in the ring).
 * p - 1 rows, one a rank: the last rank's slice is empty. From equal
 * networks (rank 0's, broadcast), against one process on those rows. */
static void check_empty_slice(dist_model *m, dist_model *one, const dataset *data, float *mine, float *theirs,
                              int64_t n)
{
    const char *empty_slice = "lab_average_gradients with a rank's slice empty (fewer rows than ranks) gives "
                              "every rank the batch's mean gradient";
    if (!across_ranks(empty_slice)) return;
    begin(empty_slice, "in your lab_average_gradients, with the last rank's slice empty");
    deadlock_hint = "did the rank with no rows return, or refuse, without taking part in the ring? It sends "
                    "and receives all the same, its sum being 0";
    const int64_t batch = world_size - 1, rows = world_rank < batch ? 1 : 0, first = rows ? world_rank : 0;
    const int64_t pixels = dataset_pixels(data);
    KIT(dist_slice_gradients(m, data->images + first * pixels, data->labels + first, rows));
    watch_start("lab_average_gradients");
    const status s = CHECK_YOURS(lab_average_gradients(&m->net, rows, batch, MPI_COMM_WORLD));
    watch_stop();
    KIT(dist_read(&m->net, 1, mine, n));
    KIT(dist_slice_gradients(one, data->images, data->labels, batch));
    KIT(dist_read(&one->net, 1, theirs, n));
    const double error = max_over_ranks(s == STATUS_OK ? largest_difference(mine, theirs, n) : INFINITY);
    double largest;
    const int64_t bits = differ_from_rank(mine, n, 0, &largest);
    const int failed = first_rank(s != STATUS_OK);
    char figures[300] = "";
    if (failed >= 0) check_append(figures, sizeof figures, "; rank %d's call failed", failed);
    claim(failed < 0 && error <= 1e-5 && bits == 0, empty_slice,
          "%lld row%s on %d ranks, rank %d's slice empty: largest difference %.2g from one process's, %lld "
          "values differ between ranks%s%s",
          (long long)batch, plural(batch), world_size, world_size - 1, error,
          (long long)max_over_ranks((double)bits), figures, check_failure_text(s));
}

/* TRAIN_STEPS steps of training: every rank on its slice, against one
 * process on the whole batch. */
static void check_steps(dist_model *m, dist_model *one, const dataset *data, float *mine, float *theirs,
                        int64_t n)
{
    const char *identical = "after 3 steps every rank's parameters are bit-identical",
               *within = "after 3 steps the parameters are within 1e-5 of one process's on the whole batch";
    if (world_size == 1) {
        across_ranks(identical), across_ranks(within);
        return;
    }
    begin(identical, "in dist_step (your lab_average_gradients)");
    const int64_t pixels = dataset_pixels(data);
    double largest;
    status s = STATUS_OK;
    for (int step = 0; step < TRAIN_STEPS && s == STATUS_OK; ++step) {
        s = CHECK_YOURS(dist_step(m, data, step * TRAIN_BATCH, TRAIN_BATCH, TRAIN_LR, MPI_COMM_WORLD));
        KIT(dist_slice_gradients(one, data->images + step * TRAIN_BATCH * pixels,
                                 data->labels + step * TRAIN_BATCH, TRAIN_BATCH));
        KIT(mlp_sgd_step(&one->net, TRAIN_LR, 0.0f));
    }
    const bool trained = all_agree(s == STATUS_OK);
    KIT(dist_read(&m->net, 0, mine, n));
    KIT(dist_read(&one->net, 0, theirs, n));
    const int64_t bits = differ_from_rank(mine, n, 0, &largest);
    claim(trained && bits == 0, identical,
          "%lld of %lld values differ from rank 0's on some rank, by up to %.2g%s",
          (long long)max_over_ranks((double)bits), (long long)n, max_over_ranks(largest),
          check_failure_text(s));
    const double error = max_over_ranks(trained ? largest_difference(mine, theirs, n) : INFINITY);
    claim(trained && error <= 1e-5, within,
          "largest difference %.2g over %lld parameters, %d rows a step on %d ranks", error, (long long)n,
          TRAIN_BATCH, world_size);
}

/* ---- step 3 when a call fails ------------------------------------------------ */

#define BROADCAST_FAILS \
    "lab_broadcast_parameters returns every failure of its calls and frees its host memory"
#define AVERAGE_FAILS \
    "lab_average_gradients returns every failure of its calls, its ring's too, and frees its host memory"
#define FREED_EARLY \
    "lab_broadcast_parameters and lab_average_gradients free no host buffer a queued upload reads"

/* One of step 3's functions, refused call by call (its allocations, its
 * ring's, and its copies): how many calls it makes whole, and the first
 * refusal it lost (STATUS_OK came back) or that left blocks allocated. */
typedef struct refusals {
    int calls;       /* with nothing refused */
    status whole;    /* the whole call's status */
    int left_whole;  /* blocks it left */
    int lost, leaky; /* the refused call, 1 for the first; 0 for none */
    char lost_name[40], leaky_name[40];
    status leaky_status;
    int left;
    size_t left_bytes;
} refusals;

typedef enum step3 { BROADCAST, AVERAGE } step3;

static status call_step3(step3 which, mlp *net, int64_t rows, int64_t batch, MPI_Comm comm)
{
    if (which == BROADCAST) return lab_broadcast_parameters(net, comm);
    return lab_average_gradients(net, rows, batch, comm);
}

/* Every rank tries as many refusals as the rank with the most calls (each
 * its own calls alone), and stops when any rank has found a mistake: the
 * ranks agree before each. In a communicator of several ranks the k-th call
 * of every rank is refused alike, so that all skip the same sends. */
static refusals refuse_each(step3 which, mlp *net, int64_t rows, int64_t batch, MPI_Comm comm)
{
    const char *name = which == BROADCAST ? "lab_broadcast_parameters" : "lab_average_gradients";
    refusals r = { 0 };
    watch_start(name);
    check_refuse_call(-1); /* counting, refusing nothing */
    r.whole = CHECK_YOURS(call_step3(which, net, rows, batch, comm));
    r.calls = check_calls_counted();
    check_refuse_call(0);
    watch_stop();
    r.left_whole = watch.blocks;
    int most = 0;
    PMPI_Allreduce(&r.calls, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bool more = all_agree(r.whole == STATUS_OK && r.left_whole == 0);
    for (int at = 1; at <= most && more; ++at) {
        if (at <= r.calls) {
            watch_start(name);
            check_refuse_call(at);
            const status s = CHECK_YOURS(call_step3(which, net, rows, batch, comm));
            const char *refused_call = check_refused_call();
            check_refuse_call(0);
            const size_t bytes = watch_stop();
            if (s == STATUS_OK && refused_call) {
                r.lost = at;
                snprintf(r.lost_name, sizeof r.lost_name, "%s", refused_call);
            } else if (watch.blocks > 0) {
                r.leaky = at, r.leaky_status = s, r.left = watch.blocks, r.left_bytes = bytes;
                snprintf(r.leaky_name, sizeof r.leaky_name, "%s", refused_call ? refused_call : "none");
            }
        }
        more = all_agree(!r.lost && !r.leaky);
    }
    return r;
}

/* Whether r shows no mistake on any rank; figures: the words of the first
 * rank that found one. */
static bool refusals_hold(const char *name, const refusals *r, char *figures, size_t room)
{
    const bool ok = r->whole == STATUS_OK && r->left_whole == 0 && !r->lost && !r->leaky;
    if (r->whole != STATUS_OK)
        check_append(figures, room, "rank %d: %s failed with nothing refused%s", world_rank, name,
                     check_failure_text(r->whole));
    else if (r->left_whole)
        check_append(figures, room,
                     "rank %d: with nothing refused, %s left %d block%s allocated, never freed", world_rank,
                     name, r->left_whole, plural(r->left_whole));
    else if (r->lost)
        check_append(
            figures, room,
            "rank %d: %s returned STATUS_OK when call %d of its %d (%s) failed: that failure was lost, "
            "and the training would go on from a step that did not happen",
            world_rank, name, r->lost, r->calls, r->lost_name);
    else if (r->leaky)
        check_append(figures, room,
                     "rank %d: when call %d of its %d (%s) failed, %s returned %s and left %d block%s of %zu "
                     "bytes allocated: free what it allocated on every way out",
                     world_rank, r->leaky, r->calls, r->leaky_name, name, status_name(r->leaky_status),
                     r->left, plural(r->left), r->left_bytes);
    else
        check_append(figures, room,
                     "each of its %d calls (allocations and copies) refused in turn: every failure returned, "
                     "nothing left allocated",
                     r->calls);
    const int bad = first_rank(!ok);
    PMPI_Bcast(figures, (int)room, MPI_CHAR, bad < 0 ? 0 : bad, MPI_COMM_WORLD);
    return bad < 0;
}

/* The broadcast on a network of its own in a communicator of one rank,
 * where nothing waits for another rank whatever is refused (a rank 0 that
 * alone copies down would skip a broadcast the others wait in); the average
 * in the world, every rank refused alike. */
static void check_failures(device d, const int64_t *sizes, int nsizes, dist_model *m)
{
    begin(BROADCAST_FAILS,
          "in your lab_broadcast_parameters, with one of its calls failing, each rank alone");
    dist_model own;
    create_model(&own, d, sizes, nsizes, world_rank);
    const refusals broadcast = refuse_each(BROADCAST, &own.net, 0, 0, MPI_COMM_SELF);
    char figures[600] = "";
    claim(refusals_hold("lab_broadcast_parameters", &broadcast, figures, sizeof figures), BROADCAST_FAILS,
          "%s", figures);
    dist_free(&own);

    begin(AVERAGE_FAILS, "in your lab_average_gradients, with one of its calls failing on every rank");
    const int64_t rows = TRAIN_BATCH / world_size + (world_rank < TRAIN_BATCH % world_size ? 1 : 0);
    const refusals average = refuse_each(AVERAGE, &m->net, rows, TRAIN_BATCH, MPI_COMM_WORLD);
    figures[0] = '\0';
    claim(refusals_hold("lab_average_gradients", &average, figures, sizeof figures), AVERAGE_FAILS, "%s",
          figures);
}

static void check_training(device d)
{
    const int64_t sizes[] = { SYNTHETIC_SIDE * SYNTHETIC_SIDE, 16, DATA_CLASSES };
    dataset data;
    KIT(dataset_synthetic(&data, TRAIN_BATCH * TRAIN_STEPS, 7)); /* the same images on every rank */
    dist_model m, one;
    create_model(&m, d, sizes, 3, world_rank);
    /* One process on the whole batch, from rank 0's network: what every rank must end with. */
    create_model(&one, d, sizes, 3, 0);
    const int64_t n = dist_parameter_count(&m.net);
    float *mine = malloc(sizeof(float) * (size_t)n), *theirs = malloc(sizeof(float) * (size_t)n),
          *scratch = malloc(sizeof(float) * (size_t)n);
    if (!mine || !theirs || !scratch) PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
    double largest;

    const char *same_start = "lab_broadcast_parameters gives every rank rank 0's weights and biases";
    if (across_ranks(same_start)) check_same_start(&m, &one, mine, theirs, scratch, n);
    check_broadcast_in(d, sizes, 3, mine, theirs, n);

    /* One batch's gradients: each rank on its slice, then averaged. */
    const char *averaged = "after lab_average_gradients every rank holds the whole batch's mean gradient";
    begin(averaged, "in your lab_average_gradients");
    const int64_t pixels = dataset_pixels(&data);
    int64_t first = 0, rows = 0;
    status s = CHECK_YOURS(lab_chunk(TRAIN_BATCH, world_size, world_rank, &first, &rows));
    if (s != STATUS_OK || first < 0 || rows < 0 || first + rows > TRAIN_BATCH) first = 0, rows = 0;
    KIT(dist_slice_gradients(&m, data.images + first * pixels, data.labels + first, rows));
    device_counters c0, c1;
    KIT(counters_read(d, &c0));
    library_sums = 0;
    watch_start("lab_average_gradients");
    s = CHECK_YOURS(lab_average_gradients(&m.net, rows, TRAIN_BATCH, MPI_COMM_WORLD));
    watch_stop();
    const long long sums_of_mpi = (long long)max_over_ranks((double)library_sums);
    KIT(counters_read(d, &c1));
    KIT(dist_read(&m.net, 1, mine, n));
    KIT(dist_slice_gradients(&one, data.images, data.labels, TRAIN_BATCH));
    KIT(dist_read(&one.net, 1, theirs, n));
    const double gradient_error =
        max_over_ranks(s == STATUS_OK ? largest_difference(mine, theirs, n) : INFINITY);
    const int64_t gradient_bits = differ_from_rank(mine, n, 0, &largest);
    if (across_ranks(averaged))
        claim(s == STATUS_OK && gradient_error <= 1e-5 && gradient_bits == 0 && sums_of_mpi == 0, averaged,
              "%d rows as %d slices: largest difference %.2g from one process's, %lld values differ "
              "between ranks; %lld sum%s by MPI_Allreduce or MPI_Reduce on a rank%s%s",
              TRAIN_BATCH, world_size, gradient_error, (long long)max_over_ranks((double)gradient_bits),
              sums_of_mpi, plural(sums_of_mpi),
              sums_of_mpi ? " (the sum is your ring's to make: lab_ring_all_reduce, step 2)" : " (want 0)",
              check_failure_text(s));
    if (device_is_gpu(d)) {
        const int tensors = 2 * m.net.nlayers;
        const uint64_t down = c1.d2h_copies - c0.d2h_copies, up = c1.h2d_copies - c0.h2d_copies;
        claim(down == (uint64_t)tensors && up == (uint64_t)tensors,
              "lab_average_gradients copies each gradient to the host once and back once",
              "rank %d: %llu copies down, %llu up, for %d gradient tensors", world_rank,
              (unsigned long long)down, (unsigned long long)up, tensors);
    }

    check_average_in(&m, &one, &data, mine, theirs, n);
    check_empty_slice(&m, &one, &data, mine, theirs, n);
    check_steps(&m, &one, &data, mine, theirs, n);
    check_failures(d, sizes, 3, &m);
    /* On the CPU a queued upload is done at once: nothing waits to be read. */
    if (device_is_gpu(d)) {
        const int early = first_rank(freed_early.count > 0);
        if (early >= 0)
            PMPI_Bcast(freed_early.what, sizeof freed_early.what, MPI_CHAR, early, MPI_COMM_WORLD);
        claim(early < 0, FREED_EARLY, "%s",
              early < 0 ? "every host buffer outlived the uploads queued from it, or the host waited first"
                        : freed_early.what);
    }
    free(mine), free(theirs), free(scratch);
    dist_free(&m), dist_free(&one);
    dataset_free(&data);
}

/* ---- on real GPUs: NCCL, bootstrapped over MPI --------------------------------- */

/* Where every rank has a real GPU of its own (NCCL refuses two ranks on one
 * GPU): NCCL's sum of device buffers against MPI_Allreduce's of the same
 * values on the host. Given code, not yours: it proves the bootstrap. */
static void check_nccl(device d, const rank_info *info)
{
    const bool own_gpu = d.kind == DEVICE_CUDA && info->local_size <= device_count(DEVICE_CUDA);
    if (!all_agree(own_gpu && dist_nccl_built())) {
        if (d.kind == DEVICE_CUDA)
            printf("note: NCCL not tried: %s\n", !dist_nccl_built()
                                                     ? "this build has no NCCL"
                                                     : "it needs a GPU per rank (LABKIT_RANKS=1 on one GPU)");
        return;
    }
    const char *name = "NCCL, its unique id broadcast over MPI, sums device buffers like MPI_Allreduce";
    begin(name, "in NCCL's ncclCommInitRank or ncclAllReduce");
    const int64_t n = 1003;
    float *mine = malloc(sizeof(float) * n), *sum = malloc(sizeof(float) * n),
          *magnitude = malloc(sizeof(float) * n);
    if (!mine || !sum || !magnitude) PMPI_Abort(MPI_COMM_WORLD, CHECK_FAILS);
    fill(mine, n);
    for (int64_t i = 0; i < n; ++i) magnitude[i] = fabsf(mine[i]);
    PMPI_Allreduce(mine, sum, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(MPI_IN_PLACE, magnitude, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    dist_nccl *nccl = NULL;
    tensor *t = NULL;
    status s = dist_nccl_create(MPI_COMM_WORLD, d, &nccl);
    if (s == STATUS_OK) s = tensor_from_host(&t, d, shape1(n), mine);
    if (s == STATUS_OK) s = dist_nccl_all_reduce_sum(nccl, t);
    if (s == STATUS_OK) s = tensor_to_host(t, mine, n);
    double error = 0;
    for (int64_t i = 0; s == STATUS_OK && i < n; ++i) {
        const double e =
            fabs((double)mine[i] - sum[i]) / (2.0 * world_size * FLT_EPSILON * magnitude[i] + FLT_MIN);
        if (!(e <= error)) error = isnan(e) ? INFINITY : e;
    }
    const double worst = max_over_ranks(s == STATUS_OK ? error : INFINITY);
    claim(s == STATUS_OK && worst <= 1.0, name, "%d rank%s, %lld floats: %.2g of the rounding bound%s",
          world_size, plural(world_size), (long long)n, worst, check_failure_text(s));
    tensor_free(t);
    dist_nccl_free(nccl);
    free(mine), free(sum), free(magnitude);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* Errors come back to the calls (where the check's wrappers name them),
     * not as MPI's abort, in words that name the check's own calls. */
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_rank != 0) {
        rank_stdout = dup(STDOUT_FILENO);
        if (!freopen("/dev/null", "w", stdout)) return CHECK_FAILS;
    }
    signal(SIGALRM, watchdog);
    /* Rank 0's watchdog first: its words end the run. */
    alarm(WATCHDOG_S + (world_rank ? 3 : 0));
    const device requested = check_device(argc, argv);
    if (world_size < 2)
        printf("note: 1 rank: start the check with the launcher (./lab check 10, or mpiexec -n 2 %s)\n",
               argv[0]);
    check_ranks(requested);
    rank_info info = { 0, 1, 0, 1 };
    device d = requested;
    if (lab_ranks(MPI_COMM_WORLD, &info) != STATUS_OK ||
        lab_pick_device(requested, info.local_rank, device_count(DEVICE_CUDA), &d) != STATUS_OK ||
        !device_exists(d))
        d = requested.kind == DEVICE_SIM ? (device){ DEVICE_SIM, 0 } : requested;
    check_chunks();
    check_ring();
    check_training(d);
    check_nccl(d, &info);
    const int code = check_finish("10_distributed");
    alarm(0);
    MPI_Finalize();
    return code;
}
