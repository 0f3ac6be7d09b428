/* promtool.h - Prometheus' own checks in the tests (Debian's prometheus
 * package, scripts/install-deps): `promtool check metrics` over a scraped
 * /metrics text, and the Prometheus server for the alert tests.  Without the
 * package a test says so with a SKIPPED: line and exits TEST_SKIP_EXIT. */
#ifndef TESTS_PROMTOOL_H
#define TESTS_PROMTOOL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "test_skip.h"

/* Ends the process with TEST_SKIP_EXIT when program is not on PATH. */
static inline void promtool_skip_unless(const char *program)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", program);
    if (system(cmd) == 0)
        return;
    printf("SKIPPED: %s is not installed (Debian package prometheus: scripts/install-deps)\n", program);
    fflush(stdout);
    exit(TEST_SKIP_EXIT);
}

/* `promtool check metrics < file`: its exit code; what it says (lint
 * problems: a missing HELP, a counter without _total...) goes to out_file. */
static inline int promtool_check_metrics(const char *file, const char *out_file)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "promtool check metrics < '%s' > '%s' 2>&1", file, out_file);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

#endif
