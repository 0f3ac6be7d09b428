/* The evidence store against real SQLite files in a private temp dir.
 * Each test is registered with ctest on its own (evidence_<name>); the
 * first argument selects it. */
#include "ev_cmocka.h"
#include "ev_test.h"
#include "dbfile.h"
#include "evidence_fingerprint.h"
#include "ev_schema_undo.h"
#include "store_key.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>

/* Takes a store back from schema v6 (before a test takes it further back). */
#define EV_V6_UNDONE                                                                              \
    EV_V7_UNDONE "DROP INDEX evidence_allocation; ALTER TABLE evidence DROP COLUMN allocation_id; "            \
    "ALTER TABLE evidence DROP COLUMN pathway; "
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIN_MS(n) ((int64_t)(n) * 60 * 1000)

static struct evidence_db *open_ro(const char *path)
{
    struct evidence_db *db = NULL;
    char err[256] = "";
    assert_int_equal(evidence_open(path, EVIDENCE_OPEN_RO, &db, err, sizeof err), EVIDENCE_OK);
    return db;
}

static void exec_raw(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static void insert_ok(struct evidence_db *db, const struct evidence_record *r)
{
    char err[256] = "";
    enum evidence_rc rc = evidence_insert(db, r, err, sizeof err);
    if (rc != EVIDENCE_OK)
        print_error("insert: %s\n", err);
    assert_int_equal(rc, EVIDENCE_OK);
}

static void import_ok(struct evidence_db *db, const char *text, int64_t now, int want_inserted)
{
    char err[256] = "";
    int inserted = -1;
    enum evidence_rc rc = evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err);
    if (rc != EVIDENCE_OK)
        print_error("import: %s\n", err);
    assert_int_equal(rc, EVIDENCE_OK);
    assert_int_equal(inserted, want_inserted);
}

static const char *str_at(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static int64_t int_at(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

/* ---- schema and versions ---- */

static void store_01_schema_v1_created(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ('evidence_rows','fetches','profiles')"), 3);
    /* schema v7: `evidence` is the view every reader and writer uses */
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE type='view' AND name = 'evidence'"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE type='index' AND name IN ('evidence_scope','evidence_observed')"), 2);
    /* WAL is a property of the file: a fresh connection sees it */
    sqlite3 *raw = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(t->db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(raw);
    /* a second RW open of a current file migrates nothing and keeps its version */
    db = ev_open_rw(t->db);
    assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION);
    evidence_close(db);
}

static void store_02_migrates_empty_v0_file(void **state)
{
    struct ev_tmp *t = *state;
    FILE *f = fopen(t->db, "wb"); /* a zero-byte file is an empty v0 database */
    assert_non_null(f);
    fclose(f);
    struct evidence_db *db = ev_open_rw(t->db);
    struct evidence_record r = ev_sample_record("id-v0", evidence_now_ms());
    insert_ok(db, &r);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 1);
}

static void store_03_refuses_newer_schema_version(void **state)
{
    struct ev_tmp *t = *state;
    /* an evidence store (our application_id) of a later schema version */
    struct evidence_db *db = ev_open_rw(t->db);
    evidence_close(db);
    exec_raw(t->db, "PRAGMA user_version=99;");
    db = NULL;
    char err[256] = "";
    assert_int_equal(evidence_open(t->db, EVIDENCE_OPEN_RW, &db, err, sizeof err), EVIDENCE_E_VERSION);
    assert_null(db);
    assert_non_null(strstr(err, "99"));
    assert_int_equal(evidence_open(t->db, EVIDENCE_OPEN_RO, &db, err, sizeof err), EVIDENCE_E_VERSION);
    assert_null(db);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), 99); /* untouched */
}

static void store_04_refuses_foreign_v0_database(void **state)
{
    struct ev_tmp *t = *state;
    exec_raw(t->db, "CREATE TABLE something_else(x);");
    struct evidence_db *db = NULL;
    char err[256] = "";
    assert_int_equal(evidence_open(t->db, EVIDENCE_OPEN_RW, &db, err, sizeof err), EVIDENCE_E_OPEN);
    assert_non_null(strstr(err, "not an evidence store"));
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE name='evidence'"), 0);
    /* a file that is not SQLite at all */
    char junk[160];
    assert_int_equal(ev_write_file(t, "junk.db", "this is not a database, just some text that is long enough", junk, sizeof junk), 0);
    assert_int_equal(evidence_open(junk, EVIDENCE_OPEN_RW, &db, err, sizeof err), EVIDENCE_E_OPEN);
    assert_int_equal(evidence_open(junk, EVIDENCE_OPEN_RO, &db, err, sizeof err), EVIDENCE_E_OPEN);
}

static void store_05_read_only_open_never_creates(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = NULL;
    char err[256] = "";
    assert_int_equal(evidence_open(t->db, EVIDENCE_OPEN_RO, &db, err, sizeof err), EVIDENCE_E_OPEN);
    assert_int_equal(access(t->db, F_OK), -1);
    FILE *f = fopen(t->db, "wb"); /* empty v0 file: RO refuses, does not migrate */
    fclose(f);
    assert_int_equal(evidence_open(t->db, EVIDENCE_OPEN_RO, &db, err, sizeof err), EVIDENCE_E_OPEN);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), 0);
}

/* ---- writes ---- */

static void store_06_insert_show_round_trip(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    struct evidence_record r = ev_sample_record("id-rt", now - 5000);
    r.recorded_at_ms = 0; /* the insert stamps "now" */
    insert_ok(db, &r);
    evidence_close(db);

    db = open_ro(t->db);
    json_t *rec = NULL;
    char err[256] = "";
    assert_int_equal(evidence_show(db, "id-rt", &rec, err, sizeof err), EVIDENCE_OK);
    assert_string_equal(str_at(rec, "id"), "id-rt");
    assert_string_equal(str_at(rec, "check_kind"), "exact-av-v1");
    assert_string_equal(str_at(rec, "verdict"), "MATCH");
    assert_string_equal(str_at(rec, "reason"), "identical");
    assert_string_equal(str_at(rec, "profile_fingerprint"), r.profile_fingerprint);
    assert_int_equal(strlen(str_at(rec, "profile_fingerprint")), 64);
    assert_string_equal(str_at(rec, "path_id"), "cdn-c");
    assert_string_equal(str_at(rec, "program_version"), "pv7");
    assert_string_equal(str_at(rec, "reference_version"), "sha256:ref");
    assert_int_equal(int_at(rec, "interval_start"), 900000);
    assert_int_equal(int_at(rec, "observed_at_ms"), now - 5000);
    assert_int_equal(int_at(rec, "observed_end_ms"), now - 4500);
    assert_true(int_at(rec, "recorded_at_ms") >= now);
    assert_true(json_is_object(json_object_get(rec, "report")));
    const json_t *fetches = json_object_get(rec, "fetches");
    assert_int_equal(json_array_size(fetches), 2);
    const json_t *f0 = json_array_get(fetches, 0), *f1 = json_array_get(fetches, 1);
    assert_int_equal(int_at(f0, "seq"), 0);
    assert_int_equal(int_at(f0, "http_status"), 200);
    assert_int_equal(int_at(f0, "content_length"), 512);
    assert_string_equal(str_at(f0, "x_cache"), "Hit from cloudfront");
    assert_string_equal(str_at(f0, "etag"), "\"abc\"");
    assert_true(json_is_array(json_object_get(f0, "redirects")));
    assert_int_equal(json_array_size(json_object_get(f0, "redirects")), 1);
    assert_int_equal(int_at(f1, "seq"), 1);
    assert_true(json_is_null(json_object_get(f1, "effective_url")));
    assert_true(json_is_null(json_object_get(f1, "error")));
    json_decref(rec);
    assert_int_equal(evidence_show(db, "no-such-id", &rec, err, sizeof err), EVIDENCE_E_NOTFOUND);
    assert_null(rec);
    evidence_close(db);
}

static void store_07_failing_fetch_leaves_no_evidence_row(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    /* the second fetch repeats seq 0: the evidence row and fetch 0 are
     * written, then the PRIMARY KEY of fetches fails inside the transaction */
    struct evidence_fetch f[2] = {{.seq = 0, .url = "http://a/x"}, {.seq = 0, .url = "http://a/y"}};
    struct evidence_record r = ev_sample_record("id-txn", evidence_now_ms());
    r.fetches = f;
    char err[256] = "";
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 0);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM fetches"), 0);
}

static void store_08_duplicate_id_is_conflict_and_keeps_original(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    struct evidence_record r = ev_sample_record("id-dup", now - MIN_MS(10));
    insert_ok(db, &r);
    r.observed_at_ms = now;
    r.observed_end_ms = now;
    r.verdict = EVIDENCE_VERDICT_MISMATCH;
    ev_refresh_report(&r);
    char err[256] = "";
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_CONFLICT);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence WHERE verdict='MATCH'"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM fetches"), 2);
}

static void store_09_incomplete_record_is_refused(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    char err[256] = "";
    struct evidence_record zero = {0};
    assert_int_equal(evidence_insert(db, &zero, err, sizeof err), EVIDENCE_E_INVALID);
    int64_t now = evidence_now_ms();
    struct evidence_record r = ev_sample_record("id-bad", now);
    r.profile_fingerprint = "";
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "profile.fingerprint"));
    r = ev_sample_record("id-bad", now);
    r.observed_end_ms = now - 1;
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    r = ev_sample_record("id-bad", now + MIN_MS(60)); /* from the future: would stay fresh */
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    r = ev_sample_record("id bad; DROP", now);
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    r = ev_sample_record("id-bad", now);
    r.report = "not json";
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    r = ev_sample_record("id-bad", now);
    r.verdict = (enum evidence_verdict)7;
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 0);
}

/* ---- import ---- */

static void store_10_import_is_idempotent_and_keeps_observation_time(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    int64_t old = now - MIN_MS(120);
    char *text = ev_sample_report("id-old", "MATCH", old, "cdn-c", "ch1", "720p", "pv7");
    import_ok(db, text, now - MIN_MS(60), 1);
    import_ok(db, text, now, 0); /* re-sent an hour later: nothing changes */
    /* the same report re-formatted is the same report */
    json_t *parsed = json_loads(text, 0, NULL);
    char *pretty = json_dumps(parsed, JSON_INDENT(4));
    import_ok(db, pretty, now, 0);
    free(pretty);
    json_decref(parsed);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM fetches"), 2);
    assert_int_equal(ev_count(t->db, "SELECT observed_at_ms FROM evidence"), old);
    assert_int_equal(ev_count(t->db, "SELECT recorded_at_ms FROM evidence"), now - MIN_MS(60));
    /* still old: a 30-minute freshness window does not see it */
    db = open_ro(t->db);
    json_t *rows = NULL;
    char err[256] = "";
    struct evidence_filter f = {.has_max_age = true, .max_age_s = 1800, .now_ms = now};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    evidence_close(db);
    free(text);
}

static void store_11_import_conflicting_report_is_refused(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    char *a = ev_sample_report("id-x", "MATCH", now - 1000, "cdn-c", "ch1", "720p", "pv7");
    char *b = ev_sample_report("id-x", "MATCH", now, "cdn-c", "ch1", "720p", "pv7");
    import_ok(db, a, now, 1);
    char err[256] = "";
    int inserted = -1;
    assert_int_equal(evidence_import_report_at(db, b, strlen(b), now, &inserted, err, sizeof err),
                     EVIDENCE_E_CONFLICT);
    assert_int_equal(inserted, 0);
    assert_non_null(strstr(err, "id-x"));
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT observed_at_ms FROM evidence"), now - 1000);
    free(a);
    free(b);
}

/* Removes one field (dotted path of at most two levels) and expects the
 * import to name it. */
static void expect_invalid_without(struct evidence_db *db, const char *outer, const char *inner)
{
    int64_t now = evidence_now_ms();
    char *text = ev_sample_report("id-inv", "UNKNOWN", now, "p", "c", "r", "v");
    json_t *root = json_loads(text, 0, NULL);
    free(text);
    if (inner)
        json_object_del(json_object_get(root, outer), inner);
    else
        json_object_del(root, outer);
    text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    char err[256] = "", want[64];
    int inserted = -1;
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    snprintf(want, sizeof want, "%s%s%s", outer, inner ? "." : "", inner ? inner : "");
    if (!strstr(err, want))
        print_error("error '%s' does not name '%s'\n", err, want);
    assert_non_null(strstr(err, want));
    free(text);
}

static void store_12_import_names_missing_required_field(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    const char *fields[][2] = {{"check_kind", NULL}, {"evidence_id", NULL}, {"verdict", NULL},
                               {"reason", NULL}, {"profile", "id"}, {"profile", "fingerprint"},
                               {"observed_at_ms", NULL}, {"observed_end_ms", NULL}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        expect_invalid_without(db, fields[i][0], fields[i][1]);
    char err[256] = "";
    int inserted = -1;
    const char *bad[] = {
        "", "[]", "{", "{\"check_kind\":\"exact-av-v1\"} trailing",
        "{\"check_kind\":\"exact-av-v1\",\"check_kind\":\"exact-av-v1\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(evidence_import_report_at(db, bad[i], strlen(bad[i]), 1, &inserted, err, sizeof err),
                         EVIDENCE_E_INVALID);
    /* a wrong verdict, a fetch without url, a string where an integer belongs */
    int64_t now = evidence_now_ms();
    char *text = ev_sample_report("id-inv", "MAYBE", now, NULL, NULL, NULL, NULL);
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "verdict"));
    free(text);
    text = ev_sample_report("id-inv", "MATCH", now, NULL, NULL, NULL, NULL);
    json_t *root = json_loads(text, 0, NULL);
    json_object_del(json_array_get(json_object_get(root, "fetches"), 1), "url");
    free(text);
    text = json_dumps(root, JSON_COMPACT);
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "fetches[1].url"));
    free(text);
    json_object_set_new(root, "observed_at_ms", json_string("yesterday"));
    text = json_dumps(root, JSON_COMPACT);
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "observed_at_ms"));
    free(text);
    json_decref(root);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 0);
}

/* ---- queries ---- */

static void store_13_max_age_counts_from_observed_not_recorded(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    /* observed long ago, recorded just now: stale */
    struct evidence_record stale = ev_sample_record("id-stale", now - MIN_MS(90));
    stale.recorded_at_ms = now;
    insert_ok(db, &stale);
    /* observed recently, recorded long ago (impossible in practice, but
     * proves which column counts): fresh */
    struct evidence_record fresh = ev_sample_record("id-fresh", now - MIN_MS(5));
    fresh.recorded_at_ms = now - MIN_MS(500);
    insert_ok(db, &fresh);
    json_t *rows = NULL;
    char err[256] = "";
    struct evidence_filter f = {.has_max_age = true, .max_age_s = 3600, .now_ms = now};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 1);
    assert_string_equal(str_at(json_array_get(rows, 0), "id"), "id-fresh");
    json_decref(rows);
    /* the boundary is inclusive: age == max age is still fresh */
    f.max_age_s = 90 * 60;
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 2);
    json_decref(rows);
    f.max_age_s = 0;
    assert_int_equal(evidence_latest(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    evidence_close(db);
}

static void insert_scoped(struct evidence_db *db, const char *id, const char *path,
                          const char *pv, enum evidence_verdict v, int64_t observed)
{
    struct evidence_record r = ev_sample_record(id, observed);
    r.path_id = path;
    r.program_version = pv;
    r.verdict = v;
    ev_refresh_report(&r);
    insert_ok(db, &r);
}

static void store_14_latest_is_newest_observation_per_scope(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    insert_scoped(db, "a1", "cdn-a", "pv7", EVIDENCE_VERDICT_MATCH, now - MIN_MS(30));
    insert_scoped(db, "a2", "cdn-a", "pv7", EVIDENCE_VERDICT_MISMATCH, now - MIN_MS(10));
    insert_scoped(db, "a3", "cdn-a", "pv7", EVIDENCE_VERDICT_MATCH, now - MIN_MS(20)); /* recorded last, observed earlier */
    insert_scoped(db, "b1", "cdn-b", "pv7", EVIDENCE_VERDICT_MATCH, now - MIN_MS(40));
    insert_scoped(db, "b2", "cdn-b", "pv8", EVIDENCE_VERDICT_UNKNOWN, now - MIN_MS(1));
    insert_scoped(db, "n1", NULL, "pv7", EVIDENCE_VERDICT_MATCH, now - MIN_MS(2));
    /* a tie on observed_at_ms resolves to the non-MATCH row */
    insert_scoped(db, "t1", "cdn-t", "pv7", EVIDENCE_VERDICT_MATCH, now - MIN_MS(3));
    insert_scoped(db, "t2", "cdn-t", "pv7", EVIDENCE_VERDICT_UNKNOWN, now - MIN_MS(3));
    evidence_close(db);

    db = open_ro(t->db);
    json_t *rows = NULL;
    char err[256] = "";
    struct evidence_filter all = {.now_ms = now};
    assert_int_equal(evidence_latest(db, &all, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 5);
    /* newest first: b2, n1, t2, a2, b1 */
    const char *want[] = {"b2", "n1", "t2", "a2", "b1"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(str_at(json_array_get(rows, i), "id"), want[i]);
    assert_null(json_object_get(json_array_get(rows, 0), "report"));
    json_decref(rows);
    struct evidence_filter one = {.path_id = "cdn-a", .now_ms = now};
    assert_int_equal(evidence_latest(db, &one, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 1);
    assert_string_equal(str_at(json_array_get(rows, 0), "verdict"), "MISMATCH");
    json_decref(rows);
    evidence_close(db);
}

static void store_15_list_filters_and_limit(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    insert_scoped(db, "a1", "cdn-a", "pv7", EVIDENCE_VERDICT_MATCH, now - MIN_MS(30));
    insert_scoped(db, "a2", "cdn-a", "pv7", EVIDENCE_VERDICT_MISMATCH, now - MIN_MS(10));
    insert_scoped(db, "b1", "cdn-b", "pv8", EVIDENCE_VERDICT_MATCH, now - MIN_MS(40));
    json_t *rows = NULL;
    char err[256] = "";
    struct evidence_filter f = {.now_ms = now};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 3);
    assert_string_equal(str_at(json_array_get(rows, 0), "id"), "a2");
    json_decref(rows);
    f = (struct evidence_filter){.verdict = "MATCH", .now_ms = now};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 2);
    json_decref(rows);
    f = (struct evidence_filter){.path_id = "cdn-a", .channel = "ch1", .rendition = "720p",
                                 .program_version = "pv7", .limit = 1, .now_ms = now};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 1);
    assert_string_equal(str_at(json_array_get(rows, 0), "id"), "a2");
    json_decref(rows);
    f = (struct evidence_filter){.program_version = "pv9", .now_ms = now};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    f = (struct evidence_filter){.verdict = "PASS", .now_ms = now};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_E_INVALID);
    assert_null(rows);
    evidence_close(db);
}

static void store_16_read_only_handle_cannot_write(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    evidence_close(db);
    db = open_ro(t->db);
    struct evidence_record r = ev_sample_record("id-ro", evidence_now_ms());
    char err[256] = "";
    assert_int_not_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_OK);
    char *text = ev_sample_report("id-ro2", "MATCH", evidence_now_ms(), "p", "c", "r", "v");
    int inserted = -1;
    assert_int_not_equal(evidence_import_report(db, text, strlen(text), &inserted, err, sizeof err),
                         EVIDENCE_OK);
    assert_int_equal(inserted, 0);
    free(text);
    evidence_close(db);
    /* and at the SQLite level: SQLITE_OPEN_READONLY refuses writes */
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open_v2(t->db, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "DELETE FROM evidence", NULL, NULL, NULL) & 0xff, SQLITE_READONLY);
    sqlite3_close(raw);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 0);
}

/* ---- concurrency ---- */

enum { WRITERS = 8, PER_WRITER = 50 };

/* One child: waits at the barrier, opens the (possibly not yet created)
 * file, inserts PER_WRITER records with two fetches each. */
/* Forks n children that start at once (a barrier pipe) and each exit with
 * child(path, i); every one must exit 0. */
static void race(int n, int (*child)(const char *path, int i), const char *path)
{
    int barrier[2];
    assert_int_equal(pipe(barrier), 0);
    pid_t pids[16];
    assert_true(n <= 16);
    fflush(NULL);
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(barrier[1]);
            char c;
            _exit(read(barrier[0], &c, 1) < 0 ? 2 : child(path, i));
        }
    }
    close(barrier[0]);
    close(barrier[1]); /* releases every child at once (read returns 0) */
    for (int i = 0; i < n; i++) {
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

static int writer_child(const char *path, int i)
{
    (void)i;
    struct evidence_db *db = NULL;
    char err[256] = "";
    if (evidence_open(path, EVIDENCE_OPEN_RW, &db, err, sizeof err) != EVIDENCE_OK) {
        fprintf(stderr, "child open: %s\n", err);
        return 3;
    }
    int failures = 0;
    for (int i = 0; i < PER_WRITER; i++) {
        char id[37];
        if (evidence_new_id(id) != EVIDENCE_OK)
            return 4;
        struct evidence_record r = ev_sample_record(id, evidence_now_ms());
        if (evidence_insert(db, &r, err, sizeof err) != EVIDENCE_OK) {
            fprintf(stderr, "child insert: %s\n", err);
            failures++;
        }
    }
    evidence_close(db);
    return failures ? 1 : 0;
}

static void store_17_concurrent_writers_all_succeed(void **state)
{
    struct ev_tmp *t = *state;
    race(WRITERS, writer_child, t->db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), WRITERS * PER_WRITER);
    assert_int_equal(ev_count(t->db, "SELECT count(DISTINCT id) FROM evidence"), WRITERS * PER_WRITER);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM fetches"), 2 * WRITERS * PER_WRITER);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
}

static void store_18_new_id_is_random_uuid_v4(void **state)
{
    (void)state;
    char a[37], b[37];
    assert_int_equal(evidence_new_id(a), EVIDENCE_OK);
    assert_int_equal(evidence_new_id(b), EVIDENCE_OK);
    assert_int_equal(strlen(a), 36);
    assert_string_not_equal(a, b);
    assert_true(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
    assert_int_equal(a[14], '4');
    assert_non_null(strchr("89ab", a[19]));
    assert_int_equal(strspn(a, "0123456789abcdef-"), 36);
}

/* Every strict prefix of a report and every single-byte corruption: never
 * a crash, never a stored row from a truncated report. */
static void store_19_import_survives_truncated_and_corrupted_reports(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    char *text = ev_sample_report("id-fz", "MATCH", now, "p", "c", "r", "v");
    size_t len = strlen(text);
    char err[256] = "";
    int inserted = -1;
    for (size_t n = 0; n < len; n++)
        assert_int_not_equal(evidence_import_report_at(db, text, n, now, &inserted, err, sizeof err),
                             EVIDENCE_OK);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 0);
    static const char junk[] = {'\0', '"', '{', '}', '[', ']', ',', ':', '\\', '9', '-', (char)0xff};
    for (size_t i = 0; i < len; i += 3) {
        char saved = text[i];
        text[i] = junk[i % sizeof junk];
        enum evidence_rc rc = evidence_import_report_at(db, text, len, now, &inserted, err, sizeof err);
        assert_true(rc == EVIDENCE_OK || rc == EVIDENCE_E_INVALID || rc == EVIDENCE_E_CONFLICT);
        text[i] = saved;
    }
    free(text);
    evidence_close(db);
}

/* ---- knowing our own file (issue 9) ---- */

extern const char evidence_schema_v1_sql[];

/* A store exactly as a version-1 build left it: schema v1, with our
 * application_id (a build of issue 9) or without one (a build before it),
 * holding one row with an empty report ('old1') and one valid row ('old2',
 * columns equal to its report, as a version-1 import wrote them). */
static void make_v1_store(const char *path, int64_t observed, bool with_id)
{
    exec_raw(path, evidence_schema_v1_sql);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO evidence (id, check_kind, verdict, reason, profile_id, profile_fingerprint,"
             " path_id, channel, rendition, observed_at_ms, observed_end_ms, recorded_at_ms, report)"
             " VALUES ('old1', 'exact-av-v1', 'MATCH', 'identical', 'exact-av-v1', 'ab12', 'cdn-a',"
             " 'ch1', '720p', %lld, %lld, %lld, '{}'); PRAGMA user_version=1; PRAGMA application_id=%d;",
             (long long)observed + 1, (long long)observed + 1, (long long)observed + 1,
             with_id ? DBFILE_APPID_EVIDENCE : 0);
    exec_raw(path, sql);
    char *text = ev_sample_report("old2", "MATCH", observed, "cdn-a", "ch1", "360p", "pv7");
    json_t *rep = json_loads(text, 0, NULL);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
        "INSERT INTO evidence (id, check_kind, verdict, reason, profile_id, profile_fingerprint,"
        " path_id, channel, rendition, program_version, reference_version, object, interval_start,"
        " interval_end, observed_at_ms, observed_end_ms, recorded_at_ms, report) VALUES"
        " ('old2', 'exact-av-v1', 'MATCH', 'identical', 'exact-av-v1', ?1, 'cdn-a', 'ch1', '360p',"
        " 'pv7', 'sha256:ref', ?2, 900000, 1440000, ?3, ?4, ?3, ?5)", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, str_at(json_object_get(rep, "profile"), "fingerprint"), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, str_at(json_object_get(rep, "candidate"), "object"), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, observed);
    sqlite3_bind_int64(st, 4, int_at(rep, "observed_end_ms"));
    sqlite3_bind_text(st, 5, text, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    json_decref(rep);
    free(text);
}

/* SHA-256 of a whole file (a foreign file must stay byte-identical). */
static void file_digest(const char *path, char out[65])
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    evidence_sha256_hex(buf, n, out);
}

static bool side_file(const char *path, const char *suffix)
{
    char p[256];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return access(p, F_OK) == 0;
}

static void store_20_application_id_and_foreign_files_untouched(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "PRAGMA application_id"), DBFILE_APPID_EVIDENCE);
    /* foreign files are refused before anything is written: same digest,
     * still in rollback-journal mode, no WAL or index file made */
    static const struct {
        const char *sql, *why;
    } foreign[] = {
        {"CREATE TABLE t(x); INSERT INTO t VALUES (1);", "not an evidence store"},
        {"CREATE TABLE t(x); PRAGMA application_id = 305419896;", "another application"},
        {"CREATE TABLE evidence(id TEXT); PRAGMA user_version = 1;", "not an evidence store"},
        /* only a v1 store can predate application_id: v2 tables without it are not ours */
        {"CREATE TABLE evidence(id TEXT); CREATE TABLE fetches(x); CREATE TABLE probes(x);"
         " PRAGMA user_version = 2;", "not an evidence store"},
        {"CREATE TABLE decisions(x); PRAGMA application_id = 1398031188;", "a stepctl control.db"},
    };
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        char path[160], d1[65], d2[65], err[512] = "";
        snprintf(path, sizeof path, "%s/foreign%zu.db", t->dir, i);
        exec_raw(path, foreign[i].sql);
        long long objects = ev_count(path, "SELECT count(*) FROM sqlite_master");
        file_digest(path, d1);
        for (int mode = 0; mode < 2; mode++) {
            assert_int_equal(evidence_open(path, mode ? EVIDENCE_OPEN_RW : EVIDENCE_OPEN_RO, &db,
                                           err, sizeof err),
                             EVIDENCE_E_OPEN);
            if (!strstr(err, foreign[i].why))
                fail_msg("%s: \"%s\" does not say \"%s\"", foreign[i].sql, err, foreign[i].why);
        }
        file_digest(path, d2);
        assert_string_equal(d1, d2);
        assert_false(side_file(path, "-wal") || side_file(path, "-shm") || side_file(path, "-journal"));
        assert_int_equal(ev_count(path, "SELECT count(*) FROM sqlite_master"), objects);
    }
}

/* A store of schema v1 made before application_id existed: read as it is
 * by readers (nothing written), adopted by the next writer (and migrated
 * to v2 in the same transaction), rows kept. */
static void store_21_store_from_before_application_id_is_adopted(void **state)
{
    struct ev_tmp *t = *state;
    make_v1_store(t->db, evidence_now_ms(), false);
    char d1[65], d2[65], err[256] = "";
    file_digest(t->db, d1);
    struct evidence_db *db = open_ro(t->db);
    json_t *rows = NULL;
    struct evidence_filter f = {0};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 2);
    json_decref(rows);
    evidence_close(db);
    file_digest(t->db, d2);
    assert_string_equal(d1, d2);
    assert_int_equal(ev_count(t->db, "PRAGMA application_id"), 0);
    db = ev_open_rw(t->db);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "PRAGMA application_id"), DBFILE_APPID_EVIDENCE);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 2);
}

/* Changes one field of a valid report (dotted path) and expects import to
 * refuse it naming want. */
static void forged(struct evidence_db *db, const char *verdict, const char *dotted, json_t *value,
                   const char *want)
{
    int64_t now = evidence_now_ms();
    char *text = ev_sample_report("id-forged", verdict, now, "p", "c", "r", "v");
    json_t *root = json_loads(text, 0, NULL);
    free(text);
    char path[128];
    snprintf(path, sizeof path, "%s", dotted);
    json_t *o = root;
    char *key = path, *dot;
    while ((dot = strchr(key, '.'))) {
        *dot = '\0';
        o = json_is_array(o) ? json_array_get(o, (size_t)atoi(key)) : json_object_get(o, key);
        key = dot + 1;
    }
    if (value)
        json_object_set_new(o, key, value);
    else
        json_object_del(o, key);
    text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    char err[512] = "";
    int inserted = -1;
    enum evidence_rc rc = evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err);
    free(text);
    if (rc != EVIDENCE_E_INVALID || !strstr(err, want))
        fail_msg("%s %s: rc %d, error \"%s\" does not name \"%s\"", verdict, dotted, rc, err, want);
    assert_int_equal(inserted, 0);
}

/* What exactav verify could not have produced is refused, the first broken
 * rule named: the issue's two reports, then one rule at a time. */
static void store_22_import_refuses_what_verify_could_not_have_produced(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    /* 1. MATCH with reason connect_error, video UNKNOWN, nothing compared */
    int64_t now = evidence_now_ms();
    char *text = ev_sample_report("id-1", "UNKNOWN", now, "p", "c", "r", "v");
    json_t *root = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(root, "verdict", json_string("MATCH"));
    json_object_set_new(root, "reason", json_string("connect_error"));
    json_object_set_new(json_object_get(root, "video"), "compared_frames", json_integer(0));
    text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    char err[512] = "";
    int inserted = -1;
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "verdict: MATCH does not follow from the tracks"));
    free(text);
    /* 2. only the fields import needs, with profile.fingerprint "x" */
    const char minimal[] = "{\"check_kind\":\"exact-av-v1\",\"evidence_id\":\"id-2\",\"verdict\":"
                           "\"MATCH\",\"reason\":\"identical\",\"profile\":{\"id\":\"exact-av-v1\","
                           "\"version\":1,\"fingerprint\":\"x\"},\"observed_at_ms\":1000,"
                           "\"observed_end_ms\":1000}";
    assert_int_equal(evidence_import_report_at(db, minimal, strlen(minimal), now, &inserted, err,
                                               sizeof err), EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "profile.fingerprint: must be 64 lowercase hex digits"));
    /* 3. one rule at a time */
    forged(db, "MATCH", "profile.fingerprint", json_string("0000000000000000000000000000000000000000000000000000000000000000"), "profile.fingerprint: is not the one recomputed");
    forged(db, "MATCH", "profile.runtime.arch", json_string("aarch64"), "profile.fingerprint: is not the one recomputed");
    forged(db, "MATCH", "profile.runtime.libavcodec", json_string("60.3.100"), "profile.runtime: differs from the profile's pins");
    forged(db, "MATCH", "profile.document", NULL, "profile.document: required");
    forged(db, "MATCH", "profile.document.id", json_string("other"), "profile.document: is not profile exact-av-v1");
    forged(db, "MATCH", "video.compared_frames", json_integer(149), "video.compared_frames: a MATCH compares everything");
    forged(db, "MATCH", "video.compared_frames", json_integer(151), "video.compared_frames: 151 compared");
    forged(db, "MATCH", "audio.candidate_samples", json_integer(287999), "audio.candidate_samples: a MATCH compares everything");
    forged(db, "MATCH", "video.reason", json_string("video_pixels"), "video.reason: a MATCH has reason identical");
    forged(db, "MATCH", "video.unconfirmed_differences", json_true(), "video.unconfirmed_differences");
    forged(db, "MATCH", "video", NULL, "video: required object");
    forged(db, "MATCH", "audio.verdict", json_string("UNKNOWN"), "verdict: MATCH does not follow");
    forged(db, "MATCH", "reason", json_string("match"), "reason: match is not the reason the lattice carries (identical)");
    forged(db, "MATCH", "candidate.delivery_failure", json_pack("{s:s,s:s}", "reason", "http_error", "detail", "404"), "candidate.delivery_failure: a MATCH cannot have a failed delivery");
    forged(db, "MATCH", "candidate.transport_complete", json_false(), "candidate.transport_complete");
    forged(db, "MATCH", "reference.video.corrupt_frames", json_true(), "reference.video.corrupt_frames");
    forged(db, "MATCH", "fetches.1.error", json_string("short body"), "fetches[1].error: a MATCH cannot hold a failed request");
    forged(db, "MATCH", "fetches.1.seq", json_integer(7), "fetches[1].seq");
    forged(db, "MATCH", "candidate", NULL, "candidate: required object");
    forged(db, "MISMATCH", "video.first_mismatch", json_null(), "video.first_mismatch: a MISMATCH names its first difference");
    forged(db, "MISMATCH", "video.first_mismatch.plane", json_string("missing"), "video.reason: video_pixels does not match the first difference (video_missing_frames)");
    forged(db, "MISMATCH", "verdict", json_string("UNKNOWN"), "verdict: UNKNOWN does not follow");
    forged(db, "UNKNOWN", "video.first_mismatch", json_pack("{s:s}", "plane", "Y"), "video.first_mismatch: only a MISMATCH");
    forged(db, "UNKNOWN", "reason", json_string("identical"), "reason: identical is not the reason");
    /* a MATCH over nothing is UNKNOWN empty_interval */
    text = ev_sample_report("id-3", "MATCH", now, "p", "c", "r", "v");
    root = json_loads(text, 0, NULL);
    free(text);
    json_t *v = json_object_get(root, "video"), *a = json_object_get(root, "audio");
    json_object_set_new(v, "reference_frames", json_integer(0));
    json_object_set_new(v, "candidate_frames", json_integer(0));
    json_object_set_new(v, "compared_frames", json_integer(0));
    json_object_set_new(a, "reference_samples", json_integer(0));
    json_object_set_new(a, "candidate_samples", json_integer(0));
    text = json_dumps(root, JSON_COMPACT);
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "the lattice gives UNKNOWN"));
    free(text);
    json_object_set_new(root, "verdict", json_string("UNKNOWN"));
    json_object_set_new(root, "reason", json_string("empty_interval"));
    text = json_dumps(root, JSON_COMPACT);
    import_ok(db, text, now, 1); /* what verify writes for an empty interval */
    free(text);
    json_decref(root);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 1);
}

/* "Newest" is one rule: evidence_newest (SQL), latest (SQL) and
 * evidence_row_newer (C) pick the same row, ties included. */
static void store_23_newest_is_one_rule(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    uint64_t rng = 12345;
    int64_t base = evidence_now_ms() - MIN_MS(60);
    struct evidence_row rows[40];
    static const enum evidence_verdict verdicts[] = {EVIDENCE_VERDICT_MATCH,
                                                     EVIDENCE_VERDICT_MISMATCH,
                                                     EVIDENCE_VERDICT_UNKNOWN};
    static char ids[40][16];
    for (int i = 0; i < 40; i++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        snprintf(ids[i], sizeof ids[i], "r%02d", (int)((rng >> 33) % 100)); /* ids in random order */
        ids[i][3] = (char)('a' + i % 26), ids[i][4] = (char)('a' + i / 26), ids[i][5] = '\0';
        struct evidence_record r = ev_sample_record(ids[i], base + (int64_t)((rng >> 40) % 4) * 1000);
        r.verdict = verdicts[(rng >> 20) % 3];
        r.recorded_at_ms = base + MIN_MS(1) + (int64_t)((rng >> 44) % 3);
        ev_refresh_report(&r);
        insert_ok(db, &r);
        memset(&rows[i], 0, sizeof rows[i]);
        strcpy(rows[i].id, ids[i]); /* 5 characters */
        rows[i].verdict = r.verdict;
        rows[i].observed_at_ms = r.observed_at_ms;
        rows[i].recorded_at_ms = r.recorded_at_ms;
    }
    const struct evidence_row *best = &rows[0];
    for (int i = 1; i < 40; i++)
        if (evidence_row_newer(&rows[i], best))
            best = &rows[i];
    struct evidence_scope scope = {"cdn-c", "ch1", "720p", "pv7"};
    struct evidence_rows got = {0};
    char err[256] = "";
    assert_int_equal(evidence_newest(db, &scope, 1, &got, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(got.n, 1);
    assert_string_equal(got.rows[0].id, best->id);
    assert_false(got.rows[0].malformed);
    evidence_rows_free(&got);
    json_t *latest = NULL;
    struct evidence_filter f = {0};
    assert_int_equal(evidence_latest(db, &f, &latest, err, sizeof err), EVIDENCE_OK);
    assert_string_equal(json_string_value(json_object_get(json_array_get(latest, 0), "id")), best->id);
    json_decref(latest);
    evidence_close(db);
}

/* ---- schema v2: media_sequence and probes ---- */

/* Schema v2 readers read v1 as it is; the first writer migrates it forward
 * (and adopts a store from before application_id) in one transaction. */
static void store_24_v1_store_readable_then_migrated_forward(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    for (int with_id = 0; with_id < 2; with_id++) {
        char path[160], err[256] = "";
        snprintf(path, sizeof path, "%s/v1-%d.db", t->dir, with_id);
        make_v1_store(path, now - 1000, with_id);
        /* a reader can neither migrate nor refuse a version-1 store: it reads it */
        struct evidence_db *db = open_ro(path);
        assert_int_equal(evidence_schema_version(db), 1);
        json_t *rows = NULL, *probe = NULL;
        struct evidence_filter f = {.now_ms = now};
        assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
        assert_int_equal(json_array_size(rows), 2);
        assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "media_sequence")));
        assert_true(json_is_null(json_object_get(json_array_get(rows, 1), "media_sequence")));
        json_decref(rows);
        f = (struct evidence_filter){.now_ms = now, .has_media_sequence = true, .media_sequence = 0};
        assert_int_equal(evidence_latest(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
        assert_int_equal(json_array_size(rows), 0);
        json_decref(rows);
        assert_int_equal(evidence_show(db, "old1", &rows, err, sizeof err), EVIDENCE_OK);
        json_decref(rows);
        assert_int_equal(evidence_probe_newest(db, "cdn-a", NULL, NULL, now, &probe, err, sizeof err), EVIDENCE_OK);
        assert_null(probe);
        /* stepctl's query on v1: the valid row applies, the empty report never does */
        struct evidence_scope scope[2] = {{"cdn-a", "ch1", "360p", "pv7"}, {"cdn-a", "ch1", "720p", "pv7"}};
        struct evidence_rows got = {0};
        assert_int_equal(evidence_newest(db, scope, 2, &got, err, sizeof err), EVIDENCE_OK);
        assert_int_equal(got.n, 2);
        assert_string_equal(got.rows[0].id, "old2");
        if (got.rows[0].malformed)
            fail_msg("old2 is malformed: %s", got.rows[0].why);
        assert_string_equal(got.rows[1].id, "old1");
        assert_true(got.rows[1].malformed);
        evidence_rows_free(&got);
        /* and `stepctl next`'s query (evidence_observed_after) on v1 */
        struct evidence_since q = {scope[0], "exact-av-v1", now - 60000, 10, NULL};
        assert_int_equal(evidence_observed_after(db, &q, &got, err, sizeof err), EVIDENCE_OK);
        assert_int_equal(got.n, 1);
        assert_string_equal(got.rows[0].id, "old2");
        assert_false(got.rows[0].malformed);
        assert_int_equal(got.rows[0].video, EVIDENCE_VERDICT_MATCH);
        evidence_rows_free(&got);
        evidence_close(db);
        assert_int_equal(ev_count(path, "PRAGMA user_version"), 1); /* untouched by the reader */
        assert_int_equal(ev_count(path, "PRAGMA application_id"), with_id ? DBFILE_APPID_EVIDENCE : 0);
        /* the first writer migrates forward in one transaction, keeping every row */
        db = ev_open_rw(path);
        assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION);
        evidence_close(db);
        assert_int_equal(ev_count(path, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
        assert_int_equal(ev_count(path, "SELECT count(*) FROM sqlite_master WHERE name = 'reference_decodes'"), 1);
        assert_int_equal(ev_count(path, "PRAGMA application_id"), DBFILE_APPID_EVIDENCE);
        assert_int_equal(ev_count(path, "SELECT count(*) FROM evidence WHERE media_sequence IS NULL"), 2);
        assert_int_equal(ev_count(path, "SELECT count(*) FROM sqlite_master WHERE name IN "
                                        "('probes', 'probes_scope', 'evidence_media_sequence')"), 3);
        /* and the valid row is still valid evidence under schema v2 */
        db = open_ro(path);
        assert_int_equal(evidence_newest(db, scope, 1, &got, err, sizeof err), EVIDENCE_OK);
        assert_int_equal(got.n, 1);
        assert_false(got.rows[0].malformed);
        evidence_rows_free(&got);
        evidence_close(db);
    }
    /* a failed migration leaves version 1 intact (application_id included):
     * a column that already exists */
    struct ev_tmp t2;
    struct evidence_db *db = NULL;
    char err[256] = "";
    assert_int_equal(ev_tmp_make(&t2), 0);
    make_v1_store(t2.db, now, false);
    exec_raw(t2.db, "ALTER TABLE evidence ADD COLUMN media_sequence TEXT");
    assert_int_equal(evidence_open(t2.db, EVIDENCE_OPEN_RW, &db, err, sizeof err), EVIDENCE_E_INTERNAL);
    assert_non_null(strstr(err, "v2"));
    assert_int_equal(ev_count(t2.db, "PRAGMA user_version"), 1);
    assert_int_equal(ev_count(t2.db, "PRAGMA application_id"), 0);
    assert_int_equal(ev_count(t2.db, "SELECT count(*) FROM sqlite_master WHERE name = 'probes'"), 0);
    ev_tmp_remove(&t2);
}

/* A sample report with a top-level media_sequence (the canary's field). */
static char *report_with_seq(const char *id, int64_t observed, json_t *seq)
{
    char *text = ev_sample_report(id, "MATCH", observed, "cdn-a", "ch1", "360p", "pv7");
    json_t *r = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(r, "media_sequence", seq);
    text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    return text;
}

static void store_25_media_sequence_imported_and_filtered(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    for (int i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof id, "s%d", i);
        char *text = report_with_seq(id, now - 1000 * (3 - i), json_integer(40 + i));
        import_ok(db, text, now, 1);
        free(text);
    }
    char *text = report_with_seq("none", now, json_null());
    import_ok(db, text, now, 1);
    free(text);
    char err[256] = "";
    int inserted = 0;
    text = report_with_seq("bad", now, json_string("41"));
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "media_sequence"));
    free(text);
    text = report_with_seq("neg", now, json_integer(-1));
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "media_sequence"));
    free(text);
    json_t *rows = NULL;
    struct evidence_filter f = {.now_ms = now, .has_media_sequence = true, .media_sequence = 41};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 1);
    assert_string_equal(str_at(json_array_get(rows, 0), "id"), "s1");
    assert_int_equal(int_at(json_array_get(rows, 0), "media_sequence"), 41);
    json_decref(rows);
    f.media_sequence = -2;
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_E_INVALID);
    struct evidence_record r = ev_sample_record("direct", now);
    r.media_sequence = (struct evidence_int){.present = true, .value = 7};
    /* the column says what the report says (the rules of a valid row) */
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "media_sequence: the column differs from the report"));
    ev_refresh_report(&r);
    insert_ok(db, &r);
    assert_int_equal(ev_count(t->db, "SELECT media_sequence FROM evidence WHERE id = 'direct'"), 7);
    r.id = "direct-neg";
    r.media_sequence.value = -7;
    ev_refresh_report(&r);
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "media_sequence"));
    /* an edited column is never applicable to stepctl either */
    exec_raw(t->db, "UPDATE evidence SET media_sequence = 8 WHERE id = 'direct'");
    struct evidence_scope scope = {"cdn-c", "ch1", "720p", "pv7"};
    struct evidence_rows got = {0};
    assert_int_equal(evidence_newest(db, &scope, 1, &got, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(got.n, 1);
    assert_string_equal(got.rows[0].id, "direct");
    assert_true(got.rows[0].malformed);
    assert_non_null(strstr(got.rows[0].why, "media_sequence"));
    evidence_rows_free(&got);
    evidence_close(db);
}

static struct evidence_probe sample_probe(const char *id, const char *path, enum evidence_probe_status st,
                                          int64_t observed)
{
    return (struct evidence_probe){
        .id = id, .path_id = path, .channel = "ch1", .rendition = "360p",
        .object = "http://cdn-a.example/live/360p.m3u8?Signature=REDACTED", .status = st,
        .reason = st == EVIDENCE_PROBE_PASS ? "ok" : "download_http_error",
        .observed_at_ms = observed, .observed_end_ms = observed + 40,
        .playlist_status = {true, 200}, .media_sequence = {true, 12},
        .segment = "http://cdn-a.example/live/s12.ts", .tcp_connect_ms = {true, 1},
        .header_status = {true, 200}, .header_ttfb_ms = {true, 3},
        .download_status = {true, st == EVIDENCE_PROBE_PASS ? 200 : 503},
        .download_bytes = {true, 1000}, .download_ms = {true, 9},
    };
}

static void store_26_probes_stored_and_newest_picked(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    char err[256] = "";
    struct evidence_probe p = sample_probe("p1", "cdn-a", EVIDENCE_PROBE_PASS, now - 10000);
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_OK);
    p = sample_probe("p2", "cdn-a", EVIDENCE_PROBE_VIOLATION, now - 5000);
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_OK);
    p = sample_probe("p3", "cdn-a", EVIDENCE_PROBE_PASS, now - 5000); /* same time: VIOLATION wins */
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_OK);
    p = sample_probe("p4", "cdn-a", EVIDENCE_PROBE_PASS, now + 1000); /* after the decision time */
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_OK);
    p = sample_probe("q1", "cdn-b", EVIDENCE_PROBE_UNKNOWN, now - 1000);
    p.channel = NULL;
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_OK);
    /* refused: duplicate id, missing fields, zero time, bad status */
    p = sample_probe("p1", "cdn-a", EVIDENCE_PROBE_PASS, now);
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_E_CONFLICT);
    p = sample_probe("x1", NULL, EVIDENCE_PROBE_PASS, now);
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "path_id"));
    p = sample_probe("x2", "cdn-a", EVIDENCE_PROBE_PASS, 0);
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_E_INVALID);
    p = sample_probe("x3", "cdn-a", (enum evidence_probe_status)7, now);
    assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_E_INVALID);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM probes"), 5);

    db = open_ro(t->db);
    json_t *row = NULL;
    assert_int_equal(evidence_probe_newest(db, "cdn-a", "ch1", "360p", now, &row, err, sizeof err), EVIDENCE_OK);
    assert_string_equal(str_at(row, "id"), "p2");
    assert_string_equal(str_at(row, "status"), "VIOLATION");
    assert_int_equal(int_at(row, "download_status"), 503);
    json_decref(row);
    assert_int_equal(evidence_probe_newest(db, "cdn-a", "ch1", "360p", now - 6000, &row, err, sizeof err), EVIDENCE_OK);
    assert_string_equal(str_at(row, "id"), "p1");
    json_decref(row);
    assert_int_equal(evidence_probe_newest(db, "cdn-a", "ch1", "720p", now, &row, err, sizeof err), EVIDENCE_OK);
    assert_null(row);
    assert_int_equal(evidence_probe_newest(db, "cdn-b", NULL, "360p", now, &row, err, sizeof err), EVIDENCE_OK);
    assert_string_equal(str_at(row, "id"), "q1");
    json_decref(row);
    /* a read-only handle cannot write probes */
    p = sample_probe("ro", "cdn-a", EVIDENCE_PROBE_PASS, now);
    assert_int_not_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_OK);
    evidence_close(db);
    enum evidence_probe_status st;
    assert_true(evidence_probe_status_parse("VIOLATION", &st) && st == EVIDENCE_PROBE_VIOLATION);
    assert_false(evidence_probe_status_parse("MATCH", &st));
}

/* An UNKNOWN needs nothing beyond what shows it is UNKNOWN: a check that
 * never decoded (the canary's playlist_stalled: no interval, sides without
 * decode flags, no fetch, audio null) is valid evidence, and stepctl reads
 * it as a valid UNKNOWN.  A MATCH still needs everything: without its
 * interval, or with the sides of such a report, it is refused. */
static void store_27_unknown_without_a_decode_is_valid_match_still_needs_everything(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    char *text = ev_sample_report("id-stalled", "UNKNOWN", now, "cdn-c", "ch1", "720p", "pv7");
    json_t *root = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(root, "reason", json_string("playlist_stalled"));
    json_object_set_new(root, "interval", json_pack("{s:i}", "time_offset", 0));
    json_object_set_new(root, "video", json_pack("{s:s, s:s, s:i, s:i, s:i, s:n, s:b}", "verdict", "UNKNOWN",
                                                 "reason", "playlist_stalled", "reference_frames", 0,
                                                 "candidate_frames", 0, "compared_frames", 0,
                                                 "first_mismatch", "unconfirmed_differences", 0));
    json_object_set_new(root, "audio", json_null());
    json_object_set_new(root, "reference", json_pack("{s:n}", "object"));
    json_object_set_new(root, "candidate", json_pack("{s:s, s:{s:s, s:s}}", "object",
                                                     "https://cdn-c.example/live/index.m3u8?Signature=REDACTED",
                                                     "delivery_failure", "reason", "playlist_stalled",
                                                     "detail", "media sequence 12 for 18000 ms"));
    json_object_set_new(root, "fetches", json_array());
    json_object_set_new(root, "media_sequence", json_integer(12));
    text = json_dumps(root, JSON_COMPACT);
    import_ok(db, text, now, 1);
    free(text);
    struct evidence_scope scope = {"cdn-c", "ch1", "720p", "pv7"};
    struct evidence_rows got = {0};
    char err[512] = "";
    assert_int_equal(evidence_newest(db, &scope, 1, &got, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(got.n, 1);
    if (got.rows[0].malformed)
        fail_msg("a no-decode UNKNOWN read as malformed: %s", got.rows[0].why);
    assert_int_equal(got.rows[0].verdict, EVIDENCE_VERDICT_UNKNOWN);
    evidence_rows_free(&got);
    /* the same shape can never be a MATCH: the lattice over nothing is UNKNOWN */
    json_object_set_new(root, "evidence_id", json_string("id-stalled-match"));
    json_object_set_new(root, "verdict", json_string("MATCH"));
    json_object_set_new(root, "reason", json_string("identical"));
    json_object_set_new(json_object_get(root, "video"), "verdict", json_string("MATCH"));
    json_object_set_new(json_object_get(root, "video"), "reason", json_string("identical"));
    json_object_del(json_object_get(root, "candidate"), "delivery_failure");
    text = json_dumps(root, JSON_COMPACT);
    int inserted = -1;
    assert_int_equal(evidence_import_report_at(db, text, strlen(text), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "the lattice gives UNKNOWN"));
    free(text);
    json_decref(root);
    /* and a MATCH without the interval it compared is refused */
    forged(db, "MATCH", "interval.start", NULL, "interval: a MATCH names the interval it compared");
    forged(db, "MATCH", "interval", json_null(), "interval: a MATCH names the interval it compared");
    forged(db, "MATCH", "reference.video", NULL, "reference.video.decoder_error");
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 1);
}

/* The rows of one step (evidence_observed_after, what `stepctl next` reads):
 * only the scope and profile, only observed after the time, newest first by
 * the one rule, every row checked (a tampered row comes back malformed with
 * the rule, never valid), track verdicts of valid rows, and an older valid
 * MISMATCH beyond the limit is still returned. */
static void store_28_observed_after_is_the_step_and_checks_every_row(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t t0 = evidence_now_ms() - MIN_MS(30);
    struct {
        const char *id;
        int64_t at;
        enum evidence_verdict v;
        const char *path, *profile;
    } in[] = {
        {"pre", t0 - 1000, EVIDENCE_VERDICT_MATCH, "cdn-c", NULL},      /* before: never */
        {"at", t0, EVIDENCE_VERDICT_MATCH, "cdn-c", NULL},              /* not after */
        {"bad", t0 + 1000, EVIDENCE_VERDICT_MISMATCH, "cdn-c", NULL},   /* oldest of the step */
        {"m1", t0 + 2000, EVIDENCE_VERDICT_MATCH, "cdn-c", NULL},
        {"u1", t0 + 3000, EVIDENCE_VERDICT_UNKNOWN, "cdn-c", NULL},
        {"m2", t0 + 4000, EVIDENCE_VERDICT_MATCH, "cdn-c", NULL},
        {"other-path", t0 + 5000, EVIDENCE_VERDICT_MATCH, "cdn-d", NULL},
        {"forged", t0 + 6000, EVIDENCE_VERDICT_MATCH, "cdn-c", NULL},   /* tampered below */
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        struct evidence_record r = ev_sample_record(in[i].id, in[i].at);
        r.verdict = in[i].v;
        r.path_id = in[i].path;
        ev_refresh_report(&r);
        insert_ok(db, &r);
    }
    evidence_close(db);
    /* A MATCH row edited to say MISMATCH: the column no longer equals its report. */
    exec_raw(t->db, "UPDATE evidence SET verdict = 'MISMATCH' WHERE id = 'forged'");
    db = open_ro(t->db);
    struct evidence_since q = {{"cdn-c", "ch1", "720p", "pv7"}, "exact-av-v1", t0, 10, NULL};
    struct evidence_rows got = {0};
    char err[256] = "";
    assert_int_equal(evidence_observed_after(db, &q, &got, err, sizeof err), EVIDENCE_OK);
    const char *want[] = {"forged", "m2", "u1", "m1", "bad"};
    assert_int_equal(got.n, 5);
    for (size_t i = 0; i < got.n; i++) {
        assert_string_equal(got.rows[i].id, want[i]);
        assert_true(i == 0 || evidence_row_newer(&got.rows[i - 1], &got.rows[i]));
    }
    assert_true(got.rows[0].malformed); /* never valid, however new */
    assert_non_null(strstr(got.rows[0].why, "verdict"));
    assert_int_equal(got.rows[0].video, EVIDENCE_VERDICT_UNKNOWN);
    assert_false(got.rows[1].malformed);
    assert_int_equal(got.rows[1].video, EVIDENCE_VERDICT_MATCH);
    assert_int_equal(got.rows[1].audio, EVIDENCE_VERDICT_MATCH);
    assert_int_equal(got.rows[4].verdict, EVIDENCE_VERDICT_MISMATCH);
    assert_int_equal(got.rows[4].video, EVIDENCE_VERDICT_MISMATCH);
    evidence_rows_free(&got);
    /* Limited to the two newest, which hold no valid MISMATCH (the forged
     * one is not one): the newest valid MISMATCH comes as well. */
    q.limit = 2;
    assert_int_equal(evidence_observed_after(db, &q, &got, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(got.n, 3);
    assert_string_equal(got.rows[0].id, "forged");
    assert_string_equal(got.rows[1].id, "m2");
    assert_string_equal(got.rows[2].id, "bad");
    evidence_rows_free(&got);
    /* Another profile, or nothing after the time: no rows. */
    q.limit = 10;
    q.profile_id = "another-profile";
    assert_int_equal(evidence_observed_after(db, &q, &got, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(got.n, 0);
    evidence_rows_free(&got);
    q.profile_id = "exact-av-v1";
    q.after_ms = t0 + 6000;
    assert_int_equal(evidence_observed_after(db, &q, &got, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(got.n, 0);
    evidence_rows_free(&got);
    evidence_close(db);
}

/* One first opener: opens the (maybe new) store a little after the others
 * and writes one row.  0, or why it failed. */
static int first_opener(const char *path, int i)
{
    usleep((useconds_t)(i * 300)); /* spread over the creation */
    struct evidence_db *db = NULL;
    char err[256] = "", id[37];
    if (evidence_open(path, EVIDENCE_OPEN_RW, &db, err, sizeof err) != EVIDENCE_OK) {
        fprintf(stderr, "opener %d: %s\n", i, err);
        return 3;
    }
    int ok = evidence_new_id(id) == EVIDENCE_OK;
    struct evidence_record r = ev_sample_record(id, evidence_now_ms());
    ok = ok && evidence_insert(db, &r, err, sizeof err) == EVIDENCE_OK;
    evidence_close(db);
    return ok ? 0 : 4;
}

/* Many first openers of one new file at once, round after round: each one
 * finds the store its own (never "not an evidence store" because another
 * created it between two reads of its classification) and writes its row. */
static void store_29_concurrent_first_openers_all_find_their_store(void **state)
{
    struct ev_tmp *t = *state;
    enum { ROUNDS = 25, OPENERS = 6 };
    for (int round = 0; round < ROUNDS; round++) {
        char path[160];
        snprintf(path, sizeof path, "%s/first%02d.db", t->dir, round);
        race(OPENERS, first_opener, path);
        assert_int_equal(ev_count(path, "SELECT count(*) FROM evidence"), OPENERS);
    }
}

/* ---- schema v3: stored clean decodes of references ---- */

static const char DIGEST_A[] = "9dea83aa5ee945d82bd6dc1547efd7ae0dccfe62acfce880a02674153dbfc7f1";
static const char FPR_A[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/* A clean decode is stored once per key and found only by its whole key
 * (decoder input, profile fingerprint, interval); a v2 store is migrated
 * forward keeping its rows, and read as having no stored decodes; a stored
 * row that breaks the table's rules is refused, never used. */
static void store_30_reference_decodes_keyed_by_input_profile_and_interval(void **state)
{
    struct ev_tmp *t = *state;
    char err[256] = "";
    struct evidence_db *db = ev_open_rw(t->db);
    json_t *side = json_pack("{s:b, s:I}", "opened", 1, "bytes", (json_int_t)2497204);
    struct evidence_decode_key k = {DIGEST_A, FPR_A, 900000, 1440000};
    struct evidence_decode d = {.frames = 180, .samples = 288768, .reference = side,
                                .evidence_id = "a14024ee-ed5a-4e89-ab08-97d14a0017a9"};
    struct evidence_decode got;
    assert_int_equal(evidence_decode_get(db, &k, &got, err, sizeof err), EVIDENCE_E_NOTFOUND);
    assert_int_equal(evidence_decode_put(db, &k, &d, err, sizeof err), EVIDENCE_OK);
    d.frames = 7; /* the same key again keeps the first row */
    assert_int_equal(evidence_decode_put(db, &k, &d, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(evidence_decode_get(db, &k, &got, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(got.frames, 180);
    assert_int_equal(got.samples, 288768);
    assert_true(json_equal(got.reference, side));
    assert_true(got.decoded_at_ms > 0);
    json_decref(got.reference);
    /* any other part of the key finds nothing */
    struct evidence_decode_key other[] = {
        {"8dea83aa5ee945d82bd6dc1547efd7ae0dccfe62acfce880a02674153dbfc7f1", FPR_A, 900000, 1440000},
        {DIGEST_A, "10112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 900000, 1440000},
        {DIGEST_A, FPR_A, 900001, 1440000},
        {DIGEST_A, FPR_A, 900000, 1439999},
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        assert_int_equal(evidence_decode_get(db, &other[i], &got, err, sizeof err), EVIDENCE_E_NOTFOUND);
    /* malformed keys and values are refused, nothing stored */
    struct evidence_decode_key bad = {"9DEA", FPR_A, 0, 1};
    assert_int_equal(evidence_decode_put(db, &bad, &d, err, sizeof err), EVIDENCE_E_INVALID);
    bad = (struct evidence_decode_key){DIGEST_A, FPR_A, 2, 1};
    assert_int_equal(evidence_decode_get(db, &bad, &got, err, sizeof err), EVIDENCE_E_INVALID);
    struct evidence_decode neg = {.frames = -1, .reference = side};
    k.interval_end = 1;
    k.interval_start = 0;
    assert_int_equal(evidence_decode_put(db, &k, &neg, err, sizeof err), EVIDENCE_E_INVALID);
    struct evidence_decode noref = {.frames = 1};
    assert_int_equal(evidence_decode_put(db, &k, &noref, err, sizeof err), EVIDENCE_E_INVALID);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM reference_decodes"), 1);
    evidence_close(db);
    /* a row someone edited into something else is refused when read */
    exec_raw(t->db, "UPDATE reference_decodes SET reference = '[1'");
    db = open_ro(t->db);
    k = (struct evidence_decode_key){DIGEST_A, FPR_A, 900000, 1440000};
    assert_int_equal(evidence_decode_get(db, &k, &got, err, sizeof err), EVIDENCE_E_INVALID);
    assert_null(got.reference);
    evidence_close(db);
    /* a version-2 store: read as having none, refused for writing read-only,
     * migrated forward by the first writer with its rows kept */
    char path[160];
    snprintf(path, sizeof path, "%s/v2.db", t->dir);
    make_v1_store(path, evidence_now_ms() - 1000, true);
    db = ev_open_rw(path);
    evidence_close(db);
    exec_raw(path, EV_V6_UNDONE "DROP TABLE reference_decodes; ALTER TABLE evidence DROP COLUMN container; ALTER TABLE evidence DROP COLUMN part_index; PRAGMA user_version=2;");
    db = open_ro(path);
    assert_int_equal(evidence_schema_version(db), 2);
    assert_int_equal(evidence_decode_get(db, &k, &got, err, sizeof err), EVIDENCE_E_NOTFOUND);
    assert_int_equal(evidence_decode_put(db, &k, &d, err, sizeof err), EVIDENCE_E_VERSION);
    evidence_close(db);
    db = ev_open_rw(path);
    assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(evidence_decode_put(db, &k, &d, err, sizeof err), EVIDENCE_OK);
    evidence_close(db);
    assert_int_equal(ev_count(path, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ev_count(path, "SELECT count(*) FROM evidence"), 2);
    assert_int_equal(ev_count(path, "SELECT count(*) FROM reference_decodes"), 1);
    json_decref(side);
}

/* Schema v4 (issue 20): evidence.container is the report's candidate
 * container; a v3 store is migrated forward with its rows kept (container
 * NULL), and a report naming another container is refused. */
static void store_31_container_column_from_the_report(void **state)
{
    struct ev_tmp *t = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/v3.db", t->dir);
    make_v1_store(path, evidence_now_ms() - 1000, true);
    struct evidence_db *db = ev_open_rw(path);
    evidence_close(db);
    exec_raw(path, EV_V6_UNDONE "ALTER TABLE evidence DROP COLUMN container; ALTER TABLE evidence DROP COLUMN part_index; PRAGMA user_version=3;");
    db = ev_open_rw(path);
    assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ev_count(path, "SELECT count(*) FROM evidence WHERE container IS NULL"), 2);
    int64_t now = evidence_now_ms();
    const char *containers[] = {"fmp4", "ts"};
    for (int i = 0; i < 2; i++) {
        char id[16];
        snprintf(id, sizeof id, "c%d", i);
        char *text = ev_sample_report(id, "MATCH", now - 10, "cdn-a", "ch1", "360p", "pv7");
        json_t *rep = json_loads(text, 0, NULL);
        json_object_set_new(json_object_get(rep, "candidate"), "container", json_string(containers[i]));
        char *with = json_dumps(rep, 0);
        import_ok(db, with, now, 1);
        free(with);
        json_decref(rep);
        free(text);
    }
    assert_int_equal(ev_count(path, "SELECT count(*) FROM evidence WHERE id = 'c0' AND container = 'fmp4'"), 1);
    assert_int_equal(ev_count(path, "SELECT count(*) FROM evidence WHERE id = 'c1' AND container = 'ts'"), 1);
    char *text = ev_sample_report("c2", "MATCH", now - 10, "cdn-a", "ch1", "360p", "pv7");
    json_t *rep = json_loads(text, 0, NULL);
    json_object_set_new(json_object_get(rep, "candidate"), "container", json_string("mkv"));
    char *bad = json_dumps(rep, 0), err[256] = "";
    int inserted = -1;
    assert_int_equal(evidence_import_report_at(db, bad, strlen(bad), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "container"));
    free(bad);
    json_decref(rep);
    free(text);
    evidence_close(db);
    assert_int_equal(ev_count(path, "SELECT count(*) FROM evidence"), 4);
}

/* Schema v5 (issue 20, LL-HLS parts in the canary): a v4 store migrates
 * with part_index NULL on its rows; a report's parts.part_index fills the
 * column; a negative one is refused; and the reason of a MISMATCH of the
 * parts against their parent segment is parts_differ_from_segment, never
 * a track's reason (nor the other way round). */
static void store_32_part_index_column_from_the_report(void **state)
{
    struct ev_tmp *t = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/v4.db", t->dir);
    make_v1_store(path, evidence_now_ms() - 1000, true);
    struct evidence_db *db = ev_open_rw(path);
    evidence_close(db);
    exec_raw(path, EV_V6_UNDONE "ALTER TABLE evidence DROP COLUMN part_index; PRAGMA user_version=4;");
    db = ev_open_rw(path);
    assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ev_count(path, "SELECT count(*) FROM evidence WHERE part_index IS NULL"), 2);
    int64_t now = evidence_now_ms();
    char *text = ev_sample_report("p0", "MATCH", now - 10, "cdn-a", "ch1", "360p", "pv7");
    json_t *rep = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(rep, "parts", json_pack("{s:i, s:s}", "part_index", 2, "reported", "segment"));
    char *with = json_dumps(rep, 0);
    import_ok(db, with, now, 1);
    free(with);
    assert_int_equal(ev_count(path, "SELECT part_index FROM evidence WHERE id = 'p0'"), 2);
    /* a negative index */
    json_object_set_new(rep, "evidence_id", json_string("p1"));
    json_object_set_new(json_object_get(rep, "parts"), "part_index", json_integer(-1));
    char *bad = json_dumps(rep, 0), err[256] = "";
    int inserted = -1;
    assert_int_equal(evidence_import_report_at(db, bad, strlen(bad), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "part_index"));
    free(bad);
    json_decref(rep);
    /* a MISMATCH of the parts against the segment: the reason rule */
    text = ev_sample_report("p2", "MISMATCH", now - 10, "cdn-a", "ch1", "360p", "pv7");
    rep = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(rep, "parts", json_pack("{s:i, s:s}", "part_index", 1, "reported", "against_segment"));
    bad = json_dumps(rep, 0);
    assert_int_equal(evidence_import_report_at(db, bad, strlen(bad), now, &inserted, err, sizeof err),
                     EVIDENCE_E_INVALID);
    assert_non_null(strstr(err, "parts_differ_from_segment"));
    free(bad);
    json_object_set_new(rep, "reason", json_string("parts_differ_from_segment"));
    char *good = json_dumps(rep, 0);
    import_ok(db, good, now, 1);
    free(good);
    json_decref(rep);
    assert_int_equal(ev_count(path, "SELECT part_index FROM evidence WHERE id = 'p2' AND "
                                    "reason = 'parts_differ_from_segment'"), 1);
    evidence_close(db);
}

/* ---- schema v7: the profile stored once ---- */

/* The report column of one row, as the view rebuilds it (malloc'd). */
static char *stored_report(const char *path, const char *id)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT report FROM evidence WHERE id = ?1", -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const char *text = (const char *)sqlite3_column_text(st, 0);
    char *copy = text ? strdup(text) : NULL;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return copy;
}

static void assert_stored_as(const char *path, const char *id, const char *text)
{
    char *back = stored_report(path, id);
    assert_non_null(back);
    assert_string_equal(back, text);
    free(back);
}

/* Every report of one worker carries the same profile text: stored once,
 * each report rebuilt byte for byte (reports are signed over their text),
 * whatever wrote it: exactav, or plain SQL through the view. */
static void store_33_profile_stored_once_reports_byte_for_byte(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    char *text[3];
    for (int i = 0; i < 3; i++) {
        char id[8];
        snprintf(id, sizeof id, "s%d", i);
        text[i] = ev_sample_report(id, "MATCH", now - 10 - i, "cdn-a", "ch1", "360p", "pv7");
        import_ok(db, text[i], now, 1);
    }
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM profiles"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_rows WHERE profile_digest ="
                                     " (SELECT digest FROM profiles)"), 3);
    for (int i = 0; i < 3; i++) {
        char id[8];
        snprintf(id, sizeof id, "s%d", i);
        assert_stored_as(t->db, id, text[i]);
    }
    /* what a row keeps is its report without the profile's text */
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_rows r WHERE length(r.report) +"
                                     " length(r.report_tail) + (SELECT length(document) FROM profiles)"
                                     " = length((SELECT report FROM evidence e WHERE e.id = r.id))"), 3);
    char bad[65], err[256] = "";
    assert_int_equal(evidence_check_profiles(db, bad, err, sizeof err), EVIDENCE_OK);
    assert_string_equal(bad, "");
    /* another layout of the same report (spaces): its profile text is not
     * the stored one, so it is stored whole, and read back as written */
    json_t *rep = json_loads(text[0], 0, NULL);
    json_object_set_new(rep, "evidence_id", json_string("spaced"));
    char *spaced = json_dumps(rep, JSON_INDENT(2));
    json_decref(rep);
    import_ok(db, spaced, now, 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_rows WHERE id = 'spaced' AND"
                                     " profile_digest IS NULL"), 1);
    assert_stored_as(t->db, "spaced", spaced);
    free(spaced);
    evidence_close(db);

    /* plain SQL through the view: an update of another column keeps the
     * report; an edit of the report is stored as edited, split again */
    exec_raw(t->db, "UPDATE evidence SET media_sequence = 41 WHERE id = 's1'");
    assert_stored_as(t->db, "s1", text[1]);
    exec_raw(t->db, "CREATE TABLE want AS SELECT json_set(report, '$.note', 'edited') AS r FROM"
                    " evidence WHERE id = 's2'; UPDATE evidence SET report = json_set(report, '$.note',"
                    " 'edited') WHERE id = 's2'");
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence WHERE id = 's2' AND report ="
                                     " (SELECT r FROM want)"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_rows WHERE id = 's2' AND"
                                     " profile_digest IS NOT NULL"), 1);
    exec_raw(t->db, "DELETE FROM fetches WHERE evidence_id = 's0'; DELETE FROM evidence WHERE id = 's0'");
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_rows"), 3);
    /* a stored profile is the text of every report that refers to it */
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(t->db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "UPDATE profiles SET document = '{}'", NULL, NULL, NULL),
                     SQLITE_CONSTRAINT);
    assert_int_equal(sqlite3_exec(raw, "DELETE FROM profiles", NULL, NULL, NULL), SQLITE_CONSTRAINT);
    sqlite3_close(raw);
    /* with its guard dropped, a document changed by hand: the digest no
     * longer holds, and every row rebuilt with it breaks a row rule */
    exec_raw(t->db, "DROP TRIGGER profiles_immutable; UPDATE profiles SET document ="
                    " replace(document, '\"version\":1', '\"version\":2')");
    db = open_ro(t->db);
    assert_int_equal(evidence_check_profiles(db, bad, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(strlen(bad), 64);
    evidence_close(db);
    for (int i = 0; i < 3; i++)
        free(text[i]);
}

/* A store of schema v6 keeps every stored report whole and byte for byte;
 * the rows written after its migration store their profile once. */
static void store_34_v6_rows_kept_whole_new_rows_split(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = ev_open_rw(t->db);
    int64_t now = evidence_now_ms();
    char *old = ev_sample_report("old", "MATCH", now - 20, "cdn-a", "ch1", "360p", "pv7");
    import_ok(db, old, now, 1);
    evidence_close(db);
    exec_raw(t->db, EV_V7_UNDONE "PRAGMA user_version=6;");
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                                     " name = 'evidence'"), 1);
    assert_stored_as(t->db, "old", old);
    db = ev_open_rw(t->db);
    assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION); /* v7, then v8 */
    char *fresh = ev_sample_report("new", "MATCH", now - 10, "cdn-a", "ch1", "360p", "pv7");
    import_ok(db, fresh, now, 1);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_rows WHERE id = 'old' AND"
                                     " profile_digest IS NULL"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_rows WHERE id = 'new' AND"
                                     " profile_digest IS NOT NULL"), 1);
    assert_stored_as(t->db, "old", old);
    assert_stored_as(t->db, "new", fresh);
    /* the fetches follow the renamed table (foreign key) */
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE name = 'fetches' AND"
                                     " sql LIKE '%REFERENCES \"evidence_rows\"%'"), 1);
    free(old);
    free(fresh);
}

/* ---- schema v8: keyed tamper evidence (evidence_keyed.c) ---------------------------------- */

/* A key of 40 bytes, all c. */
static struct store_key test_key(char c)
{
    struct store_key k;
    memset(&k, 0, sizeof k);
    k.n = 40;
    memset(k.b, c, k.n);
    return k;
}

static struct evidence_db *open_keyed(const char *path, enum evidence_open_mode mode, char c)
{
    struct store_key k = test_key(c);
    struct evidence_db *db = NULL;
    char err[512] = "";
    enum evidence_rc rc = evidence_open_keyed(path, mode, &k, &db, err, sizeof err);
    if (rc != EVIDENCE_OK)
        print_error("open keyed: %s\n", err);
    assert_int_equal(rc, EVIDENCE_OK);
    return db;
}

/* The keyed check with key 'k'; the rule it names ("" when clean). */
static struct evidence_mac_check check_keyed(const char *path)
{
    struct evidence_db *db = open_keyed(path, EVIDENCE_OPEN_RO, 'k');
    struct evidence_mac_check c;
    char err[512] = "";
    enum evidence_rc rc = evidence_check_macs(db, &c, err, sizeof err);
    if (rc != EVIDENCE_OK)
        print_error("check: %s\n", err);
    assert_int_equal(rc, EVIDENCE_OK);
    evidence_close(db);
    if (c.tampered)
        print_message("  %s %s %s: %s\n", c.table, c.row, c.rule, c.detail);
    return c;
}

static void assert_rule(const char *path, const char *rule)
{
    struct evidence_mac_check c = check_keyed(path);
    assert_true(c.keyed);
    assert_string_equal(c.tampered ? c.rule : "", rule);
}

/* Four rows of two scopes under key 'k': a0 < a1 < a2 of cdn-a, b0 of cdn-b. */
static void keyed_store(const char *path, int64_t now)
{
    struct evidence_db *db = open_keyed(path, EVIDENCE_OPEN_RW, 'k');
    const char *ids[] = {"a0", "a1", "a2", "b0"};
    for (int i = 0; i < 4; i++) {
        char *r = ev_sample_report(ids[i], "MATCH", now - MIN_MS(60 - i), i < 3 ? "cdn-a" : "cdn-b",
                                   "ch1", "360p", "pv7");
        import_ok(db, r, now, 1);
        free(r);
    }
    evidence_close(db);
}

/* Keyed by its first writer with a key, a store verifies clean after
 * inserts, imports and a prune, and also when it held rows before. */
static void store_35_keyed_store_verifies_clean_after_writes_and_prune(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    /* rows written before keying are MACed at keying */
    struct evidence_db *db = ev_open_rw(t->db);
    struct evidence_record rec = ev_sample_record("before", now - MIN_MS(90));
    insert_ok(db, &rec);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_keying"), 0);
    keyed_store(t->db, now);
    assert_int_equal(ev_count(t->db, "SELECT rows FROM evidence_keying"), 1);
    assert_int_equal(ev_count(t->db, "SELECT n FROM evidence_head"), 5);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_macs"), 5);
    struct evidence_mac_check c = check_keyed(t->db);
    assert_false(c.tampered);
    assert_int_equal(c.rows, 5);
    assert_int_equal(c.checkpoints, 1);
    /* the view's columns and report bytes are those of an unkeyed store */
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM pragma_table_info('evidence')"), 23);
    /* prune with the key: a0, a1 and "before" go, counted by checkpoint 2 */
    db = open_keyed(t->db, EVIDENCE_OPEN_RW, 'k');
    struct evidence_prune_opts o = {now, MIN_MS(1), 0, 1};
    struct evidence_prune_result r;
    char err[256] = "";
    assert_int_equal(evidence_prune(db, &o, &r, err, sizeof err), EVIDENCE_OK);
    evidence_close(db);
    assert_int_equal(r.evidence_rows, 2);
    assert_int_equal(ev_count(t->db, "SELECT n FROM evidence_checkpoints WHERE seq = 2"), 2);
    c = check_keyed(t->db);
    assert_false(c.tampered);
    assert_int_equal(c.rows, 3);
    assert_int_equal(c.checkpoints, 2);
    /* a prune that deletes nothing reuses the empty newest checkpoint */
    for (int i = 0; i < 2; i++) {
        db = open_keyed(t->db, EVIDENCE_OPEN_RW, 'k');
        assert_int_equal(evidence_prune(db, &o, &r, err, sizeof err), EVIDENCE_OK);
        evidence_close(db);
    }
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence_checkpoints"), 3);
    assert_rule(t->db, "");
}

/* A row deleted by hand: refused by plain SQLite while the triggers stand;
 * with them dropped, its MAC left behind or removed too, row_deleted. */
static void store_36_row_deleted_by_hand_is_row_deleted(void **state)
{
    struct ev_tmp *t = *state;
    keyed_store(t->db, evidence_now_ms());
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(t->db, &raw), SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(raw, "DELETE FROM fetches WHERE evidence_id = 'a1'; "
                                           "DELETE FROM evidence_rows WHERE id = 'a1'", NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(raw, "DELETE FROM evidence WHERE id = 'a1'", NULL, NULL, NULL),
                         SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 4);
    assert_rule(t->db, "");
    exec_raw(t->db, "DROP TRIGGER evidence_mac_delete; DELETE FROM fetches WHERE evidence_id = 'a1'; "
                    "DELETE FROM evidence_rows WHERE id = 'a1';");
    struct evidence_mac_check c = check_keyed(t->db);
    assert_string_equal(c.rule, "row_deleted");
    assert_string_equal(c.row, "a1");
    exec_raw(t->db, "DELETE FROM evidence_macs WHERE id = 'a1';");
    c = check_keyed(t->db);
    assert_string_equal(c.rule, "row_deleted");
    assert_string_equal(c.table, "evidence_head");
    /* the next keyed writer puts the trigger back; the deletion stays seen */
    struct evidence_db *db = open_keyed(t->db, EVIDENCE_OPEN_RW, 'k');
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE name = "
                                     "'evidence_mac_delete'"), 1);
    assert_rule(t->db, "row_deleted");
}

/* A column or the report changed is row_mac_mismatch; a row added with
 * the triggers dropped is row_mac_missing. */
static void store_37_changed_or_added_row_is_named(void **state)
{
    struct ev_tmp *t = *state;
    keyed_store(t->db, evidence_now_ms());
    char copy[160];
    ev_tmp_path(t, "copy.db", copy, sizeof copy);
    exec_raw(t->db, "PRAGMA wal_checkpoint(TRUNCATE)");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cp %s %s", t->db, copy);
    assert_int_equal(system(cmd), 0);
    exec_raw(t->db, "UPDATE evidence_rows SET reason = 'other' WHERE id = 'a2'");
    struct evidence_mac_check c = check_keyed(t->db);
    assert_string_equal(c.rule, "row_mac_mismatch");
    assert_string_equal(c.row, "a2");
    /* the report text alone (the part kept in evidence_rows) */
    exec_raw(copy, "UPDATE evidence_rows SET report = replace(report, 'MATCH', 'MATCH ') WHERE id = 'b0'");
    c = check_keyed(copy);
    assert_string_equal(c.rule, "row_mac_mismatch");
    assert_string_equal(c.row, "b0");
    exec_raw(copy, "UPDATE evidence_rows SET report = replace(report, 'MATCH ', 'MATCH') WHERE id = 'b0'");
    assert_rule(copy, "");
    exec_raw(copy, "DROP TRIGGER evidence_mac_insert; INSERT INTO evidence_rows (id, check_kind, "
                   "verdict, reason, profile_id, profile_fingerprint, observed_at_ms, observed_end_ms, "
                   "recorded_at_ms, report) SELECT 'x9', check_kind, verdict, reason, profile_id, "
                   "profile_fingerprint, observed_at_ms, observed_end_ms, recorded_at_ms, report "
                   "FROM evidence_rows WHERE id = 'b0';");
    c = check_keyed(copy);
    assert_string_equal(c.rule, "row_mac_missing");
    assert_string_equal(c.row, "x9");
}

/* The head, a checkpoint or the keying row changed or removed by hand. */
static void store_38_head_checkpoint_and_keying_changed_are_named(void **state)
{
    struct ev_tmp *t = *state;
    keyed_store(t->db, evidence_now_ms());
    exec_raw(t->db, "UPDATE evidence_head SET n = n - 1");
    assert_rule(t->db, "head_mismatch");
    /* a keyed writer does not re-sign a broken head: it stays named */
    struct evidence_db *db = open_keyed(t->db, EVIDENCE_OPEN_RW, 'k');
    char *r = ev_sample_report("c0", "MATCH", evidence_now_ms() - 5, "cdn-c", "ch1", "360p", "pv7");
    import_ok(db, r, evidence_now_ms(), 1);
    free(r);
    evidence_close(db);
    assert_rule(t->db, "head_mismatch");
    exec_raw(t->db, "UPDATE evidence_head SET n = n + 1"); /* back as it was: it verifies, */
    assert_rule(t->db, "head_mismatch"); /* but counts fewer MACs than there are (not c0's) */
    exec_raw(t->db, "DELETE FROM evidence_head");
    assert_rule(t->db, "head_mismatch");

    char other[160];
    ev_tmp_path(t, "other.db", other, sizeof other);
    keyed_store(other, evidence_now_ms());
    exec_raw(other, "UPDATE evidence_checkpoints SET n = 1");
    assert_rule(other, "checkpoint_mismatch");
    exec_raw(other, "UPDATE evidence_checkpoints SET n = 0; UPDATE evidence_keying SET rows = 7");
    assert_rule(other, "checkpoint_mismatch");
    exec_raw(other, "DELETE FROM evidence_keying");
    assert_rule(other, "keying_removed");
    /* a writer with the key refuses a store whose keying was removed */
    struct store_key k = test_key('k');
    char err[512] = "";
    assert_int_equal(evidence_open_keyed(other, EVIDENCE_OPEN_RW, &k, &db, err, sizeof err),
                     EVIDENCE_E_OPEN);
    assert_non_null(strstr(err, "store_tampered"));
}

/* A writer without the key on a keyed store writes nothing: evidence_open
 * refuses it, and plain SQLite cannot insert through the view. */
static void store_39_writer_without_key_writes_nothing(void **state)
{
    struct ev_tmp *t = *state;
    keyed_store(t->db, evidence_now_ms());
    exec_raw(t->db, "PRAGMA wal_checkpoint(TRUNCATE)");
    long long before = ev_count(t->db, "SELECT count(*) FROM evidence");
    struct evidence_db *db = NULL;
    char err[512] = "";
    assert_int_equal(evidence_open(t->db, EVIDENCE_OPEN_RW, &db, err, sizeof err), EVIDENCE_E_KEY);
    assert_null(db);
    assert_non_null(strstr(err, "--store-key-file"));
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(t->db, &raw), SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(raw, "INSERT INTO evidence (id, check_kind, verdict, reason, "
                                           "profile_id, profile_fingerprint, observed_at_ms, "
                                           "observed_end_ms, recorded_at_ms, report) SELECT 'z', "
                                           "check_kind, verdict, reason, profile_id, "
                                           "profile_fingerprint, observed_at_ms, observed_end_ms, "
                                           "recorded_at_ms, report FROM evidence WHERE id = 'b0'",
                                     NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), before);
    /* a reader without the key reads as before */
    db = open_ro(t->db);
    assert_true(evidence_is_keyed(db));
    json_t *rows = NULL;
    struct evidence_filter f = {0};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), before);
    json_decref(rows);
    evidence_close(db);
    assert_rule(t->db, "");
}

/* A key that is not the store's is EVIDENCE_E_KEY for writers and for the
 * check, never tampering. */
static void store_40_wrong_key_is_a_key_error(void **state)
{
    struct ev_tmp *t = *state;
    keyed_store(t->db, evidence_now_ms());
    struct store_key k = test_key('w');
    struct evidence_db *db = NULL;
    char err[512] = "";
    assert_int_equal(evidence_open_keyed(t->db, EVIDENCE_OPEN_RW, &k, &db, err, sizeof err),
                     EVIDENCE_E_KEY);
    assert_non_null(strstr(err, "the key does not match"));
    db = open_keyed(t->db, EVIDENCE_OPEN_RO, 'w');
    struct evidence_mac_check c;
    assert_int_equal(evidence_check_macs(db, &c, err, sizeof err), EVIDENCE_E_KEY);
    assert_false(c.tampered);
    evidence_close(db);
    assert_rule(t->db, "");
}

/* A new store holding one valid MATCH report of id (cdn-a). */
static void one_row_store(const char *path, const char *id)
{
    struct evidence_db *db = ev_open_rw(path);
    char *r = ev_sample_report(id, "MATCH", evidence_now_ms() - 20, "cdn-a", "ch1", "360p", "pv7");
    import_ok(db, r, evidence_now_ms(), 1);
    free(r);
    assert_false(evidence_is_keyed(db));
    evidence_close(db);
}

/* An unkeyed store keeps schema v8's tables empty and no MAC trigger;
 * checked with a key it is store_not_keyed. */
static void store_41_unkeyed_store_is_unchanged(void **state)
{
    struct ev_tmp *t = *state;
    one_row_store(t->db, "u0");
    assert_int_equal(ev_count(t->db, "SELECT (SELECT count(*) FROM evidence_keying) + (SELECT count(*) "
                                     "FROM evidence_macs) + (SELECT count(*) FROM evidence_head) + "
                                     "(SELECT count(*) FROM evidence_checkpoints)"), 0);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE type = "
                                     "'trigger' AND name LIKE 'evidence_mac%'"), 0);
    exec_raw(t->db, "DELETE FROM fetches; DELETE FROM evidence"); /* plain SQLite still may */
    struct evidence_mac_check c = check_keyed(t->db);
    assert_false(c.keyed);
    assert_string_equal(c.rule, "store_not_keyed");
}

/* The key file rules of control.db: 32 to 1024 bytes, one line or raw,
 * owner-only (else 65), not a regular file or unreadable 66. */
static void store_42_key_file_rules(void **state)
{
    struct ev_tmp *t = *state;
    char path[160];
    struct store_key k;
    assert_int_equal(ev_write_file(t, "k", "0123456789abcdef0123456789abcdef\n", path, sizeof path), 0);
    chmod(path, 0600);
    assert_int_equal(store_key_load("test", "--store-key-file", path, &k), 0);
    assert_int_equal(k.n, 32); /* the newline is not part of it */
    chmod(path, 0640);
    assert_int_equal(store_key_load("test", "--store-key-file", path, &k), STORE_KEY_E_DATA);
    assert_int_equal(ev_write_file(t, "short", "0123456789", path, sizeof path), 0);
    chmod(path, 0600);
    assert_int_equal(store_key_load("test", "--store-key-file", path, &k), STORE_KEY_E_DATA);
    ev_tmp_path(t, "missing", path, sizeof path);
    assert_int_equal(store_key_load("test", "--store-key-file", path, &k), STORE_KEY_E_NOINPUT);
    ev_tmp_path(t, "fifo", path, sizeof path);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(store_key_load("test", "--store-key-file", path, &k), STORE_KEY_E_NOINPUT);
    /* the environment names the file when the option does not */
    assert_int_equal(ev_write_file(t, "envkey", "0123456789abcdef0123456789abcdefXY", path, sizeof path), 0);
    chmod(path, 0600);
    bool have = false;
    setenv(EVIDENCE_KEY_ENV, path, 1);
    assert_int_equal(evidence_key_load("test", NULL, &k, &have), 0);
    assert_true(have);
    assert_int_equal(k.n, 34);
    unsetenv(EVIDENCE_KEY_ENV);
    assert_int_equal(evidence_key_load("test", NULL, &k, &have), 0);
    assert_false(have);
}

/* A trigger exactav did not create could make a keyed writer MAC rows of
 * another's choosing: the writer refuses the store, the check names it.  A
 * store migrated from v6 holds only exactav's own and is keyed. */
static void store_43_foreign_trigger_is_refused_and_named(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = NULL;
    one_row_store(t->db, "old");
    exec_raw(t->db, EV_V7_UNDONE "PRAGMA user_version=6;");
    keyed_store(t->db, evidence_now_ms());
    struct evidence_mac_check c = check_keyed(t->db);
    assert_false(c.tampered);
    assert_int_equal(c.rows, 5);
    exec_raw(t->db, "CREATE TRIGGER sneaky AFTER INSERT ON evidence_rows BEGIN SELECT 1; END;");
    struct store_key k = test_key('k');
    char err[512] = "";
    assert_int_equal(evidence_open_keyed(t->db, EVIDENCE_OPEN_RW, &k, &db, err, sizeof err),
                     EVIDENCE_E_OPEN);
    assert_non_null(strstr(err, "trigger sneaky"));
    c = check_keyed(t->db);
    assert_string_equal(c.rule, "foreign_schema_object");
    assert_string_equal(c.row, "trigger sneaky");
}

#define T(f) cmocka_unit_test_setup_teardown(f, ev_setup, ev_teardown)

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        T(store_01_schema_v1_created),
        T(store_02_migrates_empty_v0_file),
        T(store_03_refuses_newer_schema_version),
        T(store_04_refuses_foreign_v0_database),
        T(store_05_read_only_open_never_creates),
        T(store_06_insert_show_round_trip),
        T(store_07_failing_fetch_leaves_no_evidence_row),
        T(store_08_duplicate_id_is_conflict_and_keeps_original),
        T(store_09_incomplete_record_is_refused),
        T(store_10_import_is_idempotent_and_keeps_observation_time),
        T(store_11_import_conflicting_report_is_refused),
        T(store_12_import_names_missing_required_field),
        T(store_13_max_age_counts_from_observed_not_recorded),
        T(store_14_latest_is_newest_observation_per_scope),
        T(store_15_list_filters_and_limit),
        T(store_16_read_only_handle_cannot_write),
        T(store_17_concurrent_writers_all_succeed),
        T(store_18_new_id_is_random_uuid_v4),
        T(store_19_import_survives_truncated_and_corrupted_reports),
        T(store_20_application_id_and_foreign_files_untouched),
        T(store_21_store_from_before_application_id_is_adopted),
        T(store_22_import_refuses_what_verify_could_not_have_produced),
        T(store_23_newest_is_one_rule),
        T(store_24_v1_store_readable_then_migrated_forward),
        T(store_25_media_sequence_imported_and_filtered),
        T(store_26_probes_stored_and_newest_picked),
        T(store_27_unknown_without_a_decode_is_valid_match_still_needs_everything),
        T(store_28_observed_after_is_the_step_and_checks_every_row),
        T(store_29_concurrent_first_openers_all_find_their_store),
        T(store_30_reference_decodes_keyed_by_input_profile_and_interval),
        T(store_31_container_column_from_the_report),
        T(store_32_part_index_column_from_the_report),
        T(store_33_profile_stored_once_reports_byte_for_byte),
        T(store_34_v6_rows_kept_whole_new_rows_split),
        T(store_35_keyed_store_verifies_clean_after_writes_and_prune),
        T(store_36_row_deleted_by_hand_is_row_deleted),
        T(store_37_changed_or_added_row_is_named),
        T(store_38_head_checkpoint_and_keying_changed_are_named),
        T(store_39_writer_without_key_writes_nothing),
        T(store_40_wrong_key_is_a_key_error),
        T(store_41_unkeyed_store_is_unchanged),
        T(store_42_key_file_rules),
        T(store_43_foreign_trigger_is_refused_and_named),
    };
    return ev_run_tests("test_evidence_store", tests, sizeof tests / sizeof tests[0], argc, argv);
}
