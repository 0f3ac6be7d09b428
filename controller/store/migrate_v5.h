/* migrate_v5.h - control.db schema version 4 -> 5 (migrate_v5.sql).
 *
 * Adds allocations.subject (the --client-auth token's sub, NULL without
 * it) and its index, and sets PRAGMA user_version = 5.  The caller holds
 * the write transaction, as for migrate_v2.
 */
#ifndef MIGRATE_V5_H
#define MIGRATE_V5_H

#include <sqlite3.h>

/* Runs the migration on a version 4 file.  SQLITE_OK or an SQLite error. */
int migrate_v5(sqlite3 *db);

#endif
