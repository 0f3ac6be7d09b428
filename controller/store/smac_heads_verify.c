/* smac_heads_verify.c - the keyed chain heads checked (see smac_heads_verify.h). */
#include "smac_heads_verify.h"

#include <stdio.h>
#include <string.h>

#include "smac_heads.h"
#include "smac_tables.h"

/* 1 db has the table store_heads, 0 not, -1 error. */
static int have_table(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                               "'store_heads'", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* The seeding MAC (and anything else filed under store_heads in store_macs)
 * verifies: mac = stepctl_mac('store_heads', chain, row_key, ''). */
static int check_seeded(sqlite3 *db, const struct store_key *k, struct vst_finding *f)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT row_key, chain, mac FROM store_macs WHERE tbl = "
                               "'store_heads' ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc, res = 0;
    while (res == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_value *key = sqlite3_column_value(st, 0);
        const char *chain = (const char *)sqlite3_column_text(st, 1);
        char hex[SMAC_HEX];
        if (smac_row(k, "store_heads", chain ? chain : "", "", &key, 1, hex) != 0)
            res = -1;
        else if (!smac_hex_same(hex, (const char *)sqlite3_column_text(st, 2)))
            res = vst_found(f, "store_macs", (const char *)sqlite3_column_text(st, 0),
                          "head_mismatch", "the heads' seeding MAC does not verify");
    }
    if (res == 0 && rc != SQLITE_DONE)
        res = -1;
    sqlite3_finalize(st);
    return res;
}

/* "SELECT 'a' AS tbl UNION ALL SELECT 'b'": the tables chained per grant
 * (per 1) or as one chain (per 0); "SELECT NULL AS tbl WHERE 0" for none. */
static int tables_select(bool per, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < smac_n_tables; i++) {
        if ((smac_tables[i].chain != NULL) != per)
            continue;
        int n = snprintf(out + len, cap - len, "%sSELECT '%s'%s", len ? " UNION ALL " : "",
                         smac_tables[i].name, len ? "" : " AS tbl");
        if (n < 0 || (size_t)n >= cap - len)
            return -1;
        len += (size_t)n;
    }
    if (!len)
        snprintf(out, cap, "SELECT NULL AS tbl WHERE 0");
    return 0;
}

/* The first chain that must have a head and has none. */
static int check_missing(sqlite3 *db, struct vst_finding *f)
{
    char per[512], single[1024], sql[2600];
    if (tables_select(true, per, sizeof per) || tables_select(false, single, sizeof single))
        return -1;
    int n = snprintf(sql, sizeof sql,
                     "SELECT json_array(c.tbl, c.chain), c.why FROM ("
                     "SELECT DISTINCT tbl, chain, 'a chain with MACs has no head' AS why "
                     "FROM store_macs UNION ALL "
                     "SELECT t.tbl, g.id, 'a grant''s chain has no head (removed with its MACs?)' "
                     "FROM grants g, (%s) t UNION ALL "
                     "SELECT t.tbl, '', 'a table''s chain has no head' FROM (%s) t) c "
                     "WHERE NOT EXISTS (SELECT 1 FROM store_heads h WHERE h.tbl = c.tbl AND "
                     "h.chain = c.chain) LIMIT 1", per, single);
    if (n < 0 || (size_t)n >= sizeof sql)
        return -1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st), res = rc == SQLITE_DONE ? 0 : rc == SQLITE_ROW ? 1 : -1;
    if (res == 1)
        vst_found(f, "store_heads", (const char *)sqlite3_column_text(st, 0), "head_missing",
                (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    return res;
}

/* One head (st's row: key, tbl, chain, n, last_mac, head_mac, count, newest). */
static int check_head(const struct store_key *k, sqlite3_stmt *st, struct vst_finding *f)
{
    const char *key = (const char *)sqlite3_column_text(st, 0);
    const char *tbl = (const char *)sqlite3_column_text(st, 1);
    const char *last = (const char *)sqlite3_column_text(st, 4);
    sqlite3_value *vals[2] = {sqlite3_column_value(st, 2), sqlite3_column_value(st, 3)};
    char hex[SMAC_HEX];
    if (smac_row(k, "store_heads", tbl ? tbl : "", last ? last : "", vals, 2, hex) != 0)
        return -1;
    if (!smac_hex_same(hex, (const char *)sqlite3_column_text(st, 5)))
        return vst_found(f, "store_heads", key, "head_mismatch",
                       "the head does not verify under the key (changed by hand)");
    if (sqlite3_column_type(st, 3) != SQLITE_INTEGER ||
        sqlite3_column_int64(st, 3) != sqlite3_column_int64(st, 6) ||
        !smac_hex_same(last, (const char *)sqlite3_column_text(st, 7))) {
        char detail[256];
        snprintf(detail, sizeof detail, "the head counts %lld MACs, the chain has %lld (its newest "
                 "MACs removed, or the head rolled back)", (long long)sqlite3_column_int64(st, 3),
                 (long long)sqlite3_column_int64(st, 6));
        return vst_found(f, "store_heads", key, "head_mismatch", detail);
    }
    return 0;
}

/* Every head verifies and is its chain's count and newest MAC. */
static int check_heads(sqlite3 *db, const struct store_key *k, struct vst_finding *f)
{
    static const char sql[] =
        "SELECT json_array(h.tbl, h.chain), h.tbl, h.chain, h.n, h.last_mac, h.head_mac, "
        "(SELECT COUNT(*) FROM store_macs m WHERE m.tbl = h.tbl AND m.chain = h.chain), "
        "COALESCE((SELECT m.mac FROM store_macs m WHERE m.tbl = h.tbl AND m.chain = h.chain "
        "ORDER BY m.seq DESC LIMIT 1), '') FROM store_heads h ORDER BY h.tbl, h.chain";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc, res = 0;
    while (res == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
        res = check_head(k, st, f);
    if (res == 0 && rc != SQLITE_DONE)
        res = -1;
    sqlite3_finalize(st);
    return res;
}

int smac_heads_verify(sqlite3 *db, const struct store_key *k, struct vst_finding *f)
{
    int res = smac_heads_required(db);
    if (res <= 0)
        return res; /* keyed before schema 9 and not written with the key since */
    if ((res = have_table(db)) <= 0)
        return res < 0 ? -1 : vst_found(f, "store_heads", "", "head_missing",
                                      "the store must have chain heads, the table is gone");
    if ((res = check_seeded(db, k, f)) != 0)
        return res;
    if ((res = check_missing(db, f)) != 0)
        return res;
    return check_heads(db, k, f);
}
