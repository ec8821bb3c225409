/* crash.h: a crash that says where it happened.
 *
 * Without help, a bad index in a student's lab.c ends with the shell's
 * "Segmentation fault" and nothing else. Once installed, a fatal signal
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) prints, on standard error:
 *
 *   crash: SIGSEGV: <what it usually means>
 *   what: a write 0 bytes past the end of a buffer of 4000 bytes (...)   (when known)
 *   gpu thread: <kernel, block and thread, on a simulated GPU>           (when known)
 *   where (innermost first; your lab.c is the place to look):
 *     lab_matmul_ikj at labs/04_matmul/lab.c:41
 *     ...
 *   next: <what to do>
 *
 * the frames of the program's own code as function, file and line (read from
 * the program's debug information with addr2line); then the program dies of
 * the same signal, so its exit status is unchanged. The report never waits for
 * a lock the crashed program may hold (a heap corrupted inside malloc, another
 * thread printing), and ends within seconds whatever happens.
 *
 * check_device() and cli_parse() install it: every lab program has it. */
#ifndef LABKIT_CRASH_H
#define LABKIT_CRASH_H

#ifdef __cplusplus
extern "C" {
#endif

/* Installs the report for the fatal signals (once; later calls do nothing).
 * Does nothing in a build with AddressSanitizer, which reports better. */
void crash_report_on_fatal_signals(void);

/* Notes that the program calls `function` of a library from `return_address`
 * (a wrapper's __builtin_return_address(0)). A crash inside a library often
 * leaves no frame of the program to show: OpenBLAS's kernels keep no
 * unwinding information, and its threads run none of the program's code. The
 * report then names the line of the last call noted. `function` must outlive
 * the program (a string literal). Safe from any thread. */
void crash_note_library_call(const char *function, const void *return_address);

#ifdef __cplusplus
}
#endif
#endif
