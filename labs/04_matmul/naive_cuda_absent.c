/* naive_cuda_absent.c: stands in for naive_cuda.cu in a build without CUDA
 * (given: not a step).
 *
 * Such a build sees no cuda:N device, so lab_matmul_naive_gpu never picks this
 * launcher; it exists so that the programs link. Were it reached all the same,
 * it says why nothing ran rather than failing silently. */
#include <stdio.h>
#include <stdlib.h>

#include "naive_launch.h"

void naive_matmul_on_cuda(const void *args, void *stream)
{
    (void)args, (void)stream;
    fprintf(stderr,
            "naive_matmul_on_cuda: this program was built without CUDA, so it cannot launch a kernel "
            "on a real GPU.\n  hint: install a CUDA toolkit and configure again (README, \"CUDA\").\n");
    abort();
}
