/* canary_test.h - shared by the canary tests: run the one cmocka test named
 * on the command line (each is its own ctest test), or all of them. */
#ifndef CANARY_TEST_H
#define CANARY_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A name that matches nothing fails rather than passing with 0 tests. */
static inline int canary_test_main(const char *group, const struct CMUnitTest *tests, size_t n, int argc,
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
