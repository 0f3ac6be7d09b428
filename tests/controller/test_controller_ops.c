/* Operating the loop (issue 17, docs/controller.md "Operating the loop"):
 * `stepctl next --dry-run`, access from probes in `next`, the fallbacks a
 * next decision keeps, paths.json variant attributes, policy.refusal,
 * delivery of admitted renditions only, `stepctl status`.  End to end on
 * loopback: real SQLite files, the stepctl binary, `stepctl serve` as a
 * child process, libcurl clients. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_rig.h"
#include "ctl_test.h"
#include "evidence.h"
#include "serve_rig.h"

/* ---- the world: C granted with D and E eligible beside it ------------------- */

struct ops {
    struct ctl_world w;
    json_t *sit; /* the decided situation */
    char d[33], g[33];
};

static void ops_begin(struct ops *o)
{
    ctl_world_begin(&o->w);
    ctl_world_evidence(&o->w, "ev-d-pre", "D", "MATCH", o->w.now - 300000, true);
    ctl_world_evidence(&o->w, "ev-e-pre", "E", "MATCH", o->w.now - 300000, true);
    o->sit = serve_situation(&o->w, SERVE_ORDER_CDE);
    assert_int_equal(ctl_decide_cli(&o->w.t, "sit.json", o->sit, o->w.ev, o->w.db, o->d), 0);
    assert_int_equal(ctl_grant_cli(&o->w.t, o->w.db, o->d, "", o->g), 0);
}

static void ops_end(struct ops *o)
{
    json_decref(o->sit);
    ctl_world_end(&o->w);
}

/* n allocations through a running `stepctl serve` (no delivery). */
static void allocate(struct ops *o, int n)
{
    struct server s;
    server_start(&o->w, &s);
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "a-%d", i);
        json_decref(serve_allocate(s.port, id));
    }
    assert_int_equal(server_stop(&s, SIGTERM), 0);
}

static void assert_err_has(struct ctl_world *w, const char *needle)
{
    char *e = ctl_out(&w->t, "err");
    if (!strstr(e, needle))
        fail_msg("stderr lacks '%s': %s", needle, e);
    free(e);
}

/* The bytes of a file ("" when absent); caller frees. */
static char *bytes_of(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = calloc(1, 1);
    *n = 0;
    if (!f)
        return b;
    int c;
    size_t cap = 1;
    while ((c = fgetc(f)) != EOF) {
        if (*n + 1 >= cap)
            b = realloc(b, cap *= 2);
        b[(*n)++] = (char)c;
    }
    fclose(f);
    return b;
}

/* control.db and its WAL, byte for byte. */
struct snapshot {
    char *db, *wal;
    size_t ndb, nwal;
};

static void snap(const struct ops *o, struct snapshot *s)
{
    char wal[160];
    snprintf(wal, sizeof wal, "%s-wal", o->w.db);
    s->db = bytes_of(o->w.db, &s->ndb);
    s->wal = bytes_of(wal, &s->nwal);
}

static void assert_same_snapshot(const struct ops *o, struct snapshot *before)
{
    struct snapshot after;
    snap(o, &after);
    assert_int_equal(after.ndb, before->ndb);
    assert_int_equal(after.nwal, before->nwal);
    assert_memory_equal(after.db, before->db, after.ndb);
    assert_memory_equal(after.wal, before->wal, after.nwal);
    free(after.db);
    free(after.wal);
    free(before->db);
    free(before->wal);
}

static long long q(const struct ops *o, const char *fmt, ...)
{
    char sql[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    return ctl_query_int(o->w.db, sql);
}

/* ---- 1: next --dry-run -------------------------------------------------------- */

static void ctl_140_next_dry_run_writes_nothing_and_exits_as_next_would(void **state)
{
    (void)state;
    struct ops o;
    ops_begin(&o);
    allocate(&o, 2);
    usleep(2000);
    ctl_world_evidence(&o.w, "ev-step-1", "C", "MATCH", ctl_now_ms(), true);
    char obs[160];
    ctl_observations(&o.w.t, o.sit, "obs.json", obs, sizeof obs);

    /* Positive: the whole answer, exit 0, the database byte-identical. */
    struct snapshot before;
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run "
                                     "--json", o.g, o.w.db, o.w.ev, obs),
                     0);
    assert_same_snapshot(&o, &before);
    json_t *r = ctl_out_json(&o.w.t);
    assert_true(json_is_true(json_object_get(r, "dry_run")));
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "positive");
    assert_true(json_is_null(json_object_get(r, "next_id")));
    assert_true(json_is_null(json_object_get(r, "next_decision_id")));
    assert_false(json_is_true(json_object_get(r, "issuance_closed")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "proposed_step"),
                                                        "max_allocations")),
                     json_integer_value(json_object_get(json_object_get(r, "growth"),
                                                        "next_max_allocations")));
    json_decref(r);
    /* The human summary says nothing was recorded. */
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --dry-run",
                             o.g, o.w.db, o.w.ev, obs),
                     0);
    assert_same_snapshot(&o, &before);
    char *out = ctl_out(&o.w.t, "out");
    assert_non_null(strstr(out, "dry run of next for grant"));
    assert_non_null(strstr(out, "nothing recorded"));
    free(out);
    assert_int_equal(q(&o, "SELECT count(*) FROM next_decisions"), 0);
    assert_int_equal(q(&o, "SELECT count(*) FROM grants WHERE status = 'active'"), 1);

    /* Negative (no observations: resources missing): exit 4, nothing written. */
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --dry-run --json", o.g,
                             o.w.db, o.w.ev),
                     4);
    assert_same_snapshot(&o, &before);
    r = ctl_out_json(&o.w.t);
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "negative");
    json_decref(r);

    /* The real review then agrees with the first dry run. */
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --input '%s' --json", o.g,
                             o.w.db, o.w.ev, obs),
                     0);
    r = ctl_out_json(&o.w.t);
    assert_null(json_object_get(r, "dry_run")); /* a new member only where used */
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "positive");
    json_decref(r);
    /* A dry run of a reviewed grant is refused as next refuses it. */
    snap(&o, &before);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --dry-run", o.g, o.w.db,
                             o.w.ev),
                     65);
    assert_same_snapshot(&o, &before);
    assert_err_has(&o.w, "already_reviewed");
    /* Bad input: an unknown grant, a value given to the flag, a missing db. */
    assert_int_equal(ctl_run(&o.w.t, "next nosuch --db '%s' --evidence '%s' --dry-run", o.w.db,
                             o.w.ev),
                     65);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s' --evidence '%s' --dry-run=yes", o.g,
                             o.w.db, o.w.ev),
                     64);
    assert_int_equal(ctl_run(&o.w.t, "next %s --db '%s/absent.db' --evidence '%s' --dry-run", o.g,
                             o.w.t.dir, o.w.ev),
                     66);
    char absent[160];
    snprintf(absent, sizeof absent, "%s/absent.db", o.w.t.dir);
    assert_int_equal(access(absent, F_OK), -1);
    ops_end(&o);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_140_next_dry_run_writes_nothing_and_exits_as_next_would,
                                  kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
