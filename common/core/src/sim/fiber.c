/* fiber.c: the pool of fiber stacks of each OS thread, the switch with the
 * sanitizers told about it, and the guard pages' lookup (fiber.h). */
#include "fiber.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define FIBER_VALGRIND 1
#endif
#endif

/* The crash handler reads these: no lazy TLS allocation in a signal handler. */
#define SIGNAL_SAFE_TLS __attribute__((tls_model("initial-exec")))

/* At most one stack per thread of the largest block CUDA allows. */
#define POOL_CAPACITY 1024
/* A kernel's frames are small (its locals, a call or two, printf at most);
 * AddressSanitizer surrounds every local with redzones. */
#ifdef FIBER_ASAN
#define STACK_BYTES (512u << 10)
#else
#define STACK_BYTES (64u << 10)
#endif
#define GUARD_BYTES (16u << 10)
#define SIGNAL_STACK_BYTES (64u << 10)

void labkit_fiber_switch(fiber_context *from, fiber_context *to);
void labkit_fiber_make(fiber_context *ctx, void *low, size_t size, fiber_entry entry, void *arg);

typedef struct fiber_pool {
    fiber_stack stacks[POOL_CAPACITY];
} fiber_pool;

static _Thread_local fiber_pool *pool SIGNAL_SAFE_TLS;
static _Thread_local void *signal_stack;
static _Thread_local bool signal_stack_checked; /* asked once per OS thread */
static pthread_key_t pool_key;
static pthread_once_t pool_key_once = PTHREAD_ONCE_INIT;
static bool pool_key_made;

static size_t round_to_pages(size_t bytes)
{
    const long page = sysconf(_SC_PAGESIZE);
    const size_t p = page > 0 ? (size_t)page : 4096;
    return (bytes + p - 1) / p * p;
}

size_t fiber_stack_size(void) { return round_to_pages(STACK_BYTES); }

static void stack_release(fiber_stack *s)
{
    if (!s->mapping) return;
#ifdef FIBER_VALGRIND
    VALGRIND_STACK_DEREGISTER(s->valgrind_id);
#endif
    munmap(s->mapping, s->mapping_size);
    s->mapping = NULL;
}

/* When an OS thread ends (a simulated GPU's worker at exit), its stacks go. */
static void pool_release(void *p)
{
    fiber_pool *dead = p;
    for (unsigned i = 0; i < POOL_CAPACITY; ++i) stack_release(&dead->stacks[i]);
    free(dead);
}

static void make_pool_key(void) { pool_key_made = pthread_key_create(&pool_key, pool_release) == 0; }

static fiber_pool *pool_of_this_thread(void)
{
    if (pool) return pool;
    pthread_once(&pool_key_once, make_pool_key);
    if (!pool_key_made) return NULL;
    fiber_pool *made = calloc(1, sizeof *made);
    if (!made) return NULL;
    if (pthread_setspecific(pool_key, made) != 0) {
        free(made);
        return NULL;
    }
    pool = made;
    return pool;
}

static bool stack_make(fiber_stack *s)
{
    const size_t guard = round_to_pages(GUARD_BYTES), size = fiber_stack_size();
    void *m = mmap(NULL, guard + size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) return false;
    if (mprotect(m, guard, PROT_NONE) != 0) {
        const int saved = errno;
        munmap(m, guard + size);
        errno = saved;
        return false;
    }
    s->mapping = m;
    s->mapping_size = guard + size;
    s->low = (unsigned char *)m + guard;
    s->size = size;
    s->asan_live_low = NULL;
#ifdef FIBER_VALGRIND
    s->valgrind_id = VALGRIND_STACK_REGISTER(s->low, s->low + s->size);
#endif
    return true;
}

fiber_stack *fiber_stack_get(unsigned index)
{
    if (index >= POOL_CAPACITY) {
        errno = EINVAL;
        return NULL;
    }
    fiber_pool *p = pool_of_this_thread();
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    fiber_stack *s = &p->stacks[index];
    if (!s->mapping && !stack_make(s)) return NULL;
    return s;
}

void fiber_start(fiber *f, fiber_stack *stack, fiber_entry entry, void *arg)
{
#ifdef FIBER_ASAN
    if (stack->asan_live_low)
        __asan_unpoison_memory_region(stack->asan_live_low,
                                      (size_t)(stack->low + stack->size - stack->asan_live_low));
    stack->asan_live_low = NULL;
#endif
    f->stack = stack;
    f->asan_bottom = stack->low;
    f->asan_size = stack->size;
    f->asan_fake_stack = NULL;
    labkit_fiber_make(&f->ctx, stack->low, stack->size, entry, arg);
}

void fiber_adopt_thread_stack(fiber *f)
{
    f->stack = NULL;
    f->asan_fake_stack = NULL;
    /* its bounds for AddressSanitizer are learned when a fiber first starts */
}

#ifdef FIBER_ASAN
/* The fiber that switched last, so that the one it resumed can tell
 * AddressSanitizer where it came from (and learn the thread stack's bounds). */
static _Thread_local fiber *switching_from;

/* Notes how deep from's live frames go (this frame, and some room for the
 * switch's own pushes below it). */
static void note_live_frames(fiber *from)
{
    fiber_stack *s = from->stack;
    if (!s) return;
    unsigned char *here = (unsigned char *)__builtin_frame_address(0) - 4096;
    s->asan_live_low = here > s->low ? here : s->low;
}
#endif

void fiber_entered(void)
{
#ifdef FIBER_ASAN
    fiber *from = switching_from;
    __sanitizer_finish_switch_fiber(NULL, &from->asan_bottom, &from->asan_size);
#endif
}

void fiber_switch(fiber *from, fiber *to)
{
#ifdef FIBER_ASAN
    note_live_frames(from);
    switching_from = from;
    __sanitizer_start_switch_fiber(&from->asan_fake_stack, to->asan_bottom, to->asan_size);
#endif
    labkit_fiber_switch(&from->ctx, &to->ctx);
#ifdef FIBER_ASAN
    fiber *previous = switching_from;
    __sanitizer_finish_switch_fiber(from->asan_fake_stack, &previous->asan_bottom, &previous->asan_size);
#endif
}

void fiber_switch_away_for_good(fiber *from, fiber *to)
{
#ifdef FIBER_ASAN
    note_live_frames(from);
    switching_from = from;
    __sanitizer_start_switch_fiber(NULL, to->asan_bottom, to->asan_size); /* drops from's fake frames */
#endif
    labkit_fiber_switch(&from->ctx, &to->ctx);
}

bool fiber_guard_lookup(const void *address, unsigned *index)
{
    const fiber_pool *p = pool;
    if (!p) return false;
    const uintptr_t a = (uintptr_t)address;
    for (unsigned i = 0; i < POOL_CAPACITY; ++i) {
        const fiber_stack *s = &p->stacks[i];
        if (!s->mapping) continue;
        const uintptr_t low = (uintptr_t)s->low, guard = low - (uintptr_t)s->mapping;
        if (a < low && a >= low - 2 * guard) {
            *index = i;
            return true;
        }
    }
    return false;
}

void fiber_signal_stack_install(void)
{
    stack_t current;
    if (signal_stack_checked) return;
    signal_stack_checked = true;
    if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
    void *m = mmap(NULL, SIGNAL_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    const stack_t mine = { .ss_sp = m, .ss_size = SIGNAL_STACK_BYTES, .ss_flags = 0 };
    if (sigaltstack(&mine, NULL) != 0) {
        munmap(m, SIGNAL_STACK_BYTES);
        return;
    }
    signal_stack = m;
}

void fiber_signal_stack_remove(void)
{
    if (!signal_stack) return;
    const stack_t off = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
    if (sigaltstack(&off, NULL) == 0) {
        munmap(signal_stack, SIGNAL_STACK_BYTES);
        signal_stack = NULL;
        signal_stack_checked = false;
    }
}
