/* crash.c: a crash that says where it happened (crash.h).
 *
 * The report runs inside a signal handler of a program that is already broken:
 * its heap may be corrupt and another thread, or this one, may hold the C
 * library's locks. So the handler calls nothing that allocates or locks: it
 * takes the stack's return addresses (backtrace, loaded before any fault),
 * keeps those inside the program itself (its address range, read at start-up),
 * formats text by hand, and lets addr2line, a separate process started with a
 * bare clone system call (fork() would run the C library's fork handlers, which
 * wait for the malloc lock that an abort inside free() still holds), turn them
 * into function, file and line from the program's debug information (the labs
 * are built with -g). Every wait has a time limit, and an alarm ends the
 * process if the report itself ever hangs. Then the default action of the
 * signal runs, as if nothing had been installed. */
#include "labkit/crash.h"

#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "labkit/fault.h"
#include "labkit/process_rank.h"

#define MAX_FRAMES 48
#define MAX_SEGMENTS 8
#define REPORT_SECONDS 20     /* the alarm that ends a report that hangs */
#define ADDR2LINE_MS 10000    /* how long addr2line may take to answer */
#define ALT_STACK_BYTES 65536 /* room for the handler after a stack overflow */

/* AddressSanitizer reports crashes itself, better: the kit's report is left out. */
#if !defined(__SANITIZE_ADDRESS__)

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
      "an illegal instruction (memory overwritten with garbage, or a CPU without an instruction this build "
      "uses)" },
    { SIGABRT, "SIGABRT",
      "the program aborted itself (a failed assert; or the C library found its heap corrupted: something "
      "wrote past the end of a malloc'd array earlier, and the line that did it is not below)" },
};

/* What the handler needs, found before any fault. */
static struct {
    uintptr_t base; /* what addr2line's addresses are relative to (the load address) */
    uintptr_t start[MAX_SEGMENTS], end[MAX_SEGMENTS];
    int segments;
    char exe[1024];       /* /proc/self/exe, resolved */
    char addr2line[1024]; /* its absolute path; "" when it is not installed */
} program;

/* The program's last call of a library that a wrapper noted (crash.h). */
static struct {
    _Atomic(const char *) function;
    _Atomic(const void *) from; /* the call's return address */
} last_library_call;

/* ---- text without stdio -------------------------------------------------- */

/* The report goes out a whole line at a time, each in one write(), with the
 * rank in front where a launcher started this process: two of lab 10's ranks
 * crashing together then print two readable reports, line by line, where
 * their pieces of lines used to interleave. */
static struct {
    char prefix[24]; /* "[rank 3] ", read at start-up; "" without a launcher */
    char text[1024];
    size_t used;
} report_line;

static void emit_line(void)
{
    char out[sizeof report_line.prefix + sizeof report_line.text];
    const size_t prefix =
        report_line.used > 1 ? strlen(report_line.prefix) : 0; /* an empty line stays empty */
    memcpy(out, report_line.prefix, prefix);
    memcpy(out + prefix, report_line.text, report_line.used);
    (void)!write(STDERR_FILENO, out, prefix + report_line.used);
    report_line.used = 0;
}

static void say_n(const char *text, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        report_line.text[report_line.used++] = text[i];
        if (text[i] == '\n' || report_line.used == sizeof report_line.text) emit_line();
    }
}

static void say(const char *text) { say_n(text, strlen(text)); }

/* What is left of a line without its newline, before the process dies. */
static void say_rest(void)
{
    if (report_line.used > 0) emit_line();
}

/* "0x1a2b" into out (at least 20 bytes). */
static void hex_text(uintptr_t value, char *out)
{
    char digits[20];
    int n = 0;
    do digits[n++] = "0123456789abcdef"[value & 15], value >>= 4;
    while (value);
    out[0] = '0', out[1] = 'x';
    for (int i = 0; i < n; ++i) out[2 + i] = digits[n - 1 - i];
    out[2 + n] = '\0';
}

/* ---- before any fault ------------------------------------------------------ */

/* The first object dl_iterate_phdr reports is the program itself. */
static int note_program(struct dl_phdr_info *info, size_t size, void *unused)
{
    (void)size, (void)unused;
    program.base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum && program.segments < MAX_SEGMENTS; ++i) {
        const ElfW(Phdr) *h = &info->dlpi_phdr[i];
        if (h->p_type != PT_LOAD || !(h->p_flags & PF_X)) continue;
        program.start[program.segments] = info->dlpi_addr + h->p_vaddr;
        program.end[program.segments++] = info->dlpi_addr + h->p_vaddr + h->p_memsz;
    }
    return 1;
}

static void find_addr2line(void)
{
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/bin:/bin";
    while (*path) {
        const size_t length = strcspn(path, ":");
        if (length > 0 && length + sizeof "/addr2line" < sizeof program.addr2line) {
            memcpy(program.addr2line, path, length);
            memcpy(program.addr2line + length, "/addr2line", sizeof "/addr2line");
            if (access(program.addr2line, X_OK) == 0) return;
        }
        path += length + (path[length] == ':');
    }
    program.addr2line[0] = '\0';
}

/* The handler must be able to run after a stack overflow: give this thread a
 * stack of its own for it. */
static void use_alternate_stack(void)
{
    static char room[ALT_STACK_BYTES];
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return; /* one is set */
    const stack_t alternate = { .ss_sp = room, .ss_size = sizeof room, .ss_flags = 0 };
    sigaltstack(&alternate, NULL);
}

/* ---- during the report ------------------------------------------------------ */

static bool in_program(uintptr_t address)
{
    for (int i = 0; i < program.segments; ++i)
        if (address >= program.start[i] && address < program.end[i]) return true;
    return false;
}

static uintptr_t context_register(const void *context, int which)
{
    const ucontext_t *uc = context;
    if (!uc) return 0;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[which == 0 ? REG_RIP : REG_RSP];
#elif defined(__aarch64__)
    return which == 0 ? (uintptr_t)uc->uc_mcontext.pc : (uintptr_t)uc->uc_mcontext.sp;
#else
    (void)which;
    return 0;
#endif
}

static uintptr_t faulting_pc(const void *context) { return context_register(context, 0); }
static uintptr_t faulting_sp(const void *context) { return context_register(context, 1); }

/* "read" or "write" where the CPU says which (x86-64's page-fault error code). */
static const char *access_kind(int number, const void *context)
{
#if defined(__x86_64__)
    if (number == SIGSEGV && context)
        return (((const ucontext_t *)context)->uc_mcontext.gregs[REG_ERR] & 2) ? "write" : "read";
#else
    (void)number, (void)context;
#endif
    return NULL;
}

/* The program's own frames as addresses relative to its load address, for
 * addr2line: from the faulting instruction on (the frames above it are this
 * handler's). A return address points after its call, so one is taken off to
 * name the line of the call itself. Returns how many it wrote. */
static int program_frames(void *const *frames, int n, uintptr_t pc, char addresses[][20])
{
    int start = 0;
    while (start < n && (uintptr_t)frames[start] != pc) ++start;
    if (start == n) start = 2; /* no context: skip the handler and the kernel's trampoline */
    int kept = 0;
    for (int i = start; i < n; ++i) {
        const uintptr_t at = (uintptr_t)frames[i];
        if (!in_program(at)) continue;
        hex_text(at - program.base - (i == start ? 0 : 1), addresses[kept++]);
    }
    return kept;
}

/* Prints addr2line's lines ("lab_matmul_ikj at /kit/labs/04_matmul/lab.c:34")
 * indented, with the kit's root taken off the paths, and without the frames it
 * cannot place (the C runtime's). */
static void print_locations(char *text, size_t used)
{
    const size_t root = strlen(LABKIT_SOURCE_ROOT);
    char *line = text;
    while (line < text + used) {
        char *end = memchr(line, '\n', (size_t)(text + used - line));
        if (!end) end = text + used;
        *end = '\0';
        if (*line && !strstr(line, "??")) {
            char *path = strstr(line, LABKIT_SOURCE_ROOT);
            say("  ");
            if (path) {
                say_n(line, (size_t)(path - line));
                say(path + root);
            } else {
                say(line);
            }
            say("\n");
        }
        line = end + 1;
    }
}

static long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* Reads what the child writes until it closes the pipe or the time is up. */
static size_t read_answer(int from, char *text, size_t size)
{
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    size_t used = 0;
    for (;;) {
        const long left = ADDR2LINE_MS - elapsed_ms(&started);
        if (left <= 0 || used + 1 >= size) break;
        struct pollfd p = { .fd = from, .events = POLLIN };
        const int ready = poll(&p, 1, (int)left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) break;
        const ssize_t got = read(from, text + used, size - 1 - used);
        if (got <= 0) break;
        used += (size_t)got;
    }
    return used;
}

/* Runs addr2line on the addresses and prints where they are. */
static bool describe_frames(char addresses[][20], int n)
{
    static char answer[16384];
    int out[2];
    if (n == 0 || !program.addr2line[0] || pipe(out) != 0) return false;
    char *argv[MAX_FRAMES + 8] = { "addr2line", "-f", "-i", "-C", "-p", "-e", program.exe };
    int argc = 7;
    for (int i = 0; i < n; ++i) argv[argc++] = addresses[i];
    argv[argc] = NULL;
    extern char **environ;
    /* A bare clone: no fork handlers, no locks; the child only makes system calls. */
    const pid_t child = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (child == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execve(program.addr2line, argv, environ);
        _exit(127);
    }
    close(out[1]);
    size_t used = 0;
    if (child > 0) used = read_answer(out[0], answer, sizeof answer);
    close(out[0]);
    if (child <= 0) return false;
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == 0) { /* still busy: it gets no more time */
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    print_locations(answer, used);
    return used > 0;
}

/* Flushes what the program printed, unless another thread holds stdout (it
 * would wait for ever): then that output is lost, not the report. */
static void flush_stdout_if_free(void)
{
    if (ftrylockfile(stdout) != 0) return;
    fflush(stdout);
    funlockfile(stdout);
}

static void describe_fault(int number, const siginfo_t *info, const void *context)
{
    if ((number != SIGSEGV && number != SIGBUS) || !info) return;
    char line[400];
    if (fault_describe_address(info->si_addr, access_kind(number, context), line, sizeof line) > 0) {
        say("what: "), say(line), say("\n");
        return;
    }
    const uintptr_t at = (uintptr_t)info->si_addr, sp = faulting_sp(context);
    if (sp && at < sp + 4096 && at + ALT_STACK_BYTES > sp)
        say("what: just below the stack pointer: the stack overflowed (an endless recursion, or a local "
            "array too large for the stack?)\n");
}

/* The lab's number from the program's name (check07, lab07-kernels, ...) into
 * nn[2], "NN" when the name holds none: the --asan command is then one to copy.
 * Reads a string the C library set at start: safe in a signal handler. */
static void lab_number(char nn[2])
{
    nn[0] = nn[1] = 'N';
    const char *name = program_invocation_short_name;
    for (const char *p = name; p && *p; ++p) {
        const bool after_word = (p - name >= 5 && strncmp(p - 5, "check", 5) == 0) ||
                                (p - name >= 3 && strncmp(p - 3, "lab", 3) == 0);
        if (after_word && p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9') {
            nn[0] = p[0], nn[1] = p[1];
            return;
        }
    }
}

/* The noted call's line, for addr2line, as the one address in addresses;
 * its function's name into *function. Returns how many it wrote (0 or 1). */
static int noted_call(char addresses[][20], const char **function)
{
    const uintptr_t from = (uintptr_t)atomic_load(&last_library_call.from);
    *function = atomic_load(&last_library_call.function);
    if (!*function || !in_program(from)) return 0;
    hex_text(from - program.base - 1, addresses[0]); /* the call, not the instruction after it */
    return 1;
}

/* Where the report found lines of the program. */
typedef enum lines_shown { OWN_LINES, NOTED_CALL, NO_LINES } lines_shown;

/* What to do now: fix the line shown, or, where no line of the program is on
 * the stack, look at what it handed the library that crashed. */
static void say_next_step(lines_shown shown)
{
    if (shown != OWN_LINES) {
        say(shown == NOTED_CALL
                ? "next: compare each size, stride and pointer of that call"
                : "next: compare each size, stride and pointer of your last call of a library");
        say(" (cblas_sgemm: lda, ldb and ldc are the lengths of the rows of a, b and c as they lie in "
            "memory) "
            "with what it asks.\n");
        return;
    }
    char nn[3] = "NN";
    lab_number(nn);
    say("next: fix the line above. An index past an array's end does not always crash, so other lines may be "
        "wrong too: ./lab check "),
        say(nn), say(" --asan builds your lab with AddressSanitizer, which stops at the first bad access.\n");
}

static void on_fatal_signal(int number, siginfo_t *info, void *context)
{
    alarm(REPORT_SECONDS); /* a report that hangs ends the process, with SIGALRM */
    const char *name = "a fatal signal", *meaning = "";
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; ++i)
        if (fatal_signals[i].number == number)
            name = fatal_signals[i].name, meaning = fatal_signals[i].meaning;
    flush_stdout_if_free();
    say("\ncrash: "), say(name), say(": "), say(meaning), say("\n");
    describe_fault(number, info, context);
    char kernel[400];
    if (fault_describe_kernel(kernel, sizeof kernel) > 0) say("gpu thread: "), say(kernel), say("\n");
    say("where (innermost first; your lab.c and kernel files are the place to look):\n");
    void *frames[MAX_FRAMES];
    static char addresses[MAX_FRAMES][20];
    int n = program_frames(frames, backtrace(frames, MAX_FRAMES), faulting_pc(context), addresses);
    lines_shown shown = n > 0 ? OWN_LINES : NO_LINES;
    if (n == 0) {
        say("  (no frame of this program's code can be found on the crashing thread's stack: the crash is "
            "inside a library (in code that keeps no frames, as OpenBLAS's kernels, or on a thread of its "
            "own), reading or writing arrays your code handed it");
        const char *function = NULL;
        n = noted_call(addresses, &function);
        if (n > 0)
            shown = NOTED_CALL, say(". Your last call of "), say(function), say(":)\n");
        else
            say(": check the sizes, leading dimensions and pointers of your last call of it)\n");
    }
    if (n > 0 && !describe_frames(addresses, n))
        say("  (no location: addr2line, from binutils, could not read this program's debug information)\n");
    say_next_step(shown);
    say_rest();
    signal(number, SIG_DFL); /* die of the same signal: the exit status stays what it was */
    raise(number);
}

#endif

void crash_note_library_call(const char *function, const void *return_address)
{
#if !defined(__SANITIZE_ADDRESS__)
    atomic_store(&last_library_call.from, return_address);
    atomic_store(&last_library_call.function, function);
#else
    (void)function, (void)return_address;
#endif
}

void crash_report_on_fatal_signals(void)
{
#if !defined(__SANITIZE_ADDRESS__)
    static bool installed;
    if (installed) return;
    installed = true;
    dl_iterate_phdr(note_program, NULL);
    const ssize_t length = readlink("/proc/self/exe", program.exe, sizeof program.exe - 1);
    program.exe[length > 0 ? length : 0] = '\0';
    find_addr2line();
    const int rank = process_rank();
    if (rank >= 0) snprintf(report_line.prefix, sizeof report_line.prefix, "[rank %d] ", rank);
    void *warm_up[1];
    backtrace(warm_up, 1); /* loads the unwinder now: its first use allocates */
    use_alternate_stack();
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; ++i)
        sigaction(fatal_signals[i].number, &action, NULL);
#endif
}
