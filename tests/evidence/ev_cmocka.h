/* cmocka helpers shared by the evidence tests: the per-test temp directory
 * as cmocka state, a read-write open that fails the test, and running the
 * one test named on the command line. */
#ifndef EV_CMOCKA_H
#define EV_CMOCKA_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ev_test.h"

/* *state = a fresh struct ev_tmp; and its removal. */
int ev_setup(void **state);
int ev_teardown(void **state);
/* evidence_open(path, RW) or the test fails, printing why. */
struct evidence_db *ev_open_rw(const char *path);
/* Runs tests[0..n) or only the one named argv[1]; a name that matches
 * nothing fails (it must not pass with 0 tests). */
int ev_run_tests(const char *group, const struct CMUnitTest *tests, size_t n, int argc,
                 char **argv);

#endif
