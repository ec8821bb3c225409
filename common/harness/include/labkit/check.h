/* check.h: stopping a program on the first failed call, in the style of the CUDA
 * samples, and the exit codes of a lab's check.
 *
 *   CHECK(tensor_zeros(&x, dev, shape2(3, 4)));
 *
 * prints "file.c:12: tensor_zeros(&x, dev, shape2(3, 4)) failed (STATUS_...): <message>"
 * and exits with 1; an unwritten lab step prints its "TODO: ..." message first.
 * Library functions themselves never exit; only programs do. */
#ifndef LABKIT_CHECK_H
#define LABKIT_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "labkit/device.h"
#include "labkit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exit codes of a check program (CTest reads 77 as "skipped"). */
enum { CHECK_HOLDS = 0, CHECK_FAILS = 1, CHECK_SKIPPED = 77 };

void check_report_failure(const char *file, int line, const char *expression, status s);

#define CHECK(call)                                                         \
    do {                                                                    \
        status check_status_ = (call);                                      \
        if (check_status_ != STATUS_OK) {                                   \
            check_report_failure(__FILE__, __LINE__, #call, check_status_); \
            exit(CHECK_FAILS);                                              \
        }                                                                   \
    } while (0)

/* ---- a lab's check program ----------------------------------------------
 *
 *   int main(int argc, char **argv)
 *   {
 *       device d = check_device(argc, argv);     // --device D; 77 if D is absent
 *       check_that(copies == 1, "to() copies once", "%d copies", copies);
 *       return check_finish("02_copying");
 *   }
 */

/* The device of "--device D" (the CPU without it). Exits 77 (skipped) when D is
 * well formed but absent here, 2 when the arguments are malformed or a LABKIT_*
 * setting cannot be honoured (labkit/environment.h). */
device check_device(int argc, char **argv);

/* Records one claim of the lesson: prints "  ok    <claim> (<figures>)" or
 * "  FAIL  <claim>: <figures>". Returns `holds`. */
bool check_that(bool holds, const char *claim, const char *figures_format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prints "<lab> on <device>: PASS (n claims hold)" or "... FAIL (k of n claims do
 * not hold)" and returns the exit code, CHECK_HOLDS or CHECK_FAILS. */
int check_finish(const char *lab);

/* A costly part of a check (a timing, a training run), given the claims it
 * makes, NULL last: true when it may be left out, because this run is a
 * known-wrong version's test (cmake/expect_caught.sh sets
 * LABKIT_CHECK_UNTIL), which asks only that its own claim fails, and that claim
 * is none of these. A part that calls the student's functions also names the
 * claims those calls can make fail later (what is left at the end). Never
 * true for a crash test ("crash in f"): a crash can happen anywhere. A check
 * that left a part out never passes (check_finish).
 *
 *   if (check_leaves_out(COPY_TIME, NOTHING_LEFT, NULL)) return;
 */
bool check_leaves_out(const char *claim, ...)
#if defined(__GNUC__)
    __attribute__((sentinel))
#endif
    ;

/* Appends to a claim's figures `text` (of `size` bytes), cutting what does not fit. */
void check_append(char *text, size_t size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- calls of the student's lab ------------------------------------------
 *
 * An unwritten step (STATUS_TODO) stops the check there, with the TODO's file
 * and line of lab.c: the step to write next. Any other failure is the failure
 * of the claim the call was made for, with the library's message: a FAIL line,
 * never an abort.
 *
 *   if (CHECK_CALL(lab_try_gpu(0, &d), "try_gpu(i) is GPU i if it exists")) ...
 *   status s = CHECK_YOURS(lab_softmax_rows(x, y));
 *   check_that(s == STATUS_OK && ..., "the rows sum to 1", "...%s", check_failure_text(s));
 */

/* True when `call` worked; otherwise fails `claim` with the call and the message. */
#define CHECK_CALL(call, claim) check_call((call), #call, (claim), __FILE__, __LINE__)
bool check_call(status s, const char *expression, const char *claim, const char *file, int line);

/* The status of `call`, after stopping the check if it is STATUS_TODO. */
#define CHECK_YOURS(call) check_yours((call), #call, __FILE__, __LINE__)
status check_yours(status s, const char *expression, const char *file, int line);

/* A claim about a second GPU of d's kind, where there is none: the line that
 * says so. "(no second GPU here: <what> is not tried)", which keeps ./lab
 * check's verdict at not yet, only where no kind has two GPUs; where another
 * kind has (one real GPU beside two simulated ones), the claim is tried on
 * that kind's run of the check, and the line says where. */
void check_second_gpu_absent(device d, const char *what);

/* "; the call failed (STATUS_X): <message>" for a failure, "" for STATUS_OK: to
 * end a claim's figures. The text lives until the next call. */
const char *check_failure_text(status s);

/* ---- refusals that say what is wrong -----------------------------------------
 * Where lab.h asks for every failure to come with a message (fail()), not a
 * bare status: the check calls clear_error() before a call of the student's
 * that must refuse, and notes its status here; check_refusals_said() then
 * fails its claim, naming the calls that refused without a message. */
void check_note_refusal(status s, const char *call);
void check_refusals_said(void);

/* ---- failures made on purpose -----------------------------------------------
 * A check linked with -Wl,--wrap for the calls a student's function makes
 * (lab.cmake's LAB_CHECK_LINK_OPTIONS: labs 05, 07 and 08) sends each call to
 * its wrapper first, which asks check_refuse(its name): true for the at-th
 * call counted since check_refuse_call(at), which the wrapper then fails as a
 * full device or a refused launch would. The function is tried with each of
 * its calls failing in turn, and must return the failure.
 *   at 0: stops refusing and counting (what was counted and refused stays readable);
 *   at -1: every call counted, none refused. */
void check_refuse_call(int at);
bool check_refuse(const char *name);
/* Calls counted since check_refuse_call. */
int check_calls_counted(void);
/* The call refused since check_refuse_call, NULL while none was. */
const char *check_refused_call(void);
/* The failure a wrapper returns for its refused call `name`, as `what_would`
 * ("a failing device") would fail it: STATUS_BACKEND_FAILED, naming the call
 * and its number. */
status check_refusal_status(const char *name, const char *what_would);

/* ---- a device that does not know its peak ------------------------------------
 * Every device the kit knows has a peak; a GPU it has no figures for reports
 * 0, and a student's division by it goes untried. While on (on this thread),
 * device_get_properties reports a peak of 0 for any device. Only for a check
 * linked with -Wl,--wrap=device_get_properties (labs 03 and 04). */
void check_pretend_unknown_peak(bool on);

#ifdef __cplusplus
}
#endif
#endif
