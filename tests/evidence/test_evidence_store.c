/* The evidence store against real SQLite files in a private temp dir.
 * Each test is registered with ctest on its own (evidence_<name>); the
 * first argument selects it. */
#include "ev_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIN_MS(n) ((int64_t)(n) * 60 * 1000)

static int setup(void **state)
{
    struct ev_tmp *t = calloc(1, sizeof *t);
    if (!t || ev_tmp_make(t) != 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    ev_tmp_remove(*state);
    free(*state);
    return 0;
}

static struct evidence_db *open_rw(const char *path)
{
    struct evidence_db *db = NULL;
    char err[256] = "";
    enum evidence_rc rc = evidence_open(path, EVIDENCE_OPEN_RW, &db, err, sizeof err);
    if (rc != EVIDENCE_OK)
        print_error("open %s: %s\n", path, err);
    assert_int_equal(rc, EVIDENCE_OK);
    return db;
}

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
    struct evidence_db *db = open_rw(t->db);
    assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ('evidence','fetches')"), 2);
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
    db = open_rw(t->db);
    assert_int_equal(evidence_schema_version(db), EVIDENCE_SCHEMA_VERSION);
    evidence_close(db);
}

static void store_02_migrates_empty_v0_file(void **state)
{
    struct ev_tmp *t = *state;
    FILE *f = fopen(t->db, "wb"); /* a zero-byte file is an empty v0 database */
    assert_non_null(f);
    fclose(f);
    struct evidence_db *db = open_rw(t->db);
    struct evidence_record r = ev_sample_record("id-v0", evidence_now_ms());
    insert_ok(db, &r);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), EVIDENCE_SCHEMA_VERSION);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 1);
}

static void store_03_refuses_newer_schema_version(void **state)
{
    struct ev_tmp *t = *state;
    exec_raw(t->db, "CREATE TABLE evidence(id TEXT); PRAGMA user_version=99;");
    struct evidence_db *db = NULL;
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
    assert_non_null(strstr(err, "not an evidence database"));
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
    struct evidence_db *db = open_rw(t->db);
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
    assert_string_equal(str_at(rec, "profile_fingerprint"), "ab12");
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
    struct evidence_db *db = open_rw(t->db);
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
    struct evidence_db *db = open_rw(t->db);
    int64_t now = evidence_now_ms();
    struct evidence_record r = ev_sample_record("id-dup", now - MIN_MS(10));
    insert_ok(db, &r);
    r.observed_at_ms = now;
    r.observed_end_ms = now;
    r.verdict = EVIDENCE_VERDICT_MISMATCH;
    char err[256] = "";
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_CONFLICT);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence WHERE verdict='MATCH'"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM fetches"), 2);
}

static void store_09_incomplete_record_is_refused(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = open_rw(t->db);
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
    struct evidence_db *db = open_rw(t->db);
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
    struct evidence_db *db = open_rw(t->db);
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
    struct evidence_db *db = open_rw(t->db);
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
    struct evidence_db *db = open_rw(t->db);
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
    insert_ok(db, &r);
}

static void store_14_latest_is_newest_observation_per_scope(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = open_rw(t->db);
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
    struct evidence_db *db = open_rw(t->db);
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
    struct evidence_db *db = open_rw(t->db);
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
static int writer_child(const char *path, int barrier_fd)
{
    char c;
    if (read(barrier_fd, &c, 1) < 0)
        return 2;
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
    int barrier[2];
    assert_int_equal(pipe(barrier), 0);
    pid_t pids[WRITERS];
    fflush(NULL);
    for (int i = 0; i < WRITERS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(barrier[1]);
            _exit(writer_child(t->db, barrier[0]));
        }
    }
    close(barrier[0]);
    close(barrier[1]); /* releases every child at once (read returns 0) */
    for (int i = 0; i < WRITERS; i++) {
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
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
    struct evidence_db *db = open_rw(t->db);
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

/* ---- schema v2: media_sequence and probes ---- */

extern const char evidence_schema_v1_sql[];

/* A store exactly as a version-1 build left it, with one row. */
static void make_v1_store(const char *path, int64_t observed)
{
    exec_raw(path, evidence_schema_v1_sql);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO evidence (id, check_kind, verdict, reason, profile_id, profile_fingerprint,"
             " path_id, observed_at_ms, observed_end_ms, recorded_at_ms, report) VALUES"
             " ('old1', 'exact-av-v1', 'MATCH', 'identical', 'exact-av-v1', 'ab12', 'cdn-a',"
             " %lld, %lld, %lld, '{}'); PRAGMA user_version=1;",
             (long long)observed, (long long)observed, (long long)observed);
    exec_raw(path, sql);
}

static void store_20_v1_store_readable_then_migrated_forward(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    make_v1_store(t->db, now - 1000);
    /* a reader can neither migrate nor refuse a version-1 store: it reads it */
    struct evidence_db *db = open_ro(t->db);
    assert_int_equal(evidence_schema_version(db), 1);
    json_t *rows = NULL, *probe = NULL;
    char err[256] = "";
    struct evidence_filter f = {.now_ms = now};
    assert_int_equal(evidence_list(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 1);
    assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "media_sequence")));
    json_decref(rows);
    f = (struct evidence_filter){.now_ms = now, .has_media_sequence = true, .media_sequence = 0};
    assert_int_equal(evidence_latest(db, &f, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    assert_int_equal(evidence_show(db, "old1", &rows, err, sizeof err), EVIDENCE_OK);
    json_decref(rows);
    assert_int_equal(evidence_probe_newest(db, "cdn-a", NULL, NULL, now, &probe, err, sizeof err), EVIDENCE_OK);
    assert_null(probe);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), 1); /* untouched by the reader */
    /* the first writer migrates forward in one transaction, keeping every row */
    db = open_rw(t->db);
    assert_int_equal(evidence_schema_version(db), 2);
    evidence_close(db);
    assert_int_equal(ev_count(t->db, "PRAGMA user_version"), 2);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence WHERE id = 'old1' AND media_sequence IS NULL"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM sqlite_master WHERE name IN "
                                     "('probes', 'probes_scope', 'evidence_media_sequence')"), 3);
    /* a failed migration leaves version 1 intact: a column that already exists */
    struct ev_tmp t2;
    assert_int_equal(ev_tmp_make(&t2), 0);
    make_v1_store(t2.db, now);
    exec_raw(t2.db, "ALTER TABLE evidence ADD COLUMN media_sequence TEXT");
    assert_int_equal(evidence_open(t2.db, EVIDENCE_OPEN_RW, &db, err, sizeof err), EVIDENCE_E_INTERNAL);
    assert_non_null(strstr(err, "v2"));
    assert_int_equal(ev_count(t2.db, "PRAGMA user_version"), 1);
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

static void store_21_media_sequence_imported_and_filtered(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = open_rw(t->db);
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
    insert_ok(db, &r);
    assert_int_equal(ev_count(t->db, "SELECT media_sequence FROM evidence WHERE id = 'direct'"), 7);
    r.id = "direct-neg";
    r.media_sequence.value = -7;
    assert_int_equal(evidence_insert(db, &r, err, sizeof err), EVIDENCE_E_INVALID);
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

static void store_22_probes_stored_and_newest_picked(void **state)
{
    struct ev_tmp *t = *state;
    struct evidence_db *db = open_rw(t->db);
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

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

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
        T(store_20_v1_store_readable_then_migrated_forward),
        T(store_21_media_sequence_imported_and_filtered),
        T(store_22_probes_stored_and_newest_picked),
    };
    if (argc > 1) {
        /* a name that matches nothing must fail, not pass with 0 tests */
        bool known = false;
        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
            known = known || strcmp(tests[i].name, argv[1]) == 0;
        if (!known) {
            fprintf(stderr, "no test named %s\n", argv[1]);
            return 1;
        }
        cmocka_set_test_filter(argv[1]);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
