/* Retention (`exactav evidence prune`, evidence_prune) against real SQLite
 * stores written through the import API: what is deleted, what is always
 * kept, the space given back, a writer running at the same time, and the
 * CLI's outputs and exit codes.  Each test is its own ctest test
 * (evidence_<name>); the first argument selects it. */
#include "cli_evidence.h"
#include "ev_cli.h"
#include "ev_cmocka.h"
#include "ev_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DAY_MS (24 * 3600 * INT64_C(1000))

/* Imports one sample report (channel ch1). */
static void put(struct evidence_db *db, const char *id, const char *verdict, int64_t observed,
                const char *path, const char *rendition, const char *pv)
{
    char *text = ev_sample_report(id, verdict, observed, path, "ch1", rendition, pv);
    char err[512] = "";
    int inserted = 0;
    enum evidence_rc rc = evidence_import_report(db, text, strlen(text), &inserted, err, sizeof err);
    if (rc != EVIDENCE_OK)
        print_error("import %s: %s\n", id, err);
    assert_int_equal(rc, EVIDENCE_OK);
    assert_int_equal(inserted, 1);
    free(text);
}

static struct evidence_prune_result prune(const char *path, int64_t now, int64_t keep,
                                          int64_t keep_mismatch, size_t batch)
{
    struct evidence_db *db = ev_open_rw(path);
    struct evidence_prune_opts o = {now, keep, keep_mismatch, batch};
    struct evidence_prune_result r;
    char err[256] = "";
    enum evidence_rc rc = evidence_prune(db, &o, &r, err, sizeof err);
    if (rc != EVIDENCE_OK)
        print_error("prune: %s\n", err);
    assert_int_equal(rc, EVIDENCE_OK);
    evidence_close(db);
    return r;
}

static long long count_id(const char *db, const char *id)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM evidence WHERE id = '%s'", id);
    return ev_count(db, sql);
}

/* The newest row of a scope, as stepctl decide reads it. */
static void newest_is(const char *path, const char *pathid, const char *rendition, const char *pv,
                      const char *want)
{
    struct evidence_db *db = NULL;
    char err[256] = "";
    assert_int_equal(evidence_open(path, EVIDENCE_OPEN_RO, &db, err, sizeof err), EVIDENCE_OK);
    struct evidence_scope sc = {pathid, "ch1", rendition, pv};
    struct evidence_rows rows = {0};
    assert_int_equal(evidence_newest(db, &sc, 1, &rows, err, sizeof err), EVIDENCE_OK);
    assert_int_equal(rows.n, 1);
    assert_false(rows.rows[0].malformed);
    assert_string_equal(rows.rows[0].id, want);
    evidence_rows_free(&rows);
    evidence_close(db);
}

static void prune_01_old_rows_deleted_newest_and_young_mismatch_kept(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    struct evidence_db *db = ev_open_rw(t->db);
    char id[64];
    for (int i = 0; i < 7; i++) { /* 7 old MATCHes of one scope, the newest 10 days old */
        snprintf(id, sizeof id, "a-old-%d", i);
        put(db, id, "MATCH", now - (20 - i) * DAY_MS, "cdn-a", "720p", "pv7");
    }
    put(db, "a-new", "MATCH", now - 3600 * 1000, "cdn-a", "720p", "pv7");
    put(db, "a-mm-20d", "MISMATCH", now - 20 * DAY_MS - 5, "cdn-a", "720p", "pv7");
    put(db, "a-mm-40d", "MISMATCH", now - 40 * DAY_MS, "cdn-a", "720p", "pv7");
    put(db, "a-unk-9d", "UNKNOWN", now - 9 * DAY_MS, "cdn-a", "720p", "pv7");
    /* scopes whose only rows are old: their newest is kept, whatever its age */
    put(db, "b-old", "MATCH", now - 100 * DAY_MS, "cdn-b", "720p", "pv7");
    put(db, "b-older", "MATCH", now - 101 * DAY_MS, "cdn-b", "720p", "pv7");
    put(db, "a-360-old", "MISMATCH", now - 90 * DAY_MS, "cdn-a", "360p", "pv7");
    put(db, "a-pv6-old", "MATCH", now - 90 * DAY_MS, "cdn-a", "720p", "pv6");
    evidence_close(db);
    json_t *before = NULL;
    db = ev_open_rw(t->db);
    char err[256];
    assert_int_equal(evidence_show(db, "a-mm-20d", &before, err, sizeof err), EVIDENCE_OK);
    evidence_close(db);

    /* batches of 2 rows: several transactions */
    struct evidence_prune_result r = prune(t->db, now, 7 * DAY_MS, 30 * DAY_MS, 2);
    assert_int_equal(r.evidence_rows, 7 + 1 + 1 + 1); /* a-old-*, a-mm-40d, a-unk-9d, b-older */
    assert_int_equal(r.fetch_rows, 2 * r.evidence_rows);
    assert_int_equal(r.kept_mismatch, 1);
    assert_int_equal(r.kept_newest, 3); /* b-old, a-360-old, a-pv6-old */
    assert_true(r.transactions >= 6);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 5);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM fetches"), 10);
    assert_int_equal(count_id(t->db, "a-new") + count_id(t->db, "a-mm-20d") +
                         count_id(t->db, "b-old") + count_id(t->db, "a-360-old") +
                         count_id(t->db, "a-pv6-old"),
                     5);
    newest_is(t->db, "cdn-a", "720p", "pv7", "a-new");
    newest_is(t->db, "cdn-b", "720p", "pv7", "b-old");
    newest_is(t->db, "cdn-a", "360p", "pv7", "a-360-old");
    newest_is(t->db, "cdn-a", "720p", "pv6", "a-pv6-old");
    /* a kept row reads back exactly as before */
    json_t *after = NULL;
    db = ev_open_rw(t->db);
    assert_int_equal(evidence_show(db, "a-mm-20d", &after, err, sizeof err), EVIDENCE_OK);
    evidence_close(db);
    assert_true(json_equal(before, after));
    json_decref(before);
    json_decref(after);

    /* --keep-mismatch shorter than the MISMATCH's age: it goes too */
    r = prune(t->db, now, 7 * DAY_MS, 10 * DAY_MS, 0);
    assert_int_equal(r.evidence_rows, 1);
    assert_int_equal(count_id(t->db, "a-mm-20d"), 0);
    /* again: nothing more to delete */
    r = prune(t->db, now, 7 * DAY_MS, 10 * DAY_MS, 0);
    assert_int_equal(r.evidence_rows, 0);
    assert_int_equal(r.kept_newest, 3);
}

static struct evidence_probe probe(const char *id, const char *rendition, int64_t observed)
{
    return (struct evidence_probe){
        .id = id, .path_id = "cdn-a", .channel = "ch1", .rendition = rendition,
        .object = "http://cdn-a.example/live/720p.m3u8", .status = EVIDENCE_PROBE_PASS,
        .reason = "ok", .observed_at_ms = observed, .observed_end_ms = observed + 40,
        .playlist_status = {true, 200}};
}

static void prune_02_probes_keep_newest_and_old_decodes_go(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    struct evidence_db *db = ev_open_rw(t->db);
    char err[256] = "";
    const struct { const char *id, *rendition; int64_t age; } ps[] = {
        {"p1", "720p", 30 * DAY_MS}, {"p2", "720p", 20 * DAY_MS}, {"p3", "720p", 1000},
        {"q1", "360p", 50 * DAY_MS}, {"q2", "360p", 40 * DAY_MS}};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        struct evidence_probe p = probe(ps[i].id, ps[i].rendition, now - ps[i].age);
        assert_int_equal(evidence_probe_insert(db, &p, err, sizeof err), EVIDENCE_OK);
    }
    json_t *side = json_pack("{s:b}", "opened", 1);
    struct evidence_decode_key k = {
        "7dea83aa5ee945d82bd6dc1547efd7ae0dccfe62acfce880a02674153dbfc7f1",
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 0, 900000};
    struct evidence_decode d = {.frames = 1, .samples = 0, .reference = side,
                                .decoded_at_ms = now - 10 * DAY_MS};
    assert_int_equal(evidence_decode_put(db, &k, &d, err, sizeof err), EVIDENCE_OK);
    k.interval_start = 1; /* a recent one stays */
    d.decoded_at_ms = now - 1000;
    assert_int_equal(evidence_decode_put(db, &k, &d, err, sizeof err), EVIDENCE_OK);
    json_decref(side);
    evidence_close(db);

    struct evidence_prune_result r = prune(t->db, now, 7 * DAY_MS, 30 * DAY_MS, 0);
    assert_int_equal(r.probe_rows, 3); /* p1, p2, q1 */
    assert_int_equal(r.decode_rows, 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM probes WHERE id IN ('p3','q2')"), 2);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM probes"), 2);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM reference_decodes WHERE interval_start = 1"), 1);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM reference_decodes"), 1);
}

static void fill(const char *path, const char *prefix, int n, int64_t observed)
{
    struct evidence_db *db = ev_open_rw(path);
    char id[64];
    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof id, "%s-%04d", prefix, i);
        put(db, id, "MATCH", observed + i, "cdn-a", "720p", "pv7");
    }
    evidence_close(db);
}

static void prune_03_space_given_back_full_then_incremental(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    fill(t->db, "x", 300, now - 60 * DAY_MS);
    assert_int_equal(ev_count(t->db, "PRAGMA auto_vacuum"), 0); /* a store made before retention */
    struct evidence_prune_result r = prune(t->db, now, 7 * DAY_MS, 30 * DAY_MS, 0);
    assert_int_equal(r.evidence_rows, 299);
    assert_string_equal(r.vacuum, "full");
    assert_true(r.bytes_after < r.bytes_before / 4);
    assert_int_equal(ev_count(t->db, "PRAGMA auto_vacuum"), 2); /* converted once */
    fill(t->db, "y", 300, now - 50 * DAY_MS);
    r = prune(t->db, now, 7 * DAY_MS, 30 * DAY_MS, 0);
    assert_int_equal(r.evidence_rows, 300); /* x-0299 and y-0000..0298; y-0299 is the newest */
    assert_string_equal(r.vacuum, "incremental");
    assert_true(r.bytes_after < r.bytes_before / 4);
    assert_int_equal(ev_count(t->db, "PRAGMA freelist_count"), 0);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 1);
}

/* A writer (another process, like the canary) inserts while prune runs in
 * batches of 10: every row it wrote is there afterwards, none refused. */
static void prune_04_writer_at_the_same_time_succeeds(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    fill(t->db, "old", 400, now - 60 * DAY_MS);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct evidence_db *db = NULL;
        int bad = evidence_open(t->db, EVIDENCE_OPEN_RW, &db, NULL, 0) != EVIDENCE_OK;
        char id[64];
        for (int i = 0; !bad && i < 40; i++) {
            snprintf(id, sizeof id, "live-%02d", i);
            char *text = ev_sample_report(id, "MATCH", now - 1000 + i, "cdn-a", "ch1", "720p", "pv7");
            int inserted = 0;
            bad = evidence_import_report(db, text, strlen(text), &inserted, NULL, 0) != EVIDENCE_OK;
            free(text);
        }
        evidence_close(db);
        _exit(bad);
    }
    struct evidence_prune_result r = prune(t->db, now, 7 * DAY_MS, 30 * DAY_MS, 10);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence WHERE id LIKE 'live-%'"), 40);
    /* all old rows went, but the newest of the scope if no live row had come yet */
    assert_true(r.evidence_rows >= 399);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence WHERE id LIKE 'old-%'"),
                     400 - r.evidence_rows);
    newest_is(t->db, "cdn-a", "720p", "pv7", "live-39");
}

static void expect(struct run r, int rc, const char *in_out, const char *in_err)
{
    if (r.rc != rc || (in_out && !strstr(r.out, in_out)) || (in_err && !strstr(r.err, in_err)))
        print_error("rc %d out [%s] err [%s]\n", r.rc, r.out, r.err);
    assert_int_equal(r.rc, rc);
    if (in_out)
        assert_non_null(strstr(r.out, in_out));
    if (in_err)
        assert_non_null(strstr(r.err, in_err));
    free(r.out);
    free(r.err);
}

static void prune_05_cli_outputs_and_exit_codes(void **state)
{
    struct ev_tmp *t = *state;
    int64_t now = evidence_now_ms();
    char missing[160];
    ev_tmp_path(t, "missing.db", missing, sizeof missing);
    expect(run_cmd("evidence", "prune", "--evidence", missing, "--keep", "7d", NULL), 66, NULL,
           "missing.db");
    assert_int_not_equal(access(missing, F_OK), 0); /* never created */
    fill(t->db, "x", 5, now - 10 * DAY_MS);
    struct evidence_db *db = ev_open_rw(t->db);
    put(db, "mm", "MISMATCH", now - 20 * DAY_MS, "cdn-a", "720p", "pv7");
    evidence_close(db);
    expect(run_cmd("evidence", "prune", "--evidence", t->db, NULL), 64, NULL, "--keep");
    expect(run_cmd("evidence", "prune", "--evidence", t->db, "--keep", "7", NULL), 64, NULL,
           "duration");
    expect(run_cmd("evidence", "prune", "--evidence", t->db, "--keep", "7w", NULL), 64, NULL, NULL);
    expect(run_cmd("evidence", "prune", "--evidence", t->db, "--keep", "7d", "--keep-mismatch",
                   "-1d", NULL), 64, NULL, NULL);
    expect(run_cmd("evidence", "prune", "--evidence", t->db, "--keep", "7d", "--limit", "3", NULL),
           64, NULL, "not valid here");
    expect(run_cmd("evidence", "list", "--evidence", t->db, "--keep", "7d", NULL), 64, NULL, NULL);
    expect(run_cmd("evidence", "prune", "--help", NULL), 0, "--keep-mismatch", NULL);
    char ctl[160];
    ev_tmp_path(t, "notes.txt", ctl, sizeof ctl);
    assert_int_equal(ev_write_file(t, "notes.txt", "not a database at all, a text file\n", ctl,
                                   sizeof ctl), 0);
    expect(run_cmd("evidence", "prune", "--evidence", ctl, "--keep", "7d", NULL), 66, NULL, NULL);

    /* text: the default --keep-mismatch keeps the 20-day MISMATCH */
    expect(run_cmd("evidence", "prune", "--evidence", t->db, "--keep", "168h", NULL), 0,
           "deleted  evidence 4  fetches 8", NULL);
    expect(run_cmd("evidence", "prune", "--evidence", t->db, "--keep", "7d", NULL), 0,
           "kept     newest 1  mismatch 1", NULL);
    struct run r = run_cmd("evidence", "prune", "--evidence", t->db, "--keep=10080m",
                           "--keep-mismatch=2d", "--json", NULL);
    assert_int_equal(r.rc, 0);
    json_error_t je;
    json_t *j = json_loads(r.out, 0, &je);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "deleted"), "evidence")), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "kept"), "newest")), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "kept"), "mismatch")), 0);
    assert_string_equal(json_string_value(json_object_get(j, "vacuum")), "incremental");
    assert_int_equal(json_integer_value(json_object_get(j, "bytes_reclaimed")),
                     json_integer_value(json_object_get(j, "bytes_before")) -
                         json_integer_value(json_object_get(j, "bytes_after")));
    json_decref(j);
    free(r.out);
    free(r.err);
    assert_int_equal(ev_count(t->db, "SELECT count(*) FROM evidence"), 1);
}

static void prune_06_durations(void **state)
{
    (void)state;
    int64_t ms = 0;
    assert_true(evidence_duration_parse("7d", &ms) && ms == 7 * DAY_MS);
    assert_true(evidence_duration_parse("12h", &ms) && ms == 12 * 3600 * 1000);
    assert_true(evidence_duration_parse("30m", &ms) && ms == 30 * 60 * 1000);
    assert_true(evidence_duration_parse("45s", &ms) && ms == 45 * 1000);
    assert_true(evidence_duration_parse("0d", &ms) && ms == 0);
    assert_true(evidence_duration_parse("36500d", &ms));
    const char *bad[] = {"", "d", "7", "7 d", "7dd", "-1d", "+1d", "1.5h", "36501d", "99999999999999999999s", "7D"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(evidence_duration_parse(bad[i], &ms));
    assert_false(evidence_duration_parse(NULL, &ms));
}

#define T(f) cmocka_unit_test_setup_teardown(f, ev_setup, ev_teardown)

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        T(prune_01_old_rows_deleted_newest_and_young_mismatch_kept),
        T(prune_02_probes_keep_newest_and_old_decodes_go),
        T(prune_03_space_given_back_full_then_incremental),
        T(prune_04_writer_at_the_same_time_succeeds),
        T(prune_05_cli_outputs_and_exit_codes),
        T(prune_06_durations),
    };
    return ev_run_tests("test_evidence_prune", tests, sizeof tests / sizeof tests[0], argc, argv);
}
