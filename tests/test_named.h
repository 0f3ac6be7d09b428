/* test_named.h - the main of a cmocka test program whose tests ctest runs
 * one by one: runs tests[0..n), or only the one named argv[1].  A name
 * that matches nothing fails, so a renamed test never passes with 0 tests
 * run.  Shared by the canary and evidence tests. */
#ifndef TEST_NAMED_H
#define TEST_NAMED_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static inline int test_run_named(const char *group, const struct CMUnitTest *tests, size_t n, int argc,
                                 char **argv)
{
    if (argc > 1) {
        bool known = false;
        for (size_t i = 0; i < n; i++)
            known = known || strcmp(tests[i].name, argv[1]) == 0;
        if (!known) {
            fprintf(stderr, "no test named %s\n", argv[1]);
            return 1;
        }
        cmocka_set_test_filter(argv[1]);
    }
    return _cmocka_run_group_tests(group, tests, n, NULL, NULL);
}

#endif
