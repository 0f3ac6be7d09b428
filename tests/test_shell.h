/* test_shell.h - a shell command built like printf, for tests that drive the
 * real programs (ffmpeg, the project's binaries, sqlite3): its exit status,
 * -1 when it did not exit.  Header-only; several tests still carry a private
 * copy of this (sh() in test_e2e_http.c, test_cli.c, ...) and may use it. */
#ifndef TEST_SHELL_H
#define TEST_SHELL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static inline int test_shell(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd)
        return -1;               /* never run a cut command */
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
