/* crash.h: a crash that says where it happened.
 *
 * Without help, a bad index in a student's lab.c ends with the shell's
 * "Segmentation fault" and nothing else. Once installed, a fatal signal
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) prints what it usually means, the
 * frames of the program's own code as function, file and line (read from the
 * program's debug information with addr2line), and what to do next; then the
 * program dies of the same signal, so its exit status is unchanged.
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

#ifdef __cplusplus
}
#endif
#endif
