// test_half_hardware.cu: the kit's single-source rounding (kernels/half.cuh)
// against the GPU's own conversion instructions, on every one of the 2^32
// float32 patterns:
//   - float32 -> bf16 and f16 against __float2bfloat16_rn and __float2half_rn
//     (cvt.rn: to nearest, ties to even): they must agree on every pattern;
//   - bf16 and f16 -> float32 against __bfloat162float and __half2float on every
//     16-bit pattern (NaN payloads aside: both must give a NaN);
//   - TF32 against cvt.rna.tf32.f32 (Ampere and later), which rounds ties away
//     from zero: they must agree on every pattern but exact ties, which are
//     counted.
// It proves on a real GPU what the unit tests cannot here: that tensor_convert
// rounds exactly as the hardware does. Label `gpu`; exits 77 without a GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "kernels/half.cuh"

namespace
{

// What one pass over the patterns found.
struct findings {
    unsigned long long bf16_wrong, f16_wrong, tf32_wrong, tf32_ties, widen_wrong;
    uint32_t bf16_first, f16_first, tf32_first, widen_first; // a pattern that disagreed
};

__device__ bool is_nan32(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

__device__ void note(unsigned long long *count, uint32_t *first, uint32_t pattern)
{
    if (atomicAdd(count, 1ull) == 0) *first = pattern;
}

__device__ uint32_t hardware_tf32(float x)
{
#if __CUDA_ARCH__ >= 800
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
#else
    return bits_of_float(tf32_rounded(x)); // no TF32 before Ampere: nothing to compare
#endif
}

__global__ void compare_narrowing(findings *f)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= 0xffffffffull; i += stride) {
        const uint32_t u = (uint32_t)i;
        const float x = __uint_as_float(u);
        if (bf16_bits_from_float(x) != __bfloat16_as_ushort(__float2bfloat16_rn(x)))
            note(&f->bf16_wrong, &f->bf16_first, u);
        if (f16_bits_from_float(x) != __half_as_ushort(__float2half_rn(x)))
            note(&f->f16_wrong, &f->f16_first, u);
        const uint32_t mine = bits_of_float(tf32_rounded(x)), theirs = hardware_tf32(x);
        if (mine != theirs && !is_nan32(u)) {
            if ((u & 0x1fffu) == 0x1000u)
                atomicAdd(&f->tf32_ties, 1ull); // a tie: even against away from zero
            else
                note(&f->tf32_wrong, &f->tf32_first, u);
        }
    }
}

__global__ void compare_widening(findings *f)
{
    const uint32_t h = blockIdx.x * blockDim.x + threadIdx.x;
    if (h > 0xffffu) return;
    const uint16_t bits = (uint16_t)h;
    const uint32_t b_mine = __float_as_uint(float_from_bf16_bits(bits));
    const uint32_t b_theirs = __float_as_uint(__bfloat162float(__ushort_as_bfloat16(bits)));
    const uint32_t f_mine = __float_as_uint(float_from_f16_bits(bits));
    const uint32_t f_theirs = __float_as_uint(__half2float(__ushort_as_half(bits)));
    const bool b_ok = b_mine == b_theirs || (is_nan32(b_mine) && is_nan32(b_theirs));
    const bool f_ok = f_mine == f_theirs || (is_nan32(f_mine) && is_nan32(f_theirs));
    if (!b_ok || !f_ok) note(&f->widen_wrong, &f->widen_first, h);
}

int report(const char *what, unsigned long long wrong, uint32_t first)
{
    if (wrong == 0) {
        std::printf("[PASS] %s\n", what);
        return 0;
    }
    std::printf("[FAIL] %s: %llu patterns disagree, e.g. 0x%08x\n", what, wrong, (unsigned)first);
    return 1;
}

} // namespace

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("SKIP: no CUDA GPU here\n");
        return 77;
    }
    cudaDeviceProp prop;
    findings *f = nullptr;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || cudaMallocManaged(&f, sizeof *f) != cudaSuccess) {
        std::printf("FAIL: CUDA could not start: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    *f = findings{};
    compare_narrowing<<<prop.multiProcessorCount * 8, 256>>>(f);
    compare_widening<<<256, 256>>>(f);
    const cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        std::printf("FAIL: the comparison kernels failed: %s\n", cudaGetErrorString(err));
        return 1;
    }
    std::printf("every float32 pattern on %s (compute capability %d.%d)\n", prop.name, prop.major,
                prop.minor);
    int failed = report("float32 -> bf16 equals __float2bfloat16_rn", f->bf16_wrong, f->bf16_first);
    failed += report("float32 -> f16 equals __float2half_rn", f->f16_wrong, f->f16_first);
    failed += report("bf16 and f16 -> float32 equal __bfloat162float and __half2float", f->widen_wrong,
                     f->widen_first);
    if (prop.major >= 8) {
        failed += report("TF32 equals cvt.rna.tf32.f32 but on exact ties", f->tf32_wrong, f->tf32_first);
        std::printf("       (%llu exact ties: to even here, away from zero in cvt.rna)\n", f->tf32_ties);
    }
    cudaFree(f);
    std::printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
