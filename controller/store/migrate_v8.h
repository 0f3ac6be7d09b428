/* migrate_v8.h - control.db schema version 7 -> 8 (migrate_v8.sql).
 *
 * Adds the verification quota of a grant (grants.verification_allocations,
 * verification_allocated) and allocations.verification, recreates the cap
 * trigger for both kinds of allocation, and sets PRAGMA user_version = 8.
 * The caller holds the write transaction, as for migrate_v2.
 */
#ifndef MIGRATE_V8_H
#define MIGRATE_V8_H

#include <sqlite3.h>

/* Runs the migration on a version 7 file.  SQLITE_OK or an SQLite error. */
int migrate_v8(sqlite3 *db);

#endif
