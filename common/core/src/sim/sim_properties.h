/* sim_properties.h: the properties of simulated GPU `index` (internal). */
#ifndef LABKIT_SIM_PROPERTIES_H
#define LABKIT_SIM_PROPERTIES_H

#include <stddef.h>

#include "labkit/properties.h"
#include "labkit/status.h"

/* The modelled card every simulated GPU describes (sim_properties.c says why). */
#define SIM_MULTIPROCESSORS 20
#define SIM_CC_MAJOR 8
#define SIM_CC_MINOR 6
#define SIM_CLOCK_GHZ 1.5
#define SIM_MEMORY_BANDWIDTH_GBS 320.0

/* The modelled card, named "Simulated GPU sim:<index>", with `capacity` bytes
 * of memory (LABKIT_SIM_MEMORY) and notes saying what it is and lacks. */
status sim_device_properties(int index, size_t capacity, device_properties *out);

#endif
