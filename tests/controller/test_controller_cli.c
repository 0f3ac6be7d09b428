/* Controller tests end to end (the stepctl binary against real SQLite files)
 * and property tests over many seeded random situations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "ctl_test.h"
#include "dbfile.h"
#include "evidence_fingerprint.h"
#include "output.h"
#include "record.h"
#include "replay.h"

/* ---- end to end ------------------------------------------------------- */

struct e2e {
    struct ctl_tmp t;
    char ev[128], db[128], sit[128];
};

/* A temp dir with fixture's situation and an evidence store holding the
 * reports of fixtures/controller/EVIDENCE_DIR (NULL: an empty store). */
static void e2e_begin(struct e2e *e, const char *fixture, const char *evidence_dir)
{
    assert_int_equal(ctl_tmp_make(&e->t), 0);
    ctl_tmp_path(&e->t, "evidence.db", e->ev, sizeof e->ev);
    ctl_tmp_path(&e->t, "control.db", e->db, sizeof e->db);
    ctl_evidence_store(e->ev, evidence_dir);
    snprintf(e->sit, sizeof e->sit, "%s/%s", CTL_FIXTURE_DIR, fixture);
}

static json_t *out_json(struct e2e *e)
{
    char *text = ctl_out(&e->t, "out");
    json_t *j = json_loads(text, 0, NULL);
    if (!j)
        fail_msg("stdout is not JSON: %s", text);
    free(text);
    return j;
}

static void ctl_22_cli_main_scenario_decide_list_show_explain_replay(void **state)
{
    (void)state;
    struct e2e e;
    e2e_begin(&e, "main_situation.json", "main_evidence");
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s' --json", e.sit,
                             e.ev, e.db),
                     0);
    json_t *d = out_json(&e);
    char id[64];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(d, "decision_id")));
    assert_int_equal(strlen(id), 32);
    assert_string_equal(json_string_value(json_object_get(d, "chosen")), "C");
    assert_string_equal(json_string_value(json_object_get(d, "chosen_by")), "cost");
    assert_string_equal(json_string_value(json_object_get(d, "outcome")), "step_proposed");
    assert_int_equal(json_array_size(json_object_get(d, "eligible")), 1);
    json_t *a = json_array_get(json_object_get(d, "candidates"), 0);
    json_t *content = json_object_get(json_object_get(a, "conditions"), "content");
    assert_string_equal(json_string_value(json_object_get(content, "status")), "VIOLATION");
    json_t *newest = ctl_report("main_evidence/a-new.json"); /* the MISMATCH decides */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(content, "evidence"), "id")),
        json_string_value(json_object_get(newest, "evidence_id")));
    json_decref(newest);
    json_t *c = json_array_get(json_object_get(d, "candidates"), 2);
    json_t *cost = json_object_get(json_object_get(c, "conditions"), "cost");
    assert_true(json_real_value(json_object_get(json_object_get(cost, "delta_cost"), "low")) == 10.0);
    assert_true(json_real_value(json_object_get(json_object_get(cost, "delta_cost"), "high")) == 12.0);
    json_decref(d);

    assert_int_equal(ctl_run(&e.t, "decisions list --db '%s'", e.db), 0);
    char *out = ctl_out(&e.t, "out");
    assert_non_null(strstr(out, id));
    free(out);
    assert_int_equal(ctl_run(&e.t, "decisions show %s --db '%s'", id, e.db), 0);
    d = out_json(&e);
    assert_string_equal(json_string_value(json_object_get(json_object_get(
                            json_object_get(d, "situation"), "policy"), "id")),
                        "live-news-step");
    assert_int_equal(json_array_size(json_object_get(d, "evidence_rows")), 2);
    json_decref(d);
    assert_int_equal(ctl_run(&e.t, "explain %s --db '%s'", id, e.db), 0);
    out = ctl_out(&e.t, "out");
    ctl_assert_seven_answers(out);
    assert_non_null(strstr(out, "origin-shield budget service"));
    assert_non_null(strstr(out, "content VIOLATION"));
    assert_non_null(strstr(out, "content UNKNOWN"));
    free(out);
    assert_int_equal(ctl_run(&e.t, "replay %s --db '%s'", id, e.db), 0);
    out = ctl_out(&e.t, "out");
    assert_non_null(strstr(out, "identical"));
    free(out);
    ctl_tmp_remove(&e.t);
}

static void ctl_23_cli_exit_codes(void **state)
{
    (void)state;
    struct e2e e;
    e2e_begin(&e, "main_situation.json", NULL); /* empty evidence store */
    /* 4: nothing eligible (no content evidence at all), still recorded. */
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s'", e.sit, e.ev,
                             e.db),
                     4);
    char *out = ctl_out(&e.t, "out");
    assert_non_null(strstr(out, "refuse-new-sessions-503"));
    free(out);
    assert_int_equal(ctl_run(&e.t, "decisions list --db '%s' --json", e.db), 0);
    json_t *l = out_json(&e);
    assert_int_equal(json_array_size(l), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(l, 0), "outcome")),
                        "no_eligible_path");
    json_decref(l);
    /* 64: usage. */
    assert_int_equal(ctl_run(&e.t, "decide --input '%s'", e.sit), 64);
    assert_int_equal(ctl_run(&e.t, "decide --bogus"), 64);
    assert_int_equal(ctl_run(&e.t, "replay"), 64);
    assert_int_equal(ctl_run(&e.t, "decisions"), 64);
    /* 65: invalid situation, naming the field; unknown decision id. */
    char bad[128];
    json_t *sit = ctl_fixture_json("main_situation.json");
    ctl_set(sit, "policy.cost.budget_per_step", json_string("-1"));
    ctl_write_json(&e.t, "bad.json", sit, bad, sizeof bad);
    json_decref(sit);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s'", bad, e.ev,
                             e.db),
                     65);
    char *err = ctl_out(&e.t, "err");
    assert_non_null(strstr(err, "policy.cost.budget_per_step"));
    free(err);
    assert_int_equal(ctl_run(&e.t, "replay 00000000000000000000000000000000 --db '%s'", e.db), 65);
    /* 66: a file cannot be opened. */
    assert_int_equal(ctl_run(&e.t, "decide --input /nonexistent.json --evidence '%s' --db '%s'",
                             e.ev, e.db),
                     66);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence /nonexistent.db --db '%s'",
                             e.sit, e.db),
                     66);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db /nonexistent/c.db",
                             e.sit, e.ev),
                     66);
    assert_int_equal(ctl_run(&e.t, "explain x --db /nonexistent/c.db"), 66);
    /* --help on every command. */
    const char *cmds[] = {"decide", "decisions", "replay", "explain"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ctl_run(&e.t, "%s --help", cmds[i]), 0);
        out = ctl_out(&e.t, "out");
        assert_non_null(strstr(out, "usage: stepctl"));
        free(out);
    }
    ctl_tmp_remove(&e.t);
}

static char *file_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = malloc(1 << 20);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static void ctl_24_cli_evidence_db_is_never_written(void **state)
{
    (void)state;
    struct e2e e;
    e2e_begin(&e, "main_situation.json", "main_evidence");
    size_t n1, n2;
    char *before = file_bytes(e.ev, &n1);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s'", e.sit, e.ev,
                             e.db),
                     0);
    char *after = file_bytes(e.ev, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(before, after, n1);
    free(before);
    free(after);
    /* Its write-ahead log (kept by the writer, evidence/dbfile.h) is not
     * written either, and no rollback journal appears. */
    char side[160];
    snprintf(side, sizeof side, "%s-wal", e.ev);
    before = file_bytes(side, &n1);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s'", e.sit, e.ev,
                             e.db),
                     0);
    after = file_bytes(side, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(before, after, n1);
    snprintf(side, sizeof side, "%s-journal", e.ev);
    assert_int_not_equal(access(side, F_OK), 0);
    free(before);
    free(after);
    ctl_tmp_remove(&e.t);
}

static void ctl_25_cli_replay_of_tampered_record_exits_3(void **state)
{
    (void)state;
    struct e2e e;
    e2e_begin(&e, "cd_situation.json", "cd_evidence");
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s' --json", e.sit,
                             e.ev, e.db),
                     0);
    json_t *d = out_json(&e);
    char id[64];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(d, "decision_id")));
    json_decref(d);
    /* Someone rewrites the recorded evidence: D's MATCH becomes a MISMATCH. */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(e.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE decision_evidence SET verdict='MISMATCH' WHERE "
                                      "path_id='D'", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(ctl_run(&e.t, "replay %s --db '%s'", id, e.db), 3);
    char *out = ctl_out(&e.t, "out");
    assert_non_null(strstr(out, "DIFFERENT"));
    assert_non_null(strstr(out, "candidates[1].conditions.content.status"));
    free(out);
    ctl_tmp_remove(&e.t);
}

static void ctl_26_cli_no_answer_without_record(void **state)
{
    (void)state;
    struct e2e e;
    e2e_begin(&e, "main_situation.json", "main_evidence");
    sqlite3 *db; /* a control.db of a future schema version */
    assert_int_equal(sqlite3_open(e.db, &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE decisions (id TEXT); PRAGMA user_version = 9", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s' --json", e.sit,
                             e.ev, e.db),
                     66);
    char *out = ctl_out(&e.t, "out");
    /* nothing was decided without a record: no answer, only the error object (--json) */
    assert_null(strstr(out, "decision_id"));
    assert_non_null(strstr(out, "{\"error\":{\"program\":\"stepctl\",\"command\":\"decide\",\"exit\":66"));
    free(out);
    ctl_tmp_remove(&e.t);
}

/* ---- what is stored, whose file it is (issue 9) ------------------------- */

/* Decides the main fixture in a fresh e2e; the decision id into id. */
static void decide_main(struct e2e *e, char id[64])
{
    e2e_begin(e, "main_situation.json", "main_evidence");
    assert_int_equal(ctl_run(&e->t, "decide --input '%s' --evidence '%s' --db '%s' --json", e->sit,
                             e->ev, e->db),
                     0);
    json_t *d = out_json(e);
    snprintf(id, 64, "%s", json_string_value(json_object_get(d, "decision_id")));
    json_decref(d);
}

/* Replay after one edit of control.db: exit want, naming what differs. */
static void replay_after(const char *sql, int want, const char *named)
{
    struct e2e e;
    char id[64];
    decide_main(&e, id);
    if (sql)
        assert_int_equal(ctl_sql(e.db, sql), 0);
    int rc = ctl_run(&e.t, "replay %s --db '%s'", id, e.db);
    char *out = ctl_out(&e.t, "out");
    if (rc != want || (named && !strstr(out, named)))
        fail_msg("after \"%s\": replay exit %d (want %d), output:\n%s", sql ? sql : "", rc, want,
                 out);
    free(out);
    ctl_tmp_remove(&e.t);
}

/* Replay compares every stored column and condition row, not only the
 * answer it recomputes: an edited choice is never "identical". */
static void ctl_34_cli_replay_checks_every_stored_column_and_row(void **state)
{
    (void)state;
    replay_after(NULL, 0, "identical");
    replay_after("UPDATE decisions SET chosen = 'A'", 3, "decisions.chosen: recorded \"A\"");
    replay_after("UPDATE decisions SET outcome = 'no_eligible_path'", 3, "decisions.outcome");
    replay_after("UPDATE decisions SET chosen_by = 'order'", 3, "decisions.chosen_by");
    replay_after("UPDATE decisions SET refusal_id = 'x'", 3, "decisions.refusal_id");
    replay_after("UPDATE decisions SET policy_version = '4'", 3, "decisions.policy_version");
    replay_after("UPDATE decision_conditions SET status = 'PASS' WHERE path_id = 'A' AND "
                 "condition = 'content'", 3, "decision_conditions.A/content.status");
    replay_after("UPDATE decision_conditions SET eligible = 1 WHERE path_id = 'B'", 3,
                 "decision_conditions.B/content.eligible");
    replay_after("UPDATE decision_conditions SET data = '{}' WHERE path_id = 'C' AND "
                 "condition = 'cost'", 3, "decision_conditions.C/cost.data");
    replay_after("DELETE FROM decision_conditions WHERE path_id = 'B' AND condition = 'qoe'", 3,
                 "decision_conditions.B/qoe: recorded (absent)");
    replay_after("INSERT INTO decision_conditions SELECT decision_id, 'Z', condition, status, "
                 "reason, detail, eligible, data FROM decision_conditions WHERE path_id = 'C'",
                 3, "decision_conditions.Z/content: recorded");
    replay_after("DROP TABLE decision_conditions", 3, "decision_conditions (the table is missing)");
    replay_after("DROP TABLE decision_evidence", 3, "decision_evidence (the table is missing");
}

static void digest(const char *path, char out[65])
{
    size_t n = 0;
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = malloc(64 << 20);
    assert_non_null(b);
    n = fread(b, 1, 64 << 20, f);
    fclose(f);
    evidence_sha256_hex(b, n, out);
    free(b);
}

static bool exists(const char *path, const char *suffix)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return access(p, F_OK) == 0;
}

/* Runs a stepctl command expected to refuse a store: exit 66, stderr naming
 * the reason. */
static void refused(struct e2e *e, const char *why, const char *fmt, const char *a, const char *b)
{
    char args[1024];
    snprintf(args, sizeof args, fmt, a, b);
    int rc = ctl_run(&e->t, "%s", args);
    char *err = ctl_out(&e->t, "err");
    if (rc != 66 || !strstr(err, why))
        fail_msg("stepctl %s: exit %d (want 66), stderr does not say \"%s\": %s", args, rc, why, err);
    free(err);
}

/* Each store knows its own file: a foreign file, the other store, or a
 * schema version this build cannot use is refused with exit 66 by every
 * command, before anything is written to it (same digest, no WAL switch, no
 * side file); a control.db from before application_id is adopted. */
static void ctl_35_cli_stores_refuse_files_that_are_not_theirs(void **state)
{
    (void)state;
    struct e2e e;
    char id[64], d1[65], d2[65], d3[65], d4[65];
    decide_main(&e, id);
    /* --evidence and --db swapped */
    digest(e.ev, d1);
    digest(e.db, d2);
    refused(&e, "were two options swapped", "decide --input '%s' --evidence '%s' --db X", e.sit, e.db);
    char args[512];
    snprintf(args, sizeof args, "decide --input '%s' --evidence '%%s' --db '%%s'", e.sit);
    refused(&e, "were two options swapped", args, e.db, e.ev);
    refused(&e, "were two options swapped", "decisions list --db '%s'%s", e.ev, "");
    refused(&e, "were two options swapped", "decisions show x --db '%s'%s", e.ev, "");
    refused(&e, "were two options swapped", "replay x --db '%s'%s", e.ev, "");
    refused(&e, "were two options swapped", "explain x --db '%s'%s", e.ev, "");
    digest(e.ev, d3);
    digest(e.db, d4);
    assert_string_equal(d1, d3);
    assert_string_equal(d2, d4);
    /* another application's file, with and without an application_id, in
     * rollback-journal mode: still so afterwards, and byte-identical */
    const char *foreign[] = {"CREATE TABLE t(x); INSERT INTO t VALUES (1);",
                             "CREATE TABLE t(x); PRAGMA application_id = 1234;"};
    for (int i = 0; i < 2; i++) {
        char f[160];
        snprintf(f, sizeof f, "%s/foreign%d.db", e.t.dir, i);
        assert_int_equal(ctl_sql(f, foreign[i]), 0);
        digest(f, d1);
        refused(&e, i ? "another application" : "not an evidence store", args, f, e.db);
        refused(&e, i ? "another application" : "not a control.db", args, e.ev, f);
        refused(&e, i ? "another application" : "not a control.db", "decisions list --db '%s'%s", f, "");
        digest(f, d2);
        assert_string_equal(d1, d2);
        assert_false(exists(f, "-wal"));
        assert_false(exists(f, "-shm"));
    }
    /* a schema version this build does not know: 66 in every command
     * (control.db: this build writes REC_SCHEMA_VERSION and reads 1 to it) */
    ctl_sql(e.db, "PRAGMA user_version = 99");
    refused(&e, "schema version 99", args, e.ev, e.db);
    refused(&e, "schema version 99", "decisions list --db '%s'%s", e.db, "");
    refused(&e, "schema version 99", "replay %s --db '%s'", id, e.db);
    refused(&e, "schema version 99", "explain %s --db '%s'", id, e.db);
    refused(&e, "schema version 99", "grants list --db '%s'%s", e.db, "");
    refused(&e, "schema version 99", "revoke x --reason r --db '%s'%s", e.db, "");
    ctl_sql(e.ev, "PRAGMA user_version = 99"); /* evidence.db: this build reads 1 to 5 */
    char other[160];
    ctl_tmp_path(&e.t, "other-control.db", other, sizeof other);
    refused(&e, "schema version 99", args, e.ev, other);
    assert_false(exists(other, "")); /* nothing decided, nothing created */
    /* a control.db from before application_id (v1, exactly our v1 tables):
     * read as it is, adopted (and migrated to v2) by the next writer */
    ctl_sql(e.db, CTL_V9_UNDONE "DROP TABLE store_macs; DROP TABLE store_keying; "
                  "DROP TABLE clock_marks; DROP TABLE delivery_removals; DROP TABLE session_reports; DROP TABLE sessions;"
                  "DROP TABLE next_decisions; DROP TABLE decision_commitments;"
                  "DROP TABLE grant_events; DROP TABLE reservations; DROP TABLE allocations;"
                  "DROP TABLE grants; DROP INDEX decisions_policy; DROP INDEX decisions_scope;"
                  "PRAGMA user_version = 1; PRAGMA application_id = 0");
    ctl_sql(e.ev, "PRAGMA user_version = 2");
    digest(e.db, d1);
    assert_int_equal(ctl_run(&e.t, "decisions list --db '%s'", e.db), 0);
    digest(e.db, d2);
    assert_string_equal(d1, d2);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s'", e.sit, e.ev,
                             e.db), 0);
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(e.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), DBFILE_APPID_CONTROL);
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_int_equal(ctl_query_int(e.db, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    ctl_tmp_remove(&e.t);
}

/* The reading commands on stores in a directory the reader cannot write
 * (as root: read as user nobody), through SQLite's read-only access to WAL
 * files; with no WAL file left, through immutable; and a refusal that says
 * why when the WAL index cannot be made; then on a read-only mount. */
static void ctl_36_cli_readers_work_on_stores_they_cannot_write(void **state)
{
    (void)state;
    struct e2e e;
    char id[64], ro[160], rw[160], ev[200], db[200], mine[200], d1[65], d2[65];
    decide_main(&e, id);
    ctl_tmp_path(&e.t, "ro", ro, sizeof ro);
    ctl_tmp_path(&e.t, "rw", rw, sizeof rw);
    assert_int_equal(mkdir(ro, 0755), 0);
    assert_int_equal(mkdir(rw, 0777), 0);
    assert_int_equal(chmod(rw, 0777), 0);
    assert_int_equal(chmod(e.t.dir, 0755), 0);
    snprintf(ev, sizeof ev, "%s/evidence.db", ro);
    snprintf(db, sizeof db, "%s/control.db", ro);
    snprintf(mine, sizeof mine, "%s/control.db", rw);
    /* the stores as their writers leave them: WAL files kept */
    ctl_evidence_store(ev, "main_evidence");
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s' --json", e.sit,
                             ev, db), 0);
    json_t *d = out_json(&e);
    snprintf(id, 64, "%s", json_string_value(json_object_get(d, "decision_id")));
    json_decref(d);
    assert_true(exists(ev, "-wal") && exists(ev, "-shm") && exists(db, "-wal"));
    assert_int_equal(chmod(ro, 0555), 0);
    print_message("reader: %s\n", ctl_reader_is_other_user() ? "user nobody (setpriv)" : "this user");
    for (int round = 0; round < 2; round++) {
        digest(ev, d1);
        assert_int_equal(ctl_run_reader(&e.t, "decide --input '%s' --evidence '%s' --db '%s'",
                                        e.sit, ev, mine), 0);
        assert_int_equal(ctl_run_reader(&e.t, "decisions list --db '%s'", db), 0);
        assert_int_equal(ctl_run_reader(&e.t, "decisions show %s --db '%s'", id, db), 0);
        assert_int_equal(ctl_run_reader(&e.t, "replay %s --db '%s'", id, db), 0);
        assert_int_equal(ctl_run_reader(&e.t, "explain %s --db '%s'", id, db), 0);
        digest(ev, d2);
        assert_string_equal(d1, d2);
        /* round 2: the WAL files are gone (a store copied without them, or
         * closed by an older writer): every committed row is in the main
         * file, read through immutable */
        assert_int_equal(chmod(ro, 0755), 0);
        ctl_sql(ev, "SELECT count(*) FROM sqlite_master");
        ctl_sql(db, "SELECT count(*) FROM sqlite_master");
        assert_false(exists(ev, "-wal") || exists(db, "-wal"));
        assert_int_equal(chmod(ro, 0555), 0);
    }
    /* a log without its index, where the reader cannot create one */
    assert_int_equal(chmod(ro, 0755), 0);
    ctl_evidence_store(ev, NULL); /* a writer leaves -wal and -shm */
    char shm[220];
    snprintf(shm, sizeof shm, "%s-shm", ev);
    assert_int_equal(unlink(shm), 0);
    assert_int_equal(chmod(ro, 0555), 0);
    if (ctl_reader_is_other_user() || geteuid() != 0) {
        assert_int_equal(ctl_run_reader(&e.t, "decide --input '%s' --evidence '%s' --db '%s'",
                                        e.sit, ev, mine), 66);
        char *err = ctl_out(&e.t, "err");
        assert_non_null(strstr(err, "write-ahead log"));
        assert_non_null(strstr(err, "-shm"));
        free(err);
    }
    /* a read-only mount (root with a mount namespace only) */
    assert_int_equal(chmod(ro, 0755), 0);
    ctl_evidence_store(ev, "main_evidence");
    int rc = ctl_run_ro_mount(&e.t, ro, "decide --input '%s' --evidence '%s' --db '%s'", e.sit, ev,
                              mine);
    if (rc == -2) {
        print_message("read-only mount: not testable here (needs root and unshare -m)\n");
    } else {
        assert_int_equal(rc, 0);
        ctl_sql(ev, "SELECT count(*) FROM sqlite_master"); /* no WAL files: immutable on the mount */
        assert_int_equal(ctl_run_ro_mount(&e.t, ro, "decisions list --db '%s'", db), 0);
        assert_int_equal(ctl_run_ro_mount(&e.t, ro, "decide --input '%s' --evidence '%s' --db '%s'",
                                          e.sit, ev, mine), 0);
    }
    ctl_tmp_remove(&e.t);
}

/* Shifts every "*_ms" integer of the situation by delta (a template's times
 * moved to now). */
static void shift_times(json_t *j, int64_t delta)
{
    const char *k;
    json_t *v;
    size_t i;
    if (json_is_array(j))
        json_array_foreach(j, i, v) shift_times(v, delta);
    if (!json_is_object(j))
        return;
    json_object_foreach(j, k, v)
    {
        size_t n = strlen(k);
        if (json_is_integer(v) && n > 3 && !strcmp(k + n - 3, "_ms"))
            json_integer_set(v, json_integer_value(v) + delta);
        else
            shift_times(v, delta);
    }
}

/* The fixtures are templates for real use: a copy of main_situation.json,
 * moved to now, decides as documented on evidence written right now by
 * exactav verify (A: a tampered copy, MISMATCH; C: an exact copy, MATCH; B:
 * nothing). */
static void ctl_37_cli_copied_template_decides_on_evidence_from_exactav_verify(void **state)
{
    (void)state;
    struct e2e e;
    e2e_begin(&e, "main_situation.json", NULL);
    char bind[200], sit[200];
    ctl_tmp_path(&e.t, "ref.json", bind, sizeof bind);
    assert_int_equal(ctl_run_program(&e.t, CTL_EXACTAV,
                                     "bind --channel news-1 --program-version pv-42 --rendition "
                                     "720p --out '%s' '%s/ref.ts'", bind, CTL_MEDIA_DIR), 0);
    static const struct {
        const char *path, *candidate;
        int exit;
    } checks[] = {{"A", "cand_pixels.ts", 1}, {"C", "cand_copy.ts", 0}};
    for (int i = 0; i < 2; i++)
        assert_int_equal(ctl_run_program(&e.t, CTL_EXACTAV,
                                         "verify --no-progress --reference '%s' --candidate "
                                         "'%s/%s' --path-id %s --evidence '%s'",
                                         bind, CTL_MEDIA_DIR, checks[i].candidate, checks[i].path,
                                         e.ev),
                         checks[i].exit);
    json_t *tpl = ctl_fixture_json("main_situation.json");
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    shift_times(tpl, (int64_t)now.tv_sec * 1000 + 60000 - CTL_T); /* T: a minute from now */
    ctl_write_json(&e.t, "situation.json", tpl, sit, sizeof sit);
    json_decref(tpl);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s' --json", sit,
                             e.ev, e.db), 0);
    json_t *d = out_json(&e);
    assert_string_equal(json_string_value(json_object_get(d, "chosen")), "C");
    assert_string_equal(json_string_value(json_object_get(d, "chosen_by")), "cost");
    static const char *const want[3][2] = {
        {"VIOLATION", "mismatch"}, {"UNKNOWN", "no_evidence"}, {"PASS", "match"}};
    for (size_t i = 0; i < 3; i++) {
        json_t *content = json_object_get(
            json_object_get(json_array_get(json_object_get(d, "candidates"), i), "conditions"),
            "content");
        assert_string_equal(json_string_value(json_object_get(content, "status")), want[i][0]);
        assert_string_equal(json_string_value(json_object_get(content, "reason")), want[i][1]);
    }
    json_decref(d);
    ctl_tmp_remove(&e.t);
}

/* Retention (issue 22): `exactav evidence prune` deletes the rows a decision
 * no longer needs (keeping the newest of each scope), and a decision copies
 * the rows it used into control.db (decision_evidence): after a prune that
 * deleted rows, and with no evidence.db at all, replay is identical; and a
 * new decide on the pruned store decides exactly as before. */
static void ctl_70_cli_prune_changes_no_decision_and_replay_needs_no_evidence_db(void **state)
{
    (void)state;
    struct e2e e;
    char id[64];
    decide_main(&e, id);
    json_t *before = out_json(&e);
    long long rows = ctl_query_int(e.ev, "SELECT count(*) FROM evidence");
    assert_int_equal(ctl_run_program(&e.t, CTL_EXACTAV,
                                     "evidence prune --evidence '%s' --keep 0s --keep-mismatch 0s "
                                     "--json", e.ev), 0);
    assert_true(ctl_query_int(e.ev, "SELECT count(*) FROM evidence") < rows); /* rows were deleted */
    assert_int_equal(ctl_run(&e.t, "replay %s --db '%s'", id, e.db), 0);
    char *out = ctl_out(&e.t, "out");
    assert_non_null(strstr(out, "identical"));
    free(out);
    assert_int_equal(ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s' --json", e.sit,
                             e.ev, e.db), 0);
    json_t *again = out_json(&e);
    assert_true(json_equal(json_object_get(before, "candidates"), json_object_get(again, "candidates")));
    assert_true(json_equal(json_object_get(before, "chosen"), json_object_get(again, "chosen")));
    json_decref(again);
    json_decref(before);
    assert_int_equal(unlink(e.ev), 0);
    char side[160];
    snprintf(side, sizeof side, "%s-wal", e.ev);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", e.ev);
    unlink(side);
    assert_int_equal(ctl_run(&e.t, "replay %s --db '%s'", id, e.db), 0);
    out = ctl_out(&e.t, "out");
    assert_non_null(strstr(out, "identical"));
    free(out);
    ctl_tmp_remove(&e.t);
}

/* A row whose columns were edited, or whose report exactav verify could not
 * have written, is never applicable: UNKNOWN evidence_malformed, the reason
 * on stderr, never PASS, and an older valid row does not take its place. */
static void ctl_38_cli_tampered_or_forged_evidence_is_malformed_never_pass(void **state)
{
    (void)state;
    static const struct {
        const char *sql, *path, *why;
    } cases[] = {
        /* A's newest row is a MISMATCH: its column now says MATCH */
        {"UPDATE evidence SET verdict = 'MATCH', reason = 'identical' WHERE path_id = 'A' AND "
         "verdict = 'MISMATCH'", "A", "verdict: the column (MATCH) differs from the report"},
        /* ... and its report too, while its tracks still say MISMATCH */
        {"UPDATE evidence SET verdict = 'MATCH', reason = 'identical', report = json_set(report, "
         "'$.verdict', 'MATCH', '$.reason', 'identical') WHERE path_id = 'A' AND verdict = "
         "'MISMATCH'", "A", "does not follow from the tracks"},
        /* a row for B with only the required fields and a made-up fingerprint */
        {"INSERT INTO evidence (id, check_kind, verdict, reason, profile_id, profile_fingerprint, "
         "path_id, channel, rendition, program_version, observed_at_ms, observed_end_ms, "
         "recorded_at_ms, report) VALUES ('forged', 'exact-av-v1', 'MATCH', 'identical', "
         "'exact-av-v1', 'x', 'B', 'news-1', '720p', 'pv-42', 1764409900000, 1764409900000, "
         "1764409900000, '{\"check_kind\":\"exact-av-v1\",\"evidence_id\":\"forged\","
         "\"verdict\":\"MATCH\",\"reason\":\"identical\",\"profile\":{\"id\":\"exact-av-v1\","
         "\"version\":1,\"fingerprint\":\"x\"},\"observed_at_ms\":1764409900000,\"observed_end_ms\":"
         "1764409900000}')", "B", "profile.fingerprint"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct e2e e;
        e2e_begin(&e, "main_situation.json", "main_evidence");
        assert_int_equal(ctl_sql(e.ev, cases[i].sql), 0);
        int rc = ctl_run(&e.t, "decide --input '%s' --evidence '%s' --db '%s' --json", e.sit,
                         e.ev, e.db);
        assert_true(rc == 0 || rc == 4);
        char *err = ctl_out(&e.t, "err");
        if (!strstr(err, cases[i].why))
            fail_msg("case %zu: stderr does not say \"%s\": %s", i, cases[i].why, err);
        free(err);
        json_t *d = out_json(&e);
        size_t k = cases[i].path[0] == 'A' ? 0 : 1;
        json_t *c = json_array_get(json_object_get(d, "candidates"), k);
        json_t *content = json_object_get(json_object_get(c, "conditions"), "content");
        assert_string_equal(json_string_value(json_object_get(content, "status")), "UNKNOWN");
        assert_string_equal(json_string_value(json_object_get(content, "reason")),
                            "evidence_malformed");
        assert_false(json_is_true(json_object_get(c, "eligible")));
        json_decref(d);
        ctl_tmp_remove(&e.t);
    }
}

/* ---- properties over seeded random situations -------------------------- */

#define PROP_RUNS 300
#define REPLAY_RUNS 150 /* each also writes a record: kept quick under ASan */

static uint64_t rnd(uint64_t *s) /* xorshift64*: deterministic per seed */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static int64_t pick(uint64_t *s, int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(rnd(s) % (uint64_t)(hi - lo + 1));
}

static void gen_qoe(json_t *c, uint64_t *s)
{
    int64_t attempts = pick(s, 0, 1500), succ = attempts ? pick(s, attempts * 96 / 100, attempts) : 0;
    int64_t unk = pick(s, 0, attempts - succ);
    ctl_set(c, "qoe.attempts", json_integer(attempts));
    ctl_set(c, "qoe.successes", json_integer(succ));
    ctl_set(c, "qoe.unknown", json_integer(unk));
    ctl_set(c, "qoe.failures", json_integer(attempts - succ - unk));
    ctl_set(c, "qoe.startup_p90_ms", json_integer(pick(s, 600, 3000)));
    ctl_set(c, "qoe.observed_at_ms", json_integer(CTL_T - pick(s, 0, 1000000)));
    ctl_set(c, "qoe.complete", json_boolean(pick(s, 0, 9) > 0));
    if (pick(s, 0, 9) == 0)
        ctl_set(c, "qoe.cohort.isp", json_string("isp-other"));
}

static void gen_resources(json_t *c, uint64_t *s)
{
    ctl_set(c, "resources.observed_at_ms", json_integer(CTL_T - pick(s, 0, 400000)));
    ctl_set(c, "resources.model_valid", json_boolean(pick(s, 0, 9) > 0));
    json_t *w = json_object_get(json_object_get(c, "resources"), "windows");
    json_t *it = json_array_get(json_object_get(json_array_get(w, pick(s, 0, 1)), "items"), 0);
    json_object_set_new(it, "step_upper", json_integer(pick(s, 0, 450)));
}

/* Each part is either left as in the fixture (where every condition of C
 * passes) or randomized, so that all outcomes occur often. */
static void gen_candidate(json_t *c, struct evidence_rows *rows, uint64_t *s)
{
    static const char *st[] = {"PASS", "PASS", "VIOLATION", "UNKNOWN"};
    static const char *vd[] = {"MATCH", "MATCH", "MISMATCH", "UNKNOWN"};
    const char *id = json_string_value(json_object_get(c, "path_id"));
    if (pick(s, 0, 3) == 0) {
        ctl_set(c, "access.status", json_string(st[pick(s, 0, 3)]));
        ctl_set(c, "access.observed_at_ms", json_integer(CTL_T - pick(s, 0, 700000)));
    }
    if (pick(s, 0, 3) == 0)
        gen_qoe(c, s);
    if (pick(s, 0, 3) == 0)
        gen_resources(c, s);
    if (pick(s, 0, 3) == 0)
        ctl_set(c, "cost.currency", json_string(pick(s, 0, 3) ? "EUR" : "USD"));
    int64_t low = pick(s, 0, 1500);
    ctl_set(c, "cost.step_usage.low.egress_gb", json_integer(low));
    ctl_set(c, "cost.step_usage.high.egress_gb", json_integer(low + pick(s, 0, 800)));
    char rid[32];
    snprintf(rid, sizeof rid, "ev-%s-0", id);
    if (pick(s, 0, 5) > 0)
        ctl_row(rows, rid, id, "MATCH", CTL_T - pick(s, 0, 800000));
    for (int64_t k = pick(s, -2, 2); k > 0; k--) {
        snprintf(rid, sizeof rid, "ev-%s-%lld", id, (long long)k);
        ctl_row(rows, rid, id, vd[pick(s, 0, 3)], CTL_T - pick(s, 0, 1200000));
        if (pick(s, 0, 9) == 0)
            strcpy(rows->rows[rows->n - 1].program_version, "pv-41");
    }
}

/* A random variation of the main fixture (observations never after T). */
static json_t *gen(struct evidence_rows *rows, uint64_t *s)
{
    json_t *sit = ctl_fixture_json("main_situation.json");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(sit, "candidates"), i, c) gen_candidate(c, rows, s);
    ctl_set(sit, "policy.cost.tie_abs", json_integer(pick(s, 0, 3)));
    ctl_set(sit, "policy.qoe.startup_tie_ms", json_integer(pick(s, 0, 500)));
    const char *orders[][4] = {{"A", "B", "C", "D"}, {"C", "B", "A", "D"}, {"B", "C", "A", "D"}};
    const char **o = orders[pick(s, 0, 2)];
    ctl_set(sit, "policy.order", json_pack("[s,s,s,s]", o[0], o[1], o[2], o[3]));
    return sit;
}

/* Turns one condition of candidate c into a certain VIOLATION. */
static void add_violation(json_t *sit, json_t *c, struct evidence_rows *rows, int kind)
{
    const char *id = json_string_value(json_object_get(c, "path_id"));
    switch (kind) {
    case COND_CONTENT:
        ctl_row(rows, "zz-newest-mismatch", id, "MISMATCH", CTL_T); /* newest, fresh */
        break;
    case COND_ACCESS:
        ctl_set(c, "access.status", json_string("VIOLATION"));
        ctl_set(c, "access.observed_at_ms", json_integer(CTL_T));
        break;
    case COND_QOE: {
        json_t *fixture = ctl_fixture_json("main_situation.json");
        json_object_set_new(c, "qoe", json_deep_copy(json_object_get(ctl_cand(fixture, "C"), "qoe")));
        json_decref(fixture);
        ctl_set(c, "qoe.startup_p90_ms", json_integer(99999));
        break;
    }
    case COND_RESOURCES:
        ctl_set(c, "resources.observed_at_ms", json_integer(CTL_T));
        ctl_set(c, "resources.model_valid", json_true());
        json_object_set_new(json_array_get(json_object_get(json_array_get(json_object_get(
                                json_object_get(c, "resources"), "windows"), 0), "items"), 1),
                            "limit", json_integer(0));
        break;
    default:
        ctl_set(c, "cost.currency", json_string("EUR"));
        ctl_set(c, "cost.step_usage.high.egress_gb", json_integer(1000000));
        break;
    }
    (void)sit;
}

static void ctl_27_prop_adding_a_violation_never_makes_a_candidate_chosen(void **state)
{
    (void)state;
    uint64_t seed = 0x5eed0001ULL;
    int chosen_before = 0;
    for (int run = 0; run < PROP_RUNS; run++) {
        struct evidence_rows rows = {0};
        json_t *sit = gen(&rows, &seed);
        size_t victim = (size_t)pick(&seed, 0, 2);
        int kind = (int)pick(&seed, 0, COND_N - 1);
        struct sit_situation s0;
        struct dcn_result r0;
        ctl_decide(sit, &rows, &s0, &r0);
        chosen_before += r0.chosen == (long)victim;
        add_violation(sit, json_array_get(json_object_get(sit, "candidates"), victim), &rows, kind);
        struct sit_situation s;
        struct dcn_result r;
        ctl_decide(sit, &rows, &s, &r);
        if (r.c[victim].cond[kind].status != COND_VIOLATION)
            fail_msg("run %d: %s not VIOLATION after adding one", run, cond_kind_name(kind));
        assert_false(r.c[victim].eligible);
        assert_true(r.chosen != (long)victim);
        dcn_free(&r);
        sit_free(&s);
        dcn_free(&r0);
        sit_free(&s0);
        evidence_rows_free(&rows);
        json_decref(sit);
    }
    /* The generator must make the property bite: victims were often chosen. */
    printf("victim chosen before the violation in %d of %d runs\n", chosen_before, PROP_RUNS);
    assert_true(chosen_before > PROP_RUNS / 20);
}

static void shift_older(json_t *sit, struct evidence_rows *rows, int64_t d)
{
    for (size_t i = 0; i < rows->n; i++)
        rows->rows[i].observed_at_ms -= d;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(sit, "candidates"), i, c)
    {
        const char *keys[] = {"access", "qoe", "resources"};
        for (int k = 0; k < 3; k++) {
            json_t *o = json_object_get(c, keys[k]);
            json_t *t = json_object_get(o, "observed_at_ms");
            if (t)
                json_object_set_new(o, "observed_at_ms", json_integer(json_integer_value(t) - d));
        }
    }
}

static void ctl_28_prop_older_evidence_never_turns_unknown_into_pass(void **state)
{
    (void)state;
    uint64_t seed = 0x5eed0002ULL;
    int unknowns = 0;
    for (int run = 0; run < PROP_RUNS; run++) {
        struct evidence_rows rows = {0};
        json_t *sit = gen(&rows, &seed);
        struct sit_situation s0, s1;
        struct dcn_result r0, r1;
        ctl_decide(sit, &rows, &s0, &r0);
        shift_older(sit, &rows, pick(&seed, 1, 1200000));
        ctl_decide(sit, &rows, &s1, &r1);
        for (size_t i = 0; i < r0.n; i++) {
            for (int k = 0; k < COND_N; k++)
                if (r0.c[i].cond[k].status == COND_UNKNOWN) {
                    unknowns++;
                    if (r1.c[i].cond[k].status == COND_PASS)
                        fail_msg("run %d: %s of %s went UNKNOWN -> PASS", run, cond_kind_name(k),
                                 r0.c[i].path_id);
                }
            assert_true(r0.c[i].eligible || !r1.c[i].eligible);
        }
        dcn_free(&r0);
        dcn_free(&r1);
        sit_free(&s0);
        sit_free(&s1);
        evidence_rows_free(&rows);
        json_decref(sit);
    }
    assert_true(unknowns > PROP_RUNS);
}

static void ctl_29_prop_replay_reproduces_every_recorded_decision(void **state)
{
    (void)state;
    struct ctl_tmp t;
    char path[128], err[256];
    assert_int_equal(ctl_tmp_make(&t), 0);
    ctl_tmp_path(&t, "control.db", path, sizeof path);
    sqlite3 *db;
    assert_int_equal(rec_open(path, REC_CREATE, &db, err, sizeof err), REC_OK);
    /* Durability is not under test here (ctl_19, ctl_26): skip 300 fsyncs. */
    assert_int_equal(sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL), SQLITE_OK);
    uint64_t seed = 0x5eed0003ULL;
    char ids[REPLAY_RUNS][REC_ID_LEN];
    int outcomes[2] = {0, 0}, rules[4] = {0, 0, 0, 0};
    for (int run = 0; run < REPLAY_RUNS; run++) {
        struct evidence_rows rows = {0};
        json_t *sit = gen(&rows, &seed);
        struct sit_situation s;
        struct dcn_result r;
        ctl_decide(sit, &rows, &s, &r);
        outcomes[r.outcome]++;
        rules[r.pref.rule]++;
        assert_int_equal(rec_new_id(ids[run]), 0);
        json_t *res = out_result(&s, &r, ids[run], "test");
        char *text = json_dumps(sit, 0);
        struct rec_record rec = {ids[run], run, text, strlen(text), &rows, res};
        assert_int_equal(rec_insert(db, &rec, err, sizeof err), REC_OK);
        free(text);
        json_decref(res);
        dcn_free(&r);
        sit_free(&s);
        evidence_rows_free(&rows);
        json_decref(sit);
    }
    FILE *sink = fopen("/dev/null", "w");
    for (int run = 0; run < REPLAY_RUNS; run++) {
        struct rec_loaded l;
        struct sit_situation s;
        json_t *again;
        assert_int_equal(rec_load(db, ids[run], &l, err, sizeof err), REC_OK);
        assert_int_equal(sit_parse(l.situation, l.situation_len, &s, err, sizeof err), 0);
        assert_int_equal(rpl_recompute(&s, l.decision_time_ms, &l.rows, ids[run], "test", &again), 0);
        assert_int_equal(rpl_diff(l.result, again, sink), 0);
        json_decref(again);
        sit_free(&s);
        rec_loaded_free(&l);
    }
    fclose(sink);
    sqlite3_close(db);
    /* Both outcomes occurred, so both kinds of record were replayed. */
    printf("no_eligible_path %d, chosen by cost %d, qoe %d, order %d\n", outcomes[0], rules[1],
           rules[2], rules[3]);
    assert_true(outcomes[0] > 0 && outcomes[1] > 0);
    assert_true(rules[PREF_COST] > 0 && rules[PREF_QOE] > 0 && rules[PREF_ORDER] > 0);
    /* And through the binary, for a sample. */
    for (int run = 0; run < REPLAY_RUNS; run += 50)
        assert_int_equal(ctl_run(&t, "replay %s --db '%s'", ids[run], path), 0);
    ctl_tmp_remove(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctl_22_cli_main_scenario_decide_list_show_explain_replay),
        cmocka_unit_test(ctl_23_cli_exit_codes),
        cmocka_unit_test(ctl_24_cli_evidence_db_is_never_written),
        cmocka_unit_test(ctl_25_cli_replay_of_tampered_record_exits_3),
        cmocka_unit_test(ctl_26_cli_no_answer_without_record),
        cmocka_unit_test(ctl_27_prop_adding_a_violation_never_makes_a_candidate_chosen),
        cmocka_unit_test(ctl_28_prop_older_evidence_never_turns_unknown_into_pass),
        cmocka_unit_test(ctl_29_prop_replay_reproduces_every_recorded_decision),
        cmocka_unit_test(ctl_34_cli_replay_checks_every_stored_column_and_row),
        cmocka_unit_test(ctl_35_cli_stores_refuse_files_that_are_not_theirs),
        cmocka_unit_test(ctl_36_cli_readers_work_on_stores_they_cannot_write),
        cmocka_unit_test(ctl_37_cli_copied_template_decides_on_evidence_from_exactav_verify),
        cmocka_unit_test(ctl_70_cli_prune_changes_no_decision_and_replay_needs_no_evidence_db),
        cmocka_unit_test(ctl_38_cli_tampered_or_forged_evidence_is_malformed_never_pass),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
