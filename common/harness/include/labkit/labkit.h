/* labkit.h: everything a lab program needs, in one include. */
#ifndef LABKIT_LABKIT_H
#define LABKIT_LABKIT_H

#include "labkit/check.h"
#include "labkit/cli.h"
#include "labkit/copy_queue.h"
#include "labkit/device.h"
#include "labkit/environment.h"
#include "labkit/event.h"
#include "labkit/figure.h"
#include "labkit/files.h"
#include "labkit/graph.h"
#include "labkit/kernel.h"
#include "labkit/ops.h"
#include "labkit/progress.h"
#include "labkit/properties.h"
#include "labkit/safetensors.h"
#include "labkit/counters.h"
#include "labkit/results.h"
#include "labkit/status.h"
#include "labkit/tensor.h"
#include "labkit/timer.h"

#endif
