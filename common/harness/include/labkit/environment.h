/* environment.h: the kit's settings, its LABKIT_* variables, checked where a
 * program starts. A setting given explicitly that cannot be honoured is an
 * error: a typo must not run a lesson quietly without what it asked for, with
 * an exit status that a script or a grader reads as success. Unset or empty
 * keeps the default.
 *
 *   LABKIT_SIM_GPUS    simulated GPUs, a whole number from 0 to 8 (device.h)
 *   LABKIT_SIM_MEMORY  each one's memory: bytes, or a whole number with K, M or
 *                      G (powers of 1024), from 1 byte to 16 EiB
 *   LABKIT_GNUPLOT     the gnuplot that draws figures: a program on PATH or a
 *                      path to one (figure.h)
 *   LABKIT_PYTHON      the python the benches and tests compare with: the same
 *   LABKIT_PRESET      ./lab's build preset (read by the driver alone)
 *
 * The library never exits: these return the error, and each program's entry
 * point (cli_parse, check_device, the tests' and benches' mains,
 * labkit-devices) stops with exit status 2 and the message. */
#ifndef LABKIT_ENVIRONMENT_H
#define LABKIT_ENVIRONMENT_H

#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The settings every program reads: LABKIT_SIM_GPUS, LABKIT_SIM_MEMORY
 * (through devices_init) and LABKIT_GNUPLOT. The first that cannot be
 * honoured is the error, naming the variable, its value and the valid ones. */
status environment_check(void);

/* `variable`, when set and not empty, must name a program that can be run: a
 * path to an executable file, or a name found on PATH. */
status environment_check_program(const char *variable);

#ifdef __cplusplus
}
#endif
#endif
