/* check.c: what CHECK() prints before it stops a program.
 *
 * An ordinary failure reads like the CUDA samples' checks:
 *     main.c:42: tensor_zeros(&x, dev, shape2(3, 4)) failed (STATUS_OUT_OF_MEMORY): <message>
 * An unwritten lab step puts its TODO first, since that is what the student must
 * act on, and where it was called from second:
 *     TODO: step 2: lab_add_across_devices is not written yet (labs/02_copying/lab.c:31)
 *       main.c:42: lab_add_across_devices(a, b, c) returned STATUS_TODO */
#include "labkit/check.h"

#include "labkit/crash.h"
#include "labkit/environment.h"
#include "labkit/process_rank.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RANK_STOP_WAIT_S 20 /* the launcher ends a rank that waits long before this */

void check_report_failure(const char *file, int line, const char *expression, status s)
{
    const char *message = last_error();
    if (message == NULL || message[0] == '\0') {
        message = "(no message was recorded for this failure)";
    }
    if (file == NULL) {
        file = "?";
    }
    if (expression == NULL) {
        expression = "?";
    }

    /* The program's table went to stdout; flush it so the error lands after it. */
    fflush(stdout);
    /* Every rank of lab 10 runs the same skeleton and meets the same TODO:
     * rank 0 says it once for all of them. */
    if (s == STATUS_TODO && process_rank_is_quiet()) return;
    if (s == STATUS_TODO) {
        fprintf(stderr, "%s\n  %s:%d: %s returned %s\n", message, file, line, expression, status_name(s));
    } else {
        fprintf(stderr, "%s:%d: %s failed (%s): %s\n", file, line, expression, status_name(s), message);
    }
    fflush(stderr);
}

/* ---- a lab's check program ---------------------------------------------- */

/* One check program checks one device; its claims are counted here. */
static int claims_made, claims_failed, parts_left_out;
static device checked_device;

device check_device(int argc, char **argv)
{
    crash_report_on_fatal_signals();
    checked_device = device_cpu();
    /* A setting that cannot be honoured is not a device to skip: sim:0 under
     * LABKIT_SIM_GPUS=two is a mistake to fix, never a pass by absence. */
    if (environment_check() != STATUS_OK) {
        fprintf(stderr, "%s: %s\n", argc > 0 ? argv[0] : "check", last_error());
        exit(2);
    }
    const char *text = NULL;
    if (argc == 3 && strcmp(argv[1], "--device") == 0)
        text = argv[2];
    else if (argc == 2 && strncmp(argv[1], "--device=", 9) == 0)
        text = argv[1] + 9;
    else if (argc != 1) {
        fprintf(stderr, "usage: %s [--device D]   (D: cpu, cuda, cuda:N or sim:N)\n",
                argc > 0 ? argv[0] : "check");
        exit(2);
    }
    if (text) {
        status s = device_parse(text, &checked_device);
        if (s == STATUS_WRONG_DEVICE) {
            printf("skipped: %s\n", last_error());
            exit(CHECK_SKIPPED);
        }
        if (s != STATUS_OK) {
            fprintf(stderr, "%s\n", last_error());
            exit(2);
        }
    }
    return checked_device;
}

bool check_that(bool holds, const char *concept, const char *figures_format, ...)
{
    /* Room for a library error's whole message and hint (status.c keeps up
     * to 2048 characters) beside the claim's own figures: a hint cut short
     * would leave a student half a sentence. Longer still is marked cut. */
    char figures[4096] = "";
    if (figures_format) {
        va_list args;
        va_start(args, figures_format);
        const int length = vsnprintf(figures, sizeof figures, figures_format, args);
        va_end(args);
        if (length >= (int)sizeof figures) memcpy(figures + sizeof figures - 5, "...", 4);
    }
    claims_made++;
    if (!holds) claims_failed++;
    if (holds)
        printf("  ok    %s%s%s%s\n", concept, figures[0] ? " (" : "", figures, figures[0] ? ")" : "");
    else
        printf("  FAIL  %s%s%s\n", concept, figures[0] ? ": " : "", figures);
    fflush(stdout);
    /* A known-wrong version's test (cmake/expect_caught.sh) names the claim
     * that must catch it: once that claim has failed, the rest of the check
     * would only take time. _exit: the devices' threads and whatever the
     * check still holds go with the process. */
    const char *until = getenv("LABKIT_CHECK_UNTIL");
    if (!holds && until && until[0] && strncmp(concept, until, strlen(until)) == 0) {
        printf("stopped: the claim that LABKIT_CHECK_UNTIL names does not hold\n");
        fflush(stdout);
        fflush(stderr);
        /* Under a launcher rank 0 alone prints (lab 10), and every rank stops
         * here: another rank that ended first made the launcher end the run
         * before rank 0's line was out. So it waits to be ended with the run,
         * once rank 0 has stopped. */
        if (process_rank() > 0) sleep(RANK_STOP_WAIT_S);
        _exit(CHECK_FAILS);
    }
    return holds;
}

/* Whether one text begins the other: the claims a part of a check names may
 * be shortened, and LABKIT_CHECK_UNTIL holds a claim's beginning. */
static bool claims_meet(const char *a, const char *b)
{
    const size_t la = strlen(a), lb = strlen(b);
    return la > 0 && lb > 0 && strncmp(a, b, la < lb ? la : lb) == 0;
}

bool check_leaves_out(const char *claim, ...)
{
    const char *until = getenv("LABKIT_CHECK_UNTIL");
    if (!until || !until[0] || strncmp(until, "crash in ", 9) == 0 || !claim) return false;
    bool named = false;
    va_list claims;
    va_start(claims, claim);
    for (const char *c = claim; c && !named; c = va_arg(claims, const char *)) named = claims_meet(c, until);
    va_end(claims);
    if (!named) parts_left_out++;
    return !named;
}

int check_finish(const char *lab)
{
    const char *where = device_name(checked_device);
    if (claims_made == 0) {
        printf("%s on %s: FAIL (the check made no claim)\n", lab, where);
        return CHECK_FAILS;
    }
    /* A check that left parts out proved less than its claims: never a pass,
     * whoever set the variable (only the known-wrong versions' tests do). */
    if (parts_left_out > 0) {
        printf("%s on %s: FAIL (%d part%s of the check left out: LABKIT_CHECK_UNTIL is set; unset it)\n", lab,
               where, parts_left_out, parts_left_out == 1 ? "" : "s");
        return CHECK_FAILS;
    }
    if (claims_failed == 0) {
        printf("%s on %s: PASS (%d claim%s hold%s)\n", lab, where, claims_made, claims_made == 1 ? "" : "s",
               claims_made == 1 ? "s" : "");
        return CHECK_HOLDS;
    }
    printf("%s on %s: FAIL (%d of %d claims do not hold)\n", lab, where, claims_failed, claims_made);
    return CHECK_FAILS;
}

void check_append(char *text, size_t size, const char *format, ...)
{
    if (!text || !format) return;
    const size_t used = strnlen(text, size);
    if (used + 1 >= size) return;
    va_list args;
    va_start(args, format);
    vsnprintf(text + used, size - used, format, args);
    va_end(args);
}

/* ---- calls of the student's lab ------------------------------------------ */

status check_yours(status s, const char *expression, const char *file, int line)
{
    if (s != STATUS_TODO) return s;
    check_report_failure(file, line, expression, s);
    exit(CHECK_FAILS);
}

bool check_call(status s, const char *expression, const char *claim, const char *file, int line)
{
    if (check_yours(s, expression, file, line) == STATUS_OK) return true;
    check_that(false, claim, "%s failed (%s): %s", expression ? expression : "?", status_name(s),
               last_error());
    return false;
}

void check_second_gpu_absent(device d, const char *what)
{
    const device_kind kinds[] = { DEVICE_CUDA, DEVICE_SIM };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        if (kinds[i] == d.kind || device_count(kinds[i]) < 2) continue;
        const device first = { kinds[i], 0 }, second = { kinds[i], 1 };
        printf("  (one GPU of %s's kind here: %s is tried on %s and %s, in their run of this check)\n",
               device_name(d), what, device_name(first), device_name(second));
        return;
    }
    printf("  (no second GPU here: %s is not tried)\n", what);
}

const char *check_failure_text(status s)
{
    static char text[2200]; /* the whole of last_error's message: its hint too */
    if (s == STATUS_OK) return "";
    snprintf(text, sizeof text, "; the call failed (%s): %s", status_name(s), last_error());
    return text;
}

/* ---- failures made on purpose -------------------------------------------- */

static int refuse_at, calls_counted; /* refuse_at 0: nothing refused or counted */
static const char *refused;          /* the call that was refused, NULL for none */

void check_refuse_call(int at)
{
    refuse_at = at;
    if (at != 0) calls_counted = 0, refused = NULL; /* 0 stops: what was counted stays readable */
}

bool check_refuse(const char *name)
{
    if (refuse_at == 0 || ++calls_counted != refuse_at) return false;
    refused = name;
    return true;
}

int check_calls_counted(void) { return calls_counted; }

const char *check_refused_call(void) { return refused; }

static struct {
    int tried, silent;
    char where[256];
} refusals;

void check_note_refusal(status s, const char *call)
{
    if (s == STATUS_OK) return;
    refusals.tried++;
    if (last_error()[0] != '\0') return;
    refusals.silent++;
    if (call && !strstr(refusals.where, call))
        check_append(refusals.where, sizeof refusals.where, "%s%s", refusals.where[0] ? ", " : "", call);
}

void check_refusals_said(void)
{
    check_that(refusals.silent == 0, "a refusal says what is wrong: a message from fail(), not a bare status",
               "%d of %d refusals left no message%s%s%s", refusals.silent, refusals.tried,
               refusals.silent ? " (" : "", refusals.where,
               refusals.silent ? "): return fail(STATUS_..., \"...\", ...), as lab.h's top comment asks"
                               : "");
}

status check_refusal_status(const char *name, const char *what_would)
{
    return fail(STATUS_BACKEND_FAILED, "%s: refused by the check, as %s would (call %d)", name, what_would,
                calls_counted);
}
