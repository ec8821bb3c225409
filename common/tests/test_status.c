/* test_status.c: what every other part leans on: status codes and their
 * per-thread messages (status.h). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "labkit/status.h"

/* ============================================================================
 * status.h
 * ========================================================================== */

static void test_every_status_has_its_own_name(void)
{
    const struct {
        status s;
        const char *name;
    } names[] = {
        { STATUS_OK, "STATUS_OK" },
        { STATUS_BAD_ARGUMENT, "STATUS_BAD_ARGUMENT" },
        { STATUS_WRONG_DEVICE, "STATUS_WRONG_DEVICE" },
        { STATUS_OUT_OF_MEMORY, "STATUS_OUT_OF_MEMORY" },
        { STATUS_NOT_READY, "STATUS_NOT_READY" },
        { STATUS_BACKEND_FAILED, "STATUS_BACKEND_FAILED" },
        { STATUS_IO_FAILED, "STATUS_IO_FAILED" },
        { STATUS_TODO, "STATUS_TODO" },
        { STATUS_KERNEL_FAILED, "STATUS_KERNEL_FAILED" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        EXPECT_STREQ(status_name(names[i].s), names[i].name);
    EXPECT(status_name((status)999) != NULL); /* something printable, never a crash */
}

static void test_fail_formats_the_message_and_returns_the_status(void)
{
    char long_text[4096];
    EXPECT(fail(STATUS_WRONG_DEVICE, "%s and %s differ by %d", "cpu", "sim:0", 3) == STATUS_WRONG_DEVICE);
    EXPECT_STREQ(last_error(), "cpu and sim:0 differ by 3");
    clear_error();
    EXPECT_STREQ(last_error(), "");

    /* a message longer than the library keeps is cut, never overflows */
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    EXPECT(fail(STATUS_BAD_ARGUMENT, "%s", long_text) == STATUS_BAD_ARGUMENT);
    const size_t kept = strlen(last_error());
    EXPECT(kept > 0 && kept < sizeof long_text - 1);
    EXPECT(strspn(last_error(), "x") == kept);
}

static void test_todo_names_the_missing_step(void)
{
    const int line = __LINE__ + 1;
    EXPECT(todo("step 2: lab_add_across_devices") == STATUS_TODO);
    EXPECT_CONTAINS(last_error(), "TODO: step 2: lab_add_across_devices is not written yet");
    /* where to write it: the file as the kit's root names it, and the line */
    char where[64];
    snprintf(where, sizeof where, "(common/tests/test_status.c:%d)", line);
    EXPECT_CONTAINS(last_error(), where);
}

/* A chain of three calls through TRY, the second of which fails as told. */
static int calls_made;
static status counted_call(status result)
{
    ++calls_made;
    return result == STATUS_OK ? STATUS_OK : fail(result, "call %d failed", calls_made);
}

static status three_calls(status second)
{
    TRY(counted_call(STATUS_OK));
    TRY(counted_call(second));
    TRY(counted_call(STATUS_OK));
    return STATUS_OK;
}

static void test_try_returns_the_first_failure_and_runs_nothing_after_it(void)
{
    calls_made = 0;
    EXPECT(three_calls(STATUS_OK) == STATUS_OK);
    EXPECT(calls_made == 3);
    calls_made = 0;
    EXPECT(three_calls(STATUS_OUT_OF_MEMORY) == STATUS_OUT_OF_MEMORY);
    EXPECT(calls_made == 2);
    EXPECT_STREQ(last_error(), "call 2 failed");
    clear_error();
}

static void *fail_on_another_thread(void *arg)
{
    (void)arg;
    fail(STATUS_IO_FAILED, "the other thread's failure");
    static bool kept;
    kept = strcmp(last_error(), "the other thread's failure") == 0;
    return &kept;
}

static void test_messages_belong_to_the_thread_that_failed(void)
{
    pthread_t other;
    void *kept = NULL;
    fail(STATUS_BAD_ARGUMENT, "this thread's failure");
    REQUIRE(pthread_create(&other, NULL, fail_on_another_thread, NULL) == 0);
    REQUIRE(pthread_join(other, &kept) == 0);
    EXPECT(kept != NULL && *(bool *)kept);
    EXPECT_STREQ(last_error(), "this thread's failure");
cleanup:
    clear_error();
}

/* ============================================================================ */

int main(void)
{
    RUN_TEST(test_every_status_has_its_own_name);
    RUN_TEST(test_fail_formats_the_message_and_returns_the_status);
    RUN_TEST(test_todo_names_the_missing_step);
    RUN_TEST(test_try_returns_the_first_failure_and_runs_nothing_after_it);
    RUN_TEST(test_messages_belong_to_the_thread_that_failed);
    return harness_finish();
}
