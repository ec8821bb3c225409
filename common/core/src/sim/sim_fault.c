/* sim_fault.c: a crash on a simulated GPU (or the CPU device), described for
 * the crash handler (sim_fault.h): the kernel, block and thread that was
 * running, and a fault in a GPU thread's stack guard. Called from a signal
 * handler: no stdio, no allocation; the text is put together by hand. */
#include "sim_fault.h"

#include "coop_internal.h"
#include "fiber.h"

typedef struct text {
    char *out;
    size_t size, used;
} text;

static void put(text *t, const char *s)
{
    for (; s && *s && t->used + 1 < t->size; ++s) t->out[t->used++] = *s;
    if (t->size) t->out[t->used] = '\0';
}

static void put_unsigned(text *t, unsigned long long v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char s[24];
    for (int i = 0; i < n; ++i) s[i] = digits[n - 1 - i];
    s[n] = '\0';
    put(t, s);
}

static void put_dim3(text *t, dim3 d)
{
    put(t, "(");
    put_unsigned(t, d.x);
    put(t, ", ");
    put_unsigned(t, d.y);
    put(t, ", ");
    put_unsigned(t, d.z);
    put(t, ")");
}

bool sim_fault_description(const void *fault_address, char *out, size_t size)
{
    unsigned stack;
    if (!fiber_guard_lookup(fault_address, &stack)) return false;
    text t = { out, size, 0 };
    if (size) out[0] = '\0';
    /* stack i is thread i's, in every block */
    put(&t, "a GPU thread's stack overflowed: thread ");
    put_unsigned(&t, stack);
    const labkit_launch *l = coop_launch_running;
    if (l) {
        put(&t, " (threadIdx ");
        put_dim3(&t, coop_thread_index(stack, l->block));
        put(&t, ") of block ");
        put_dim3(&t, blockIdx);
        put(&t, " of ");
        put(&t, l->kernel_name);
        put(&t, " (launched at ");
        put(&t, l->file);
        put(&t, ":");
        put_unsigned(&t, (unsigned long long)l->line);
        put(&t, ")");
    }
    put(&t, ", whose stack on the simulated GPU is ");
    put_unsigned(&t, fiber_stack_size() >> 10);
    put(&t,
        " KiB.\n  hint: large local arrays belong in __shared__ or global memory, and a kernel should not "
        "recurse deeply");
    return true;
}

size_t sim_fault_describe_kernel(char *out, size_t size)
{
    const labkit_launch *l = coop_launch_running;
    if (size) out[0] = '\0';
    if (!l) return 0;
    text t = { out, size, 0 };
    put(&t, l->kernel_name);
    put(&t, ", block ");
    put_dim3(&t, blockIdx);
    put(&t, ", thread ");
    put_dim3(&t, threadIdx);
    put(&t, " (launched at ");
    put(&t, l->file);
    put(&t, ":");
    put_unsigned(&t, (unsigned long long)l->line);
    put(&t, ")");
    return t.used;
}
