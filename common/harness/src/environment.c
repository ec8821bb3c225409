/* environment.c: the LABKIT_* settings that cannot be honoured, found before a
 * program starts its work (environment.h). */
#include "labkit/environment.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "labkit/device.h"

/* A regular file this process may execute. */
static bool executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* `name` itself when it has a slash, else the first PATH entry that has it,
 * as execvp looks (an empty entry is the current directory). */
static bool runnable(const char *name)
{
    if (strchr(name, '/')) return executable_file(name);
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    char candidate[4096];
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        const size_t length = end ? (size_t)(end - p) : strlen(p);
        const int n = length ? snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, p, name)
                             : snprintf(candidate, sizeof candidate, "./%s", name);
        if (n > 0 && (size_t)n < sizeof candidate && executable_file(candidate)) return true;
        if (!end) return false;
        p = end + 1;
    }
}

status environment_check_program(const char *variable)
{
    if (!variable || !*variable)
        return fail(STATUS_BAD_ARGUMENT, "environment_check_program: name the variable (\"LABKIT_PYTHON\")");
    const char *value = getenv(variable);
    if (!value || !*value) return STATUS_OK;
    if (!runnable(value))
        return fail(STATUS_BAD_ARGUMENT,
                    "%s=\"%s\" is not a program that can be run (%s).\n"
                    "  hint: give a program on PATH or the path to one, e.g. %s=%s, or unset it.",
                    variable, value, strchr(value, '/') ? "no executable file there" : "not found on PATH",
                    variable,
                    strcmp(variable, "LABKIT_PYTHON") == 0 ? "/usr/bin/python3" : "/usr/bin/gnuplot");
    return STATUS_OK;
}

status environment_check(void)
{
    status s = devices_init();
    if (s != STATUS_OK) return s;
    return environment_check_program("LABKIT_GNUPLOT");
}
