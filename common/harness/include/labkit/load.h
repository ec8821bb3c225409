/* load.h: how busy other programs kept the machine's cores while this one ran.
 *
 * A timing measured while other programs compete for the cores is slower and
 * noisier than the machine's, and a figure drawn from it can show the opposite
 * of its lesson. So every results table (results.h) measures it over the run
 * and says it: a "# load:" line in the CSV, the plot variables busy_cores and
 * cores (style.gp's load_line, under every figure's title), and a note after
 * the table when it passed LOAD_BUSY_CORES_NOTED.
 *
 *   load_sample before;
 *   load_now(&before);
 *   ... the work ...
 *   double others = load_busy_elsewhere(&before, NULL);   // cores, or -1: unknown
 *
 * The machine's busy time comes from /proc/stat (every core, every program),
 * this process's own from its CPU clock (every thread, simulated GPUs'
 * workers included); what remains, over the wall-clock time, is the others'. */
#ifndef LABKIT_LOAD_H
#define LABKIT_LOAD_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* From this many cores kept busy by other programs a run counts as under load:
 * a third of one core slows a 2-core run's timings visibly (lab 05's steps
 * took 2-5x as long with two busy loops on 2 cores). */
#define LOAD_BUSY_CORES_NOTED 0.33

typedef struct load_sample {
    bool known;           /* false where /proc/stat could not be read */
    double busy_seconds;  /* every core's busy time since boot (/proc/stat) */
    double total_seconds; /* every core's busy and idle time since boot */
    double own_seconds;   /* this process's CPU time */
    double wall_seconds;  /* a monotonic clock */
} load_sample;

/* Takes a sample now; returns false (and marks it unknown) where /proc/stat
 * cannot be read. */
bool load_now(load_sample *out);

/* How many cores other programs kept busy, on average, from `before` to
 * `after` (NULL: now); -1 when unknown (a sample unknown, NULL, or no time
 * passed). Never below 0. */
double load_busy_elsewhere(const load_sample *before, const load_sample *after);

/* How many cores /proc/stat counts (the machine's, which a container may
 * share); at least 1. */
int load_cores(void);

#ifdef __cplusplus
}
#endif
#endif
