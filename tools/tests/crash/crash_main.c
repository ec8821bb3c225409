/* The program around the crash of labs/04_matmul/lab.c (tools/tests/verdicts.sh):
 * the kit's crash report on, then the student's loop, which stores through a
 * pointer far past its array. */
#include "labkit/crash.h"

void lab_matmul_ikj(float *c, int n);

__attribute__((noinline)) void fixture_store(float *to, float value) { *(volatile float *)to = value; }

int main(void)
{
    crash_report_on_fatal_signals();
    static float c[4];
    lab_matmul_ikj(c, 4);
    return 0;
}
