/* crash.c: a crash that says where it happened (crash.h).
 *
 * The report runs inside a signal handler of a program that is already broken,
 * so it does the least it can: it takes the stack's return addresses
 * (backtrace), keeps those that belong to the program itself (not to the C
 * library or OpenBLAS), and lets addr2line, a separate process, turn them into
 * function, file and line from the program's debug information (the labs are
 * built with -g). Then the default action of the signal runs, as if nothing had
 * been installed. */
#include "labkit/crash.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_FRAMES 48

static const struct {
    int number;
    const char *name, *meaning;
} fatal_signals[] = {
    { SIGSEGV, "SIGSEGV",
      "a read or write outside the memory this program owns (an index past the end of an array, a NULL or "
      "freed pointer, a device pointer used on the host?)" },
    { SIGBUS, "SIGBUS",
      "a read or write at an address that cannot exist (a misaligned or truncated mapping?)" },
    { SIGFPE, "SIGFPE", "an integer division by zero (or another arithmetic trap)" },
    { SIGILL, "SIGILL",
      "an illegal instruction (memory overwritten with garbage, or a CPU without an instruction "
      "this build uses)" },
    { SIGABRT, "SIGABRT",
      "the program aborted itself (a failed assert, or the C library found its heap corrupted)" },
};

static void *program_base; /* where the program itself was loaded (dli_fbase) */

static void say(const char *text) { (void)!write(STDERR_FILENO, text, strlen(text)); }

/* The address of the instruction that faulted, from the signal's context. */
static void *faulting_pc(const void *context)
{
#if defined(__x86_64__)
    return (void *)((const ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (void *)((const ucontext_t *)context)->uc_mcontext.pc;
#else
    (void)context;
    return NULL;
#endif
}

/* The program's own frames as addresses within its file, for addr2line: from
 * the faulting instruction on (the frames above it are this handler's). A
 * return address points after its call, so one is taken off to name the line
 * of the call itself. Returns how many it wrote. */
static int program_frames(void *const *frames, int n, void *pc, char addresses[][24])
{
    int start = 0;
    while (start < n && frames[start] != pc) ++start;
    if (start == n) start = 2; /* no context: skip the handler and the kernel's trampoline */
    int kept = 0;
    for (int i = start; i < n; ++i) {
        Dl_info where;
        if (!dladdr(frames[i], &where) || where.dli_fbase != program_base) continue;
        const uintptr_t offset = (uintptr_t)frames[i] - (uintptr_t)program_base - (i == start ? 0 : 1);
        snprintf(addresses[kept++], sizeof addresses[0], "%#lx", (unsigned long)offset);
    }
    return kept;
}

/* Prints addr2line's lines ("lab_matmul_ikj at /kit/labs/04_matmul/lab.c:34")
 * indented, with the kit's root taken off the paths, and without the frames it
 * cannot place (the C runtime's). */
static void print_locations(int from)
{
    static char text[16384];
    size_t used = 0;
    ssize_t got;
    while (used < sizeof text - 1 && (got = read(from, text + used, sizeof text - 1 - used)) > 0)
        used += (size_t)got;
    text[used] = '\0';
    const size_t root = strlen(LABKIT_SOURCE_ROOT);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "??")) continue;
        char *path = strstr(line, LABKIT_SOURCE_ROOT);
        say("  ");
        if (path) {
            (void)!write(STDERR_FILENO, line, (size_t)(path - line));
            say(path + root);
        } else {
            say(line);
        }
        say("\n");
    }
}

/* Runs addr2line on the addresses and prints where they are. */
static bool describe_frames(char addresses[][24], int n)
{
    char exe[1024];
    const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int out[2];
    if (length <= 0 || n == 0 || pipe(out) != 0) return false;
    exe[length] = '\0';
    char *argv[MAX_FRAMES + 8] = { "addr2line", "-f", "-i", "-C", "-p", "-e", exe };
    int argc = 7;
    for (int i = 0; i < n; ++i) argv[argc++] = addresses[i];
    argv[argc] = NULL;
    const pid_t child = fork();
    if (child == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execvp("addr2line", argv);
        _exit(127);
    }
    close(out[1]);
    if (child > 0) print_locations(out[0]);
    close(out[0]);
    int status = 0;
    return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void on_fatal_signal(int number, siginfo_t *info, void *context)
{
    (void)info;
    const char *name = "a fatal signal", *meaning = "";
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; ++i)
        if (fatal_signals[i].number == number)
            name = fatal_signals[i].name, meaning = fatal_signals[i].meaning;
    fflush(stdout);
    say("\ncrash: ");
    say(name);
    say(": ");
    say(meaning);
    say("\nwhere (innermost first; your lab.c is the place to look):\n");
    void *frames[MAX_FRAMES];
    static char addresses[MAX_FRAMES][24];
    const int n = program_frames(frames, backtrace(frames, MAX_FRAMES), faulting_pc(context), addresses);
    if (!describe_frames(addresses, n))
        say("  (no location: addr2line, from binutils, could not read this program's debug information)\n");
    say("next: fix the line above. An index past an array's end does not always crash, so other lines may be "
        "wrong "
        "too: LABKIT_PRESET=debug-asan ./lab check NN builds your lab with AddressSanitizer, which stops at "
        "the "
        "first bad access.\n");
    signal(number, SIG_DFL); /* die of the same signal: the exit status stays what it was */
    raise(number);
}

void crash_report_on_fatal_signals(void)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)on_fatal_signal; /* AddressSanitizer has its own, better report */
#else
    static bool installed;
    if (installed) return;
    installed = true;
    Dl_info self;
    if (dladdr(&program_base, &self)) program_base = self.dli_fbase; /* the file this variable is in */
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; ++i)
        sigaction(fatal_signals[i].number, &action, NULL);
#endif
}
