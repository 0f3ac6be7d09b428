/* store_key.h - the key of a store's MACs, one implementation for both
 * stores (docs/security.md#tamper-evidence): control.db (stepctl,
 * controller/store/smac.h) and evidence.db (exactav, evidence_keyed.h).
 *
 * A key file holds one line (its final newline is not part of the key) or
 * raw bytes, STORE_KEY_MIN to STORE_KEY_MAX bytes, in a regular file that
 * only its owner can read.  MACs are hex HMAC-SHA-256 under the key over a
 * canonical encoding: "v1", then every value as a 1-byte type tag, an
 * 8-byte big-endian length and its bytes (integers as decimal text), so
 * NULL, '' and 0 all differ.  The key bytes are never printed.
 */
#ifndef STORE_KEY_H
#define STORE_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <sqlite3.h>

#define STORE_KEY_MIN 32   /* bytes: a shorter key is refused (65) */
#define STORE_KEY_MAX 1024 /* bytes */
#define STORE_KEY_HEX 65   /* 64 hex digits + NUL */
/* The exit codes of store_key_load (sysexits: EX_DATAERR, EX_NOINPUT). */
#define STORE_KEY_E_DATA 65
#define STORE_KEY_E_NOINPUT 66

struct store_key {
    size_t n;
    unsigned char b[STORE_KEY_MAX];
};

/* Opens path for reading only if it is a regular file; why gets the reason
 * otherwise (n bytes).  O_NONBLOCK, so a FIFO without a writer (or a
 * device) can hang neither the open nor the read: it is refused.  *mode:
 * the file's st_mode (may be NULL). */
FILE *store_open_regular(const char *path, unsigned *mode, char *why, size_t n);

/* The key file to use: given (the option), else $env when set and not
 * empty, else NULL (no key). */
const char *store_key_file(const char *given, const char *env);

/* Reads the key of file into k.  0, STORE_KEY_E_DATA (group or others may
 * access it, or its length), STORE_KEY_E_NOINPUT (cannot read it, not a
 * regular file), after printing "WHO: OPT FILE: why" on stderr. */
int store_key_load(const char *who, const char *opt, const char *file, struct store_key *k);

/* Wipes a key. */
void store_key_wipe(struct store_key *k);

/* hex HMAC-SHA-256 of the canonical encoding of the texts heads[0..nheads)
 * then vals[0..n).  0, or -1 out of memory. */
int store_key_mac(const struct store_key *k, const char *const *heads, size_t nheads,
                  sqlite3_value **vals, int n, char hex[STORE_KEY_HEX]);

/* The key id: hex HMAC(key, label). */
void store_key_id(const struct store_key *k, const char *label, char hex[STORE_KEY_HEX]);

/* Registers the SQL function name(...) = fn on db with a copy of k as its
 * user data (NULL: none, fn then fails), wiped and freed with the
 * function.  Not deterministic and not innocuous: SQLite then refuses it
 * in CHECK constraints, generated columns and indexes a hand-made schema
 * could use to make the program MAC rows of its choosing.  SQLITE_OK or
 * an SQLite error. */
int store_key_attach(sqlite3 *db, const char *name, const struct store_key *k,
                     void (*fn)(sqlite3_context *, int, sqlite3_value **));

/* The body of such a function: the hex MAC of heads and vals[0..n) under
 * the key of ctx's user data as its result; without a key the error
 * keyless; n < 0 (too few arguments): an error naming the arguments. */
void store_key_sql_mac(sqlite3_context *ctx, const char *keyless, const char *const *heads,
                       size_t nheads, sqlite3_value **vals, int n);

/* Whether the key id that sql (one row, one column) reads is k's under
 * label: 1 yes, 0 no, 2 no row, -1 an SQLite error. */
int store_key_matches(sqlite3 *db, const char *sql, const struct store_key *k, const char *label);

/* The first schema object of db that ref (the schema the program creates,
 * with its MAC triggers) has not, and that could make the program MAC a
 * row: any trigger not in ref exactly, anything else naming the SQL
 * function fn.  1 found ("type name" into name), 0 none, -1 SQLite
 * error. */
int store_key_foreign_object(sqlite3 *db, sqlite3 *ref, const char *fn, char *name, size_t cap);

/* Two hex MACs (or key ids) equal, compared in constant time; false when
 * either is NULL. */
bool store_key_hex_same(const char *a, const char *b);

#endif
