/* cuda_emulation.h: lets the C compiler build a single-source CUDA kernel file
 * for the simulated GPU (and for the CPU device).
 *
 * A CUDA kernel is a function that every thread of a grid runs, each knowing its
 * place through blockIdx, blockDim, threadIdx and gridDim. Here those four are
 * thread-local variables, __global__ means static, and LAUNCH runs the grid on
 * the simulated GPU's worker thread (on the host thread for the cpu device).
 *
 * How a block runs. Its threads run one after the other, in index order
 * (threadIdx.x fastest), each calling kernel(args...) directly, as a loop would:
 * a kernel without barriers pays nothing more. When a thread first reaches a
 * barrier (__syncthreads(), __syncwarp(), a __shfl_*_sync()), the block becomes
 * cooperative: that thread stops where it is, and the threads after it start,
 * each a fiber with a small stack of its own (64 KiB; its guard page turns an
 * overflow into a crash report that says so), and run until they reach a
 * barrier or return. A block barrier lets its threads go on once every thread
 * of the block has reached it; a warp barrier (__syncwarp, the shuffles), once
 * every thread of its mask has. Released threads go on lowest index first.
 * Blocks run one after another. So the order of execution is fixed: the same
 * kernel and inputs give the same result and the same order every run, atomics
 * included.
 *
 * What is modelled: __shared__ memory, one copy per block (blocks run one at a
 * time on a simulated GPU, so one copy per worker thread serves them all);
 * dynamic shared memory (DYNAMIC_SHARED, sized by LAUNCH_SHARED); block and
 * warp barriers; warps of 32 threads for the shuffles; atomics (real ones:
 * two simulated GPUs are two OS threads); CUDA's launch limits (1024 threads
 * per block; 2^31 - 1 blocks along x, 65535 along y and z; 48 KiB of dynamic
 * shared memory). What is not: time. There is no lock-step execution of a
 * warp, no memory latency, no caches, no bank conflicts and no concurrency
 * between blocks; a simulated GPU computes at one CPU core's speed. The fixed
 * order also hides races: a kernel that forgets a barrier is wrong the same
 * way every run here, and differently each run on a GPU.
 *
 * Errors. A launch that a GPU refuses, a barrier that not every thread of the
 * block reaches (some at __syncthreads() on one line, others returned or
 * waiting elsewhere), a shuffle whose mask leaves out a thread that calls it
 * or names one that never comes: each stops the launch (never a hang) with a
 * message naming the kernel, the LAUNCH site, the barrier's file and line, the
 * block and the threads. As in CUDA the error is the device's: on a simulated
 * GPU the next call that waits for it (device_synchronize, a blocking copy,
 * tensor_item, event_synchronize) returns STATUS_KERNEL_FAILED with the
 * message, the work queued after the failed launch still runs, and the error
 * is returned once (CUDA's stays until the process ends: a teaching kit lets
 * the program go on); on the cpu device device_launch returns it. LAUNCH must
 * therefore run inside a launcher that device_launch or device_enqueue called
 * (labkit/kernel.h).
 *
 * A kernel that reaches a barrier is called by its fibers through libffi with
 * the values LAUNCH kept. For that each argument must have exactly its
 * parameter's type (a float * for a float * parameter, not for a const float *
 * one; an int64_t for an int64_t), numbers and pointers only: the launch stops
 * with an error that says so otherwise. Kernels without barriers take any
 * arguments, as before. LAUNCH takes at most 16 kernel arguments.
 *
 * nvcc reads CUDA's own definitions, not these; a .cu launcher includes this
 * header only for DYNAMIC_SHARED, the one spelling both compilers need. */
#ifndef LABKIT_CUDA_EMULATION_H
#define LABKIT_CUDA_EMULATION_H

#ifdef __CUDACC__

/* extern __shared__ type name[], sized by the launch (the third parameter of
 * <<<grid, block, shared_bytes, stream>>>). */
#define DYNAMIC_SHARED(type, name) extern __shared__ type name[]

#else

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "labkit/cuda_emulation_args.h"

#define __global__ static
#define __device__
#define __host__
#define __restrict__ restrict
/* One copy per OS thread: per simulated GPU worker, shared by the fibers of the
 * block it runs. Uninitialised on a GPU; here it keeps the last block's values.
 * Built for the kernel tools (-fsanitize=thread's instrumentation, whose
 * callbacks are the kit's: labkit/kernel_sanitizer.h), each shared array is
 * declared after a red zone of its own, a variable the sanitizer finds by its
 * name, so that an index past the end of one array lands in a red zone and
 * not in the next array. */
#define LABKIT_SHARED_REDZONE_BYTES 128
#ifdef __SANITIZE_THREAD__
#define __shared__                                                               \
    static _Thread_local unsigned char __attribute__((used, aligned(16)))        \
    LABKIT_PASTE(labkit_shared_redzone_, __LINE__)[LABKIT_SHARED_REDZONE_BYTES]; \
    static _Thread_local __attribute__((aligned(16)))
#else
#define __shared__ static _Thread_local
#endif
#define warpSize 32

typedef struct dim3 {
    unsigned x, y, z;
} dim3;

/* Defined once, in the library; each OS thread (each simulated GPU's worker)
 * has its own copy, which the runtime sets for the GPU thread it runs. */
extern _Thread_local dim3 blockIdx, blockDim, threadIdx, gridDim;

/* ---- the runtime's side of LAUNCH (common/core/src/sim/coop_*.c) ---------- */

/* One launch, described by its LAUNCH site: what the runtime needs to call
 * the kernel from a fiber and to name it in a message. */
typedef struct labkit_launch {
    const char *kernel_name; /* #kernel */
    const char *file;        /* the LAUNCH site */
    int line;
    void (*kernel)(void); /* the kernel, to be called with its real type */
    dim3 grid, block;
    size_t shared_bytes; /* dynamic shared memory per block */
    unsigned argc;
    int signature_matches;      /* LABKIT_SIGNATURE_MATCHES */
    const unsigned char *kinds; /* enum labkit_arg_kind, one per argument */
    void *const *values;        /* the address of each kept argument */
    const char *const *names;   /* each argument as written at the LAUNCH site: "p->c" */
    int instrumented;           /* the kernel was built for the kernel tools (labkit/kernel_sanitizer.h) */
} labkit_launch;

/* Set while the running block is cooperative (its threads are fibers). */
extern _Thread_local int labkit_block_cooperative;
/* The running launch's dynamic shared memory (DYNAMIC_SHARED). */
extern _Thread_local void *labkit_dynamic_shared;

void labkit_launch_begin(const labkit_launch *launch);
void labkit_launch_end(void);
/* The block's first thread to meet a barrier returned: the other threads
 * finish, and the block is done. */
void labkit_block_finish(void);
void labkit_syncthreads(const char *file, int line);
void labkit_syncwarp(unsigned mask, const char *file, int line);

enum labkit_shuffle_mode { LABKIT_SHUFFLE_IDX, LABKIT_SHUFFLE_UP, LABKIT_SHUFFLE_DOWN, LABKIT_SHUFFLE_XOR };
/* The 32 bits of `value` that the source lane gave (mode and lane_arg say
 * which lane, within segments of `width` lanes), once every thread of `mask`
 * has called it. */
uint32_t labkit_shuffle(enum labkit_shuffle_mode mode, unsigned mask, uint32_t value, int lane_arg, int width,
                        const char *file, int line);

/* ---- launching ----------------------------------------------------------- */

/* kernel<<<grid, block, shared_bytes, stream>>>(args...): keeps the arguments
 * once (cuda_emulation_args.h), checks the launch as a GPU would, then runs
 * every block, each thread calling the kernel directly until a barrier makes
 * the block cooperative (see above). ctx is the launcher's stream argument,
 * unused here. */
#define LAUNCH_SHARED(kernel, grid, block, shared_bytes, ctx, ...)                                        \
    do {                                                                                                  \
        (void)(ctx);                                                                                      \
        LABKIT_EACH(LABKIT_ARG_KEEP, __VA_ARGS__)                                                         \
        void *const labkit_values_[] = { LABKIT_LIST(LABKIT_ARG_ADDRESS, __VA_ARGS__) };                  \
        static const unsigned char labkit_kinds_[] = { LABKIT_LIST(LABKIT_ARG_KIND_OF, __VA_ARGS__) };    \
        static const char *const labkit_names_[] = { LABKIT_LIST(LABKIT_ARG_STRING, __VA_ARGS__) };       \
        LABKIT_KERNEL_POINTER(kernel);                                                                    \
        const dim3 labkit_grid_ = (grid), labkit_block_ = (block);                                        \
        const labkit_launch labkit_launch_ = { #kernel,                                                   \
                                               __FILE__,                                                  \
                                               __LINE__,                                                  \
                                               (void (*)(void))(kernel),                                  \
                                               labkit_grid_,                                              \
                                               labkit_block_,                                             \
                                               (shared_bytes),                                            \
                                               (unsigned)(sizeof labkit_kinds_),                          \
                                               LABKIT_SIGNATURE_MATCHES(kernel, __VA_ARGS__),             \
                                               labkit_kinds_,                                             \
                                               labkit_values_,                                            \
                                               labkit_names_,                                             \
                                               LABKIT_INSTRUMENTED };                                     \
        labkit_launch_begin(&labkit_launch_);                                                             \
        /* the bounds from locals, which the compiler knows, as the plain loop it replaced did */         \
        for (blockIdx.z = 0; blockIdx.z < labkit_grid_.z; ++blockIdx.z)                                   \
            for (blockIdx.y = 0; blockIdx.y < labkit_grid_.y; ++blockIdx.y)                               \
                for (blockIdx.x = 0; blockIdx.x < labkit_grid_.x; ++blockIdx.x) {                         \
                    for (threadIdx.z = 0; threadIdx.z < labkit_block_.z && !labkit_block_cooperative;     \
                         ++threadIdx.z)                                                                   \
                        for (threadIdx.y = 0; threadIdx.y < labkit_block_.y && !labkit_block_cooperative; \
                             ++threadIdx.y)                                                               \
                            for (threadIdx.x = 0;                                                         \
                                 threadIdx.x < labkit_block_.x && !labkit_block_cooperative;              \
                                 ++threadIdx.x) {                                                         \
                                LABKIT_INDICES_IN_MEMORY();                                               \
                                LABKIT_KERNEL_CALL(kernel)(LABKIT_LIST(LABKIT_ARG_NAME, __VA_ARGS__));    \
                            }                                                                             \
                    if (labkit_block_cooperative) labkit_block_finish();                                  \
                }                                                                                         \
        labkit_launch_end();                                                                              \
    } while (0)

/* The indices stored before each thread runs, though an inlined kernel would
 * let the compiler keep them in registers: a crash report reads them to say
 * which block and thread faulted (labkit/fault.h). It costs little in a kernel
 * that does some work (lab 04's naive product: under 1%) but can stop the
 * compiler from vectorising a one-line element-wise kernel (the library's add:
 * 1.5x), so the library's own kernels, which are tested, go without
 * (LABKIT_TRUSTED_KERNELS, defined before this header is included). */
#if defined(__GNUC__) && !defined(LABKIT_TRUSTED_KERNELS)
#define LABKIT_INDICES_IN_MEMORY() __asm__ volatile("" ::"m"(blockIdx), "m"(threadIdx))
#else
#define LABKIT_INDICES_IN_MEMORY() ((void)0)
#endif

/* Built for the kernel tools, every thread runs the kernel's one compiled
 * copy: the direct call goes through a pointer the compiler cannot see
 * through, as the fibers' calls through libffi do, so that the compiler
 * inlines no second copy into the loop. The memory profiler knows an
 * instruction by its address, and a warp's threads must share it. */
#ifdef __SANITIZE_THREAD__
#define LABKIT_INSTRUMENTED 1
#define LABKIT_KERNEL_POINTER(kernel) __typeof__(kernel) *volatile const labkit_kernel_ = (kernel)
#define LABKIT_KERNEL_CALL(kernel) labkit_kernel_
#else
#define LABKIT_INSTRUMENTED 0
#define LABKIT_KERNEL_POINTER(kernel) ((void)0)
#define LABKIT_KERNEL_CALL(kernel) kernel
#endif

/* kernel<<<grid, block, 0, stream>>>(args...) */
#define LAUNCH(kernel, grid, block, ctx, ...) LAUNCH_SHARED(kernel, grid, block, 0, ctx, __VA_ARGS__)

/* ---- inside a kernel ---------------------------------------------------- */

/* The launch's dynamic shared memory as an array of `type`:
 *   DYNAMIC_SHARED(float, partial);   (nvcc: extern __shared__ float partial[];) */
#define DYNAMIC_SHARED(type, name) type *const name = (type *)labkit_dynamic_shared

#define __syncthreads() labkit_syncthreads(__FILE__, __LINE__)

/* __syncwarp() or __syncwarp(mask): sizeof "" is 1, so an empty argument
 * means the full warp. */
#define LABKIT_MASK_OR_FULL(...) (sizeof(#__VA_ARGS__) == 1 ? 0xffffffffu : (unsigned)(__VA_ARGS__ + 0))
#define __syncwarp(...) labkit_syncwarp(LABKIT_MASK_OR_FULL(__VA_ARGS__), __FILE__, __LINE__)

/* Memory fences: the threads of a block never run at once here, so only the
 * device-wide one has anything to order (against another simulated GPU). */
#define __threadfence_block() ((void)0)
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* __shfl_sync(mask, var, src_lane[, width]), __shfl_up_sync(mask, var,
 * delta[, width]), __shfl_down_sync(...), __shfl_xor_sync(mask, var,
 * lane_mask[, width]) for int, unsigned and float, as CUDA defines them. */
#define __shfl_sync(...) LABKIT_SHUFFLE(LABKIT_SHUFFLE_IDX, __VA_ARGS__)
#define __shfl_up_sync(...) LABKIT_SHUFFLE(LABKIT_SHUFFLE_UP, __VA_ARGS__)
#define __shfl_down_sync(...) LABKIT_SHUFFLE(LABKIT_SHUFFLE_DOWN, __VA_ARGS__)
#define __shfl_xor_sync(...) LABKIT_SHUFFLE(LABKIT_SHUFFLE_XOR, __VA_ARGS__)

#define LABKIT_SHUFFLE(mode, ...)                                                            \
    LABKIT_SHUFFLE_PICK(__VA_ARGS__, LABKIT_SHUFFLE_WITH_WIDTH, LABKIT_SHUFFLE_FULL_WIDTH, ) \
    (mode, __VA_ARGS__)
#define LABKIT_SHUFFLE_PICK(a, b, c, d, name, ...) name
#define LABKIT_SHUFFLE_FULL_WIDTH(mode, mask, var, lane_arg) \
    LABKIT_SHUFFLE_WITH_WIDTH(mode, mask, var, lane_arg, warpSize)
#define LABKIT_SHUFFLE_WITH_WIDTH(mode, mask, var, lane_arg, width) \
    _Generic((var), int                                             \
             : labkit_shuffle_int, unsigned                         \
             : labkit_shuffle_unsigned, float                       \
             : labkit_shuffle_float)(mode, mask, var, lane_arg, width, __FILE__, __LINE__)

static inline int labkit_shuffle_int(enum labkit_shuffle_mode mode, unsigned mask, int var, int lane_arg,
                                     int width, const char *file, int line)
{
    union {
        int value;
        uint32_t bits;
    } u = { var };
    u.bits = labkit_shuffle(mode, mask, u.bits, lane_arg, width, file, line);
    return u.value;
}

static inline unsigned labkit_shuffle_unsigned(enum labkit_shuffle_mode mode, unsigned mask, unsigned var,
                                               int lane_arg, int width, const char *file, int line)
{
    return (unsigned)labkit_shuffle(mode, mask, (uint32_t)var, lane_arg, width, file, line);
}

static inline float labkit_shuffle_float(enum labkit_shuffle_mode mode, unsigned mask, float var,
                                         int lane_arg, int width, const char *file, int line)
{
    union {
        float value;
        uint32_t bits;
    } u = { var };
    u.bits = labkit_shuffle(mode, mask, u.bits, lane_arg, width, file, line);
    return u.value;
}

#include "labkit/cuda_emulation_atomics.h"

#endif /* __CUDACC__ */
#endif
