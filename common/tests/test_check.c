/* test_check.c: the parts of a lab's check that a known-wrong version's test
 * may leave out (check.h, check_leaves_out): only when LABKIT_CHECK_UNTIL names
 * a claim that none of the part's claims begins, never for a crash test. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <stdbool.h>
#include <stdlib.h>

#include "harness.h"
#include "labkit/check.h"

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
    RUN_TEST(test_a_check_that_left_a_part_out_never_passes);
    unsetenv("LABKIT_CHECK_UNTIL");
    return harness_finish();
}
