/* kernel_tools_probe.c: every kind of access and atomic that GCC's
 * -fsanitize=thread turns into a __tsan_* call, at every size, so that
 * tools/kernel_tools_symbols.sh can check that the kit defines each callback
 * an instrumented kernel may need (nm -u of this object against the core). */
#include <stdbool.h>
#include <stdint.h>

#define OPS(T, n)                                                                                            \
    T load_##n(T *p);                                                                                        \
    T load_##n(T *p) { return __atomic_load_n(p, __ATOMIC_RELAXED) + __atomic_load_n(p, __ATOMIC_SEQ_CST); } \
    void store_##n(T *p, T v);                                                                               \
    void store_##n(T *p, T v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }                                  \
    T rmw_##n(T *p, T v);                                                                                    \
    T rmw_##n(T *p, T v)                                                                                     \
    {                                                                                                        \
        return __atomic_exchange_n(p, v, 0) + __atomic_fetch_add(p, v, 0) + __atomic_fetch_sub(p, v, 0) +    \
               __atomic_fetch_and(p, v, 0) + __atomic_fetch_or(p, v, 0) + __atomic_fetch_xor(p, v, 0) +      \
               __atomic_fetch_nand(p, v, 0);                                                                 \
    }                                                                                                        \
    bool cas_##n(T *p, T *e, T v);                                                                           \
    bool cas_##n(T *p, T *e, T v)                                                                            \
    {                                                                                                        \
        return __atomic_compare_exchange_n(p, e, v, false, 5, 5) +                                           \
               __atomic_compare_exchange_n(p, e, v, true, 0, 0);                                             \
    }                                                                                                        \
    T plain_##n(T *p, T *q);                                                                                 \
    T plain_##n(T *p, T *q)                                                                                  \
    {                                                                                                        \
        q[1] = p[0];                                                                                         \
        return p[2];                                                                                         \
    }

OPS(uint8_t, 8)
OPS(uint16_t, 16)
OPS(uint32_t, 32)
OPS(uint64_t, 64)
__extension__ typedef unsigned __int128 u128;
OPS(u128, 128)

struct __attribute__((packed)) unaligned {
    char c;
    uint16_t s;
    uint32_t i;
    uint64_t l;
};
uint64_t unaligned_fields(struct unaligned *p);
uint64_t unaligned_fields(struct unaligned *p)
{
    p->s = 1, p->i = 2, p->l = 3;
    return p->s + p->i + p->l;
}

void fences(void);
void fences(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
