// cuda_blas_lt.h: cuBLASLt, opened on first use like cuBLAS (internal), for
// one thing: a float32 product whose bias is added in its epilogue, in the
// same kernel, instead of by a kernel of its own after it.
//
// Each shape of product gets a plan once (the descriptors and the algorithm
// cuBLASLt's heuristic picks), kept for the device's lifetime: making them
// costs the host microseconds per call, which an eager training step of a
// few dozen operations cannot spare. Host-side objects only, so a plan may be
// made while a graph is being captured.
#ifndef LABKIT_CUDA_BLAS_LT_H
#define LABKIT_CUDA_BLAS_LT_H

#include <cublasLt.h>
#include <pthread.h>

#include "../op_call.h"
#include "labkit/status.h"

#define LT_PLANS 32

struct lt_plan {
    int64_t m, n, k;
    bool trans_a, trans_b;
    bool usable; // false: cuBLASLt offered no algorithm; the kit's bias kernel is used
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
};

struct cuda_lt {
    cublasLtHandle_t handle; // NULL when cuBLASLt could not be opened or started
    void *workspace;         // cuBLAS's: the two run in the stream's order, never at once
    size_t workspace_bytes;
    pthread_mutex_t lock;
    int count;
    lt_plan plans[LT_PLANS];
};

// Starts cuBLASLt for a device (handle), sharing `workspace`. Never fails: a
// device without it adds biases with a kernel, as before (*lt's handle NULL).
void lt_start(cuda_lt *lt, void *workspace, size_t workspace_bytes);
void lt_stop(cuda_lt *lt);

// out = op(a) op(b) + bias in one cuBLASLt call, for float32 inputs (not TF32)
// with a bias; *done says whether it ran (false: make the product another way).
status lt_gemm_bias(cuda_lt *lt, cudaStream_t stream, const op_call *op, bool *done);

#endif
