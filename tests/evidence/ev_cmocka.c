/* ev_cmocka.c - see ev_cmocka.h. */
#include "ev_cmocka.h"

#include "../test_named.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ev_setup(void **state)
{
    struct ev_tmp *t = calloc(1, sizeof *t);
    if (!t || ev_tmp_make(t) != 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

int ev_teardown(void **state)
{
    ev_tmp_remove(*state);
    free(*state);
    return 0;
}

struct evidence_db *ev_open_rw(const char *path)
{
    struct evidence_db *db = NULL;
    char err[256] = "";
    enum evidence_rc rc = evidence_open(path, EVIDENCE_OPEN_RW, &db, err, sizeof err);
    if (rc != EVIDENCE_OK)
        print_error("open %s: %s\n", path, err);
    assert_int_equal(rc, EVIDENCE_OK);
    return db;
}

int ev_run_tests(const char *group, const struct CMUnitTest *tests, size_t n, int argc,
                 char **argv)
{
    return test_run_named(group, tests, n, argc, argv);
}
