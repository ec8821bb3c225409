/* sim_fault.c: which kernel a thread was running (sim_fault.h).
 *
 * LAUNCH runs every block and thread in turn without recording which; until
 * the launches keep that state, a crash report can only say the frames. */
#include "sim_fault.h"

size_t sim_fault_describe_kernel(char *out, size_t size)
{
    if (size) out[0] = '\0';
    return 0;
}
