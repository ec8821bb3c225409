/* host_copy.h: a tensor's values in a new host array (the labs' shared code,
 * labs/common/: labs 07 and 09 compare a device's results on the host with
 * it). Not student work. */
#ifndef LABS_COMMON_HOST_COPY_H
#define LABS_COMMON_HOST_COPY_H

#include "labkit/status.h"
#include "labkit/tensor.h"

/* A new host array with t's values (a blocking read); free() it. */
status host_copy(const tensor *t, float **out);

#endif
