/* Controller tests after the decision: schema v2 and its migration, grants,
 * the commitments ledger (and two processes racing for it), the allocation
 * rules, the request parser, the token bucket, `stepctl next` and explain.
 * Real SQLite files in temporary folders, the stepctl binary where a
 * command is tested. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "alloc.h"
#include "areq.h"
#include "ctl_test.h"
#include "dbfile.h"
#include "grant.h"
#include "loop_policy.h"
#include "output.h"
#include "record.h"
#include "replay.h"
#include "tbucket.h"

static char *err_text(struct ctl_world *w)
{
    return ctl_out(&w->t, "err");
}

static void assert_err_has(struct ctl_world *w, const char *needle)
{
    char *e = err_text(w);
    if (!strstr(e, needle))
        fail_msg("stderr lacks '%s': %s", needle, e);
    free(e);
}

static json_t *out_json(struct ctl_world *w)
{
    char *text = ctl_out(&w->t, "out");
    json_t *j = json_loads(text, 0, NULL);
    if (!j)
        fail_msg("stdout is not JSON: %s", text);
    free(text);
    return j;
}

#define q(w, ...) ctl_queryf((w)->db, __VA_ARGS__) /* ctl_test.h */

/* ---- schema v2 -------------------------------------------------------------- */

/* Schema version 1 as PR #1 wrote it (the file format a v2 build migrates). */
static const char schema_v1[] =
    "CREATE TABLE decisions (id TEXT PRIMARY KEY, recorded_at_ms INTEGER NOT NULL,"
    " decision_time_ms INTEGER NOT NULL, tool_version TEXT NOT NULL, policy_id TEXT NOT NULL,"
    " policy_version TEXT NOT NULL, intent_version TEXT NOT NULL, channel TEXT NOT NULL,"
    " rendition TEXT NOT NULL, program_version TEXT NOT NULL, outcome TEXT NOT NULL CHECK"
    " (outcome IN ('step_proposed','no_eligible_path')), chosen TEXT, chosen_by TEXT CHECK"
    " (chosen_by IS NULL OR chosen_by IN ('cost','qoe','order')), refusal_id TEXT,"
    " situation TEXT NOT NULL, result TEXT NOT NULL);"
    "CREATE TABLE decision_evidence (decision_id TEXT NOT NULL REFERENCES decisions(id),"
    " seq INTEGER NOT NULL, evidence_id TEXT NOT NULL, check_kind TEXT NOT NULL, verdict TEXT"
    " NOT NULL, reason TEXT NOT NULL, profile_id TEXT NOT NULL, path_id TEXT NOT NULL, channel"
    " TEXT NOT NULL, rendition TEXT NOT NULL, program_version TEXT NOT NULL, reference_version"
    " TEXT NOT NULL, observed_at_ms INTEGER NOT NULL, recorded_at_ms INTEGER NOT NULL,"
    " malformed INTEGER NOT NULL, PRIMARY KEY (decision_id, seq));"
    "CREATE TABLE decision_conditions (decision_id TEXT NOT NULL REFERENCES decisions(id),"
    " path_id TEXT NOT NULL, condition TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN"
    " ('PASS','VIOLATION','UNKNOWN')), reason TEXT NOT NULL, detail TEXT NOT NULL, eligible"
    " INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (decision_id, path_id, condition));"
    "CREATE INDEX decisions_time ON decisions (recorded_at_ms DESC);"
    "PRAGMA user_version = 1;";

static void record_fixture(sqlite3 *db, char id[REC_ID_LEN])
{
    json_t *sit = ctl_fixture_json("main_situation.json");
    struct evidence_rows rows = {0};
    ctl_row(&rows, "ev-c-1", "C", "MATCH", CTL_T - 300000);
    struct sit_situation s;
    struct dcn_result r;
    ctl_decide(sit, &rows, &s, &r);
    assert_int_equal(rec_new_id(id), 0);
    json_t *res = out_result(&s, &r, id, "test");
    char *text = json_dumps(sit, 0), err[256];
    struct rec_record rec = {id, 1, text, strlen(text), &rows, res};
    assert_int_equal(rec_insert(db, &rec, err, sizeof err), REC_OK);
    free(text);
    json_decref(res);
    dcn_free(&r);
    sit_free(&s);
    evidence_rows_free(&rows);
    json_decref(sit);
}

static void ctl_39_schema_v2_and_forward_migration_of_v1(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    sqlite3 *db;
    char err[256], id[REC_ID_LEN];
    /* A v1 file with one decision, as an older stepctl left it. */
    assert_int_equal(sqlite3_open(w.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, schema_v1, NULL, NULL, NULL), SQLITE_OK);
    record_fixture(db, id);
    sqlite3_close(db);
    assert_int_equal(q(&w, "PRAGMA user_version"), 1);
    /* Opened by a writer of this build: adopted (it predates application_id)
     * and migrated forward in one transaction, the decision kept and
     * replayable.  (Readers read it as it is: controller_58.) */
    assert_int_equal(rec_open(w.db, REC_WRITE, &db, err, sizeof err), REC_OK);
    sqlite3_close(db);
    assert_int_equal(q(&w, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_int_equal(q(&w, "PRAGMA application_id"), DBFILE_APPID_CONTROL);
    const char *tables[] = {"grants", "allocations", "reservations", "grant_events",
                            "decision_commitments", "next_decisions"};
    for (int i = 0; i < 6; i++)
        assert_int_equal(q(&w, "SELECT count(*) FROM sqlite_master WHERE name = '%s'", tables[i]),
                         1);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", id, w.db), 0);
    /* A v1 file of ours (application_id set) that the migration cannot
     * apply to stays v1, without a partial schema (one transaction). */
    char other[160];
    ctl_tmp_path(&w.t, "blocked.db", other, sizeof other);
    assert_int_equal(sqlite3_open(other, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, schema_v1, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE next_decisions (x);"
                                      "PRAGMA application_id = 1398031188", /* "STCT" */
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rec_open(other, REC_WRITE, &db, err, sizeof err), REC_FAILED);
    assert_int_equal(ctl_query_int(other, "PRAGMA user_version"), 1);
    /* The same without application_id is not ours (its tables are not
     * schema v1's): refused before anything is written. */
    assert_int_equal(ctl_sql(other, "PRAGMA application_id = 0"), 0);
    assert_int_equal(rec_open(other, REC_WRITE, &db, err, sizeof err), REC_OPEN_FAILED);
    assert_non_null(strstr(err, "not a control.db"));
    assert_int_equal(ctl_query_int(other, "PRAGMA application_id"), 0);
    assert_int_equal(ctl_query_int(other, "PRAGMA user_version"), 1);
    assert_int_equal(ctl_query_int(other, "SELECT count(*) FROM sqlite_master WHERE name = "
                                          "'grants'"),
                     0);
    /* A fresh file is created at the current version directly. */
    ctl_tmp_path(&w.t, "fresh.db", other, sizeof other);
    assert_int_equal(rec_open(other, REC_CREATE, &db, err, sizeof err), REC_OK);
    sqlite3_close(db);
    assert_int_equal(ctl_query_int(other, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_int_equal(ctl_query_int(other, "PRAGMA application_id"), DBFILE_APPID_CONTROL);
    /* Only decide and serve create one: grant, revoke, release and next
     * refuse a missing file and leave none behind. */
    ctl_tmp_path(&w.t, "absent.db", other, sizeof other);
    assert_int_equal(rec_open(other, REC_WRITE, &db, err, sizeof err), REC_OPEN_FAILED);
    assert_int_equal(access(other, F_OK), -1);
    ctl_world_end(&w);
}

/* ---- grants ------------------------------------------------------------------ */

static void ctl_40_grant_defaults_caps_durations_and_record(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_set(sit, "policy.grant", json_pack("{s:i,s:i,s:i}", "url_ttl_s", 120, "expected_play_s",
                                           1800, "max_burst", 4));
    char d[33], g[33];
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    /* Never above the step or the policy: refused with the reason. */
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--max-allocations 501", g), 65);
    assert_err_has(&w, "above_step");
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--max-rate 5.000001", g), 65);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--burst 5", g), 65);
    assert_err_has(&w, "policy.grant.max_burst");
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--url-ttl 121", g), 65);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--valid-for 100000", g), 65);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--max-rate abc", g), 64);
    /* an actor longer than its field is refused, never cut (issue 19) */
    char long_actor[160];
    memset(long_actor, 'a', 128);
    strcpy(long_actor + 128, "");
    char args[200];
    snprintf(args, sizeof args, "--actor %s", long_actor);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, args, g), 64);
    assert_err_has(&w, "--actor must be 1 to 127 bytes (got 128)");
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--actor ''", g), 64);
    assert_int_equal(q(&w, "SELECT count(*) FROM grants"), 0);
    assert_int_equal(q(&w, "SELECT count(*) FROM reservations"), 0);
    /* Defaults from the step and the policy. */
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--max-allocations 20 --actor alice", g), 0);
    assert_int_equal(strlen(g), 32);
    assert_int_equal(ctl_run(&w.t, "grants show %s --db '%s' --json", g, w.db), 0);
    json_t *o = out_json(&w);
    assert_string_equal(json_string_value(json_object_get(o, "state")), "active");
    assert_string_equal(json_string_value(json_object_get(o, "path_id")), "C");
    assert_string_equal(json_string_value(json_object_get(o, "decision_id")), d);
    assert_string_equal(json_string_value(json_object_get(o, "actor")), "alice");
    assert_int_equal(json_integer_value(json_object_get(o, "max_allocations")), 20);
    assert_int_equal(json_integer_value(json_object_get(o, "remaining")), 20);
    /* Three separate quantities. */
    json_t *v = json_object_get(o, "validity");
    assert_int_equal(json_integer_value(json_object_get(v, "valid_until_ms")),
                     w.now - 1000 + 600 * 1000);
    assert_int_equal(json_integer_value(json_object_get(o, "url_ttl_s")), 120);
    assert_int_equal(json_integer_value(json_object_get(o, "expected_play_s")), 1800);
    assert_int_equal(json_integer_value(json_object_get(o, "commitment_until_ms")),
                     json_integer_value(json_object_get(v, "valid_until_ms")) + 1920 * 1000);
    json_t *rate = json_object_get(o, "rate");
    assert_true(json_number_value(json_object_get(rate, "max_rate_per_s")) == 5.0);
    assert_int_equal(json_integer_value(json_object_get(rate, "burst")), 4);
    assert_int_equal(json_array_size(json_object_get(o, "stop_conditions")), 5);
    json_t *ev = json_object_get(o, "events");
    assert_int_equal(json_array_size(ev), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "kind")),
                        "created");
    json_t *res = json_object_get(o, "reservations");
    assert_int_equal(json_array_size(res), 5);
    assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "state")),
                        "pending");
    json_decref(o);
    assert_int_equal(q(&w, "SELECT amount_micro FROM reservations WHERE resource = 'cdn' AND "
                           "scope = 'C' AND metric = 'bytes_per_s'"),
                     1500000000LL * 1000000LL);
    assert_int_equal(ctl_run(&w.t, "grants list --db '%s'", w.db), 0);
    char *out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, g));
    assert_non_null(strstr(out, "active"));
    free(out);
    assert_int_equal(ctl_run(&w.t, "grants show %s --db '%s'", g, w.db), 0);
    out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, "URL validity    120 s"));
    assert_non_null(strstr(out, "expected play   1800 s"));
    free(out);
    json_decref(sit);
    ctl_world_end(&w);
}

static void ctl_41_grant_refusals(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    char d[33], d2[33], g[33], gx[33];
    /* No eligible path: nothing to grant. */
    json_t *none = ctl_world_situation(&w);
    ctl_set(ctl_cand(none, "C"), "access.status", json_string("VIOLATION"));
    assert_int_equal(ctl_decide_cli(&w.t, "none.json", none, w.ev, w.db, d), 4);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, NULL, g), 65);
    assert_err_has(&w, "decision_not_step_proposed");
    /* Unknown decision. */
    assert_int_equal(ctl_grant_cli(&w.t, w.db, "0123456789abcdef0123456789abcdef", NULL, g), 65);
    /* Older than policy.grant.max_decision_age_s allows (decided 1 s ago). */
    json_t *old = ctl_world_situation(&w);
    ctl_set(old, "policy.grant.max_decision_age_s", json_integer(1));
    assert_int_equal(ctl_decide_cli(&w.t, "old.json", old, w.ev, w.db, d), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, NULL, g), 65);
    assert_err_has(&w, "decision_too_old");
    /* Granted once only. */
    json_t *sit = ctl_world_situation(&w);
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, NULL, g), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, NULL, gx), 65);
    assert_err_has(&w, "already_granted");
    /* One active grant per cohort. */
    assert_int_equal(ctl_decide_cli(&w.t, "sit2.json", sit, w.ev, w.db, d2), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, NULL, gx), 65);
    assert_err_has(&w, "cohort_has_active_grant");
    /* A newer policy version makes the older decisions ungrantable, and
     * the new version's decision replaces the cohort's grant of the old one
     * (revoked, the reason recorded). */
    ctl_set(sit, "policy.version", json_string("4"));
    char d3[33];
    assert_int_equal(ctl_decide_cli(&w.t, "v4.json", sit, w.ev, w.db, d3), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, NULL, gx), 65);
    assert_err_has(&w, "policy_changed");
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d3, NULL, gx), 0);
    assert_int_equal(q(&w, "SELECT count(*) FROM grants"), 2);
    assert_int_equal(q(&w, "SELECT count(*) FROM grants WHERE id = '%s' AND status = 'revoked' "
                           "AND close_reason LIKE 'policy_changed:%%'",
                       g),
                     1);
    /* An operator's revocation: once, with its reason. */
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason 'operator test'", gx, w.db), 0);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason again", gx, w.db), 65);
    assert_err_has(&w, "already_closed");
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events WHERE kind = 'revoked' AND "
                           "reason = 'operator test'"),
                     1);
    json_decref(none);
    json_decref(old);
    json_decref(sit);
    ctl_world_end(&w);
}

/* ---- the ledger --------------------------------------------------------------- */

/* Two cohorts sharing the origin: each step (300 rps) fits alone
 * (400 + 300 + 100 <= 1000), not both (400 + 300 + 300 + 100 > 1000). */
static void two_steps(struct ctl_world *w, char d1[33], char d2[33])
{
    json_t *a = ctl_world_situation(w), *b = ctl_world_situation(w);
    ctl_tune_c(a, true, 300);
    ctl_tune_c(b, true, 300);
    ctl_other_isp(b, "isp-y");
    assert_int_equal(ctl_decide_cli(&w->t, "a.json", a, w->ev, w->db, d1), 0);
    assert_int_equal(ctl_decide_cli(&w->t, "b.json", b, w->ev, w->db, d2), 0);
    json_decref(a);
    json_decref(b);
}

static void ctl_42_ledger_reserves_once_and_releases_only_with_a_reason(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    char d1[33], d2[33], g1[33], g2[33];
    two_steps(&w, d1, d2);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d1, NULL, g1), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, NULL, g2), 65);
    assert_err_has(&w, "reservation_does_not_fit");
    assert_err_has(&w, "origin/rps");
    /* Revoking issuance releases nothing by itself. */
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason stop", g1, w.db), 0);
    assert_int_equal(q(&w, "SELECT count(*) FROM reservations WHERE state = 'pending'"), 5);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, NULL, g2), 65);
    /* An explicit, recorded release voids it; then the headroom is free. */
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s'", g1, w.db), 64); /* reason required */
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s' --reason 'no session started'", g1,
                             w.db),
                     0);
    assert_int_equal(q(&w, "SELECT count(*) FROM reservations WHERE state = 'voided' AND "
                           "resolve_reason = 'no session started' AND resolved_at_ms > 0"),
                     5);
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events WHERE kind = "
                           "'reservations_voided'"),
                     1);
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s' --reason twice", g1, w.db), 65);
    assert_err_has(&w, "nothing_pending");
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, NULL, g2), 0);
    /* An active grant's reservation is not released. */
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s' --reason x", g2, w.db), 65);
    assert_err_has(&w, "grant_active");
    /* Resolved once, never resized, never deleted: the schema refuses. */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(w.db, &db), SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db, "UPDATE reservations SET state = 'pending', "
                                          "resolved_at_ms = NULL, resolve_reason = NULL WHERE "
                                          "state = 'voided'",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db, "UPDATE reservations SET amount_micro = 0", NULL, NULL,
                                      NULL),
                         SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db, "DELETE FROM reservations", NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db, "UPDATE grants SET status = 'active' WHERE status = "
                                          "'revoked'",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    sqlite3_close(db);
    ctl_world_end(&w);
}

static void ctl_43_decide_takes_commitments_from_the_ledger(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    char d1[33], d2[33], g1[33];
    two_steps(&w, d1, d2);
    /* Before any grant the ledger holds nothing: 0, and the record says so. */
    assert_int_equal(ctl_run(&w.t, "decisions show %s --db '%s'", d1, w.db), 0);
    json_t *o = out_json(&w);
    json_t *chk = json_array_get(
        json_object_get(json_object_get(json_object_get(json_array_get(json_object_get(
                                                            json_object_get(o, "result"),
                                                            "candidates"),
                                                        2),
                                                        "conditions"),
                                        "resources"),
                        "checks"),
        0);
    assert_string_equal(json_string_value(json_object_get(chk, "commitments_source")), "ledger");
    assert_true(json_number_value(json_object_get(chk, "commitments_upper")) == 0.0);
    json_decref(o);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d1, NULL, g1), 0);
    /* Now a decision for the other cohort counts the grant's reservation:
     * 400 + 300 + 300 + 100 > 1000, resources VIOLATION, nothing eligible. */
    json_t *b = ctl_world_situation(&w);
    ctl_tune_c(b, true, 300);
    ctl_other_isp(b, "isp-y");
    char d3[33];
    assert_int_equal(ctl_decide_cli(&w.t, "b2.json", b, w.ev, w.db, d3), 4);
    o = out_json(&w);
    json_t *res = json_object_get(
        json_object_get(json_array_get(json_object_get(o, "candidates"), 2), "conditions"),
        "resources");
    assert_string_equal(json_string_value(json_object_get(res, "reason")),
                        "resources_limit_exceeded");
    chk = json_array_get(json_object_get(res, "checks"), 0);
    assert_true(json_number_value(json_object_get(chk, "commitments_upper")) == 300.0);
    json_decref(o);
    assert_int_equal(q(&w, "SELECT count(*) FROM decision_commitments WHERE decision_id = '%s' "
                           "AND resource = 'origin' AND metric = 'rps' AND "
                           "commitments_micro = 300000000",
                           d3),
                     2);
    /* Replay uses the recorded ledger values, not the ledger of today. */
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g1, w.db), 0);
    assert_int_equal(ctl_run(&w.t, "release %s --db '%s' --reason r", g1, w.db), 0);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d3, w.db), 0);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d1, w.db), 0);
    /* Given in the situation: used as given, no source marked. */
    json_t *given = ctl_world_situation(&w);
    char d4[33];
    assert_int_equal(ctl_decide_cli(&w.t, "given.json", given, w.ev, w.db, d4), 0);
    assert_int_equal(q(&w, "SELECT count(*) FROM decision_commitments WHERE decision_id = '%s'",
                       d4),
                     0);
    char *out = ctl_out(&w.t, "out");
    assert_null(strstr(out, "commitments_source"));
    free(out);
    json_decref(b);
    json_decref(given);
    ctl_world_end(&w);
}

/* Two processes grant at the same moment into the same headroom, many
 * times: exactly one gets it each time. */
static void ctl_44_two_processes_never_double_spend_headroom(void **state)
{
    (void)state;
    for (int round = 0; round < 8; round++) {
        struct ctl_world w;
        ctl_world_begin(&w);
        char d1[33], d2[33];
        two_steps(&w, d1, d2);
        const char *ids[2] = {d1, d2};
        pid_t pid[2];
        int go[2];
        assert_int_equal(pipe(go), 0);
        for (int p = 0; p < 2; p++) {
            pid[p] = fork();
            assert_true(pid[p] >= 0);
            if (pid[p] == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) < 0)
                    _exit(99);
                execl(CTL_STEPCTL, "stepctl", "grant", ids[p], "--db", w.db, (char *)NULL);
                _exit(98);
            }
        }
        close(go[0]);
        close(go[1]); /* both start now */
        int ok = 0, refused = 0;
        for (int p = 0; p < 2; p++) {
            int st;
            assert_int_equal(waitpid(pid[p], &st, 0), pid[p]);
            assert_true(WIFEXITED(st));
            ok += WEXITSTATUS(st) == 0;
            refused += WEXITSTATUS(st) == 65;
        }
        assert_int_equal(ok, 1);
        assert_int_equal(refused, 1);
        assert_int_equal(q(&w, "SELECT count(*) FROM grants"), 1);
        assert_int_equal(q(&w, "SELECT sum(amount_micro) FROM reservations WHERE resource = "
                               "'origin' AND metric = 'rps'"),
                         300000000LL);
        ctl_world_end(&w);
    }
}

/* ---- allocations, in process ---------------------------------------------------- */

static void with_tx(sqlite3 *db, const struct areq *r, int64_t now, struct alc_reply *out)
{
    assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(alc_process(db, NULL, r, now, NULL, NULL, out), 0);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
}

static struct areq request(const char *id, const char *isp)
{
    struct areq r;
    memset(&r, 0, sizeof r);
    snprintf(r.allocation_id, sizeof r.allocation_id, "%s", id);
    snprintf(r.cohort.channel, SIT_STR, "news-1");
    snprintf(r.cohort.region, SIT_STR, "eu-west");
    snprintf(r.cohort.isp, SIT_STR, "%s", isp);
    snprintf(r.cohort.client, SIT_STR, "web-hlsjs");
    snprintf(r.cohort.build, SIT_STR, "2026.11.3");
    snprintf(r.cohort.rendition, SIT_STR, "720p");
    return r;
}

static void expect(sqlite3 *db, const char *id, const char *isp, int64_t now, int status,
                   const char *error, char *body_out)
{
    struct areq r = request(id, isp);
    struct alc_reply rep;
    with_tx(db, &r, now, &rep);
    if (rep.http_status != status)
        fail_msg("%s: status %d, expected %d: %s", id, rep.http_status, status, rep.body);
    if (error) {
        json_t *b = json_loads(rep.body, 0, NULL);
        assert_string_equal(json_string_value(json_object_get(b, "error")), error);
        json_decref(b);
    }
    if (body_out)
        strcpy(body_out, rep.body);
    alc_reply_free(&rep);
}

static void ctl_45_allocation_rules(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_set(sit, "policy.grant.max_burst", json_integer(3));
    char d[33], g[33], first[4096], again[4096];
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    sqlite3 *db;
    char err[256];
    assert_int_equal(rec_open(w.db, REC_WRITE, &db, err, sizeof err), REC_OK);
    int64_t t = ctl_now_ms();
    expect(db, "x-0", "isp-x", t, 403, "no_active_grant", NULL);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--max-allocations 4 --max-rate 1", g), 0);
    t = ctl_now_ms();
    expect(db, "x-1", "isp-x", t, 201, NULL, first);
    json_t *b = json_loads(first, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(b, "grant_id")), g);
    assert_string_equal(json_string_value(json_object_get(b, "path_id")), "C");
    assert_int_equal(json_integer_value(json_object_get(b, "expires_at_ms")), t + 300000);
    json_decref(b);
    /* The same request later: 200, the stored body byte for byte (no later
     * expiry); another request under the same id: 422. */
    expect(db, "x-1", "isp-x", t + 5000, 200, NULL, again);
    assert_string_equal(first, again);
    expect(db, "x-1", "isp-z", t, 422, "idempotency_key_reused", NULL);
    /* Burst 3 at 1/s: two more now, the fourth waits. */
    expect(db, "x-2", "isp-x", t, 201, NULL, NULL);
    expect(db, "x-3", "isp-x", t, 201, NULL, NULL);
    struct areq r = request("x-4", "isp-x");
    struct alc_reply rep;
    with_tx(db, &r, t, &rep);
    assert_int_equal(rep.http_status, 429);
    assert_int_equal(rep.retry_after_s, 1);
    alc_reply_free(&rep);
    expect(db, "x-4", "isp-x", t + 1000, 201, NULL, NULL);
    /* Quota: 4 of 4; the last one posted the reservation. */
    expect(db, "x-5", "isp-x", t + 9000, 403, "quota_exhausted", NULL);
    assert_int_equal(q(&w, "SELECT count(*) FROM allocations WHERE grant_id = '%s'", g), 4);
    assert_int_equal(q(&w, "SELECT allocated FROM grants WHERE id = '%s'", g), 4);
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events WHERE kind = 'quota_exhausted'"),
                     1);
    assert_int_equal(q(&w, "SELECT count(*) FROM reservations WHERE state = 'posted'"), 5);
    /* The cap holds in the schema itself. */
    assert_int_not_equal(sqlite3_exec(db,
                                      "INSERT INTO allocations SELECT 'x-9', grant_id, 5, "
                                      "decision_id, path_id, fallback_path_ids, created_at_ms, "
                                      "expires_at_ms, commitment_until_ms, request_sha256, request, "
                                      "response, subject FROM allocations LIMIT 1",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    /* A newer no_eligible_path decision of the cohort: its pre-declared refusal. */
    json_t *none = ctl_world_situation(&w);
    ctl_set(ctl_cand(none, "C"), "access.status", json_string("VIOLATION"));
    assert_int_equal(ctl_decide_cli(&w.t, "none.json", none, w.ev, w.db, d), 4);
    /* answered as the fixture's policy.refusal declares it: 503 (issue 17) */
    expect(db, "x-6", "isp-x", ctl_now_ms(), 503, "no_eligible_path", first);
    assert_non_null(strstr(first, "refuse-new-sessions-503"));
    json_decref(none);
    sqlite3_close(db);
    json_decref(sit);
    ctl_world_end(&w);
}

static void ctl_46_allocation_refusals_revoked_expired_policy_changed(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w), *y = ctl_world_situation(&w), *v4 = ctl_world_situation(&w);
    ctl_fast(sit);
    ctl_fast(y);
    ctl_other_isp(y, "isp-y");
    char d[33], dy[33], g[33], gy[33], body[4096];
    assert_int_equal(ctl_decide_cli(&w.t, "x.json", sit, w.ev, w.db, d), 0);
    assert_int_equal(ctl_decide_cli(&w.t, "y.json", y, w.ev, w.db, dy), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "--valid-for 60", g), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, dy, NULL, gy), 0);
    sqlite3 *db;
    char err[256];
    assert_int_equal(rec_open(w.db, REC_WRITE, &db, err, sizeof err), REC_OK);
    int64_t t = ctl_now_ms();
    expect(db, "e-1", "isp-x", t, 201, NULL, NULL);
    /* Expired: validity ended (an allocation made before stays). */
    expect(db, "e-2", "isp-x", t + 61000, 403, "grant_expired", NULL);
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events WHERE grant_id = '%s' AND kind = "
                           "'expired'",
                           g),
                     1);
    assert_int_equal(q(&w, "SELECT count(*) FROM reservations WHERE grant_id = '%s' AND state = "
                           "'posted'",
                           g),
                     5);
    /* Revoked: the reason travels with the refusal. */
    expect(db, "y-1", "isp-y", t, 201, NULL, NULL);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason 'CDN incident 42'", gy, w.db), 0);
    expect(db, "y-2", "isp-y", ctl_now_ms(), 403, "grant_revoked", body);
    assert_non_null(strstr(body, "CDN incident 42"));
    /* A newer decision under another policy version: policy_changed. */
    json_t *z = ctl_world_situation(&w);
    ctl_other_isp(z, "isp-z");
    ctl_fast(z);
    char dz[33], gz[33];
    assert_int_equal(ctl_decide_cli(&w.t, "z.json", z, w.ev, w.db, dz), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, dz, NULL, gz), 0);
    expect(db, "z-1", "isp-z", ctl_now_ms(), 201, NULL, NULL);
    ctl_set(v4, "policy.version", json_string("4"));
    ctl_other_isp(v4, "isp-w");
    assert_int_equal(ctl_decide_cli(&w.t, "v4.json", v4, w.ev, w.db, d), 0);
    expect(db, "z-2", "isp-z", ctl_now_ms(), 403, "policy_changed", NULL);
    sqlite3_close(db);
    json_decref(sit);
    json_decref(y);
    json_decref(z);
    json_decref(v4);
    ctl_world_end(&w);
}

/* ---- the request body --------------------------------------------------------------- */

static void ctl_47_request_body_parser(void **state)
{
    (void)state;
    struct areq r, r2;
    char err[256], c1[1024], c2[1024];
    const char *ok = "{\"allocation_id\":\"s-1.a:b_c\",\"cohort\":{\"channel\":\"news-1\","
                     "\"region\":\"eu-west\",\"isp\":\"isp-x\",\"client\":\"web\",\"build\":\"1\","
                     "\"rendition\":\"720p\"}}";
    assert_int_equal(areq_parse(ok, strlen(ok), &r, err, sizeof err), 0);
    assert_string_equal(r.allocation_id, "s-1.a:b_c");
    assert_string_equal(r.cohort.rendition, "720p");
    /* Spacing and member order do not make another request. */
    const char *same = " { \"cohort\" : {\"rendition\":\"720p\",\"build\":\"1\",\"client\":\"web\","
                       "\"isp\":\"isp-x\",\"region\":\"eu-west\",\"channel\":\"news-1\"},"
                       "\"allocation_id\":\"s-1.a:b_c\" } ";
    assert_int_equal(areq_parse(same, strlen(same), &r2, err, sizeof err), 0);
    assert_true(areq_canonical(&r, c1, sizeof c1) > 0);
    assert_true(areq_canonical(&r2, c2, sizeof c2) > 0);
    assert_string_equal(c1, c2);
    char d1[65], d2[65];
    areq_digest(&r, d1);
    areq_digest(&r2, d2);
    assert_string_equal(d1, d2);
    assert_int_equal(strlen(d1), 64);
    struct {
        const char *body, *needle;
    } bad[] = {
        {"", "empty"},
        {"{", "(json)"},
        {"[]", "must be an object"},
        {"{\"allocation_id\":\"a\"}", "cohort"},
        {"{\"allocation_id\":\"a\",\"cohort\":{\"channel\":\"c\"}}", "cohort.region"},
        {"{\"allocation_id\":\"a\",\"extra\":1,\"cohort\":{}}", "extra: unknown member"},
        {"{\"allocation_id\":\"a b\",\"cohort\":{\"channel\":\"c\",\"region\":\"r\",\"isp\":\"i\","
         "\"client\":\"c\",\"build\":\"b\",\"rendition\":\"r\"}}",
         "allocation_id: only"},
        {"{\"allocation_id\":7,\"cohort\":{}}", "allocation_id: must be a string"},
        {"{\"allocation_id\":\"a\",\"allocation_id\":\"b\",\"cohort\":{}}", "(json)"},
        {"{\"allocation_id\":\"a\",\"cohort\":{\"channel\":\"c\",\"region\":\"r\",\"isp\":\"i\","
         "\"client\":\"c\",\"build\":\"b\",\"rendition\":\"r\",\"x\":\"y\"}}",
         "cohort.x: unknown member"},
        {"{\"allocation_id\":\"\",\"cohort\":{}}", "allocation_id: must be 1 to"},
        {"{\"allocation_id\":\"a\",\"cohort\":{\"channel\":\"c\\u0000d\",\"region\":\"r\","
         "\"isp\":\"i\",\"client\":\"c\",\"build\":\"b\",\"rendition\":\"r\"}}",
         "(json)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(areq_parse(bad[i].body, strlen(bad[i].body), &r, err, sizeof err), -1);
        if (!strstr(err, bad[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].needle);
    }
    char big[AREQ_MAX_BODY + 2];
    memset(big, ' ', sizeof big);
    memcpy(big, ok, strlen(ok));
    assert_int_equal(areq_parse(big, sizeof big, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "larger than"));
    char id[AREQ_ID_MAX + 40];
    memset(id, 'a', sizeof id);
    id[AREQ_ID_MAX + 1] = '\0';
    char longid[1024];
    snprintf(longid, sizeof longid, "{\"allocation_id\":\"%s\",\"cohort\":{}}", id);
    assert_int_equal(areq_parse(longid, strlen(longid), &r, err, sizeof err), -1);
}

static void ctl_48_token_bucket(void **state)
{
    (void)state;
    int64_t wait;
    struct tb_bucket b = tb_full(2, 1000);
    assert_true(tb_take(&b, 500000, 2, 1000, &wait)); /* 0.5 per second, burst 2 */
    assert_true(tb_take(&b, 500000, 2, 1000, &wait));
    assert_false(tb_take(&b, 500000, 2, 1000, &wait));
    assert_int_equal(wait, 2000);
    assert_false(tb_take(&b, 500000, 2, 2999, &wait));
    assert_int_equal(wait, 1);
    assert_true(tb_take(&b, 500000, 2, 3000, &wait)); /* exactly one token, no fraction lost */
    /* A clock going backwards adds nothing; a long pause fills to the burst only. */
    assert_false(tb_take(&b, 500000, 2, 1000, &wait));
    tb_refill(&b, 500000, 2, 10000000);
    assert_int_equal(b.tokens_nano, 2 * TB_NANO);
    /* Tiny and huge rates stay exact and bounded. */
    struct tb_bucket s = tb_full(1, 0);
    assert_true(tb_take(&s, 1, 1, 0, &wait)); /* 1e-6 per second */
    assert_false(tb_take(&s, 1, 1, 999999999, &wait));
    assert_int_equal(wait, 1);
    assert_true(tb_take(&s, 1, 1, 1000000000, &wait));
    struct tb_bucket h = {0, 0};
    tb_refill(&h, 1000000000000000000LL, TB_MAX_BURST, INT64_MAX / 2);
    assert_int_equal(h.tokens_nano, TB_MAX_BURST * TB_NANO);
}

/* ---- next ------------------------------------------------------------------------------ */

/* A grant of 20 on C with n allocations made now; returns the grant id. */
static void granted_step(struct ctl_world *w, json_t *sit, int n, char g[33])
{
    char d[33], err[256];
    assert_int_equal(ctl_decide_cli(&w->t, "step.json", sit, w->ev, w->db, d), 0);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, "--max-allocations 20", g), 0);
    sqlite3 *db;
    assert_int_equal(rec_open(w->db, REC_WRITE, &db, err, sizeof err), REC_OK);
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "n-%d", i);
        expect(db, id, "isp-x", ctl_now_ms(), 201, NULL, NULL);
    }
    sqlite3_close(db);
}

static json_t *run_next(struct ctl_world *w, const char *g, const char *obs, int code)
{
    int rc = obs ? ctl_run(&w->t, "next %s --db '%s' --evidence '%s' --input '%s' --json", g,
                           w->db, w->ev, obs)
                 : ctl_run(&w->t, "next %s --db '%s' --evidence '%s' --json", g, w->db, w->ev);
    if (rc != code) {
        char *e = err_text(w), *o = ctl_out(&w->t, "out");
        fail_msg("next: exit %d, expected %d: %s %s", rc, code, e, o);
    }
    return out_json(w);
}

static void ctl_49_next_positive_proposes_a_larger_step_and_grants_nothing(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    ctl_set(sit, "policy.steps", json_pack("{s:i,s:i,s:s}", "factor", 3, "max_allocations", 50,
                                           "max_rate_per_s", "150000"));
    char g[33], obs[160];
    granted_step(&w, sit, 3, g);
    usleep(2000);
    ctl_world_evidence(&w, "ev-step-1", "C", "MATCH", ctl_now_ms(), true);
    ctl_observations(&w.t, sit, "obs.json", obs, sizeof obs);
    long long decisions = q(&w, "SELECT count(*) FROM decisions");
    json_t *r = run_next(&w, g, obs, 0);
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "positive");
    assert_string_equal(json_string_value(json_object_get(r, "status")), "PASS");
    assert_false(json_is_true(json_object_get(r, "authorizes")));
    json_t *gr = json_object_get(r, "growth");
    assert_int_equal(json_integer_value(json_object_get(gr, "next_max_allocations")), 50);
    const char *nd = json_string_value(json_object_get(r, "next_decision_id"));
    assert_non_null(nd);
    char next_d[33];
    snprintf(next_d, sizeof next_d, "%s", nd);
    json_t *step = json_object_get(r, "proposed_step");
    assert_int_equal(json_integer_value(json_object_get(step, "max_allocations")), 50);
    assert_string_equal(json_string_value(json_object_get(step, "path_id")), "C");
    json_decref(r);
    /* A new decision, no new grant; the reviewed grant's issuance ended. */
    assert_int_equal(q(&w, "SELECT count(*) FROM decisions"), decisions + 1);
    assert_int_equal(q(&w, "SELECT count(*) FROM grants"), 1);
    assert_int_equal(q(&w, "SELECT count(*) FROM grants WHERE status = 'closed' AND "
                           "close_status = 'PASS'"),
                     1);
    assert_int_equal(q(&w, "SELECT count(*) FROM next_decisions WHERE branch = 'positive' AND "
                           "next_decision_id = '%s'",
                           next_d),
                     1);
    /* The proposal replays, and is granted only by an explicit grant. */
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", next_d, w.db), 0);
    char g2[33];
    assert_int_equal(ctl_grant_cli(&w.t, w.db, next_d, NULL, g2), 0);
    assert_int_equal(q(&w, "SELECT max_allocations FROM grants WHERE id = '%s'", g2), 50);
    /* A grant is reviewed once. */
    assert_int_equal(ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --input '%s'", g, w.db,
                             w.ev, obs),
                     65);
    assert_err_has(&w, "already_reviewed");
    json_decref(sit);
    ctl_world_end(&w);
}

static void expect_negative(struct ctl_world *w, json_t *r, const char *status, const char *needle)
{
    assert_string_equal(json_string_value(json_object_get(r, "branch")), "negative");
    assert_string_equal(json_string_value(json_object_get(r, "status")), status);
    const char *reason = json_string_value(json_object_get(r, "reason"));
    if (!strstr(reason, needle))
        fail_msg("reason '%s' lacks '%s'", reason, needle);
    assert_true(json_is_null(json_object_get(r, "next_decision_id")));
    assert_int_equal(q(w, "SELECT count(*) FROM grants WHERE id = '%s' AND status = 'closed' AND "
                          "close_status = '%s'",
                       json_string_value(json_object_get(r, "grant_id")), status),
                     1);
    json_decref(r);
}

/* One negative review: a step of n allocations, then (optionally) one
 * evidence row observed during the step, then next with the observations
 * of obs_sit (NULL: no --input). */
struct negative {
    int allocations;
    const char *verdict; /* NULL: no evidence during the step */
    bool tracks;
    const char *p90;     /* QoE startup_p90_ms observed, NULL: as in the fixture */
    bool input;
    const char *status, *needle;
    bool forged; /* the step's row written past exactav (ctl_world_forged) */
};

static void negative_case(const struct negative *c)
{
    struct ctl_world w;
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    char g[33], obs[160];
    granted_step(&w, sit, c->allocations, g);
    if (c->verdict) {
        usleep(2000);
        if (c->forged)
            ctl_world_forged(&w, "ev-step", "C", c->verdict, ctl_now_ms());
        else
            ctl_world_evidence(&w, "ev-step", "C", c->verdict, ctl_now_ms(), c->tracks);
    }
    json_t *seen = json_deep_copy(sit);
    if (c->p90)
        ctl_set(ctl_cand(seen, "C"), "qoe.startup_p90_ms", json_string(c->p90));
    ctl_observations(&w.t, seen, "obs.json", obs, sizeof obs);
    long long decisions = q(&w, "SELECT count(*) FROM decisions");
    expect_negative(&w, run_next(&w, g, c->input ? obs : NULL, 4), c->status, c->needle);
    assert_int_equal(q(&w, "SELECT count(*) FROM decisions"), decisions); /* nothing proposed */
    assert_int_equal(q(&w, "SELECT count(*) FROM grant_events WHERE grant_id = '%s' AND kind = "
                           "'closed_by_next'",
                           g),
                     1);
    json_decref(seen);
    json_decref(sit);
    ctl_world_end(&w);
}

/* One row observed during a step: valid (an imported report) or forged. */
struct step_row {
    const char *id, *verdict;
    bool forged;
};

/* A granted step of 2 on C, two rows observed during it in this order, and
 * `next` with fresh observations, which must end negative (exit 4). */
static json_t *next_after_rows(struct ctl_world *w, const struct step_row rows[2])
{
    json_t *sit = ctl_world_situation(w);
    ctl_fast(sit);
    char g[33], obs[160];
    granted_step(w, sit, 2, g);
    for (int i = 0; i < 2; i++) {
        usleep(2000);
        if (rows[i].forged)
            ctl_world_forged(w, rows[i].id, "C", rows[i].verdict, ctl_now_ms());
        else
            ctl_world_evidence(w, rows[i].id, "C", rows[i].verdict, ctl_now_ms(), true);
    }
    ctl_observations(&w->t, sit, "obs.json", obs, sizeof obs);
    json_decref(sit);
    return run_next(w, g, obs, 4);
}

static void ctl_50_next_negative_closes_issuance_and_never_scales_up(void **state)
{
    (void)state;
    const struct negative cases[] = {
        /* a MISMATCH during the step */
        {2, "MISMATCH", true, NULL, true, "VIOLATION", "mismatch", false},
        /* only the pre-flight MATCH, from before the first allocation */
        {1, NULL, false, NULL, true, "UNKNOWN", "no_step_evidence", false},
        /* no observations file: access, QoE and resources UNKNOWN */
        {1, "MATCH", true, NULL, false, "UNKNOWN", "UNKNOWN", false},
        /* a MATCH whose report does not show both tracks */
        {1, "MATCH", false, NULL, true, "UNKNOWN", "evidence_tracks_unknown", false},
        /* the QoE guard violated during the step */
        {1, "MATCH", true, "9000", true, "VIOLATION", "qoe", false},
        /* nothing allocated: nothing to observe */
        {0, NULL, false, NULL, true, "UNKNOWN", "no_allocation", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        negative_case(&cases[i]);

    /* A MISMATCH is never hidden by a newer MATCH. */
    struct ctl_world w;
    ctl_world_begin(&w);
    const struct step_row hidden[2] = {{"ev-bad", "MISMATCH", false}, {"ev-good", "MATCH", false}};
    expect_negative(&w, next_after_rows(&w, hidden), "VIOLATION", "ev-bad");
    ctl_world_end(&w);

    /* Invalid observations are refused before anything is written. */
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    char g[33], obs[160];
    granted_step(&w, sit, 1, g);
    const char *bad[][2] = {{"{\"qoe\": {\"attempts\": -1}}", "qoe.attempts"},
                            {"{\"cohort\": {}}", "unknown member"},
                            {"[1]", "must be a JSON object"}};
    for (int i = 0; i < 3; i++) {
        ctl_tmp_path(&w.t, "bad.json", obs, sizeof obs);
        FILE *f = fopen(obs, "w");
        fputs(bad[i][0], f);
        fclose(f);
        assert_int_equal(ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --input '%s'", g, w.db,
                                 w.ev, obs),
                         65);
        assert_err_has(&w, bad[i][1]);
    }
    assert_int_equal(q(&w, "SELECT count(*) FROM grants WHERE id = '%s' AND status = 'active'", g),
                     1);
    assert_int_equal(q(&w, "SELECT count(*) FROM next_decisions"), 0);
    /* Under a policy version that is no longer current, a step that went
     * well proposes nothing: UNKNOWN policy_changed. */
    json_t *v4 = ctl_world_situation(&w);
    ctl_set(v4, "policy.version", json_string("4"));
    ctl_other_isp(v4, "isp-v4");
    char d4[33];
    assert_int_equal(ctl_decide_cli(&w.t, "v4.json", v4, w.ev, w.db, d4), 0);
    usleep(2000);
    ctl_world_evidence(&w, "ev-fine", "C", "MATCH", ctl_now_ms(), true);
    ctl_observations(&w.t, sit, "obs.json", obs, sizeof obs);
    expect_negative(&w, run_next(&w, g, obs, 4), "UNKNOWN", "policy_changed");
    json_decref(v4);
    json_decref(sit);
    ctl_world_end(&w);
}

static void ctl_51_explain_grant_and_next_and_cli_codes(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    char g[33];
    granted_step(&w, sit, 2, g);
    assert_int_equal(ctl_run(&w.t, "explain %s --db '%s'", g, w.db), 0);
    char *out = ctl_out(&w.t, "out");
    ctl_assert_seven_answers(out);
    assert_non_null(strstr(out, "URL validity"));
    assert_non_null(strstr(out, "expected play duration"));
    assert_non_null(strstr(out, "2 of 20 allocations issued"));
    free(out);
    expect_negative(&w, run_next(&w, g, NULL, 4), "UNKNOWN", "no_step_evidence");
    char id[40];
    snprintf(id, sizeof id, "%lld", 0LL);
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(w.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT id FROM next_decisions", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(id, sizeof id, "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_int_equal(ctl_run(&w.t, "explain %s --db '%s'", id, w.db), 0);
    out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, "Next decision"));
    assert_non_null(strstr(out, "Only those made after the first allocation"));
    assert_non_null(strstr(out, "no other path is tried"));
    free(out);
    /* Exit codes of the new commands. */
    const char *helps[] = {"grant", "revoke", "release", "grants", "next", "serve"};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(ctl_run(&w.t, "%s --help", helps[i]), 0);
        assert_int_equal(ctl_run(&w.t, "%s", helps[i]), 64);
    }
    assert_int_equal(ctl_run(&w.t, "grants show nope --db '%s'", w.db), 65);
    assert_int_equal(ctl_run(&w.t, "revoke nope --db '%s' --reason x", w.db), 65);
    assert_int_equal(ctl_run(&w.t, "next nope --db '%s' --evidence '%s'", w.db, w.ev), 65);
    assert_int_equal(ctl_run(&w.t, "grants list --db /nonexistent/c.db"), 66);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen nowhere", w.db), 64);
    assert_int_equal(ctl_run(&w.t, "serve --db /nonexistent/c.db --listen 127.0.0.1:0"), 66);
    json_decref(sit);
    ctl_world_end(&w);
}

/* ---- merged with issue 9: store identity, exact numbers, valid rows, output -------------- */

static char *file_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = malloc(1 << 20);
    assert_non_null(b);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static void assert_out_has(struct ctl_world *w, const char *which, const char *needle)
{
    char *o = ctl_out(&w->t, which);
    if (!strstr(o, needle))
        fail_msg("%s lacks '%s': %s", which, needle, o);
    free(o);
}

/* Readers (decisions, replay, explain, grants) read a control.db of schema 1
 * as it is, without adopting or migrating it (the file stays byte for byte
 * what it was); the first writer migrates it. */
static void ctl_58_readers_read_a_v1_control_db_as_it_is_and_never_write_it(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    sqlite3 *db;
    char id[REC_ID_LEN];
    assert_int_equal(sqlite3_open(w.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, schema_v1, NULL, NULL, NULL), SQLITE_OK);
    record_fixture(db, id);
    sqlite3_close(db);
    size_t n0, n1;
    char *before = file_bytes(w.db, &n0);
    assert_int_equal(ctl_run(&w.t, "decisions list --db '%s'", w.db), 0);
    assert_out_has(&w, "out", id);
    assert_int_equal(ctl_run(&w.t, "decisions show %s --db '%s'", id, w.db), 0);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", id, w.db), 0);
    assert_out_has(&w, "out", "identical");
    assert_int_equal(ctl_run(&w.t, "explain %s --db '%s'", id, w.db), 0);
    assert_out_has(&w, "out", "Decision");
    /* Schema 1 has no grants: an empty list, an unknown grant. */
    assert_int_equal(ctl_run(&w.t, "grants list --db '%s' --json", w.db), 0);
    json_t *list = out_json(&w);
    assert_true(json_is_array(list) && json_array_size(list) == 0);
    json_decref(list);
    assert_int_equal(ctl_run(&w.t, "grants show x --db '%s'", w.db), 65);
    assert_err_has(&w, "no grant");
    assert_int_equal(ctl_run(&w.t, "explain nope --db '%s'", w.db), 65);
    char *after = file_bytes(w.db, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(after);
    assert_int_equal(access(w.db, F_OK), 0);
    char side[160];
    snprintf(side, sizeof side, "%s-wal", w.db);
    assert_int_equal(access(side, F_OK), -1);
    assert_int_equal(q(&w, "PRAGMA user_version"), 1);
    assert_int_equal(q(&w, "PRAGMA application_id"), 0);
    /* A writer migrates it first (even one that then refuses). */
    assert_int_equal(ctl_run(&w.t, "revoke x --reason r --db '%s'", w.db), 65);
    assert_int_equal(q(&w, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_int_equal(q(&w, "PRAGMA application_id"), DBFILE_APPID_CONTROL);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", id, w.db), 0);
    free(before);
    ctl_world_end(&w);
}

/* A situation text for lpol_parse: the main fixture with these policy
 * members as raw JSON (so numbers keep the spelling given here). */
static int loop_policy(const char *grant, const char *steps, const char *rate, struct lpol *p,
                       char *err, size_t errlen)
{
    json_t *sit = ctl_fixture_json("main_situation.json");
    ctl_set(sit, "policy.grant", json_string("@G@"));
    ctl_set(sit, "policy.steps", json_string("@S@"));
    if (rate)
        ctl_set(sit, "action.max_rate_per_s", json_string(rate));
    char *t = json_dumps(sit, JSON_COMPACT);
    json_decref(sit);
    char *text = malloc(strlen(t) + strlen(grant) + strlen(steps) + 1);
    char *g = strstr(t, "\"@G@\""), *st = strstr(t, "\"@S@\"");
    assert_true(g && st && g < st);
    sprintf(text, "%.*s%s%.*s%s%s", (int)(g - t), t, grant, (int)(st - g - 5), g + 5, steps,
            st + 5);
    free(t);
    struct sit_situation s;
    int rc = sit_parse(text, strlen(text), &s, err, errlen);
    if (rc == 0) {
        rc = lpol_parse(text, strlen(text), &s, p, err, errlen);
        sit_free(&s);
    }
    free(text);
    return rc;
}

/* Writes obs to path with the member of qoe named key spelled as token. */
static void obs_with_token(struct ctl_world *w, const char *src, const char *key1,
                           const char *tok1, const char *key2, const char *tok2, char *path,
                           size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    json_t *o = json_loadf(f, 0, NULL);
    fclose(f);
    assert_non_null(o);
    ctl_set(o, key1, json_string("@1@"));
    if (key2)
        ctl_set(o, key2, json_string("@2@"));
    char *t = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    FILE *m = open_memstream(&text, &len);
    for (const char *p = t; *p;) {
        if (!strncmp(p, "\"@1@\"", 5)) {
            fputs(tok1, m);
            p += 5;
        } else if (!strncmp(p, "\"@2@\"", 5)) {
            fputs(tok2, m);
            p += 5;
        } else {
            fputc(*p++, m);
        }
    }
    fclose(m);
    free(t);
    ctl_tmp_path(&w->t, "obs-tok.json", path, n);
    f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
    free(text);
}

/* policy.grant, policy.steps and the observations of `next` follow issue 9's
 * rule: a decimal is read exactly or refused naming the field, never
 * rounded; the growth factor is a decimal (1.5 is exact) and the next step
 * is rounded down, never toward admitting more. */
static void ctl_59_loop_policy_and_observations_are_read_exactly(void **state)
{
    (void)state;
    struct lpol p;
    char err[512];
    assert_int_equal(loop_policy("{\"url_ttl_s\": 120}",
                                 "{\"factor\": 1.5, \"max_rate_per_s\": 2.5e1}", NULL, &p, err,
                                 sizeof err),
                     0);
    assert_int_equal(p.steps_factor_micro, 1500000);
    assert_int_equal(p.steps_max_rate_micro, 25000000);
    assert_int_equal(p.url_ttl_s, 120);
    assert_int_equal(loop_policy("{}", "{\"factor\": \"1.25\"}", NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.steps_factor_micro, 1250000);
    assert_int_equal(loop_policy("{}", "{\"factor\": 3}", NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.steps_factor_micro, 3000000);
    const char *bad[][3] = {
        {"{}", "{\"factor\": 1}", "policy.steps.factor"},
        {"{}", "{\"factor\": 1.0000005}", "policy.steps.factor"},
        {"{}", "{\"factor\": 1000.000001}", "policy.steps.factor"},
        {"{}", "{\"max_rate_per_s\": 0.0000001}", "policy.steps.max_rate_per_s"},
        {"{}", "{\"max_rate_per_s\": 0}", "policy.steps.max_rate_per_s"},
        {"{\"url_ttl_s\": 300.5}", "{}", "policy.grant.url_ttl_s"},
        {"{\"max_burst\": 2e0}", "{}", "policy.grant.max_burst"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(loop_policy(bad[i][0], bad[i][1], NULL, &p, err, sizeof err), -1);
        if (!strstr(err, bad[i][2]))
            fail_msg("%s %s: '%s' does not name %s", bad[i][0], bad[i][1], err, bad[i][2]);
    }
    /* The default burst: the whole tokens of the rate, rounded down, at least 1. */
    assert_int_equal(loop_policy("{}", "{}", "2.5", &p, err, sizeof err), 0);
    assert_int_equal(p.max_burst, 2);
    assert_int_equal(loop_policy("{}", "{}", "0.5", &p, err, sizeof err), 0);
    assert_int_equal(p.max_burst, 1);
    /* Growth: floor(granted x factor), at most the ceiling. */
    assert_int_equal(lpol_grow(3, 1500000, 1000), 4);
    assert_int_equal(lpol_grow(1, 1500000, 1000), 1);
    assert_int_equal(lpol_grow(1000001, 1500000, INT64_MAX), 1500001);
    assert_int_equal(lpol_grow(20, 1500000, 25), 25);
    assert_int_equal(lpol_grow(INT64_MAX / 2, 1000000000, INT64_MAX), INT64_MAX);

    /* End to end: factor 1.5 grows a granted 20 to 30; observations keep
     * their digits (1400.1 was 1400.0999999999999 through a double, which
     * the exact reader refuses; 2e-2 is the maximum itself, which passes). */
    struct ctl_world w;
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    ctl_set(sit, "policy.steps", json_pack("{s:s,s:i}", "factor", "1.5", "max_allocations", 400));
    char g[33], obs[160], tok[160];
    granted_step(&w, sit, 2, g);
    usleep(2000);
    ctl_world_evidence(&w, "ev-step-1", "C", "MATCH", ctl_now_ms(), true);
    ctl_observations(&w.t, sit, "obs.json", obs, sizeof obs);
    /* A digit below the micro-unit: refused naming the field, nothing written. */
    obs_with_token(&w, obs, "qoe.rebuffer_ratio", "0.0200004", NULL, NULL, tok, sizeof tok);
    assert_int_equal(ctl_run(&w.t, "next %s --db '%s' --evidence '%s' --input '%s'", g, w.db,
                             w.ev, tok),
                     65);
    assert_err_has(&w, "rebuffer_ratio");
    assert_int_equal(q(&w, "SELECT count(*) FROM next_decisions"), 0);
    obs_with_token(&w, obs, "qoe.rebuffer_ratio", "2e-2", "qoe.startup_p90_ms", "1400.1", tok,
                   sizeof tok);
    json_t *r = run_next(&w, g, tok, 0);
    json_t *gr = json_object_get(r, "growth");
    assert_string_equal(json_string_value(json_object_get(gr, "factor")), "1.5");
    assert_int_equal(json_integer_value(json_object_get(gr, "next_max_allocations")), 30);
    char nd[33];
    snprintf(nd, sizeof nd, "%s", json_string_value(json_object_get(r, "next_decision_id")));
    json_decref(r);
    assert_int_equal(q(&w, "SELECT count(*) FROM decisions WHERE id = '%s' AND "
                           "instr(situation, '\"rebuffer_ratio\":2e-2') > 0 AND "
                           "instr(situation, '\"startup_p90_ms\":1400.1') > 0 AND "
                           "instr(situation, '\"factor\":\"1.5\"') > 0",
                       nd),
                     1);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", nd, w.db), 0);
    /* decide refuses such a factor before anything is recorded */
    json_t *bad_sit = ctl_world_situation(&w);
    ctl_set(bad_sit, "policy.steps.factor", json_string("1.0000015"));
    char d[33];
    assert_int_equal(ctl_decide_cli(&w.t, "bad.json", bad_sit, w.ev, w.db, d), 65);
    assert_err_has(&w, "policy.steps.factor");
    json_decref(bad_sit);
    json_decref(sit);
    ctl_world_end(&w);
}

/* `next` reads the step's evidence through evidence/'s rules of a valid
 * row: a row written past exactav is UNKNOWN evidence_malformed, never a
 * MATCH that lets the step grow, and a forged MISMATCH confirms nothing; an
 * older valid MATCH does not take the place of a newer invalid row. */
static void ctl_63_next_counts_only_valid_step_evidence(void **state)
{
    (void)state;
    const struct negative cases[] = {
        {1, "MATCH", true, NULL, true, "UNKNOWN", "evidence_malformed", true},
        {1, "MISMATCH", true, NULL, true, "UNKNOWN", "evidence_malformed", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        negative_case(&cases[i]);
    struct ctl_world w;
    ctl_world_begin(&w);
    const struct step_row rows[2] = {{"ev-good", "MATCH", false}, {"ev-forged", "MATCH", true}};
    json_t *r = next_after_rows(&w, rows);
    json_t *ev = json_object_get(json_object_get(r, "content"), "evidence");
    assert_int_equal(json_array_size(ev), 2);
    assert_true(json_is_true(json_object_get(json_array_get(ev, 0), "malformed")));
    assert_non_null(json_string_value(json_object_get(json_array_get(ev, 0), "why")));
    expect_negative(&w, r, "UNKNOWN", "ev-forged");
    ctl_world_end(&w);
}

/* Replay of a decision that took its commitments from the ledger compares
 * every stored column too (issue 9), the ledger values are inputs it
 * applies (issue 11), and grant refuses a decision whose record does not
 * replay. */
static void ctl_64_replay_of_a_ledger_decision_checks_every_stored_column(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    char d1[33], d2[33], g1[33], g2[33];
    two_steps(&w, d1, d2);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d1, NULL, g1), 0);
    json_t *z = ctl_world_situation(&w);
    ctl_tune_c(z, true, 300);
    ctl_other_isp(z, "isp-z");
    char d3[33];
    assert_int_equal(ctl_decide_cli(&w.t, "z.json", z, w.ev, w.db, d3), 4);
    json_decref(z);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d3, w.db), 0);
    const char *edits[][3] = {
        {"UPDATE decision_commitments SET commitments_micro = 0 WHERE decision_id = '%s' "
         "AND resource = 'origin' AND metric = 'rps'",
         "UPDATE decision_commitments SET commitments_micro = 300000000 WHERE decision_id = '%s' "
         "AND resource = 'origin' AND metric = 'rps'",
         "commitments_upper"},
        {"UPDATE decisions SET refusal_id = 'x' WHERE id = '%s'",
         "UPDATE decisions SET refusal_id = 'refuse-new-sessions-503' WHERE id = '%s'",
         "decisions.refusal_id"},
        {"UPDATE decision_conditions SET reason = 'resources_fit' WHERE decision_id = '%s' AND "
         "path_id = 'C' AND condition = 'resources'",
         "UPDATE decision_conditions SET reason = 'resources_limit_exceeded' WHERE decision_id = "
         "'%s' AND path_id = 'C' AND condition = 'resources'",
         "decision_conditions.C/resources.reason"},
    };
    char sql[512];
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        snprintf(sql, sizeof sql, edits[i][0], d3);
        assert_int_equal(ctl_sql(w.db, sql), 0);
        assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d3, w.db), 3);
        assert_out_has(&w, "out", edits[i][2]);
        snprintf(sql, sizeof sql, edits[i][1], d3);
        assert_int_equal(ctl_sql(w.db, sql), 0);
        assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d3, w.db), 0);
    }
    /* grant checks the whole record, not only the chosen path. */
    snprintf(sql, sizeof sql, "UPDATE decision_conditions SET detail = 'edited' WHERE "
                              "decision_id = '%s' AND path_id = 'C' AND condition = 'cost'", d2);
    assert_int_equal(ctl_sql(w.db, sql), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d2, NULL, g2), 65);
    assert_err_has(&w, "decision_does_not_replay");
    assert_int_equal(q(&w, "SELECT count(*) FROM grants"), 1);
    /* A schema 2 file whose decision_commitments is gone: reported. */
    assert_int_equal(ctl_sql(w.db, "DROP TABLE decision_commitments"), 0);
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d3, w.db), 3);
    assert_out_has(&w, "out", "decision_commitments (the table is missing");
    ctl_world_end(&w);
}

/* The commands of issue 11 print like every other (issue 9): human output
 * with control and bidi characters escaped, and with --json the error
 * object on a failure that printed nothing else. */
static void ctl_62_loop_commands_escape_output_and_print_the_json_error_object(void **state)
{
    (void)state;
    struct ctl_world w;
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    char d[33], g[33];
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    assert_int_equal(ctl_run(&w.t, "grant %s --db '%s' --actor \"$(printf 'eve\\033]0;x\\007')\"",
                             d, w.db),
                     0);
    char *out = ctl_out(&w.t, "out");
    sscanf(out, "%32s", g);
    free(out);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason \"$(printf "
                                   "'stop\\033[31m \\342\\200\\256gnp.exe')\"",
                             g, w.db),
                     0);
    const char *views[] = {"grants show %s --db '%s'", "explain %s --db '%s'"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ctl_run(&w.t, views[i], g, w.db), 0);
        out = ctl_out(&w.t, "out");
        assert_null(strchr(out, 0x1b));
        assert_null(strchr(out, 0x07));
        assert_null(strstr(out, "\xe2\x80\xae"));
        if (!strstr(out, "stop\\x1b[31m \\u{202e}gnp.exe") || !strstr(out, "eve\\x1b]0;x\\x07"))
            fail_msg("not escaped as expected:\n%s", out);
        free(out);
    }
    /* stderr quoting a given id */
    const char *quoting[] = {"grant", "explain", "replay"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ctl_run(&w.t, "%s \"$(printf 'x\\033[2J')\" --db '%s'", quoting[i], w.db),
                         65);
        char *err = ctl_out(&w.t, "err");
        assert_null(strchr(err, 0x1b));
        assert_non_null(strstr(err, "x\\x1b[2J"));
        free(err);
    }
    /* --json: the error object on stdout, exactly once */
    const char *fails[][2] = {{"grants show nope --db '%s' --json", "65"},
                              {"grant nope --db '%s' --json", "65"},
                              {"next nope --evidence /nonexistent --db '%s' --json", "65"},
                              {"revoke nope --db '%s' --json", "64"}};
    for (int i = 0; i < 4; i++) {
        int rc = ctl_run(&w.t, fails[i][0], w.db);
        assert_int_equal(rc, atoi(fails[i][1]));
        json_t *o = out_json(&w);
        json_t *e = json_object_get(o, "error");
        assert_string_equal(json_string_value(json_object_get(e, "program")), "stepctl");
        assert_int_equal(json_integer_value(json_object_get(e, "exit")), rc);
        json_decref(o);
    }
    json_decref(sit);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctl_39_schema_v2_and_forward_migration_of_v1),
        cmocka_unit_test(ctl_40_grant_defaults_caps_durations_and_record),
        cmocka_unit_test(ctl_41_grant_refusals),
        cmocka_unit_test(ctl_42_ledger_reserves_once_and_releases_only_with_a_reason),
        cmocka_unit_test(ctl_43_decide_takes_commitments_from_the_ledger),
        cmocka_unit_test(ctl_44_two_processes_never_double_spend_headroom),
        cmocka_unit_test(ctl_45_allocation_rules),
        cmocka_unit_test(ctl_46_allocation_refusals_revoked_expired_policy_changed),
        cmocka_unit_test(ctl_47_request_body_parser),
        cmocka_unit_test(ctl_48_token_bucket),
        cmocka_unit_test(ctl_49_next_positive_proposes_a_larger_step_and_grants_nothing),
        cmocka_unit_test(ctl_50_next_negative_closes_issuance_and_never_scales_up),
        cmocka_unit_test(ctl_51_explain_grant_and_next_and_cli_codes),
        cmocka_unit_test(ctl_58_readers_read_a_v1_control_db_as_it_is_and_never_write_it),
        cmocka_unit_test(ctl_59_loop_policy_and_observations_are_read_exactly),
        cmocka_unit_test(ctl_63_next_counts_only_valid_step_evidence),
        cmocka_unit_test(ctl_64_replay_of_a_ledger_decision_checks_every_stored_column),
        cmocka_unit_test(ctl_62_loop_commands_escape_output_and_print_the_json_error_object),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
