/* test_progress.c: a long run says so at its start and shows its progress on
 * stderr; a short one prints nothing. Time is made to pass by moving the
 * run's start back, so the test takes no time. */
#define _POSIX_C_SOURCE 200809L /* test_files.h: dup, dup2, fileno: POSIX, not C17 */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/progress.h"
#include "test_files.h"

static void test_a_short_run_prints_nothing(void)
{
    capture c;
    char err[512];
    capture_begin(&c, STDERR_FILENO);
    progress p;
    progress_begin(&p, "a quick run", 5);
    for (int i = 1; i <= 10; i++) progress_update(&p, i / 10.0);
    progress_end(&p);
    capture_end(&c, err, sizeof err);
    EXPECT_STREQ(err, "");
}

static void test_a_long_run_says_how_long_and_how_to_stop_it(void)
{
    capture c;
    char err[1024];
    capture_begin(&c, STDERR_FILENO);
    progress p;
    progress_begin(&p, "matrix products up to N = 4096", 12 * 60);
    progress_update(&p, 0.01); /* too soon for a progress line */
    p.started -= 300;          /* five minutes pass */
    progress_update(&p, 0.4);
    progress_update(&p, 0.41); /* too soon after the last line */
    p.started -= 75, p.last_shown -= 75;
    progress_update(&p, 0.5);
    progress_end(&p);
    capture_end(&c, err, sizeof err);
    EXPECT_STREQ(err, "this run will take about 12 min: matrix products up to N = 4096; Ctrl-C stops it "
                      "(--quick: a run of seconds)\n"
                      "progress: 40% done, about 8 min left\n"
                      "progress: 50% done, about 6 min left\n"
                      "progress: done in 6 min\n");
}

static void test_a_run_that_turns_out_long_starts_showing_progress(void)
{
    capture c;
    char err[512];
    capture_begin(&c, STDERR_FILENO);
    progress p;
    progress_begin(&p, NULL, 10); /* a wrong estimate */
    p.started -= 90;
    progress_update(&p, 0.5);
    capture_end(&c, err, sizeof err);
    EXPECT_STREQ(err, "progress: 50% done, about 2 min left\n");
}

static void test_durations_read_as_people_say_them(void)
{
    char buffer[32];
    EXPECT_STREQ(progress_duration(45, buffer, sizeof buffer), "45 s");
    EXPECT_STREQ(progress_duration(89, buffer, sizeof buffer), "89 s");
    EXPECT_STREQ(progress_duration(12 * 60 + 10, buffer, sizeof buffer), "12 min");
    EXPECT_STREQ(progress_duration(80 * 60, buffer, sizeof buffer), "80 min");
    EXPECT_STREQ(progress_duration(100 * 60, buffer, sizeof buffer), "1 h 40 min");
    EXPECT_STREQ(progress_duration(-3, buffer, sizeof buffer), "0 s");
    progress_begin(NULL, "nothing", 100); /* allowed, does nothing */
    progress_update(NULL, 0.5);
    progress_end(NULL);
}

int main(void)
{
    RUN_TEST(test_a_short_run_prints_nothing);
    RUN_TEST(test_a_long_run_says_how_long_and_how_to_stop_it);
    RUN_TEST(test_a_run_that_turns_out_long_starts_showing_progress);
    RUN_TEST(test_durations_read_as_people_say_them);
    return harness_finish();
}
