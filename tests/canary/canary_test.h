/* canary_test.h - shared by the canary tests: run the one cmocka test named
 * on the command line (each is its own ctest test), or all of them. */
#ifndef CANARY_TEST_H
#define CANARY_TEST_H

#include "../test_named.h"

static inline int canary_test_main(const char *group, const struct CMUnitTest *tests, size_t n, int argc,
                                   char **argv)
{
    return test_run_named(group, tests, n, argc, argv);
}

#endif
