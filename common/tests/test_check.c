/* test_check.c: the parts of a lab's check that a known-wrong version's test
 * may leave out (check.h, check_leaves_out): only when LABKIT_CHECK_UNTIL names
 * a claim that none of the part's claims begins, never for a crash test; a
 * failed claim's line, which holds a library error's whole message; and a
 * TODO, which lab 10's ranks other than 0 leave to rank 0. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, fileno */
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/check.h"
#include "labkit/process_rank.h"

#define TIMING "a BF16 matrix copies to the GPU in about half the time of its FP32 twin"
#define LEFT "nothing is left behind: the bytes in use are back where they were"

/* Run first: nothing has been left out yet. */
static void test_a_check_that_left_nothing_out_may_pass(void)
{
    check_that(true, "a claim that holds", NULL);
    EXPECT(check_finish("test_check") == CHECK_HOLDS);
}

static void test_a_plain_check_leaves_nothing_out(void)
{
    unsetenv("LABKIT_CHECK_UNTIL");
    EXPECT(!check_leaves_out(TIMING, NULL));
    setenv("LABKIT_CHECK_UNTIL", "", 1);
    EXPECT(!check_leaves_out(TIMING, LEFT, NULL));
}

static void test_a_part_that_makes_the_named_claim_runs(void)
{
    setenv("LABKIT_CHECK_UNTIL", TIMING, 1);
    EXPECT(!check_leaves_out(TIMING, NULL));
    EXPECT(!check_leaves_out(LEFT, TIMING, NULL)); /* any of the claims given */
    /* A patch names a claim's beginning; a part may name a beginning too. */
    setenv("LABKIT_CHECK_UNTIL", "a BF16 matrix copies", 1);
    EXPECT(!check_leaves_out(TIMING, NULL));
    setenv("LABKIT_CHECK_UNTIL", TIMING, 1);
    EXPECT(!check_leaves_out("a BF16 matrix copies", NULL));
}

static void test_a_part_that_cannot_make_the_named_claim_is_left_out(void)
{
    setenv("LABKIT_CHECK_UNTIL", "the rounding is your own", 1);
    EXPECT(check_leaves_out(TIMING, NULL));
    EXPECT(check_leaves_out(TIMING, LEFT, NULL));
    EXPECT(check_leaves_out("a", "b", "c", NULL)); /* each compared, not only the first */
    setenv("LABKIT_CHECK_UNTIL", "c", 1);
    EXPECT(!check_leaves_out("a", "b", "c", NULL));
    EXPECT(!check_leaves_out("", "c", NULL)); /* an empty claim begins nothing, and stops no search */
}

static void test_a_crash_test_leaves_nothing_out(void)
{
    setenv("LABKIT_CHECK_UNTIL", "crash in lab_matmul_ikj", 1);
    EXPECT(!check_leaves_out(TIMING, NULL));
    setenv("LABKIT_CHECK_UNTIL", "the rounding is your own", 1);
    EXPECT(!check_leaves_out(NULL, NULL)); /* no claim given: nothing to judge by */
}

/* What print(arg) writes to the stream `to` (stdout or stderr), into out. */
static bool printed_by(FILE *to, void (*print)(const void *arg), const void *arg, char *out, size_t size)
{
    fflush(to);
    FILE *capture = tmpfile();
    const int fd = fileno(to), saved = dup(fd);
    if (!capture || saved < 0 || dup2(fileno(capture), fd) < 0) return false;
    print(arg);
    fflush(to);
    dup2(saved, fd);
    close(saved);
    rewind(capture);
    const size_t n = fread(out, 1, size - 1, capture);
    out[n] = '\0';
    fclose(capture);
    return true;
}

static void print_failed_claim(const void *figures)
{
    check_that(false, "a claim that does not hold", "%s", (const char *)figures);
}

/* What check_that prints for a failed claim whose figures are `figures`. */
static bool failed_claim_printed(const char *figures, char *out, size_t size)
{
    return printed_by(stdout, print_failed_claim, figures, out, size);
}

/* A library error with its hint is often longer than a line: the student
 * must read the hint to its last word, through check_failure_text too. */
static void test_a_failed_claim_shows_the_whole_message_and_its_hint(void)
{
    static char words[1800], printed[8192];
    unsetenv("LABKIT_CHECK_UNTIL"); /* else a failed claim it names would end the program */
    memset(words, 'w', sizeof words - 1);
    const status s = fail(STATUS_BAD_ARGUMENT, "%.1500s.\n  hint: the last words of the hint", words);
    REQUIRE(failed_claim_printed(check_failure_text(s), printed, sizeof printed));
    EXPECT_MSG(
        strstr(printed, "the last words of the hint)") || strstr(printed, "the last words of the hint\n"),
        "the claim's line lost the end of a %zu-character message: %.120s...", strlen(last_error()), printed);
    EXPECT(strstr(printed, "  hint: ") != NULL);
cleanup:
    clear_error();
}

/* Figures longer than the line's room are cut where it ends, and say so. */
static void test_figures_longer_than_the_room_are_marked_cut(void)
{
    static char long_figures[6000], printed[8192];
    memset(long_figures, 'f', sizeof long_figures - 1);
    REQUIRE(failed_claim_printed(long_figures, printed, sizeof printed));
    EXPECT_MSG(strstr(printed, "f...\n") != NULL, "figures cut short without a mark: ...%s",
               printed + (strlen(printed) > 60 ? strlen(printed) - 60 : 0));
cleanup:;
}

static void print_failure_report(const void *s)
{
    check_report_failure("lab.c", 16, "lab_ranks(MPI_COMM_WORLD, &info)", *(const status *)s);
}

/* What check_report_failure prints on stderr for status s. */
static bool failure_report_printed(status s, char *out, size_t size)
{
    return printed_by(stderr, print_failure_report, &s, out, size);
}

/* Lab 10's ranks run the same skeleton: its TODO is said by rank 0 alone,
 * where every rank said it; a failure other than a TODO is each rank's own. */
static void test_a_todo_is_said_by_rank_0_alone(void)
{
    static char printed[4096];
    const char *const launchers[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) unsetenv(launchers[j]);
        REQUIRE(process_rank() == -1);
        setenv(launchers[i], "1", 1);
        EXPECT_MSG(process_rank() == 1 && process_rank_is_quiet(), "%s=1 read as rank %d", launchers[i],
                   process_rank());
        (void)todo("step 1: lab_ranks");
        REQUIRE(failure_report_printed(STATUS_TODO, printed, sizeof printed));
        EXPECT_MSG(printed[0] == '\0', "rank 1 (%s) repeated rank 0's TODO: %s", launchers[i], printed);
        (void)fail(STATUS_BAD_ARGUMENT, "rank 1's own mistake");
        REQUIRE(failure_report_printed(STATUS_BAD_ARGUMENT, printed, sizeof printed));
        EXPECT_CONTAINS(printed, "rank 1's own mistake");
        setenv(launchers[i], "0", 1);
        (void)todo("step 1: lab_ranks");
        REQUIRE(failure_report_printed(STATUS_TODO, printed, sizeof printed));
        EXPECT_CONTAINS(printed, "TODO: step 1: lab_ranks is not written yet");
    }
    /* A value no launcher sets is no rank: the process speaks for itself. */
    const char *const not_ranks[] = { "", "-1", "one", "1x", "99999999999999999999" };
    for (int i = 0; i < 5; ++i) {
        setenv("PMIX_RANK", not_ranks[i], 1);
        EXPECT_MSG(process_rank() == -1 && !process_rank_is_quiet(), "PMIX_RANK='%s' read as rank %d",
                   not_ranks[i], process_rank());
    }
cleanup:
    for (int j = 0; j < 3; ++j) unsetenv(launchers[j]);
    clear_error();
}

static void print_second_gpu_absent(const void *d)
{
    check_second_gpu_absent(*(const device *)d, "a claim on a second GPU");
}

/* A claim on a second GPU of d's kind, where d is alone of its kind: not
 * tried (./lab check then says not yet) only where no other kind has two;
 * with one real GPU beside two simulated ones, the simulated ones' run tries
 * it, and saying "not tried" there would keep done out of reach for ever. */
static void test_a_second_gpu_claim_is_untried_only_where_no_kind_has_two(void)
{
    static char printed[1024];
    REQUIRE(device_count(DEVICE_SIM) == 2 && device_count(DEVICE_CUDA) == 0); /* unit.check's environment */
    const device real = { DEVICE_CUDA, 0 }, simulated = { DEVICE_SIM, 0 };
    REQUIRE(printed_by(stdout, print_second_gpu_absent, &real, printed, sizeof printed));
    EXPECT_CONTAINS(printed, "a claim on a second GPU is tried on sim:0 and sim:1");
    EXPECT_MSG(!strstr(printed, "is not tried"), "a real GPU beside two simulated ones: %s", printed);
    REQUIRE(printed_by(stdout, print_second_gpu_absent, &simulated, printed, sizeof printed));
    EXPECT_CONTAINS(printed, "(no second GPU here: a claim on a second GPU is not tried)");
cleanup:;
}

/* The at-th call counted is the one refused; 0 stops and keeps what was
 * counted; -1 counts without refusing. */
static void test_the_at_th_call_is_refused_and_named(void)
{
    check_refuse_call(2);
    EXPECT(!check_refuse("first"));
    EXPECT(check_refuse("second"));
    EXPECT(!check_refuse("third"));
    check_refuse_call(0);
    EXPECT(!check_refuse("after the stop"));
    EXPECT_EQ_I64(check_calls_counted(), 3);
    EXPECT(check_refused_call() && strcmp(check_refused_call(), "second") == 0);
    /* What the wrapper returns for it: the call, its number, what would fail it. */
    EXPECT(check_refusal_status("second", "a failing device") == STATUS_BACKEND_FAILED);
    EXPECT_CONTAINS(last_error(), "second: refused by the check, as a failing device would (call 3)");
    clear_error();
    check_refuse_call(-1);
    for (int i = 0; i < 5; ++i) EXPECT(!check_refuse("counted"));
    EXPECT_EQ_I64(check_calls_counted(), 5);
    EXPECT(check_refused_call() == NULL);
    check_refuse_call(0);
}

static void print_refusals_said(const void *unused)
{
    (void)unused;
    check_refusals_said();
}

/* A refusal with fail()'s message passes; a bare status is named, once. */
static void test_a_bare_refusal_is_named(void)
{
    static char printed[2048];
    unsetenv("LABKIT_CHECK_UNTIL");
    clear_error();
    check_note_refusal(fail(STATUS_BAD_ARGUMENT, "lab_said: n = -1; n counts rows, 0 or more"), "lab_said");
    clear_error();
    check_note_refusal(STATUS_OK, "lab_worked");
    for (int i = 0; i < 2; ++i) {
        clear_error();
        check_note_refusal(STATUS_BAD_ARGUMENT, "lab_bare (n = -1)");
    }
    REQUIRE(printed_by(stdout, print_refusals_said, NULL, printed, sizeof printed));
    EXPECT_CONTAINS(printed, "a refusal says what is wrong");
    EXPECT_CONTAINS(printed, "2 of 3 refusals left no message (lab_bare (n = -1)): return fail(");
    const char *first = strstr(printed, "lab_bare");
    EXPECT_MSG(!strstr(printed, "lab_said") && !strstr(printed, "lab_worked") && first &&
                   !strstr(first + 1, "lab_bare"),
               "named other calls, or one twice: %s", printed);
cleanup:;
}

/* Run last: the tests before it left parts out. A variable left set in a
 * shell must not turn a check that skipped its costly claims into a pass. */
static void test_a_check_that_left_a_part_out_never_passes(void)
{
    check_that(true, "a claim that holds", NULL);
    EXPECT(check_finish("test_check") == CHECK_FAILS);
}

int main(void)
{
    RUN_TEST(test_a_check_that_left_nothing_out_may_pass);
    RUN_TEST(test_a_plain_check_leaves_nothing_out);
    RUN_TEST(test_a_part_that_makes_the_named_claim_runs);
    RUN_TEST(test_a_part_that_cannot_make_the_named_claim_is_left_out);
    RUN_TEST(test_a_crash_test_leaves_nothing_out);
    RUN_TEST(test_a_failed_claim_shows_the_whole_message_and_its_hint);
    RUN_TEST(test_figures_longer_than_the_room_are_marked_cut);
    RUN_TEST(test_a_todo_is_said_by_rank_0_alone);
    RUN_TEST(test_a_second_gpu_claim_is_untried_only_where_no_kind_has_two);
    RUN_TEST(test_the_at_th_call_is_refused_and_named);
    RUN_TEST(test_a_bare_refusal_is_named);
    RUN_TEST(test_a_check_that_left_a_part_out_never_passes);
    unsetenv("LABKIT_CHECK_UNTIL");
    return harness_finish();
}
