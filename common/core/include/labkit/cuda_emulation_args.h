/* cuda_emulation_args.h: how LAUNCH (cuda_emulation.h) keeps its arguments.
 *
 * A block whose threads meet at a barrier runs each thread as a fiber, and a
 * fiber must call kernel(args...) with the very values the LAUNCH site gave;
 * C has no closures. So LAUNCH stores each argument once, in a variable of the
 * argument's own type, and describes it to the runtime: its address and its
 * kind (below). The runtime then calls the kernel through libffi, as
 * cudaLaunchKernel takes a kernel's arguments: an array of pointers to them.
 *
 * The macros here apply one macro to each of up to 16 arguments, with the
 * argument's position; more is a compile error that says so. Not for use
 * outside cuda_emulation.h. */
#ifndef LABKIT_CUDA_EMULATION_ARGS_H
#define LABKIT_CUDA_EMULATION_ARGS_H

#include <limits.h>

/* The kinds of argument the runtime can pass to a kernel through libffi. */
enum labkit_arg_kind {
    LABKIT_ARG_I8,
    LABKIT_ARG_U8,
    LABKIT_ARG_I16,
    LABKIT_ARG_U16,
    LABKIT_ARG_I32,
    LABKIT_ARG_U32,
    LABKIT_ARG_I64,
    LABKIT_ARG_U64,
    LABKIT_ARG_F32,
    LABKIT_ARG_F64,
    LABKIT_ARG_POINTER,
    LABKIT_ARG_UNSUPPORTED /* a struct or union by value, a long double, ... */
};

#define LABKIT_INT_KIND(type) \
    (sizeof(type) == 8 ? LABKIT_ARG_I64 : sizeof(type) == 4 ? LABKIT_ARG_I32 : LABKIT_ARG_I16)
#define LABKIT_UINT_KIND(type) \
    (sizeof(type) == 8 ? LABKIT_ARG_U64 : sizeof(type) == 4 ? LABKIT_ARG_U32 : LABKIT_ARG_U16)

/* The kind of x, a constant: _Generic for the arithmetic types (an enum counts
 * as its integer type), GCC's and clang's __builtin_classify_type to tell a
 * pointer (class 5) from a struct. */
#define LABKIT_ARG_KIND(x)                                                 \
    _Generic((x), _Bool                                                    \
             : LABKIT_ARG_U8, char                                         \
             : (CHAR_MIN < 0 ? LABKIT_ARG_I8 : LABKIT_ARG_U8), signed char \
             : LABKIT_ARG_I8, unsigned char                                \
             : LABKIT_ARG_U8, short                                        \
             : LABKIT_ARG_I16, unsigned short                              \
             : LABKIT_ARG_U16, int                                         \
             : LABKIT_INT_KIND(int), unsigned                              \
             : LABKIT_UINT_KIND(unsigned), long                            \
             : LABKIT_INT_KIND(long), unsigned long                        \
             : LABKIT_UINT_KIND(unsigned long), long long                  \
             : LABKIT_INT_KIND(long long), unsigned long long              \
             : LABKIT_UINT_KIND(unsigned long long), float                 \
             : LABKIT_ARG_F32, double                                      \
             : LABKIT_ARG_F64, default                                     \
             : (__builtin_classify_type(x) == 5 ? LABKIT_ARG_POINTER : LABKIT_ARG_UNSUPPORTED))

/* The number of arguments, 1 to 16 (the last 0 only keeps "..." from being
 * empty, which ISO C forbids). */
#define LABKIT_ARG_COUNT(...)                                                                               \
    LABKIT_ARG_COUNT_(__VA_ARGS__, LAUNCH_TAKES_AT_MOST_16_KERNEL_ARGUMENTS, 16, 15, 14, 13, 12, 11, 10, 9, \
                      8, 7, 6, 5, 4, 3, 2, 1, 0)
#define LABKIT_ARG_COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, n, \
                          ...)                                                                           \
    n

#define LABKIT_PASTE_(a, b) a##b
#define LABKIT_PASTE(a, b) LABKIT_PASTE_(a, b)

/* M(0, a) M(1, b) ...: for declarations. */
#define LABKIT_EACH(M, ...) LABKIT_PASTE(LABKIT_EACH_, LABKIT_ARG_COUNT(__VA_ARGS__))(M, __VA_ARGS__)
/* M(0, a), M(1, b), ...: for lists. */
#define LABKIT_LIST(M, ...) LABKIT_PASTE(LABKIT_LIST_, LABKIT_ARG_COUNT(__VA_ARGS__))(M, __VA_ARGS__)

#define LABKIT_EACH_1(M, a0) M(0, a0)
#define LABKIT_LIST_1(M, a0) M(0, a0)
#define LABKIT_EACH_2(M, a0, a1) LABKIT_EACH_1(M, a0) M(1, a1)
#define LABKIT_LIST_2(M, a0, a1) LABKIT_LIST_1(M, a0), M(1, a1)
#define LABKIT_EACH_3(M, a0, a1, a2) LABKIT_EACH_2(M, a0, a1) M(2, a2)
#define LABKIT_LIST_3(M, a0, a1, a2) LABKIT_LIST_2(M, a0, a1), M(2, a2)
#define LABKIT_EACH_4(M, a0, a1, a2, a3) LABKIT_EACH_3(M, a0, a1, a2) M(3, a3)
#define LABKIT_LIST_4(M, a0, a1, a2, a3) LABKIT_LIST_3(M, a0, a1, a2), M(3, a3)
#define LABKIT_EACH_5(M, a0, a1, a2, a3, a4) LABKIT_EACH_4(M, a0, a1, a2, a3) M(4, a4)
#define LABKIT_LIST_5(M, a0, a1, a2, a3, a4) LABKIT_LIST_4(M, a0, a1, a2, a3), M(4, a4)
#define LABKIT_EACH_6(M, a0, a1, a2, a3, a4, a5) LABKIT_EACH_5(M, a0, a1, a2, a3, a4) M(5, a5)
#define LABKIT_LIST_6(M, a0, a1, a2, a3, a4, a5) LABKIT_LIST_5(M, a0, a1, a2, a3, a4), M(5, a5)
#define LABKIT_EACH_7(M, a0, a1, a2, a3, a4, a5, a6) LABKIT_EACH_6(M, a0, a1, a2, a3, a4, a5) M(6, a6)
#define LABKIT_LIST_7(M, a0, a1, a2, a3, a4, a5, a6) LABKIT_LIST_6(M, a0, a1, a2, a3, a4, a5), M(6, a6)
#define LABKIT_EACH_8(M, a0, a1, a2, a3, a4, a5, a6, a7) LABKIT_EACH_7(M, a0, a1, a2, a3, a4, a5, a6) M(7, a7)
#define LABKIT_LIST_8(M, a0, a1, a2, a3, a4, a5, a6, a7) \
    LABKIT_LIST_7(M, a0, a1, a2, a3, a4, a5, a6), M(7, a7)
#define LABKIT_EACH_9(M, a0, a1, a2, a3, a4, a5, a6, a7, a8) \
    LABKIT_EACH_8(M, a0, a1, a2, a3, a4, a5, a6, a7) M(8, a8)
#define LABKIT_LIST_9(M, a0, a1, a2, a3, a4, a5, a6, a7, a8) \
    LABKIT_LIST_8(M, a0, a1, a2, a3, a4, a5, a6, a7), M(8, a8)
#define LABKIT_EACH_10(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
    LABKIT_EACH_9(M, a0, a1, a2, a3, a4, a5, a6, a7, a8) M(9, a9)
#define LABKIT_LIST_10(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
    LABKIT_LIST_9(M, a0, a1, a2, a3, a4, a5, a6, a7, a8), M(9, a9)
#define LABKIT_EACH_11(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
    LABKIT_EACH_10(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) M(10, a10)
#define LABKIT_LIST_11(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
    LABKIT_LIST_10(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), M(10, a10)
#define LABKIT_EACH_12(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) \
    LABKIT_EACH_11(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) M(11, a11)
#define LABKIT_LIST_12(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) \
    LABKIT_LIST_11(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10), M(11, a11)
#define LABKIT_EACH_13(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) \
    LABKIT_EACH_12(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) M(12, a12)
#define LABKIT_LIST_13(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) \
    LABKIT_LIST_12(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11), M(12, a12)
#define LABKIT_EACH_14(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13) \
    LABKIT_EACH_13(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) M(13, a13)
#define LABKIT_LIST_14(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13) \
    LABKIT_LIST_13(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12), M(13, a13)
#define LABKIT_EACH_15(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14) \
    LABKIT_EACH_14(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13) M(14, a14)
#define LABKIT_LIST_15(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14) \
    LABKIT_LIST_14(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13), M(14, a14)
#define LABKIT_EACH_16(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15) \
    LABKIT_EACH_15(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14) M(15, a15)
#define LABKIT_LIST_16(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15) \
    LABKIT_LIST_15(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14), M(15, a15)

/* What LAUNCH applies to each argument: keep it (in a variable of its type,
 * decayed: an array becomes a pointer), and name, address, describe it. Each
 * is kept twice: the direct calls read a copy whose address is never taken,
 * which the compiler may hold in a register however the kernel writes to
 * memory; libffi reads the other. */
#define LABKIT_ARG_KEEP(i, x) \
    __typeof__(((void)0, (x))) labkit_arg_##i = (x), labkit_kept_##i = labkit_arg_##i;
#define LABKIT_ARG_NAME(i, x) labkit_arg_##i
#define LABKIT_ARG_ADDRESS(i, x) ((void *)&labkit_kept_##i)
#define LABKIT_ARG_KIND_OF(i, x) (unsigned char)LABKIT_ARG_KIND(labkit_arg_##i)
#define LABKIT_ARG_STRING(i, x) #x
#define LABKIT_ARG_TYPE(i, x) __typeof__(labkit_arg_##i)

/* 1 when kernel's parameters have exactly the kept arguments' types: libffi
 * then passes each as the kernel expects it. Anything else (an int given for
 * an int64_t, a double for a float, a float * for a const float *) the
 * compiler converts in a direct call, but a call through libffi cannot. */
#define LABKIT_SIGNATURE_MATCHES(kernel, ...) \
    __builtin_types_compatible_p(__typeof__(kernel), void(LABKIT_LIST(LABKIT_ARG_TYPE, __VA_ARGS__)))

#endif
