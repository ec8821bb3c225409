/* A student's lab.c that writes through a bad pointer in a call of its own,
 * for the driver's test of a crash's verdict (tools/tests/verdicts.sh): the
 * report's innermost frame is the helper's (crash_main.c), and the verdict
 * must name this file's line. */
void fixture_store(float *to, float value);

void lab_matmul_ikj(float *c, int n)
{
    for (int i = 0; i <= n; ++i) fixture_store(c + (i == n ? 1 << 28 : i), 1.0f); /* the crashing call */
}
