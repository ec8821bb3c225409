/* cuda_emulation_atomics.h: CUDA's atomic functions for the C compiler
 * (included by cuda_emulation.h).
 *
 * C has no overloading, so each name is a _Generic on the pointer's type that
 * picks the function for it: atomicAdd(&count, 1) with an int *, an unsigned *,
 * an unsigned long long *, a float * or a double *, as CUDA spells it. Each
 * returns the old value, as CUDA's do. The threads of one block never run at
 * once on a simulated GPU, but two simulated GPUs are two OS threads that may
 * share memory, so these are real atomic operations (GCC's __atomic builtins,
 * relaxed, as CUDA's atomics are). A type CUDA has no such function for is a
 * compile error that names the type. */
#ifndef LABKIT_CUDA_EMULATION_ATOMICS_H
#define LABKIT_CUDA_EMULATION_ATOMICS_H

#include <stdbool.h>

#define LABKIT_RELAXED __ATOMIC_RELAXED

/* ---- add, subtract, exchange: fetch-and-op where the type has one -------- */

#define LABKIT_FETCH_OP(name, type, builtin) \
    static inline type name(type *address, type value) { return builtin(address, value, LABKIT_RELAXED); }

LABKIT_FETCH_OP(labkit_atomic_add_int, int, __atomic_fetch_add)
LABKIT_FETCH_OP(labkit_atomic_add_unsigned, unsigned, __atomic_fetch_add)
LABKIT_FETCH_OP(labkit_atomic_add_ull, unsigned long long, __atomic_fetch_add)
LABKIT_FETCH_OP(labkit_atomic_sub_int, int, __atomic_fetch_sub)
LABKIT_FETCH_OP(labkit_atomic_sub_unsigned, unsigned, __atomic_fetch_sub)
LABKIT_FETCH_OP(labkit_atomic_exch_int, int, __atomic_exchange_n)
LABKIT_FETCH_OP(labkit_atomic_exch_unsigned, unsigned, __atomic_exchange_n)
LABKIT_FETCH_OP(labkit_atomic_exch_ull, unsigned long long, __atomic_exchange_n)

/* ---- the rest: a compare-and-swap loop on the value's bits --------------- */

#define LABKIT_CAS_OP(name, type, combine)                                                                 \
    static inline type name(type *address, type value)                                                     \
    {                                                                                                      \
        type old, next;                                                                                    \
        __atomic_load(address, &old, LABKIT_RELAXED);                                                      \
        do {                                                                                               \
            next = combine;                                                                                \
        } while (!__atomic_compare_exchange(address, &old, &next, false, LABKIT_RELAXED, LABKIT_RELAXED)); \
        return old;                                                                                        \
    }

LABKIT_CAS_OP(labkit_atomic_add_float, float, old + value)
LABKIT_CAS_OP(labkit_atomic_add_double, double, old + value)
LABKIT_CAS_OP(labkit_atomic_exch_float, float, value)
LABKIT_CAS_OP(labkit_atomic_max_int, int, old > value ? old : value)
LABKIT_CAS_OP(labkit_atomic_max_unsigned, unsigned, old > value ? old : value)
LABKIT_CAS_OP(labkit_atomic_max_ull, unsigned long long, old > value ? old : value)
LABKIT_CAS_OP(labkit_atomic_min_int, int, old < value ? old : value)
LABKIT_CAS_OP(labkit_atomic_min_unsigned, unsigned, old < value ? old : value)
LABKIT_CAS_OP(labkit_atomic_min_ull, unsigned long long, old < value ? old : value)

/* atomicCAS(address, compare, value): stores value where *address == compare;
 * returns the old value either way. */
#define LABKIT_CAS(name, type)                                                                        \
    static inline type name(type *address, type compare, type value)                                  \
    {                                                                                                 \
        __atomic_compare_exchange_n(address, &compare, value, false, LABKIT_RELAXED, LABKIT_RELAXED); \
        return compare;                                                                               \
    }

LABKIT_CAS(labkit_atomic_cas_int, int)
LABKIT_CAS(labkit_atomic_cas_unsigned, unsigned)
LABKIT_CAS(labkit_atomic_cas_ull, unsigned long long)

/* ---- CUDA's names --------------------------------------------------------- */

#define atomicAdd(address, value) \
    _Generic((address), int *: labkit_atomic_add_int, unsigned *: labkit_atomic_add_unsigned,              \
        unsigned long long *: labkit_atomic_add_ull, float *: labkit_atomic_add_float,                     \
        double *: labkit_atomic_add_double)((address), (value))
#define atomicSub(address, value) \
    _Generic((address), int *: labkit_atomic_sub_int, unsigned *: labkit_atomic_sub_unsigned)((address), (value))
#define atomicExch(address, value) \
    _Generic((address), int *: labkit_atomic_exch_int, unsigned *: labkit_atomic_exch_unsigned,            \
        unsigned long long *: labkit_atomic_exch_ull, float *: labkit_atomic_exch_float)((address), (value))
#define atomicMax(address, value) \
    _Generic((address), int *: labkit_atomic_max_int, unsigned *: labkit_atomic_max_unsigned,              \
        unsigned long long *: labkit_atomic_max_ull)((address), (value))
#define atomicMin(address, value) \
    _Generic((address), int *: labkit_atomic_min_int, unsigned *: labkit_atomic_min_unsigned,              \
        unsigned long long *: labkit_atomic_min_ull)((address), (value))
#define atomicCAS(address, compare, value) \
    _Generic((address), int *: labkit_atomic_cas_int, unsigned *: labkit_atomic_cas_unsigned,              \
        unsigned long long *: labkit_atomic_cas_ull)((address), (compare), (value))

#endif
