/* smac_keyed.c - keying control.db, checking a key (see smac_keyed.h). */
#include "smac_keyed.h"

#include <stdio.h>
#include <string.h>

#include "dbfile.h"
#include "smac_heads.h"
#include "smac_tables.h"

int smac_is_keyed(sqlite3 *db)
{
    if (dbfile_user_version(db) < 7)
        return 0;
    sqlite3_stmt *st = NULL;
    /* MACs without their keying row are a keyed store whose keying was
     * removed by hand, not an unkeyed one */
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM store_keying UNION ALL SELECT 1 FROM store_macs",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int smac_create_triggers(sqlite3 *db)
{
    char sql[4096];
    for (size_t i = 0; i < smac_n_tables; i++) {
        if (smac_trigger_sql(&smac_tables[i], sql, sizeof sql) != 0)
            return SQLITE_ERROR;
        int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            return rc;
    }
    return smac_heads_triggers(db); /* the heads: schema 9 (smac_heads.h) */
}

int smac_foreign_object(sqlite3 *db, sqlite3 *ref, char *name, size_t cap)
{
    return store_key_foreign_object(db, ref, "stepctl_mac", name, cap);
}

/* One MAC of the checkpoint chain over the values of st's current row. */
static int chain_step(const struct store_key *k, const char *tbl, sqlite3_stmt *st, char prev[SMAC_HEX])
{
    sqlite3_value *vals[64];
    int n = sqlite3_column_count(st);
    if (n > 64)
        return -1;
    for (int i = 0; i < n; i++)
        vals[i] = sqlite3_column_value(st, i);
    char next[SMAC_HEX];
    if (smac_row(k, tbl, "checkpoint", prev, vals, n, next) != 0)
        return -1;
    memcpy(prev, next, SMAC_HEX);
    return 0;
}

static int checkpoint_table(sqlite3 *db, const struct store_key *k, const struct smac_table *t,
                            const char *covered, char prev[SMAC_HEX])
{
    char cols[1024], sql[1400];
    if (smac_cols_expr(t, "t", cols, sizeof cols) != 0)
        return -1;
    snprintf(sql, sizeof sql, "SELECT %s FROM %s t WHERE t.rowid <= json_extract(?1, '$.%s') "
                              "ORDER BY t.rowid", cols, t->name, t->name);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, covered, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (chain_step(k, t->name, st, prev) != 0) {
            rc = SQLITE_ERROR;
            break;
        }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int smac_checkpoint(sqlite3 *db, const struct store_key *k, int64_t keyed_at_ms,
                    const char *covered, char hex[SMAC_HEX])
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT ?1, ?2", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, keyed_at_ms);
    sqlite3_bind_text(st, 2, covered, -1, SQLITE_STATIC);
    hex[0] = '\0';
    int rc = sqlite3_step(st) == SQLITE_ROW ? chain_step(k, "store_keying", st, hex) : -1;
    sqlite3_finalize(st);
    for (size_t i = 0; rc == 0 && i < smac_n_tables; i++)
        rc = checkpoint_table(db, k, &smac_tables[i], covered, hex);
    return rc;
}

/* {"heads": 1, "decisions": 12, ...}: keyed with chain heads (so they are
 * required, under the checkpoint: smac_heads.h), the greatest rowid of each
 * table now. */
static int covered_now(sqlite3 *db, char *out, size_t cap)
{
    size_t len = (size_t)snprintf(out, cap, "{%s, ", SMAC_HEADS_COVERED);
    for (size_t i = 0; i < smac_n_tables; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT COALESCE(MAX(rowid), 0) FROM %s", smac_tables[i].name);
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
            sqlite3_finalize(st);
            return -1;
        }
        len += (size_t)snprintf(out + len, cap - len, "%s\"%s\": %lld", i ? ", " : "",
                                smac_tables[i].name, (long long)sqlite3_column_int64(st, 0));
        sqlite3_finalize(st);
        if (len >= cap)
            return -1;
    }
    len += (size_t)snprintf(out + len, cap - len, "}");
    return len < cap ? 0 : -1;
}

static int key_store(sqlite3 *db, const struct store_key *k, int64_t now_ms)
{
    char covered[1024], cp[SMAC_HEX], id[SMAC_HEX];
    if (covered_now(db, covered, sizeof covered) != 0 ||
        smac_checkpoint(db, k, now_ms, covered, cp) != 0)
        return SQLITE_ERROR;
    smac_key_id(k, id);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO store_keying (id, key_id, keyed_at_ms, checkpoint, "
                               "covered) VALUES (1, ?1, ?2, ?3, ?4)", -1, &st, NULL) != SQLITE_OK)
        return SQLITE_ERROR;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, now_ms);
    sqlite3_bind_text(st, 3, cp, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, covered, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(st);
    return rc;
}

/* 1 the key is the store's, 0 not, 2 no keying row (removed), -1 error. */
static int key_matches(sqlite3 *db, const struct store_key *k)
{
    return store_key_matches(db, "SELECT key_id FROM store_keying", k, SMAC_KEY_ID_LABEL);
}

/* The chain heads of a store just keyed (keyed 0), or of one keyed before
 * schema 9 that has none yet: seeded from the MACs as they are now, the
 * latter with the seeding MAC.  A store that must have heads is never
 * seeded again: heads removed by hand stay missing (smac_heads.h). */
static int heads_enter(sqlite3 *db, int keyed)
{
    int required = keyed ? smac_heads_required(db) : 0;
    if (required < 0)
        return SQLITE_ERROR;
    return required ? SQLITE_OK : smac_heads_seed(db, keyed != 0);
}

enum smac_enter_rc smac_enter(sqlite3 *db, sqlite3 *ref, const struct store_key *k, bool writer,
                              int64_t now_ms, char *err, size_t errlen)
{
    if (dbfile_user_version(db) < 7)
        return SMAC_ENTER_OK; /* a reader of an older file: nothing is keyed */
    if (sqlite3_exec(db, writer ? "BEGIN IMMEDIATE" : "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "control.db: begin: %s", sqlite3_errmsg(db));
        return SMAC_ENTER_FAILED;
    }
    enum smac_enter_rc res = SMAC_ENTER_OK;
    char name[256] = "store_keying (removed, its MACs remain)";
    int keyed = smac_is_keyed(db), m = 0, foreign = 0;
    if (keyed < 0)
        res = SMAC_ENTER_FAILED;
    else if (keyed && (m = key_matches(db, k)) != 1 && !(m == 2 && !writer))
        res = m == 0 ? SMAC_ENTER_WRONG_KEY : m == 2 ? SMAC_ENTER_FOREIGN : SMAC_ENTER_FAILED;
    /* (a reader goes on to name it: keying_removed, smac_verify.h) */
    else if (writer && (foreign = smac_foreign_object(db, ref, name, sizeof name)) != 0)
        res = foreign > 0 ? SMAC_ENTER_FOREIGN : SMAC_ENTER_FAILED;
    else if (writer && !keyed && key_store(db, k, now_ms) != SQLITE_OK)
        res = SMAC_ENTER_FAILED;
    else if (writer && smac_create_triggers(db) != SQLITE_OK)
        res = SMAC_ENTER_FAILED; /* a dropped MAC trigger comes back */
    else if (writer && heads_enter(db, keyed) != SQLITE_OK)
        res = SMAC_ENTER_FAILED;
    if (res == SMAC_ENTER_WRONG_KEY)
        snprintf(err, errlen, "--store-key-file: the key does not match control.db's key id");
    else if (res == SMAC_ENTER_FOREIGN)
        snprintf(err, errlen, "control.db: store_tampered: %s: %s; refusing to write (stepctl "
                              "verify-store)", name,
                 m == 2 ? "not stepctl's doing"
                        : "not stepctl's, it could make it MAC rows of another's choosing");
    else if (res == SMAC_ENTER_FAILED)
        snprintf(err, errlen, "control.db: keying: %s", sqlite3_errmsg(db));
    if (res == SMAC_ENTER_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "control.db: commit keying: %s", sqlite3_errmsg(db));
        res = SMAC_ENTER_FAILED;
    }
    if (res != SMAC_ENTER_OK)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return res;
}
