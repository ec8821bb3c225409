/* test_timer.c: the host's clock helpers of the harness (timer.h). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <time.h>

#include "harness.h"
#include "labkit/timer.h"

static void test_wall_seconds_moves_forward_with_real_time(void)
{
    const struct timespec twenty_ms = { 0, 20 * 1000 * 1000 };
    double previous = wall_seconds();
    for (int i = 0; i < 1000; i++) {
        double now = wall_seconds();
        EXPECT_MSG(now >= previous, "wall_seconds went back from %.9f to %.9f", previous, now);
        previous = now;
    }
    const double t0 = wall_seconds();
    nanosleep(&twenty_ms, NULL);
    const double slept = wall_seconds() - t0;
    EXPECT_MSG(slept >= 0.0195 && slept < 1.0, "a 20 ms sleep measured %.6f s", slept);
}

static void test_median_and_min_of_timings(void)
{
    double odd[7] = { 5.0, 1.0, 4.0, 7.0, 2.0, 6.0, 3.0 };
    const double copy[7] = { 5.0, 1.0, 4.0, 7.0, 2.0, 6.0, 3.0 };
    double one[1] = { 2.5 };
    EXPECT(median_of(odd, 7) == 4.0);
    /* reordered, but the same values */
    double sum = 0.0;
    for (int i = 0; i < 7; i++) sum += odd[i];
    EXPECT(sum == 28.0);
    EXPECT(median_of(one, 1) == 2.5);
    EXPECT(median_of(odd, 0) == 0.0);
    EXPECT(min_of(copy, 7) == 1.0);
    EXPECT(min_of(copy + 2, 1) == 4.0);
}

int main(void)
{
    RUN_TEST(test_wall_seconds_moves_forward_with_real_time);
    RUN_TEST(test_median_and_min_of_timings);
    return harness_finish();
}
