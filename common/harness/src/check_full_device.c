/* check_full_device.c: a full simulated GPU for a check (check_full_device.h). */
#include "labkit/check_full_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/check.h"
#include "labkit/status.h"

bool full_device_target(device d, device *out)
{
    if (d.kind == DEVICE_SIM) {
        *out = d;
        return true;
    }
    if (device_count(DEVICE_SIM) == 0) return false;
    *out = (device){ DEVICE_SIM, 0 };
    return true;
}

bool fill_device(device d, size_t room, tensor **filler)
{
    size_t free_bytes = 0, total = 0;
    CHECK(device_memory_info(d, &free_bytes, &total));
    *filler = NULL;
    if (free_bytes > room) {
        const status s =
            tensor_empty(filler, d, DTYPE_F32, shape1((int64_t)((free_bytes - room) / sizeof(float))));
        if (s != STATUS_OK) {
            const char *why = last_error();
            printf("  (%s could not be filled, so a full device is not tried: %.*s)\n", device_name(d),
                   (int)strcspn(why, "\n"), why);
            return false;
        }
    }
    CHECK(device_memory_info(d, &free_bytes, &total));
    if (free_bytes != room) {
        fprintf(stderr, "%s:%d: could not leave exactly %zu bytes free on %s (%zu are)\n", __FILE__, __LINE__,
                room, device_name(d), free_bytes);
        exit(CHECK_FAILS);
    }
    return true;
}

static bool on_either(const tensor *t, device a, device b)
{
    return t && (device_equal(tensor_device(t), a) || device_equal(tensor_device(t), b));
}

bool layer_whole(const tensor *weight, const tensor *bias, device from, device to, char *where, size_t size)
{
    snprintf(where, size, "weight %s, bias %s", weight ? device_name(tensor_device(weight)) : "NULL",
             bias ? device_name(tensor_device(bias)) : "NULL");
    return on_either(weight, from, to) && on_either(bias, from, to);
}
