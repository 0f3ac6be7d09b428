/* smac_keyed.h - keying control.db and checking a key against it (smac.h).
 *
 * The first writer run with a key on an unkeyed store of schema 7 keys it,
 * in one write transaction: the store_keying row (key id, time, the
 * checkpoint over every row that existed then), the MAC triggers
 * (smac_tables.h) and the chain heads with their triggers (smac_heads.h; a
 * store keyed before schema 9 gets its heads from its next writer with the
 * key).  A keyed store is never unkeyed again.  Every later open
 * with a key checks the key id (a wrong key is a wrong key, not tampering)
 * and, for a writer, that no schema object stepctl did not create could
 * make it MAC rows of someone else's choosing (a trigger inserting into a
 * MACed table, anything else calling stepctl_mac), then re-creates a
 * dropped MAC trigger.
 */
#ifndef SMAC_KEYED_H
#define SMAC_KEYED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "smac.h"

/* 1 keyed (a store_keying row, or MACs whose keying row was removed), 0
 * not (or schema < 7), -1 SQLite error. */
int smac_is_keyed(sqlite3 *db);

enum smac_enter_rc {
    SMAC_ENTER_OK = 0,
    SMAC_ENTER_WRONG_KEY, /* the key does not match store_keying.key_id */
    SMAC_ENTER_FOREIGN,   /* a schema object stepctl did not create (err names it) */
    SMAC_ENTER_FAILED,    /* an SQLite error (err) */
};

/* With key k on db (rec_open): a writer keys an unkeyed store; both check
 * the key id; a writer checks the schema and re-creates missing MAC
 * triggers.  ref: the schema this build creates (rec_reference_schema),
 * for the writer's check. */
enum smac_enter_rc smac_enter(sqlite3 *db, sqlite3 *ref, const struct store_key *k, bool writer,
                              int64_t now_ms, char *err, size_t errlen);

/* The first schema object of db that ref (the schema this build creates,
 * with its MAC triggers) has not, and that could make stepctl MAC a row:
 * any trigger not in ref exactly, anything else naming stepctl_mac.  1
 * found (its name into name), 0 none, -1 SQLite error. */
int smac_foreign_object(sqlite3 *db, sqlite3 *ref, char *name, size_t cap);

/* The hex HMAC chain over every row of the MACed tables with a rowid up to
 * covered's (JSON {table: rowid}), in table then rowid order, started from
 * (keyed_at_ms, covered).  0 or -1. */
int smac_checkpoint(sqlite3 *db, const struct store_key *k, int64_t keyed_at_ms,
                    const char *covered, char hex[SMAC_HEX]);

/* Creates the MAC triggers (IF NOT EXISTS) on db.  SQLITE_OK or not. */
int smac_create_triggers(sqlite3 *db);

#endif
