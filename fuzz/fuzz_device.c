/* fuzz_device.c: the device-string parser, device_parse (labkit/device.h), on
 * any text, with two simulated GPUs present: a name is refused or names a
 * device that exists, whose name parses back to it. */
#include <stdbool.h>
#include <string.h>

#include "fuzz_input.h"
#include "labkit/device.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        setenv("LABKIT_SIM_GPUS", "2", 1);
        setenv("LABKIT_SIM_MEMORY", "1M", 1);
        ready = devices_init() == STATUS_OK;
        if (!ready) abort();
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    device d;
    if (device_parse(text, &d) == STATUS_OK) {
        device again;
        if (!device_exists(d) || device_parse(device_name(d), &again) != STATUS_OK || !device_equal(d, again))
            abort(); /* a device accepted that does not exist, or whose name does not parse back */
    }
    free(text);
    return 0;
}
