/* units.h: byte counts as people read them, for messages (internal). */
#ifndef LABKIT_UNITS_H
#define LABKIT_UNITS_H

#include <stddef.h>
#include <stdio.h>

/* "512 bytes", "3.0 KiB", "1.5 MiB", "4.0 GiB" into buf; returns buf. */
static inline const char *bytes_text(size_t n, char *buf, size_t size)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
    if (n < 1024) {
        snprintf(buf, size, "%zu byte%s", n, n == 1 ? "" : "s");
        return buf;
    }
    double value = (double)n / 1024;
    int unit = 0;
    while (value >= 1024 && unit < 3) value /= 1024, ++unit;
    snprintf(buf, size, "%.1f %s", value, units[unit]);
    return buf;
}

#endif
