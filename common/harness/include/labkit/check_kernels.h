/* check_kernels.h: the `kernels` claim of a lab's check: the student's kernels
 * under the simulated GPU's kernel sanitizer (labkit/kernel_sanitizer.h).
 *
 * `./lab check NN --kernels` runs the lab's check built for the kernel tools
 * (checkNN-kernels: its launcher files instrumented); such a check runs its
 * kernels claim alone:
 *
 *   int main(int argc, char **argv)
 *   {
 *       const device d = check_device(argc, argv);
 *       if (check_kernels_only()) return check_kernels(d);
 *       ...
 *   }
 *   static int check_kernels(device d)
 *   {
 *       int skip = check_kernels_skip(d);     // a real GPU: compute-sanitizer's job
 *       if (skip) return skip;
 *       kernel_sanitizer_clear();
 *       ... launch the student's kernels on d, sizes that do not fill whole blocks ...
 *       check_kernels_clean("your naive kernel", d);
 *       return check_finish("04_matmul");
 *   }
 */
#ifndef LABKIT_CHECK_KERNELS_H
#define LABKIT_CHECK_KERNELS_H

#include <stdbool.h>

#include "labkit/device.h"
#include "labkit/kernel_profile.h"
#include "labkit/kernel_sanitizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this check runs its kernels claim alone: in a check built for the
 * kernel tools (./lab check NN --kernels), or where LABKIT_CHECK_KERNELS=cuda
 * asks the plain check to make the claim's launches on a real GPU, unwatched,
 * for NVIDIA's compute-sanitizer to watch instead (tools/sanitize_agreement.sh:
 * the same launches under both sanitizers). */
bool check_kernels_only(void);

/* CHECK_SKIPPED (77) with a line that says why for a device the kernel
 * sanitizer does not watch (a real GPU: ./lab sanitize runs compute-sanitizer
 * there), or in a program whose kernels were not built for it; 0 otherwise. */
int check_kernels_skip(device d);

/* The claim "<what> run(s) clean under the kernel sanitizer": it holds when
 * launches were watched since the last kernel_sanitizer_clear() and none gave
 * a report. When one did, the claim names the first report's kind, file and
 * line ("... (out-of-bounds write at labs/04_matmul/naive_kernel.cuh line
 * 25)"), and its figures give the report in full. Returns whether it holds. */
bool check_kernels_clean(const char *what, device d);

#ifdef __cplusplus
}
#endif
#endif
