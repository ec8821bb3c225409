/* cuda_internal.h: what the CUDA backend's two files share (internal). */
#ifndef LABKIT_CUDA_INTERNAL_H
#define LABKIT_CUDA_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "../op_call.h"
#include "cuda_blas.h"
#include "cuda_blas_lt.h"
#include "labkit/status.h"

/* The scratch space (in doubles) that cuda_run_op needs for reductions. */
size_t cuda_scratch_doubles(void);

#ifdef LABKIT_WITH_NCCL
/* Sums data[i] (count floats on GPU indices[i]) across the GPUs in place, with
 * NCCL, queued on streams[i] (cuda_nccl.cu). */
status nccl_all_reduce_sum(const int *indices, float *const *data, const cudaStream_t *streams, int n,
                           size_t count);
#endif

/* Queues `op`'s kernels (and cuBLAS calls) on `stream`; returns at once. */
status cuda_run_op(cudaStream_t stream, const cublas_api *api, cublasHandle_t blas, cuda_lt *lt,
                   double *scratch, const op_call *op);

#endif
