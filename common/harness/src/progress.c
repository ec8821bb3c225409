/* progress.c: the start line and the progress lines of a long run.
 *
 * A student who starts a twelve-minute run without knowing it will think the
 * program hangs and stop it. So a long run says at once how long it will take
 * and how to stop it, then shows how far it has got, with the time left
 * computed from the pace so far (not from the estimate, which may be wrong).
 * Short runs, the usual case, stay silent. */
#include "labkit/progress.h"

#include <math.h>
#include <stdio.h>

#include "labkit/timer.h"

const char *progress_duration(double seconds, char *buffer, int size)
{
    if (!buffer || size <= 0) return "";
    if (!(seconds >= 0)) seconds = 0;
    if (seconds < 90)
        snprintf(buffer, (size_t)size, "%.0f s", seconds);
    else if (seconds < 90 * 60)
        snprintf(buffer, (size_t)size, "%.0f min", seconds / 60);
    else {
        double minutes = round(seconds / 60);
        snprintf(buffer, (size_t)size, "%.0f h %.0f min", floor(minutes / 60), fmod(minutes, 60));
    }
    return buffer;
}

static bool is_long(const progress *p, double elapsed)
{
    return p->estimate > PROGRESS_LONG_SECONDS || elapsed > PROGRESS_LONG_SECONDS;
}

static void announce(progress *p)
{
    char estimate[32];
    fflush(stdout); /* the table so far first, then this line */
    fprintf(stderr, "this run will take about %s: %s; Ctrl-C stops it (--quick: a run of seconds)\n",
            progress_duration(p->estimate, estimate, sizeof estimate), p->what);
    p->announced = true;
}

void progress_begin(progress *p, const char *what, double estimated_seconds)
{
    if (!p) return;
    *p = (progress){ .what = what ? what : "the experiment",
                     .started = wall_seconds(),
                     .estimate = isfinite(estimated_seconds) ? estimated_seconds : 0 };
    if (p->estimate > PROGRESS_LONG_SECONDS) announce(p);
}

void progress_update(progress *p, double fraction)
{
    if (!p) return;
    double now = wall_seconds(), elapsed = now - p->started;
    if (!is_long(p, elapsed) || !(fraction > 0)) return;
    double every = fmax(PROGRESS_EVERY_SECONDS, p->estimate / 10);
    double since = now - (p->last_shown > 0 ? p->last_shown : p->started);
    if (since < every) return;
    fraction = fmin(fraction, 1.0);
    char left[32];
    fflush(stdout);
    fprintf(stderr, "progress: %.0f%% done, about %s left\n", 100 * fraction,
            progress_duration(elapsed * (1 - fraction) / fraction, left, sizeof left));
    p->last_shown = now;
}

void progress_end(progress *p)
{
    if (!p) return;
    double elapsed = wall_seconds() - p->started;
    if (!p->announced && !p->last_shown) return;
    char took[32];
    fflush(stdout);
    fprintf(stderr, "progress: done in %s\n", progress_duration(elapsed, took, sizeof took));
}
