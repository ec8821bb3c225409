/* progress.h: a long run says so at its start and shows how far it has got.
 *
 *   progress p;
 *   progress_begin(&p, "matrix products up to N = 4096 on 3 devices", estimated_seconds);
 *   for (int i = 0; i < n; i++) {
 *       ... one step ...
 *       progress_update(&p, (i + 1.0) / n);
 *   }
 *   progress_end(&p);
 *
 * A run estimated at over PROGRESS_LONG_SECONDS prints, on stderr, at its start:
 *   this run will take about 12 min: matrix products up to ...; Ctrl-C stops it (--quick: seconds)
 * and while it runs, at most every PROGRESS_EVERY_SECONDS, a line such as
 *   progress: 40% done, about 7 min left
 * A short run prints nothing; one that turns out long (its estimate was wrong)
 * starts showing progress once it has run for PROGRESS_LONG_SECONDS. Everything
 * goes to stderr, so that a table or CSV on stdout stays clean. */
#ifndef LABKIT_PROGRESS_H
#define LABKIT_PROGRESS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Over this many seconds a run is long: it says so, and shows its progress. */
#define PROGRESS_LONG_SECONDS 60.0
/* The shortest time between two progress lines. */
#define PROGRESS_EVERY_SECONDS 5.0

typedef struct progress {
    const char *what;  /* what the run does, for the first line */
    double started;    /* wall_seconds() at progress_begin */
    double estimate;   /* seconds, as estimated by the caller */
    double last_shown; /* wall_seconds() of the last line printed; 0: none yet */
    bool announced;    /* the first line was printed */
} progress;

/* Starts timing; prints the first line when the estimate is over PROGRESS_LONG_SECONDS.
 * `what` must outlive p (a string literal, say); NULL: "the experiment". */
void progress_begin(progress *p, const char *what, double estimated_seconds);

/* `fraction` done, from 0 to 1: prints a progress line with the time left when
 * the run is long and the last line is at least PROGRESS_EVERY_SECONDS old
 * (or a tenth of the estimate, if that is longer, so a long run prints about 10). */
void progress_update(progress *p, double fraction);

/* After a long run: one line with the time it took. */
void progress_end(progress *p);

/* A duration as people say it, into buffer: "45 s", "12 min", "1 h 20 min". */
const char *progress_duration(double seconds, char *buffer, int size);

#ifdef __cplusplus
}
#endif
#endif
