/* check.c: what CHECK() prints before it stops a program.
 *
 * An ordinary failure reads like the CUDA samples' checks:
 *     main.c:42: tensor_zeros(&x, dev, shape2(3, 4)) failed (STATUS_OUT_OF_MEMORY): <message>
 * An unwritten lab step puts its TODO first, since that is what the student must
 * act on, and where it was called from second:
 *     TODO: lab_add_across_devices is not implemented yet (see the lab's README)
 *       main.c:42: lab_add_across_devices(a, b, c) returned STATUS_TODO */
#include "labkit/check.h"

#include <stdio.h>

void check_report_failure(const char *file, int line, const char *expression, status s)
{
    const char *message = last_error();
    if (message == NULL || message[0] == '\0') {
        message = "(no message was recorded for this failure)";
    }
    if (file == NULL) {
        file = "?";
    }
    if (expression == NULL) {
        expression = "?";
    }

    /* The program's table went to stdout; flush it so the error lands after it. */
    fflush(stdout);
    if (s == STATUS_TODO) {
        fprintf(stderr, "%s\n  %s:%d: %s returned %s\n", message, file, line, expression,
                status_name(s));
    } else {
        fprintf(stderr, "%s:%d: %s failed (%s): %s\n", file, line, expression, status_name(s),
                message);
    }
    fflush(stderr);
}
