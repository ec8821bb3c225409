/* sim_properties.h: the properties of simulated GPU `index` (internal). */
#ifndef LABKIT_SIM_PROPERTIES_H
#define LABKIT_SIM_PROPERTIES_H

#include <stddef.h>

#include "labkit/properties.h"
#include "labkit/status.h"

/* The CPU's properties, named "Simulated GPU sim:<index>", with `capacity`
 * bytes of memory (LABKIT_SIM_MEMORY) and notes saying what it lacks. */
status sim_device_properties(int index, size_t capacity, device_properties *out);

#endif
