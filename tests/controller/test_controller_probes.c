/* stepctl decide with availability probes (access_probe.h): a candidate
 * without `access` in the situation takes the newest probe of its path in
 * the decision's scope from evidence.db (schema v2, written through the
 * evidence store's API as exactav canary writes it), judged like a given
 * access; the completed situation is recorded and replays identically. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_test.h"
#include "ev_schema_undo.h"
#include "evidence.h"

static void probe(struct evidence_db *db, const char *id, const char *path, const char *rendition,
                  enum evidence_probe_status st, int64_t observed)
{
    struct evidence_probe p = {
        .id = id, .path_id = path, .channel = "news-1", .rendition = rendition, .object = "https://cdn/x.m3u8",
        .status = st, .reason = st == EVIDENCE_PROBE_PASS ? "ok" : "download_http_error",
        .observed_at_ms = observed, .observed_end_ms = observed + 10,
    };
    char err[256] = "";
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_OK);
}

/* A temp dir with the main scenario's evidence as a version-1 store: the
 * reports imported, then the store taken back to exactly what a version-1
 * build writes (schema_v1.sql's tables, user_version 1). */
static void v1_store(struct ctl_tmp *t, char ev[128], char db[128])
{
    assert_int_equal(ctl_tmp_make(t), 0);
    ctl_tmp_path(t, "evidence.db", ev, 128);
    ctl_tmp_path(t, "control.db", db, 128);
    ctl_evidence_store(ev, "main_evidence");
    assert_int_equal(ctl_sql(ev, EV_V7_UNDONE "DROP INDEX evidence_allocation;"
                                 " ALTER TABLE evidence DROP COLUMN allocation_id;"
                                 " ALTER TABLE evidence DROP COLUMN pathway;"
                                 " DROP INDEX evidence_media_sequence; DROP TABLE probes;"
                                 " ALTER TABLE evidence DROP COLUMN media_sequence;"
                                 " ALTER TABLE evidence DROP COLUMN container;"
                                 " ALTER TABLE evidence DROP COLUMN part_index;"
                                 " PRAGMA user_version = 1;"), 0);
}

static const json_t *access_of(const json_t *decision, const char *path)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(decision, "candidates"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "path_id")), path))
            return json_object_get(json_object_get(c, "conditions"), "access");
    fail_msg("no candidate %s", path);
    return NULL;
}

static void expect_access(const json_t *d, const char *path, const char *status, const char *reason)
{
    const json_t *a = access_of(d, path);
    assert_string_equal(json_string_value(json_object_get(a, "status")), status);
    assert_string_equal(json_string_value(json_object_get(a, "reason")), reason);
}

static void ctl_60_access_from_the_newest_probe_when_the_situation_gives_none(void **state)
{
    (void)state;
    struct ctl_tmp t;
    char ev[128], db[128], sit[128];
    v1_store(&t, ev, db); /* the first writer migrates it */
    struct evidence_db *e = NULL;
    char err[256];
    assert_int_equal(evidence_open(ev, EVIDENCE_OPEN_RW, &e, err, sizeof err), EVIDENCE_OK);
    probe(e, "pa-old", "A", "720p", EVIDENCE_PROBE_VIOLATION, CTL_T - 60000);
    probe(e, "pa", "A", "720p", EVIDENCE_PROBE_PASS, CTL_T - 10000);          /* newest of A */
    probe(e, "pa-late", "A", "720p", EVIDENCE_PROBE_VIOLATION, CTL_T + 1000); /* after T: not used */
    probe(e, "pb", "B", "720p", EVIDENCE_PROBE_VIOLATION, CTL_T - 5000);
    probe(e, "pb-other", "B", "1080p", EVIDENCE_PROBE_PASS, CTL_T - 1000);   /* another rendition */
    probe(e, "pc", "C", "720p", EVIDENCE_PROBE_PASS, CTL_T - 600001);        /* older than access.max_age_s */
    evidence_close(e);
    /* A and B give no access: the probes decide; C's own access stays */
    json_t *s = ctl_fixture_json("main_situation.json");
    ctl_set(ctl_cand(s, "A"), "access", NULL);
    ctl_set(ctl_cand(s, "B"), "access", NULL);
    ctl_write_json(&t, "sit.json", s, sit, sizeof sit);
    assert_int_not_equal(ctl_run(&t, "decide --input '%s' --evidence '%s' --db '%s' --json", sit, ev, db), 64);
    char *out = ctl_out(&t, "out");
    json_t *d = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(d);
    expect_access(d, "A", "PASS", "access_compatible");
    expect_access(d, "B", "VIOLATION", "access_incompatible");
    expect_access(d, "C", "PASS", "access_compatible"); /* given: the stale probe is not consulted */
    assert_int_equal(json_integer_value(json_object_get(access_of(d, "A"), "observed_at_ms")), CTL_T - 10000);
    char id[64];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(d, "decision_id")));
    json_decref(d);
    /* the recorded situation carries the probes it used; replay needs no store */
    assert_int_equal(ctl_run(&t, "decisions show %s --db '%s'", id, db), 0);
    out = ctl_out(&t, "out");
    d = json_loads(out, 0, NULL);
    free(out);
    const json_t *acc = json_object_get(ctl_cand(json_object_get(d, "situation"), "A"), "access");
    assert_string_equal(json_string_value(json_object_get(acc, "source")), "probe");
    assert_string_equal(json_string_value(json_object_get(acc, "probe_id")), "pa");
    json_decref(d);
    assert_int_equal(ctl_run(&t, "replay %s --db '%s'", id, db), 0);
    /* without its own access C's probe is stale: UNKNOWN, never PASS; no probe at all: missing */
    ctl_set(ctl_cand(s, "C"), "access", NULL);
    ctl_write_json(&t, "sit2.json", s, sit, sizeof sit);
    ctl_run(&t, "decide --input '%s' --evidence '%s' --db '%s' --json", sit, ev, db);
    out = ctl_out(&t, "out");
    d = json_loads(out, 0, NULL);
    free(out);
    expect_access(d, "C", "UNKNOWN", "access_stale");
    json_decref(d);
    ctl_set(s, "action.cohort.rendition", json_string("480p"));
    ctl_write_json(&t, "sit3.json", s, sit, sizeof sit);
    ctl_run(&t, "decide --input '%s' --evidence '%s' --db '%s' --json", sit, ev, db);
    out = ctl_out(&t, "out");
    d = json_loads(out, 0, NULL);
    free(out);
    expect_access(d, "A", "UNKNOWN", "access_missing");
    json_decref(d);
    json_decref(s);
    ctl_tmp_remove(&t);
}

static void ctl_61_probes_are_read_only_and_optional(void **state)
{
    (void)state;
    struct ctl_tmp t;
    char ev[128], db[128], sit[128];
    v1_store(&t, ev, db); /* v1: no probes table */
    json_t *s = ctl_fixture_json("main_situation.json");
    ctl_set(ctl_cand(s, "A"), "access", NULL);
    ctl_write_json(&t, "sit.json", s, sit, sizeof sit);
    json_decref(s);
    ctl_run(&t, "decide --input '%s' --evidence '%s' --db '%s' --json", sit, ev, db);
    char *out = ctl_out(&t, "out");
    json_t *d = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(d);
    expect_access(d, "A", "UNKNOWN", "access_missing");
    json_decref(d);
    /* the reader never migrated nor wrote the store */
    struct evidence_db *e = NULL;
    char err[256];
    assert_int_equal(evidence_open(ev, EVIDENCE_OPEN_RO, &e, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(evidence_schema_version(e), 1);
    evidence_close(e);
    ctl_tmp_remove(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctl_60_access_from_the_newest_probe_when_the_situation_gives_none),
        cmocka_unit_test(ctl_61_probes_are_read_only_and_optional),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
