/* check_unknown_peak.c: a device that does not know its peak (check.h).
 *
 * Its own object in the static library: only a check that asks for it links
 * it, and such a check is linked with -Wl,--wrap=device_get_properties (its
 * lab.cmake), which sends every call of device_get_properties here and makes
 * __real_device_get_properties the library's. */
#include "labkit/check.h"
#include "labkit/properties.h"

/* Per thread: the student's call is made on the check's thread, and the
 * devices' own threads must go on seeing the real figures. */
static _Thread_local bool pretending;

void check_pretend_unknown_peak(bool on) { pretending = on; }

status __real_device_get_properties(device d, device_properties *out);
status __wrap_device_get_properties(device d, device_properties *out);
status __wrap_device_get_properties(device d, device_properties *out)
{
    const status s = __real_device_get_properties(d, out);
    if (s == STATUS_OK && pretending) out->peak_gflops = 0.0;
    return s;
}
