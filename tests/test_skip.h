/* test_skip.h - how a test tells ctest that it was skipped, not passed.
 *
 * A test whose input is absent (the shared corpus, EXACTAV_CORPUS_DIR) says
 * what is missing and ends its process with TEST_SKIP_EXIT; its ctest entry
 * has SKIP_RETURN_CODE 77, so ctest counts it as skipped.  A process reports
 * one outcome only, so every such test is its own ctest entry, and its name
 * contains "corpus" so that test_select() leaves it out of the entry that
 * runs all the other tests of the same program.
 */
#ifndef TEST_SKIP_H
#define TEST_SKIP_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define TEST_SKIP_EXIT 77

/* Ends the process with TEST_SKIP_EXIT when path does not exist.  Call it
 * before any set-up that needs tearing down (a server, a temp dir). */
static inline void test_skip_unless(const char *path)
{
    struct stat st;
    if (path && path[0] && stat(path, &st) == 0)
        return;
    printf("SKIPPED: %s is absent (set -DEXACTAV_CORPUS_DIR=...)\n", path ? path : "(none)");
    fflush(stdout);
    exit(TEST_SKIP_EXIT);
}

/* For main(): argv[1] names the tests to run (a cmocka pattern, * and ?);
 * without it every test runs except those named *corpus*. */
static inline void test_select(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    else
        cmocka_set_skip_filter("*corpus*");
}

#endif
