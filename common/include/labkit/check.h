/* check.h: stopping a program on the first failed call, in the style of the CUDA
 * samples, and the exit codes of a lab's check.
 *
 *   CHECK(tensor_zeros(&x, dev, shape2(3, 4)));
 *
 * prints "file.c:12: tensor_zeros(&x, dev, shape2(3, 4)) failed (STATUS_...): <message>"
 * and exits with 1; an unwritten lab step prints its "TODO: ..." message first.
 * Library functions themselves never exit; only programs do. */
#ifndef LABKIT_CHECK_H
#define LABKIT_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exit codes of a check program (CTest reads 77 as "skipped"). */
enum { CHECK_HOLDS = 0, CHECK_FAILS = 1, CHECK_SKIPPED = 77 };

void check_report_failure(const char *file, int line, const char *expression, status s);

#define CHECK(call)                                                     \
    do {                                                                \
        status check_status_ = (call);                                  \
        if (check_status_ != STATUS_OK) {                               \
            check_report_failure(__FILE__, __LINE__, #call, check_status_); \
            exit(CHECK_FAILS);                                          \
        }                                                               \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
