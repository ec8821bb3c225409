/* check_kernels.c: a lab check's kernels claim (labkit/check_kernels.h). */
#include "labkit/check_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/check.h"

/* LABKIT_CHECK_KERNELS=cuda: the launches go to a real GPU for compute-sanitizer. */
static bool for_compute_sanitizer(void)
{
    const char *value = getenv("LABKIT_CHECK_KERNELS");
    return value != NULL && strcmp(value, "cuda") == 0;
}

bool check_kernels_only(void) { return kernel_tools_built() || for_compute_sanitizer(); }

int check_kernels_skip(device d)
{
    if (d.kind == DEVICE_CUDA && for_compute_sanitizer()) return 0;
    if (!kernel_tools_built()) {
        printf(
            "skipped: this check's kernels were not built for the kernel sanitizer (./lab check NN --kernels "
            "builds them)\n");
        return CHECK_SKIPPED;
    }
    if (d.kind == DEVICE_CUDA) {
        printf(
            "skipped: %s is a real GPU: the kernel sanitizer watches the simulated GPU's launches; on a real "
            "GPU ./lab sanitize runs compute-sanitizer\n",
            device_name(d));
        return CHECK_SKIPPED;
    }
    return 0;
}

static const char *kind_words(const kernel_report *r)
{
    switch (r->kind) {
    case KERNEL_REPORT_OUT_OF_BOUNDS: return r->write ? "out-of-bounds write" : "out-of-bounds read";
    case KERNEL_REPORT_SHARED_RACE: return "race on shared memory";
    case KERNEL_REPORT_GLOBAL_RACE: return "race on global memory";
    case KERNEL_REPORT_UNINITIALIZED_READ: return "read of uninitialized shared memory";
    case KERNEL_REPORT_LAUNCH_FAILED: return "a failed launch";
    }
    return "a report";
}

bool check_kernels_clean(const char *what, device d)
{
    char claim[512];
    if (d.kind == DEVICE_CUDA) { /* LABKIT_CHECK_KERNELS=cuda: nothing here watched them */
        snprintf(claim, sizeof claim, "%s run clean under the kernel sanitizer", what);
        return check_that(false, claim,
                          "%s is a real GPU, which the kernel sanitizer does not watch: the launches ran for "
                          "compute-sanitizer (LABKIT_CHECK_KERNELS=cuda), whose report says what it saw",
                          device_name(d));
    }
    const unsigned long long launches = kernel_sanitizer_launches();
    const size_t reports = kernel_sanitizer_count();
    kernel_report r;
    if (reports == 0 || kernel_sanitizer_report(0, &r) != STATUS_OK) {
        snprintf(claim, sizeof claim, "%s run clean under the kernel sanitizer", what);
        return check_that(
            launches > 0 && reports == 0, claim,
            "%llu launches on %s watched: no race, no access out of bounds, no read of unwritten "
            "shared memory%s",
            launches, device_name(d), launches ? "" : " (none was watched: did they launch?)");
    }
    /* the place in the claim itself, so that the verdict's one line names it */
    if (r.line > 0)
        snprintf(claim, sizeof claim, "%s run clean under the kernel sanitizer (%s at %s line %d)", what,
                 kind_words(&r), r.file, r.line);
    else
        snprintf(claim, sizeof claim, "%s run clean under the kernel sanitizer (%s in %s)", what,
                 kind_words(&r), r.kernel);
    return check_that(false, claim, "%s%s(%zu reports in %llu launches on %s; the first above)", r.text,
                      reports > 1 ? "\n        " : " ", reports, launches, device_name(d));
}
