/* smac.h - keyed tamper evidence for control.db (issue 19, "Tamper
 * evidence"; docs/security.md#tamper-evidence).
 *
 * Why a key: an unkeyed hash chain is recomputed by whoever can write the
 * file.  With HMAC-SHA-256 under a key kept outside the database
 * (--store-key-file), a row changed, added or removed by someone holding
 * the file but not the key no longer matches its MAC.
 *
 * How: rec_open registers the SQL function stepctl_mac(tbl, chain, col...,
 * prev) on every connection, keyed (smac_attach) or not (then it fails, so
 * a keyed store fails closed for a writer without the key).  Keying a store
 * (smac_keyed.c) writes store_keying and creates one AFTER INSERT trigger
 * per covered table (smac_tables.c) that appends the row's MAC to
 * store_macs, chained to the previous MAC of the same (table, chain).
 * mac = hex HMAC(key, "v1" | tbl | chain | prev | col1 | col2 ...), each
 * value a 1-byte type tag, an 8-byte big-endian length and its bytes
 * (integers as decimal text), so NULL, '' and 0 all differ.
 */
#ifndef SMAC_H
#define SMAC_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

#include "store_key.h" /* the key and the canonical MAC, shared with evidence.db */

#define SMAC_HEX STORE_KEY_HEX /* 64 hex digits + NUL */
#define SMAC_ENV "STEPCTL_STORE_KEY_FILE"
#define SMAC_KEY_ID_LABEL "stepctl store key id v1" /* store_keying.key_id = HMAC(key, this) */

/* The key file to use: given (the option), else $STEPCTL_STORE_KEY_FILE,
 * else NULL (no key). */
const char *smac_key_file(const char *given);

/* Reads the key of file (store_key_load): 0, 65 (mode, length), 66
 * (cannot read it), after printing why (never the key) prefixed with
 * "stepctl CMD: --store-key-file FILE: ". */
int smac_key_load(const char *cmd, const char *file, struct store_key *k);

/* Wipes a key. */
void smac_key_wipe(struct store_key *k);

/* Registers stepctl_mac on db with a copy of k (NULL: the function fails,
 * naming --store-key-file).  SQLITE_OK or an SQLite error. */
int smac_attach(sqlite3 *db, const struct store_key *k);

/* hex HMAC-SHA-256 of the canonical encoding of (tbl, chain, prev,
 * vals[0..n)).  0, or -1 out of memory. */
int smac_row(const struct store_key *k, const char *tbl, const char *chain, const char *prev,
             sqlite3_value **vals, int n, char hex[SMAC_HEX]);

/* Two hex MACs (or key ids) equal, compared in constant time; false when
 * either is NULL. */
bool smac_hex_same(const char *a, const char *b);

/* The key id: hex HMAC(key, "stepctl store key id v1"). */
void smac_key_id(const struct store_key *k, char hex[SMAC_HEX]);

#endif
