/* smac_heads.c - writing the keyed chain heads (see smac_heads.h). */
#include "smac_heads.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "dbfile.h"
#include "smac_tables.h"

/* The head MAC of (tbl, chain, n, last) as SQL over those expressions. */
#define HEAD_MAC(tbl, chain, n, last)                                                             \
    "stepctl_mac('store_heads', " tbl ", " chain ", " n ", " last ")"

/* Advanced only from a head that verifies: one changed by hand (a lowered
 * n, another last_mac) is left as it is, so it stays a head_mismatch
 * instead of being re-signed over the truncated chain; never inserted, so a
 * chain removed with its head does not start again under a fresh head. */
static const char advance_sql[] =
    "CREATE TRIGGER IF NOT EXISTS smac_heads AFTER INSERT ON store_macs BEGIN "
    "UPDATE store_heads SET n = n + 1, last_mac = NEW.mac, head_mac = "
    HEAD_MAC("tbl", "chain", "n + 1", "NEW.mac") " "
    "WHERE tbl = NEW.tbl AND chain = NEW.chain AND head_mac = "
    HEAD_MAC("tbl", "chain", "n", "last_mac") "; END";

/* The per-grant chains (chain column grant_id) of smac_tables, as
 * "('tbl', NEW.id, 0, '', mac), ..." for the trigger on grants. */
static int grant_heads_values(char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < smac_n_tables; i++) {
        const struct smac_table *t = &smac_tables[i];
        if (!t->chain)
            continue;
        assert(!strcmp(t->chain, "grant_id")); /* every per-row chain is a grant's */
        int n = snprintf(out + len, cap - len,
                         "%s('%s', NEW.id, 0, '', " HEAD_MAC("'%s'", "NEW.id", "0", "''") ")",
                         len ? ", " : "", t->name, t->name);
        if (n < 0 || (size_t)n >= cap - len)
            return -1;
        len += (size_t)n;
    }
    return 0;
}

int smac_heads_triggers(sqlite3 *db)
{
    char values[1024], sql[1400];
    if (grant_heads_values(values, sizeof values) != 0)
        return SQLITE_ERROR;
    int n = snprintf(sql, sizeof sql, "CREATE TRIGGER IF NOT EXISTS smac_heads_grants AFTER INSERT "
                                      "ON grants BEGIN INSERT INTO store_heads (tbl, chain, n, "
                                      "last_mac, head_mac) VALUES %s; END", values);
    if (n < 0 || (size_t)n >= sizeof sql)
        return SQLITE_ERROR;
    int rc = sqlite3_exec(db, advance_sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? sqlite3_exec(db, sql, NULL, NULL, NULL) : rc;
}

int smac_heads_required(sqlite3 *db)
{
    static const char sql[] =
        "SELECT (SELECT COALESCE(json_extract(covered, '$.heads'), 0) = 1 FROM store_keying) "
        "OR EXISTS (SELECT 1 FROM store_macs WHERE tbl = 'store_heads' AND row_key = '"
        SMAC_HEADS_SEEDED "')";
    int64_t v = dbfile_query_int(db, sql);
    return v < 0 ? -1 : v != 0;
}

/* The seeding MAC: from now on this store must have heads (verify-store
 * requires them).  Weaker than a keying's "heads": 1, which the checkpoint
 * covers: removed together with every head, and store_macs renumbered over
 * its gap (seq is not MACed), it leaves a store that reads as never seeded
 * (docs/security.md, "can and cannot").  Its own chain gets a head below. */
static const char seeded_sql[] =
    "INSERT INTO store_macs (tbl, row_key, chain, mac) VALUES ('store_heads', '" SMAC_HEADS_SEEDED
    "', '', stepctl_mac('store_heads', '', '" SMAC_HEADS_SEEDED "', ''));";

/* Every chain of store_macs as it is now; then n = 0 heads for each
 * grant's chains and each single chain that has no MAC yet. */
static const char chains_sql[] =
    "INSERT OR IGNORE INTO store_heads (tbl, chain, n, last_mac, head_mac) "
    "SELECT tbl, chain, n, last_mac, " HEAD_MAC("tbl", "chain", "n", "last_mac") " FROM "
    "(SELECT m.tbl AS tbl, m.chain AS chain, COUNT(*) AS n, (SELECT l.mac FROM store_macs l "
    "WHERE l.tbl = m.tbl AND l.chain = m.chain ORDER BY l.seq DESC LIMIT 1) AS last_mac "
    "FROM store_macs m GROUP BY m.tbl, m.chain);";

/* The n = 0 heads of table t: one per grant (t chained per grant), or its
 * single chain's. */
static int seed_table(sqlite3 *db, const struct smac_table *t)
{
    assert(!t->chain || !strcmp(t->chain, "grant_id")); /* a per-row chain is a grant's */
    char sql[512];
    int n = t->chain
                ? snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO store_heads (tbl, chain, n, "
                                            "last_mac, head_mac) SELECT '%s', id, 0, '', "
                                            HEAD_MAC("'%s'", "id", "0", "''") " FROM grants",
                           t->name, t->name)
                : snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO store_heads (tbl, chain, n, "
                                            "last_mac, head_mac) VALUES ('%s', '', 0, '', "
                                            HEAD_MAC("'%s'", "''", "0", "''") ")",
                           t->name, t->name);
    if (n < 0 || (size_t)n >= sizeof sql)
        return SQLITE_ERROR;
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

int smac_heads_seed(sqlite3 *db, bool seeded)
{
    assert(sqlite3_get_autocommit(db) == 0); /* inside the writer's keying transaction */
    int rc = seeded ? sqlite3_exec(db, seeded_sql, NULL, NULL, NULL) : SQLITE_OK;
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, chains_sql, NULL, NULL, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < smac_n_tables; i++)
        rc = seed_table(db, &smac_tables[i]);
    return rc;
}
