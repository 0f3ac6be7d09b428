/* test_controller_store.c - `stepctl verify-store` and `stepctl serve`'s
 * check at start (docs/security.md#tamper-evidence): each kind of hand-made
 * change issue 19 found invisible is named by its table, row and rule, and
 * a store that breaks a rule is not served from; and a second connection
 * opened inside a process leaves the first one's locks on control.db. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctl_test.h"
#include "record.h"

static void granted(struct ctl_world *w, char g[33], char d2[33], char d[33])
{
    ctl_world_begin(w);
    json_t *sit = ctl_world_situation(w);
    ctl_fast(sit);
    assert_int_equal(ctl_decide_cli(&w->t, "sit.json", sit, w->ev, w->db, d), 0);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, "", g), 0);
    ctl_other_isp(sit, "isp-other"); /* a second decision, not granted */
    assert_int_equal(ctl_decide_cli(&w->t, "sit2.json", sit, w->ev, w->db, d2), 0);
    json_decref(sit);
}

/* verify-store --json on the world's control.db: exit 3 naming rule on a
 * row of table, or exit 0. */
static void expect(struct ctl_world *w, const char *table, const char *rule)
{
    int rc = ctl_run(&w->t, "verify-store --db '%s' --json", w->db);
    json_t *o = ctl_out_json(&w->t);
    const char *kind = json_string_value(json_object_get(o, "kind"));
    if (!rule) {
        assert_int_equal(rc, 0);
        assert_string_equal(kind, "store_ok");
    } else {
        if (rc != 3 || strcmp(json_string_value(json_object_get(o, "rule")), rule))
            printf("verify-store: %d %s\n", rc, json_dumps(o, 0));
        assert_int_equal(rc, 3);
        assert_string_equal(kind, "store_tampered");
        assert_string_equal(json_string_value(json_object_get(o, "table")), table);
        assert_string_equal(json_string_value(json_object_get(o, "rule")), rule);
        assert_true(strlen(json_string_value(json_object_get(o, "row"))) > 0);
    }
    json_decref(o);
}

static void sql(struct ctl_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sql(struct ctl_world *w, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    assert_int_equal(ctl_sql(w->db, text), 0);
}

/* Issue 19, item 8: a hand-inserted grant (cap 1e9, no reservation)
 * allocated; `UPDATE grants SET region=...` retargeted a grant. */
static void ctl_186_verify_store_names_the_first_row_no_stepctl_command_wrote(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], d2[33], d[33];
    granted(&w, g, d2, d);
    expect(&w, NULL, NULL);
    int rc = ctl_run(&w.t, "verify-store --db '%s'", w.db);
    assert_int_equal(rc, 0);
    char *out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, "store_ok"));
    free(out);

    /* A grant inserted by hand for the other decision, cap 1e9. */
    sql(&w, "CREATE TEMP TABLE t AS SELECT * FROM grants WHERE id = '%s'; "
            "UPDATE t SET id = 'forged', decision_id = '%s', isp = 'isp-other', "
            "max_allocations = 1000000000; INSERT INTO grants SELECT * FROM t",
        g, d2);
    expect(&w, "grants", "grant_caps_within_decision");
    /* Within the caps, it still has no created event. */
    sql(&w, "DELETE FROM grants WHERE id = 'forged'; "
            "CREATE TEMP TABLE t AS SELECT * FROM grants WHERE id = '%s'; "
            "UPDATE t SET id = 'forged', decision_id = '%s', isp = 'isp-other'; "
            "INSERT INTO grants SELECT * FROM t",
        g, d2);
    expect(&w, "grants", "grant_created_recorded");
    sql(&w, "DELETE FROM grants WHERE id = 'forged'");
    expect(&w, NULL, NULL);

    /* A grant retargeted to another cohort. */
    sql(&w, "UPDATE grants SET region = 'us-east' WHERE id = '%s'", g);
    expect(&w, "grants", "grant_cohort_of_decision");
    /* replay never says identical, explain says so after explaining */
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d, w.db), 3);
    out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, "store_tampered: control.db: grants"));
    free(out);
    assert_int_equal(ctl_run(&w.t, "explain %s --db '%s'", g, w.db), 0);
    out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, "grant_cohort_of_decision"));
    free(out);
    sql(&w, "UPDATE grants SET region = 'eu-west' WHERE id = '%s'", g);
    /* A count that is not its allocations'. */
    sql(&w, "UPDATE grants SET allocated = 2 WHERE id = '%s'", g);
    expect(&w, "grants", "grant_count_of_allocations");
    sql(&w, "UPDATE grants SET allocated = 0 WHERE id = '%s'", g);
    /* A status changed by hand, without its event. */
    sql(&w, "UPDATE grants SET status = 'revoked', closed_at_ms = created_at_ms WHERE id = '%s'",
        g);
    expect(&w, "grants", "grant_status_recorded");
    ctl_world_end(&w);
}

/* serve refuses (66) a store that breaks a rule, naming it; so does a
 * recorded time past the high-water mark. */
static void ctl_187_serve_refuses_a_tampered_store_at_start(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], d2[33], d[33];
    granted(&w, g, d2, d);
    sql(&w, "UPDATE grant_events SET at_ms = at_ms + 86400000 WHERE grant_id = '%s'", g);
    expect(&w, "clock_marks", "time_within_high_water");
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0", w.db), 66);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "store_tampered"));
    assert_non_null(strstr(err, "time_within_high_water"));
    free(err);
    /* An allocation that is not its grant's. */
    sql(&w, "UPDATE grant_events SET at_ms = at_ms - 86400000 WHERE grant_id = '%s'", g);
    expect(&w, NULL, NULL);
    sql(&w, "DROP TRIGGER allocations_within_cap; INSERT INTO allocations VALUES ('x-1', '%s', "
            "1, '%s', 'C', '[]', 0, 1, 2, 'h', '{}', '{}', NULL, 0)",
        g, d2);
    expect(&w, "grants", "grant_count_of_allocations");
    sql(&w, "UPDATE grants SET allocated = 1 WHERE id = '%s'", g);
    expect(&w, "allocations", "allocation_of_its_grant");
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s/none.db'", w.t.dir), 66);
    assert_int_equal(ctl_run(&w.t, "verify-store --bogus"), 64);
    ctl_world_end(&w);
}

/* Does another process see a read lock on path's SQLite shared-lock bytes
 * (what every WAL connection holds while open)?  Asked from a child, which
 * only calls fcntl: POSIX locks are per process. */
static bool others_see_shared_lock(const char *path)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0x40000002,
                          .l_len = 510};
        _exit(fd >= 0 && fcntl(fd, F_GETLK, &l) == 0 ? (l.l_type != F_UNLCK ? 1 : 0) : 2);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) < 2);
    return WEXITSTATUS(status) == 1;
}

/* stepctl serve opens a second writing connection while its writer runs (a
 * delivery removal, dlv_removals.c).  Opening it used to read the file's
 * header with open()/close(), and a close() drops every POSIX lock of the
 * process on the file: the writer's lock went, so another process's
 * connection closed as the last one and deleted the WAL under the writer,
 * whose later commits were then invisible, and lost on a crash. */
static void ctl_200_a_second_connection_leaves_the_writers_locks(void **state)
{
    (void)state;
    struct ctl_tmp t;
    assert_int_equal(ctl_tmp_make(&t), 0);
    char path[256], err[512];
    ctl_tmp_path(&t, "control.db", path, sizeof path);
    sqlite3 *writer = NULL, *second = NULL;
    assert_int_equal(rec_open(path, REC_CREATE, &writer, err, sizeof err), REC_OK);
    assert_int_equal(sqlite3_exec(writer, "INSERT INTO clock_marks (name, at_ms) VALUES "
                                          "('serve_heartbeat', 1)", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_true(others_see_shared_lock(path));
    assert_int_equal(rec_open(path, REC_WRITE, &second, err, sizeof err), REC_OK);
    sqlite3_close(second);
    assert_int_equal(rec_open(path, REC_READ, &second, err, sizeof err), REC_OK);
    sqlite3_close(second);
    assert_true(others_see_shared_lock(path)); /* the writer's lock is still there */
    sqlite3_close(writer);
    ctl_tmp_remove(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctl_186_verify_store_names_the_first_row_no_stepctl_command_wrote),
        cmocka_unit_test(ctl_187_serve_refuses_a_tampered_store_at_start),
        cmocka_unit_test(ctl_200_a_second_connection_leaves_the_writers_locks),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
