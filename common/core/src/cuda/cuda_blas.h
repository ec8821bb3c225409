// cuda_blas.h: cuBLAS, opened on first use (internal).
//
// A program linked to cuBLAS pays about 0.3 s at every start, before main():
// cuBLASLt's static constructors run whether or not the program ever sees a
// GPU. So the kit does not link it; the CUDA backend opens it with dlopen when
// it starts its first device, and calls it through this table.
#ifndef LABKIT_CUDA_BLAS_H
#define LABKIT_CUDA_BLAS_H

#include <cublas_v2.h>

#include "labkit/status.h"

// cublasGemmEx has a C++ overload (a cudaDataType compute type); this is the
// C function that the library exports.
typedef cublasStatus_t (*cublas_gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                            int, const void *, const void *, cudaDataType, int, const void *,
                                            cudaDataType, int, const void *, void *, cudaDataType, int,
                                            cublasComputeType_t, cublasGemmAlgo_t);

struct cublas_api {
    decltype(&cublasCreate) create;
    decltype(&cublasDestroy) destroy;
    decltype(&cublasSetStream) set_stream;
    decltype(&cublasSetWorkspace) set_workspace;
    decltype(&cublasSetMathMode) set_math_mode;
    decltype(&cublasSgemm) sgemm;
    cublas_gemm_ex_fn gemm_ex;
    decltype(&cublasGetStatusString) status_string;
};

// The table, loading cuBLAS the first time; NULL (with the reason recorded by
// fail()) when it cannot be opened.
const cublas_api *cuda_blas(void);

#endif
