/* load.c: other programs' share of the cores, from /proc/stat (load.h).
 *
 * /proc/stat's first line is every core's time since boot, in clock ticks:
 * user nice system idle iowait irq softirq steal. Busy is all but idle and
 * iowait. Its ticks are coarse (10 ms), so a run of under a second says
 * little: the figure is an average over the run, good to a tenth of a core
 * over a few seconds. */
#include "labkit/load.h"
#include "labkit/timer.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool read_proc_stat(double *busy, double *total)
{
    FILE *f = fopen("/proc/stat", "r");
    double t[8] = { 0 };
    const bool read = f && fscanf(f, "cpu %lf %lf %lf %lf %lf %lf %lf %lf", &t[0], &t[1], &t[2], &t[3], &t[4],
                                  &t[5], &t[6], &t[7]) == 8;
    if (f) fclose(f);
    const long hz = sysconf(_SC_CLK_TCK);
    if (!read || hz <= 0) return false;
    *total = (t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7]) / (double)hz;
    *busy = *total - (t[3] + t[4]) / (double)hz;
    return true;
}

bool load_now(load_sample *out)
{
    if (!out) return false;
    memset(out, 0, sizeof *out);
    out->known = read_proc_stat(&out->busy_seconds, &out->total_seconds);
    out->own_seconds = process_cpu_seconds();
    out->wall_seconds = wall_seconds();
    return out->known;
}

int load_cores(void)
{
    FILE *f = fopen("/proc/stat", "r");
    char line[256];
    int cores = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') cores++;
    if (f) fclose(f);
    if (cores == 0) cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 1;
}

double load_busy_elsewhere(const load_sample *before, const load_sample *after)
{
    load_sample now;
    if (!after) {
        load_now(&now);
        after = &now;
    }
    if (!before || !before->known || !after->known) return -1.0;
    const double wall = after->wall_seconds - before->wall_seconds;
    const double total = after->total_seconds - before->total_seconds;
    if (wall <= 0.0 || total <= 0.0) return -1.0;
    /* The busy share of every core's time, in cores, less this process's own. */
    const double cores = (after->busy_seconds - before->busy_seconds) / total * load_cores();
    const double own = (after->own_seconds - before->own_seconds) / wall;
    const double others = cores - own;
    return others > 0.0 ? others : 0.0;
}
