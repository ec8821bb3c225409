/* process_rank.c: which of a launch's processes this one is (process_rank.h). */
#include "labkit/process_rank.h"

#include <errno.h>
#include <stdlib.h>

/* A whole number from 0 up, or -1: a variable set to something else is not a
 * rank this code can trust, and the process then speaks for itself. */
static int rank_from(const char *variable)
{
    const char *text = getenv(variable);
    if (!text || text[0] < '0' || text[0] > '9') return -1;
    char *end = NULL;
    errno = 0;
    const long value = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || value > 1 << 24) return -1;
    return (int)value;
}

int process_rank(void)
{
    static const char *const variables[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; ++i) {
        const int rank = rank_from(variables[i]);
        if (rank >= 0) return rank;
    }
    return -1;
}

bool process_rank_is_quiet(void) { return process_rank() > 0; }
