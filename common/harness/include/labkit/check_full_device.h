/* check_full_device.h: a full simulated GPU for a check's claims on failures
 * for want of memory (labs 01 and 02: a step whose allocation fails must
 * return STATUS_OUT_OF_MEMORY and leave nothing behind). */
#ifndef LABKIT_CHECK_FULL_DEVICE_H
#define LABKIT_CHECK_FULL_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "labkit/device.h"
#include "labkit/tensor.h"

/* Where a failure for want of memory can be made: a simulated GPU, whose
 * memory the check can fill to the byte (d itself, or sim:0 beside the CPU or
 * a real GPU, whose free memory moves with other programs). False when there
 * is no simulated GPU. */
bool full_device_target(device d, device *out);

/* Takes all of the simulated GPU d's free memory but `room` bytes into
 * *filler, as other tensors would on a full GPU: the next allocation there of
 * more than `room` bytes fails with STATUS_OUT_OF_MEMORY. Free *filler to give
 * the memory back. The filler is never touched, so it costs the host no
 * memory, but the host must lend the addresses: where it refuses, this says
 * so and returns false, and the claim is not tried. A device that cannot be
 * left with exactly `room` bytes stops the check (CHECK_FAILS). */
bool fill_device(device d, size_t room, tensor **filler);

/* After a move of a layer's weight and bias from `from` to `to` (labs 01 and
 * 02): true when both still exist, each on one of the two devices, as a move
 * that failed half way must leave them. Says where each is into `where`
 * ("weight sim:0, bias cpu"; "NULL" for one lost). */
bool layer_whole(const tensor *weight, const tensor *bias, device from, device to, char *where, size_t size);

#endif
