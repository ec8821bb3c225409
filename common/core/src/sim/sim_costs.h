/* sim_costs.h: what a simulated GPU's work costs in time (internal). Its
 * memory is host memory and its kernels run on a CPU core, so without these
 * floors the costs a real GPU has and the lessons count on would not show. */
#ifndef LABKIT_SIM_COSTS_H
#define LABKIT_SIM_COSTS_H

#include <stddef.h>

/* What a copy across PCIe costs before its first byte moves (driver, DMA set-up,
 * bus latency): about 10 microseconds on a real GPU. A simulated GPU's memory is
 * host memory, so without this a small copy would be nearly free and the lesson
 * "many small copies are much worse than one big one" would not show. Large
 * copies hardly notice it: 64 MiB take milliseconds. */
#define TRANSFER_LATENCY_SECONDS 10e-6

/* The least time a kernel occupies a real GPU, however little it computes
 * (launch, scheduling, the memory round trip): a few microseconds. Without it a
 * one-element operation would take the worker a fraction of a microsecond, and
 * a loop of tiny launches would leave the simulated GPU idle most of the time,
 * where a real one looks "busy" (lesson 001's utilisation illusion). */
#define KERNEL_MIN_SECONDS 2e-6

/* Waits until `seconds` have passed since `start` (clock_seconds()). */
void sim_occupy_until(double start, double seconds);

/* memcpy, taking at least TRANSFER_LATENCY_SECONDS: a copy across PCIe. */
void sim_transfer(void *dst, const void *src, size_t bytes);

#endif
