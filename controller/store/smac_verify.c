/* smac_verify.c - a keyed control.db's MACs checked (see smac_verify.h). */
#include "smac_verify.h"

#include <stdio.h>
#include <string.h>

#include "record.h"
#include "smac_heads_verify.h"
#include "smac_keyed.h"
#include "smac_tables.h"

/* Every MAC of table t in order: its row exists and matches. */
static int check_macs(sqlite3 *db, const struct store_key *k, const struct smac_table *t,
                      struct vst_finding *f, size_t *macs)
{
    char cols[1024], join[512], sql[2400];
    if (smac_cols_expr(t, "t", cols, sizeof cols) || smac_join_expr(t, join, sizeof join))
        return -1;
    snprintf(sql, sizeof sql,
             "SELECT m.row_key, m.chain, m.mac, COALESCE((SELECT p.mac FROM store_macs p WHERE "
             "p.tbl = m.tbl AND p.chain = m.chain AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1), "
             "''), t.rowid IS NULL, %s FROM store_macs m LEFT JOIN %s t ON %s WHERE m.tbl = '%s' "
             "ORDER BY m.seq", cols, t->name, join, t->name);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int n = smac_n_cols(t), rc, res = 0;
    while (res == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *row = (const char *)sqlite3_column_text(st, 0);
        if (sqlite3_column_int(st, 4)) {
            res = vst_found(f, t->name, row, "row_deleted", "its MAC is recorded, the row is gone");
            break;
        }
        sqlite3_value *vals[64];
        for (int i = 0; i < n && i < 64; i++)
            vals[i] = sqlite3_column_value(st, 5 + i);
        char hex[SMAC_HEX];
        const char *chain = (const char *)sqlite3_column_text(st, 1);
        if (n > 64 || smac_row(k, t->name, chain ? chain : "",
                               (const char *)sqlite3_column_text(st, 3), vals, n, hex) != 0) {
            res = -1;
            break;
        }
        if (!smac_hex_same(hex, (const char *)sqlite3_column_text(st, 2)))
            res = vst_found(f, t->name, row, "row_mac_mismatch",
                          "the row, or its chain, is not what its MAC covers");
        else
            ++*macs;
    }
    if (res == 0 && rc != SQLITE_DONE)
        res = -1;
    sqlite3_finalize(st);
    return res;
}

/* The first row of t written after keying that has no MAC. */
static int check_missing(sqlite3 *db, const struct smac_table *t, struct vst_finding *f)
{
    char key[256], sql[1200];
    if (smac_key_expr(t, "t", key, sizeof key))
        return -1;
    snprintf(sql, sizeof sql,
             "SELECT %s FROM %s t, store_keying s WHERE t.rowid > COALESCE(json_extract(s.covered, "
             "'$.%s'), 0) AND NOT EXISTS (SELECT 1 FROM store_macs m WHERE m.tbl = '%s' AND "
             "m.row_key = %s) ORDER BY t.rowid LIMIT 1", key, t->name, t->name, t->name, key);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st), res = rc == SQLITE_DONE ? 0 : rc == SQLITE_ROW ? 1 : -1;
    if (res == 1)
        vst_found(f, t->name, (const char *)sqlite3_column_text(st, 0), "row_mac_missing",
                "written after keying without a MAC (not by stepctl)");
    sqlite3_finalize(st);
    return res;
}

/* store_macs is numbered 1..N with no gap, N its AUTOINCREMENT sequence:
 * a removed MAC (with its row, the tail of a chain) leaves a trace unless
 * sqlite_sequence is edited too (it is not keyed: docs/security.md). */
static int check_numbering(sqlite3 *db, struct vst_finding *f)
{
    static const char sql[] =
        "SELECT COUNT(*), COALESCE(MAX(seq), 0), COALESCE((SELECT seq FROM sqlite_sequence WHERE "
        "name = 'store_macs'), 0) FROM store_macs";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int res = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        sqlite3_int64 n = sqlite3_column_int64(st, 0), max = sqlite3_column_int64(st, 1),
                      seq = sqlite3_column_int64(st, 2);
        res = 0;
        if (n != max || max != seq) {
            char detail[160], row[32];
            snprintf(detail, sizeof detail, "%lld MACs numbered up to %lld, the sequence at %lld",
                     (long long)n, (long long)max, (long long)seq);
            snprintf(row, sizeof row, "%lld", (long long)(max < seq ? seq : max));
            res = vst_found(f, "store_macs", row, "mac_deleted", detail);
        }
    }
    sqlite3_finalize(st);
    return res;
}

static int check_checkpoint(sqlite3 *db, const struct store_key *k, struct vst_finding *f)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT keyed_at_ms, covered, checkpoint FROM store_keying", -1,
                           &st, NULL) != SQLITE_OK)
        return -1;
    int res = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        char hex[SMAC_HEX];
        const char *covered = (const char *)sqlite3_column_text(st, 1);
        if (smac_checkpoint(db, k, sqlite3_column_int64(st, 0), covered ? covered : "{}", hex) == 0)
            res = smac_hex_same(hex, (const char *)sqlite3_column_text(st, 2))
                      ? 0
                      : vst_found(f, "store_keying", "1", "checkpoint_mismatch",
                                "the rows that existed at keying are not what its checkpoint "
                                "covers (one changed, added or removed)");
    }
    sqlite3_finalize(st);
    return res;
}

/* A keyed store has its keying row (smac_is_keyed also counts MACs). */
static int check_keying(sqlite3 *db, struct vst_finding *f)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM store_keying", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW    ? 0
           : rc == SQLITE_DONE ? vst_found(f, "store_keying", "1", "keying_removed",
                                         "MACs remain, their keying row is gone")
                               : -1;
}

static int check_all(sqlite3 *db, const struct store_key *k, struct vst_finding *f, size_t *macs)
{
    int res = check_keying(db, f);
    if (res != 0)
        return res;
    sqlite3 *ref = rec_reference_schema();
    char name[256];
    res = ref ? smac_foreign_object(db, ref, name, sizeof name) : -1;
    sqlite3_close(ref);
    if (res > 0)
        return vst_found(f, "sqlite_master", name, "foreign_schema_object",
                       "not created by stepctl; it could make stepctl MAC rows of another's choosing");
    for (size_t i = 0; res == 0 && i < smac_n_tables; i++)
        res = check_macs(db, k, &smac_tables[i], f, macs);
    for (size_t i = 0; res == 0 && i < smac_n_tables; i++)
        res = check_missing(db, &smac_tables[i], f);
    if (res == 0)
        res = check_numbering(db, f);
    if (res == 0) /* a tail removed with the sequence lowered: its head (schema 9) */
        res = smac_heads_verify(db, k, f);
    return res == 0 ? check_checkpoint(db, k, f) : res;
}

int smac_verify(sqlite3 *db, const struct store_key *k, struct vst_finding *f, size_t *macs)
{
    memset(f, 0, sizeof *f);
    *macs = 0;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    int res = check_all(db, k, f, macs);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return res;
}
