/* test_controller_smac.c - keyed tamper evidence of control.db
 * (docs/security.md#tamper-evidence): with --store-key-file (here through
 * $STEPCTL_STORE_KEY_FILE, as a service unit would set it) every row is
 * MACed; each kind of change a person with sqlite3 but without the key can
 * make is named by `stepctl verify-store` (exit 3), `stepctl serve`
 * refuses such a store (66), a wrong key is a wrong key (65) and a writer
 * without the key changes nothing. */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include <sqlite3.h>

#include "ctl_test.h"
#include "record.h"
#include "serve_rig.h"
#include "smac.h"
#include "smac_keyed.h"
#include "smac_tables.h"

#define KEY "store-key-of-the-tests-0123456789abcdef"

/* A 0600 key file name in the world's folder holding text; its path to out. */
static void key_file(struct ctl_world *w, const char *name, const char *text, char *out, size_t n)
{
    ctl_write_text(&w->t, name, text, out, n);
    assert_int_equal(chmod(out, 0600), 0);
}

/* The keyed world: the key in $STEPCTL_STORE_KEY_FILE, decided and granted
 * (the first decide keys the new store). */
static void keyed_world_d(struct ctl_world *w, char g[33], char d[33])
{
    char path[256];
    ctl_world_begin(w);
    key_file(w, "store.key", KEY "\n", path, sizeof path);
    assert_int_equal(setenv("STEPCTL_STORE_KEY_FILE", path, 1), 0);
    ctl_world_evidence(w, "ev-d-pre", "D", "MATCH", w->now - 300000, true);
    ctl_world_evidence(w, "ev-e-pre", "E", "MATCH", w->now - 300000, true);
    json_t *sit = serve_situation(w, SERVE_ORDER_CDE);
    assert_int_equal(ctl_decide_cli(&w->t, "sit.json", sit, w->ev, w->db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w->t, w->db, d, "", g), 0);
}

static void keyed_world(struct ctl_world *w, char g[33])
{
    char d[33];
    keyed_world_d(w, g, d);
}

static void world_end(struct ctl_world *w)
{
    unsetenv("STEPCTL_STORE_KEY_FILE");
    ctl_world_end(w);
}

/* Allocations a-FIRST .. a-LAST through a keyed serve. */
static void allocate_range(struct ctl_world *w, int first, int last)
{
    struct server s;
    server_start(w, &s);
    for (int i = first; i <= last; i++) {
        char id[16];
        snprintf(id, sizeof id, "a-%d", i);
        json_decref(serve_allocate(s.port, id));
    }
    assert_int_equal(server_stop(&s, SIGTERM), 0);
}

/* n allocations a-1 .. a-n through a keyed serve. */
static void allocate(struct ctl_world *w, int n)
{
    allocate_range(w, 1, n);
}

/* verify-store --json: exit 3 naming rule on a row of table (and row when
 * given), or exit 0 (rule NULL). */
static void expect_row(struct ctl_world *w, const char *table, const char *rule, const char *row)
{
    int rc = ctl_run(&w->t, "verify-store --db '%s' --json", w->db);
    json_t *o = ctl_out_json(&w->t);
    const char *kind = json_string_value(json_object_get(o, "kind"));
    if ((rule ? rc != 3 : rc != 0) ||
        (rule && strcmp(json_string_value(json_object_get(o, "rule")), rule))) {
        char *text = json_dumps(o, 0), *err = ctl_out(&w->t, "err");
        printf("verify-store: %d %s %s\n", rc, text ? text : "?", err);
        free(text);
        free(err);
    }
    if (!rule) {
        assert_int_equal(rc, 0);
        assert_string_equal(kind, "store_ok");
    } else {
        assert_int_equal(rc, 3);
        assert_string_equal(kind, "store_tampered");
        assert_string_equal(json_string_value(json_object_get(o, "table")), table);
        assert_string_equal(json_string_value(json_object_get(o, "rule")), rule);
        if (row)
            assert_string_equal(json_string_value(json_object_get(o, "row")), row);
    }
    json_decref(o);
}

static void expect(struct ctl_world *w, const char *table, const char *rule)
{
    expect_row(w, table, rule, NULL);
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

static bool file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return memmem(buf, n, needle, strlen(needle)) != NULL;
}

/* decide, grant, serve's allocations and revoke on a keyed store: every row
 * has its MAC, verify-store says store_ok, and the key is nowhere in it. */
static void ctl_188_keyed_store_round_trip_verifies_clean(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    keyed_world(&w, g);
    allocate(&w, 3);
    expect(&w, NULL, NULL);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_keying"), 1);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_macs WHERE tbl = "
                                         "'allocations' AND chain <> ''"), 3);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason done", g, w.db), 0);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --json", w.db), 0);
    json_t *o = ctl_out_json(&w.t);
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "store_ok");
    /* decisions, their evidence and conditions, grant, reservations,
     * events, allocations */
    assert_true(json_integer_value(json_object_get(o, "macs")) >= 10);
    json_decref(o);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s'", w.db), 0);
    char *out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, "MACs and"));
    free(out);
    assert_false(file_has(w.db, KEY));
    /* the same store read without the key: not checked at all (64) */
    unsetenv("STEPCTL_STORE_KEY_FILE");
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s'", w.db), 64);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "--store-key-file"));
    free(err);
    world_end(&w);
}

/* Issue 19, item 8: an immutable column changed by hand, its guarding
 * trigger dropped first: row_mac_mismatch, before any rule. */
static void ctl_189_changed_immutable_column_is_row_mac_mismatch(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], d[33];
    keyed_world_d(&w, g, d);
    long long cap = ctl_query_int(w.db, "SELECT max_allocations FROM grants");
    sql(&w, "DROP TRIGGER grants_caps_fixed; UPDATE grants SET max_allocations = 1000000000 "
            "WHERE id = '%s'", g);
    expect_row(&w, "grants", "row_mac_mismatch", g);
    sql(&w, "UPDATE grants SET max_allocations = %lld WHERE id = '%s'", cap, g);
    /* retargeted to another cohort: the MAC names it, not only the rule */
    sql(&w, "UPDATE grants SET region = 'us-east' WHERE id = '%s'", g);
    expect_row(&w, "grants", "row_mac_mismatch", g);
    sql(&w, "UPDATE grants SET region = 'eu-west' WHERE id = '%s'", g);
    expect(&w, NULL, NULL);
    /* a recorded decision's tool version rewritten: no rule sees it, its
     * MAC does; replay is then never identical, explain says it after
     * answering */
    sql(&w, "UPDATE decisions SET tool_version = 'stepctl 0.0'");
    expect(&w, "decisions", "row_mac_mismatch");
    assert_int_equal(ctl_run(&w.t, "replay %s --db '%s'", d, w.db), 3);
    char *out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, "store_tampered: control.db: decisions"));
    assert_non_null(strstr(out, "row_mac_mismatch"));
    free(out);
    assert_int_equal(ctl_run(&w.t, "explain %s --db '%s'", g, w.db), 0);
    out = ctl_out(&w.t, "out");
    assert_non_null(strstr(out, "row_mac_mismatch"));
    free(out);
    world_end(&w);
}

/* A grant inserted by hand: with the MAC trigger in place, a plain sqlite3
 * cannot insert at all (stepctl_mac does not exist there); with it dropped
 * the row has no MAC. */
static void ctl_190_hand_inserted_grant_is_row_mac_missing(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    keyed_world(&w, g);
    static const char forge[] =
        "CREATE TEMP TABLE t AS SELECT * FROM grants WHERE id = '%s'; UPDATE t SET id = 'forged', "
        "decision_id = 'no-such-decision', max_allocations = 1000000000; %s "
        "INSERT INTO grants SELECT * FROM t";
    char text[512];
    snprintf(text, sizeof text, forge, g, "");
    assert_int_not_equal(ctl_sql(w.db, text), 0); /* no such function: stepctl_mac */
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM grants"), 1);
    /* (smac_heads_grants, which makes the grant's chain heads, calls it too) */
    snprintf(text, sizeof text, forge, g,
             "DROP TRIGGER smac_grants; DROP TRIGGER smac_heads_grants;");
    assert_int_equal(ctl_sql(w.db, text), 0);
    expect_row(&w, "grants", "row_mac_missing", "forged");
    /* a keyed writer puts the trigger back, the forged row stays named */
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM sqlite_master WHERE name = "
                                         "'smac_grants'"), 1);
    expect_row(&w, "grants", "row_mac_missing", "forged");
    world_end(&w);
}

/* Allocations deleted by hand: alone (row_deleted), with its MAC in the
 * middle of the grant's chain (the next one's MAC no longer chains), or
 * the newest with its MAC (the MACs' numbering ends early). */
static void ctl_191_deleted_allocation_is_named(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    keyed_world(&w, g);
    allocate(&w, 3);
    expect(&w, NULL, NULL);
    char db_copy[256];
    ctl_tmp_path(&w.t, "copy.db", db_copy, sizeof db_copy);
    sql(&w, "VACUUM INTO '%s'", db_copy);
    sql(&w, "DROP TRIGGER allocations_kept; DELETE FROM allocations WHERE id = 'a-2'; "
            "UPDATE grants SET allocated = 2");
    expect_row(&w, "allocations", "row_deleted", "a-2");
    sql(&w, "DROP TRIGGER store_macs_kept; DELETE FROM store_macs WHERE row_key = 'a-2'");
    expect_row(&w, "allocations", "row_mac_mismatch", "a-3");
    /* the newest allocation and its MAC, from the copy */
    assert_int_equal(rename(db_copy, w.db), 0);
    sql(&w, "DROP TRIGGER allocations_kept; DROP TRIGGER store_macs_kept; DELETE FROM "
            "allocations WHERE id = 'a-3'; DELETE FROM store_macs WHERE row_key = 'a-3'; "
            "UPDATE grants SET allocated = 2");
    expect(&w, "store_macs", "mac_deleted");
    world_end(&w);
}

/* Rows written before the store was keyed are covered by its checkpoint:
 * one changed, one removed, one added among them: checkpoint_mismatch. */
static void ctl_192_changed_pre_keying_row_is_checkpoint_mismatch(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], d[33], path[256];
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "", g), 0); /* unkeyed so far */
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_keying"), 0);
    key_file(&w, "store.key", KEY, path, sizeof path);
    /* read with a key, an unkeyed store proves nothing: store_not_keyed */
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --store-key-file '%s' --json", w.db,
                             path), 3);
    json_t *o = ctl_out_json(&w.t);
    assert_string_equal(json_string_value(json_object_get(o, "rule")), "store_not_keyed");
    json_decref(o);
    /* the first command with a key keys it */
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r --store-key-file '%s'", g,
                             w.db, path), 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_keying"), 1);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --store-key-file '%s'", w.db, path), 0);
    assert_int_not_equal(ctl_sql(w.db, "DELETE FROM store_keying"), 0); /* never unkeyed */
    char db_copy[256];
    ctl_tmp_path(&w.t, "copy.db", db_copy, sizeof db_copy);
    sql(&w, "VACUUM INTO '%s'", db_copy);
    const char *const tamper[] = {
        "UPDATE grants SET actor = 'someone else'",
        "DELETE FROM decision_conditions WHERE rowid = (SELECT MAX(rowid) FROM "
        "decision_conditions WHERE rowid <= json_extract((SELECT covered FROM store_keying), "
        "'$.decision_conditions'))",
        "DROP TRIGGER smac_decision_evidence; INSERT INTO decision_evidence SELECT decision_id, "
        "seq + 100, evidence_id, check_kind, verdict, reason, profile_id, path_id, channel, "
        "rendition, program_version, reference_version, observed_at_ms, recorded_at_ms, "
        "malformed FROM decision_evidence LIMIT 1; UPDATE decision_evidence SET rowid = -1 "
        "WHERE seq >= 100",
    };
    for (size_t i = 0; i < sizeof tamper / sizeof tamper[0]; i++) {
        char restore[300];
        snprintf(restore, sizeof restore, "VACUUM INTO '%s'", w.db);
        assert_int_equal(remove(w.db), 0);
        assert_int_equal(ctl_sql(db_copy, restore), 0); /* the keyed store as it was */
        sql(&w, "%s", tamper[i]);
        int rc = ctl_run(&w.t, "verify-store --db '%s' --store-key-file '%s' --json", w.db, path);
        o = ctl_out_json(&w.t);
        if (rc != 3)
            printf("tamper %zu: %d\n", i, rc);
        assert_int_equal(rc, 3);
        assert_string_equal(json_string_value(json_object_get(o, "rule")), "checkpoint_mismatch");
        assert_string_equal(json_string_value(json_object_get(o, "table")), "store_keying");
        json_decref(o);
    }
    json_decref(sit);
    world_end(&w);
}

/* A key that is not the store's is reported as such (65), never as
 * tampering; a key file others may read, or too short, is refused (65),
 * one that cannot be read is 66; no message shows the key. */
static void ctl_193_wrong_key_is_65_not_tampering(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], other[256], loose[256], shrt[256];
    keyed_world(&w, g);
    key_file(&w, "other.key", "another-key-of-the-tests-0123456789abcdef", other, sizeof other);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --store-key-file '%s'", w.db, other), 65);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "the key does not match control.db's key id"));
    assert_null(strstr(err, "another-key"));
    free(err);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r --store-key-file '%s'", g,
                             w.db, other), 65);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM grants WHERE status = 'active'"), 1);
    key_file(&w, "loose.key", KEY, loose, sizeof loose);
    assert_int_equal(chmod(loose, 0644), 0);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --store-key-file '%s'", w.db, loose), 65);
    err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "chmod 600"));
    free(err);
    key_file(&w, "short.key", "too-short-0123456789\n", shrt, sizeof shrt);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --store-key-file '%s'", w.db, shrt), 65);
    err = ctl_out(&w.t, "err");
    assert_null(strstr(err, "too-short"));
    free(err);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --store-key-file '%s/none.key'", w.db,
                             w.t.dir), 66);
    /* the environment's key is the store's: the option above won over it */
    expect(&w, NULL, NULL);
    world_end(&w);
}

/* Every writer without the key fails closed on a keyed store: nonzero,
 * naming --store-key-file, and nothing written. */
static void ctl_194_keyed_store_written_without_key_fails_closed(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    keyed_world(&w, g);
    unsetenv("STEPCTL_STORE_KEY_FILE");
    long long events = ctl_query_int(w.db, "SELECT count(*) FROM grant_events");
    long long decisions = ctl_query_int(w.db, "SELECT count(*) FROM decisions");
    long long macs = ctl_query_int(w.db, "SELECT count(*) FROM store_macs");
    assert_int_not_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 0);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "--store-key-file is needed to write it"));
    free(err);
    json_t *sit = ctl_world_situation(&w);
    ctl_other_isp(sit, "isp-other");
    char path[256];
    ctl_write_json(&w.t, "sit2.json", sit, path, sizeof path);
    json_decref(sit);
    assert_int_not_equal(ctl_run(&w.t, "decide --input '%s' --evidence '%s' --db '%s'", path,
                                 w.ev, w.db), 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM grant_events"), events);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM decisions"), decisions);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_macs"), macs);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM grants WHERE status = 'active'"), 1);
    /* serve without the key refuses at start */
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0", w.db), 66);
    err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "--store-key-file is needed to serve it"));
    free(err);
    world_end(&w);
}

/* serve refuses (66) a keyed store whose MACs do not hold, or that holds
 * a trigger stepctl did not create (it could make serve MAC a row of
 * someone else's choosing); verify-store names both. */
static void ctl_195_serve_refuses_a_tampered_keyed_store(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    keyed_world(&w, g);
    sql(&w, "UPDATE grants SET region = 'us-east' WHERE id = '%s'", g);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0", w.db), 66);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "store_tampered"));
    assert_non_null(strstr(err, "row_mac_mismatch"));
    free(err);
    sql(&w, "UPDATE grants SET region = 'eu-west' WHERE id = '%s'", g);
    /* a trigger that would have serve's own connection MAC a forged grant */
    sql(&w, "CREATE TRIGGER forge AFTER INSERT ON sessions BEGIN INSERT INTO grant_events "
            "SELECT grant_id, 99, at_ms, 'expired', 'forged', 'x' FROM grant_events LIMIT 1; END");
    expect_row(&w, "sqlite_master", "foreign_schema_object", "trigger forge");
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0", w.db), 66);
    err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "trigger forge"));
    free(err);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 66);
    sql(&w, "DROP TRIGGER forge");
    expect(&w, NULL, NULL);
    /* the keying row removed by hand: still keyed (its MACs remain) */
    sql(&w, "DROP TRIGGER store_keying_kept; DELETE FROM store_keying");
    expect(&w, "store_keying", "keying_removed");
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 66);
    unsetenv("STEPCTL_STORE_KEY_FILE");
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s'", w.db), 64);
    world_end(&w);
}

/* The key of a chain's head row, as verify-store names it. */
static void head_key(const char *tbl, const char *chain, char *out, size_t n)
{
    snprintf(out, n, "[\"%s\",\"%s\"]", tbl, chain);
}

/* The newest allocation of grant g removed with its MAC, and store_macs'
 * sequence lowered to match, the grant's counter with it: what no MAC
 * check sees (docs/security.md, "can and cannot"). */
static void truncate_tail(struct ctl_world *w, const char *g, const char *id)
{
    sql(w, "DROP TRIGGER allocations_kept; DROP TRIGGER store_macs_kept; DELETE FROM allocations "
           "WHERE id = '%s'; DELETE FROM store_macs WHERE row_key = '%s'; UPDATE sqlite_sequence "
           "SET seq = (SELECT MAX(seq) FROM store_macs) WHERE name = 'store_macs'; UPDATE grants "
           "SET allocated = allocated - 1 WHERE id = '%s'", id, id, g);
}

/* The known hole of schema 7, closed: the newest allocations of a grant
 * removed with their MACs and the sequence lowered leave the chain shorter
 * than its head (head_mismatch, before any rule); serve refuses the store. */
static void ctl_210_truncated_tail_with_sequence_lowered_is_head_mismatch(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], key[80];
    keyed_world(&w, g);
    allocate(&w, 3);
    expect(&w, NULL, NULL);
    assert_int_equal(ctl_query_int(w.db, "SELECT n FROM store_heads WHERE tbl = 'allocations'"), 3);
    truncate_tail(&w, g, "a-3");
    head_key("allocations", g, key, sizeof key);
    expect_row(&w, "store_heads", "head_mismatch", key);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0", w.db), 66);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "store_tampered"));
    assert_non_null(strstr(err, "head_mismatch"));
    free(err);
    world_end(&w);
}

/* A head deleted by hand (its guard dropped): head_missing, and the next
 * keyed writer does not start the chain again under a fresh head. */
static void ctl_211_deleted_head_is_head_missing(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], key[80];
    keyed_world(&w, g);
    sql(&w, "DROP TRIGGER store_heads_kept; DELETE FROM store_heads WHERE tbl = 'grant_events' "
            "AND chain = '%s'", g);
    head_key("grant_events", g, key, sizeof key);
    expect_row(&w, "store_heads", "head_missing", key);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_heads WHERE tbl = "
                                         "'grant_events'"), 0);
    expect_row(&w, "store_heads", "head_missing", key);
    /* a single chain's head (grants') deleted: the same */
    sql(&w, "DELETE FROM store_heads WHERE tbl = 'grants'");
    expect(&w, "store_heads", "head_missing");
    world_end(&w);
}

/* A head changed by hand (its count lowered to a truncated chain's): it
 * no longer verifies, head_mismatch; a keyed writer appending to the chain
 * does not re-sign it (the trigger advances only a head that verifies). */
static void ctl_212_head_changed_by_hand_is_head_mismatch(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], key[80];
    keyed_world(&w, g);
    expect(&w, NULL, NULL);
    sql(&w, "UPDATE store_heads SET n = n - 1, last_mac = '' WHERE tbl = 'grant_events' AND "
            "chain = '%s'", g);
    head_key("grant_events", g, key, sizeof key);
    expect_row(&w, "store_heads", "head_mismatch", key);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 0);
    expect_row(&w, "store_heads", "head_mismatch", key);
    /* the head of another chain copied over this one's: bound to its chain */
    sql(&w, "UPDATE store_heads SET (n, last_mac, head_mac) = (SELECT n, last_mac, head_mac FROM "
            "store_heads WHERE tbl = 'allocations' AND chain = '%s') WHERE tbl = 'grant_events' "
            "AND chain = '%s'", g, g);
    expect_row(&w, "store_heads", "head_mismatch", key);
    world_end(&w);
}

/* A grant's whole allocation chain removed, with its MACs (the newest:
 * the sequence lowered, no gap), its head and the counter: the grant is
 * left without its allocations head, head_missing. */
static void ctl_213_whole_allocation_chain_removed_with_its_head_is_found(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], key[80];
    keyed_world(&w, g);
    allocate(&w, 2);
    sql(&w, "DROP TRIGGER allocations_kept; DROP TRIGGER store_macs_kept; DROP TRIGGER "
            "store_heads_kept; DELETE FROM sessions; DELETE FROM allocations; DELETE FROM "
            "store_macs WHERE tbl = 'allocations'; DELETE FROM store_heads WHERE tbl = "
            "'allocations'; UPDATE sqlite_sequence SET seq = (SELECT MAX(seq) FROM store_macs) "
            "WHERE name = 'store_macs'; UPDATE grants SET allocated = 0");
    head_key("allocations", g, key, sizeof key);
    expect_row(&w, "store_heads", "head_missing", key);
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0", w.db), 66);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "head_missing"));
    free(err);
    world_end(&w);
}

/* Keys the unkeyed store of w as a build of schema 8 did, through the
 * library: taken back to schema 8, the store_keying row (its covered
 * without "heads") and the nine MAC triggers, no head. */
static void key_as_schema_8(struct ctl_world *w, const struct store_key *k)
{
    assert_int_equal(ctl_sql(w->db, CTL_V9_UNDONE "PRAGMA user_version = 8"), 0);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(w->db, &db), SQLITE_OK);
    assert_int_equal(smac_attach(db, k), SQLITE_OK);
    char covered[1024] = "{", text[4096], cp[SMAC_HEX], id[SMAC_HEX];
    for (size_t i = 0; i < smac_n_tables; i++) {
        char q[128];
        snprintf(q, sizeof q, "SELECT COALESCE(MAX(rowid), 0) FROM %s", smac_tables[i].name);
        size_t len = strlen(covered);
        snprintf(covered + len, sizeof covered - len, "%s\"%s\": %lld", i ? ", " : "",
                 smac_tables[i].name, ctl_query_int(w->db, q));
    }
    strcat(covered, "}");
    assert_int_equal(smac_checkpoint(db, k, w->now, covered, cp), 0);
    smac_key_id(k, id);
    snprintf(text, sizeof text, "INSERT INTO store_keying VALUES (1, '%s', %lld, '%s', '%s')", id,
             (long long)w->now, cp, covered);
    assert_int_equal(sqlite3_exec(db, text, NULL, NULL, NULL), SQLITE_OK);
    for (size_t i = 0; i < smac_n_tables; i++) {
        assert_int_equal(smac_trigger_sql(&smac_tables[i], text, sizeof text), 0);
        assert_int_equal(sqlite3_exec(db, text, NULL, NULL, NULL), SQLITE_OK);
    }
    /* a MAC written at schema 8, before any head: a grant event */
    assert_int_equal(sqlite3_exec(db, "INSERT INTO grant_events SELECT grant_id, 2, at_ms, "
                                      "'reservations_posted', 'at schema 8', actor FROM "
                                      "grant_events", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* A store keyed at schema 8 verifies without heads until the next writer
 * with the key seeds them from its MACs (the seeding MAC marks it); from
 * then on a truncated tail is a head_mismatch there too. */
static void ctl_214_store_keyed_at_schema_8_is_seeded_by_the_next_keyed_writer(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], d[33], path[256], key[80];
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "", g), 0);
    struct store_key k = {.n = strlen(KEY)};
    memcpy(k.b, KEY, k.n);
    key_as_schema_8(&w, &k);
    key_file(&w, "store.key", KEY "\n", path, sizeof path);
    assert_int_equal(setenv("STEPCTL_STORE_KEY_FILE", path, 1), 0);
    expect(&w, NULL, NULL); /* schema 8, read as it is: no heads needed */
    assert_int_equal(ctl_query_int(w.db, "PRAGMA user_version"), 8);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 0);
    assert_int_equal(ctl_query_int(w.db, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_macs WHERE tbl = "
                                         "'store_heads' AND row_key = 'seeded'"), 1);
    /* seeded from the MAC of schema 8, then advanced by revoke's events */
    char q[256];
    snprintf(q, sizeof q, "SELECT n = (SELECT count(*) FROM store_macs WHERE tbl = 'grant_events') "
                          "AND n >= 2 FROM store_heads WHERE tbl = 'grant_events' AND chain = '%s'",
             g);
    assert_int_equal(ctl_query_int(w.db, q), 1);
    expect(&w, NULL, NULL);
    /* the newest event removed with its MAC, the sequence lowered */
    sql(&w, "DROP TRIGGER store_macs_kept; DELETE FROM grant_events WHERE grant_id = '%s' AND "
            "seq = (SELECT MAX(seq) FROM grant_events); "
            "DELETE FROM store_macs WHERE seq = (SELECT MAX(seq) FROM store_macs WHERE tbl = "
            "'grant_events'); UPDATE sqlite_sequence SET seq = (SELECT MAX(seq) FROM store_macs) "
            "WHERE name = 'store_macs'", g);
    head_key("grant_events", g, key, sizeof key);
    expect_row(&w, "store_heads", "head_mismatch", key);
    world_end(&w);
}

/* An unkeyed store pays nothing: no head, no head trigger, plain sqlite3
 * still inserts, verify-store checks the rules only as before. */
static void ctl_215_unkeyed_store_has_no_heads(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], d[33];
    ctl_world_begin(&w);
    json_t *sit = serve_situation(&w, SERVE_ORDER_CDE);
    ctl_world_evidence(&w, "ev-d-pre", "D", "MATCH", w.now - 300000, true);
    ctl_world_evidence(&w, "ev-e-pre", "E", "MATCH", w.now - 300000, true);
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "", g), 0);
    allocate(&w, 2);
    assert_int_equal(ctl_query_int(w.db, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_heads"), 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM sqlite_master WHERE name LIKE "
                                         "'smac_%'"), 0);
    expect(&w, NULL, NULL);
    sql(&w, "INSERT INTO grant_events SELECT grant_id, 9, at_ms, 'reservations_posted', 'by hand', "
            "actor FROM grant_events WHERE seq = 1");
    expect(&w, NULL, NULL);
    world_end(&w);
}

/* A store keyed at schema 9 gives the grants that existed at keying their
 * heads (n = 0 where no MAC), so their chains are held like a new grant's;
 * its keying covers "heads", so removing every head is head_missing, never
 * a store to seed again. */
static void ctl_216_grants_before_keying_get_heads(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], d[33], path[256], key[80];
    ctl_world_begin(&w);
    json_t *sit = ctl_world_situation(&w);
    ctl_fast(sit);
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_grant_cli(&w.t, w.db, d, "", g), 0); /* unkeyed so far */
    key_file(&w, "store.key", KEY, path, sizeof path);
    assert_int_equal(setenv("STEPCTL_STORE_KEY_FILE", path, 1), 0);
    assert_int_equal(ctl_run(&w.t, "revoke %s --db '%s' --reason r", g, w.db), 0); /* keys it */
    char q[200];
    snprintf(q, sizeof q, "SELECT n FROM store_heads WHERE tbl = 'allocations' AND chain = '%s'",
             g);
    assert_int_equal(ctl_query_int(w.db, q), 0);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_macs WHERE tbl = "
                                         "'store_heads'"), 0); /* no seeding MAC: covered says it */
    expect(&w, NULL, NULL);
    sql(&w, "DROP TRIGGER store_heads_kept; DELETE FROM store_heads WHERE tbl = 'allocations'");
    head_key("allocations", g, key, sizeof key);
    expect_row(&w, "store_heads", "head_missing", key);
    /* every head removed: the keying still covers "heads", no writer seeds
     * them again (a decide with the key: new MACs, no head) */
    sql(&w, "DELETE FROM store_heads");
    sit = ctl_world_situation(&w);
    ctl_fast(sit);
    ctl_other_isp(sit, "isp-other");
    assert_int_equal(ctl_decide_cli(&w.t, "sit2.json", sit, w.ev, w.db, d), 0);
    json_decref(sit);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM store_heads"), 0);
    expect(&w, "store_heads", "head_missing");
    world_end(&w);
}

/* The anchor at path with the count of its first allocation chain lowered
 * by one, as someone editing it by hand would (the MAC left as it was). */
static void edit_anchor(const char *path)
{
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    assert_non_null(o);
    json_t *heads = json_object_get(o, "heads"), *h;
    size_t i;
    bool done = false;
    json_array_foreach(heads, i, h) {
        if (!done && !strcmp(json_string_value(json_array_get(h, 0)), "allocations")) {
            json_array_set_new(h, 2, json_integer(json_integer_value(json_array_get(h, 2)) - 1));
            done = true;
        }
    }
    assert_true(done);
    assert_int_equal(json_dump_file(o, path, JSON_COMPACT | JSON_SORT_KEYS), 0);
    json_decref(o);
}

/* The anchor (verify-store --anchor, smac_anchor.h): the hole the heads
 * leave, closed for whoever keeps the anchor.  control.db copied after two
 * allocations, two more made, the anchor taken; the old copy put back: the
 * store verifies on its own (every MAC and head of the copy is genuine),
 * but not against the anchor: head_rollback on the grant's allocation
 * chain, and the anchor is not rewritten.  An anchor edited by hand is 65,
 * and --anchor on an unkeyed store is a usage error. */
static void ctl_217_anchor_finds_a_rollback_to_an_older_copy(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], key[80], anchor[300], old[300], cmd[1024];
    keyed_world(&w, g);
    allocate(&w, 2);
    snprintf(anchor, sizeof anchor, "%s.anchor", w.db);
    snprintf(old, sizeof old, "%s.old", w.db);
    assert_int_equal(ctl_sql(w.db, "PRAGMA wal_checkpoint(TRUNCATE)"), 0);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", w.db, old);
    assert_int_equal(system(cmd), 0);
    allocate_range(&w, 3, 4);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --anchor '%s' --json", w.db, anchor), 0);
    json_t *o = ctl_out_json(&w.t);
    assert_true(json_is_null(json_object_get(json_object_get(o, "anchor"), "checked")));
    json_int_t written = json_integer_value(json_object_get(json_object_get(o, "anchor"), "written"));
    assert_true(written >= 3);   /* the grant's two chains, the single-chain tables */
    json_decref(o);
    struct stat sb;
    assert_int_equal(stat(anchor, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --anchor '%s' --json", w.db, anchor), 0);
    o = ctl_out_json(&w.t);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "anchor"), "checked")), written);
    json_decref(o);
    /* the rollback: the older copy back in place */
    assert_int_equal(ctl_sql(w.db, "PRAGMA wal_checkpoint(TRUNCATE)"), 0);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && rm -f '%s-wal' '%s-shm'", old, w.db, w.db, w.db);
    assert_int_equal(system(cmd), 0);
    expect(&w, NULL, NULL);                      /* on its own, it verifies */
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --anchor '%s' --json", w.db, anchor), 3);
    o = ctl_out_json(&w.t);
    head_key("allocations", g, key, sizeof key);
    assert_string_equal(json_string_value(json_object_get(o, "rule")), "head_rollback");
    assert_string_equal(json_string_value(json_object_get(o, "row")), key);
    json_decref(o);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --anchor '%s'", w.db, anchor), 3);
    /* an anchor edited by hand: 65, never a verdict on the store */
    edit_anchor(anchor);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --anchor '%s'", w.db, anchor), 65);
    char *err = ctl_out(&w.t, "err");
    assert_non_null(strstr(err, "does not verify"));
    free(err);
    world_end(&w);
    /* an unkeyed store has no keyed heads to anchor */
    ctl_world_begin(&w);
    ctl_world_evidence(&w, "ev-d-pre", "D", "MATCH", w.now - 300000, true);
    json_t *sit = serve_situation(&w, SERVE_ORDER_CDE);
    char d[33];
    assert_int_equal(ctl_decide_cli(&w.t, "sit.json", sit, w.ev, w.db, d), 0);
    json_decref(sit);
    snprintf(anchor, sizeof anchor, "%s.anchor", w.db);
    assert_int_equal(ctl_run(&w.t, "verify-store --db '%s' --anchor '%s'", w.db, anchor), 64);
    world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(ctl_188_keyed_store_round_trip_verifies_clean, kill_leftovers),
        cmocka_unit_test(ctl_189_changed_immutable_column_is_row_mac_mismatch),
        cmocka_unit_test(ctl_190_hand_inserted_grant_is_row_mac_missing),
        cmocka_unit_test_teardown(ctl_191_deleted_allocation_is_named, kill_leftovers),
        cmocka_unit_test(ctl_192_changed_pre_keying_row_is_checkpoint_mismatch),
        cmocka_unit_test(ctl_193_wrong_key_is_65_not_tampering),
        cmocka_unit_test(ctl_194_keyed_store_written_without_key_fails_closed),
        cmocka_unit_test(ctl_195_serve_refuses_a_tampered_keyed_store),
        cmocka_unit_test_teardown(ctl_210_truncated_tail_with_sequence_lowered_is_head_mismatch,
                                  kill_leftovers),
        cmocka_unit_test(ctl_211_deleted_head_is_head_missing),
        cmocka_unit_test(ctl_212_head_changed_by_hand_is_head_mismatch),
        cmocka_unit_test_teardown(ctl_213_whole_allocation_chain_removed_with_its_head_is_found,
                                  kill_leftovers),
        cmocka_unit_test(ctl_214_store_keyed_at_schema_8_is_seeded_by_the_next_keyed_writer),
        cmocka_unit_test_teardown(ctl_215_unkeyed_store_has_no_heads, kill_leftovers),
        cmocka_unit_test(ctl_216_grants_before_keying_get_heads),
        cmocka_unit_test_teardown(ctl_217_anchor_finds_a_rollback_to_an_older_copy, kill_leftovers),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
