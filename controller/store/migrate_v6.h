/* migrate_v6.h - control.db schema version 5 -> 6 (migrate_v6.sql).
 *
 * Adds allocations.subject (the --client-auth token's sub, NULL without
 * it) and its index, and sets PRAGMA user_version = 6.  The caller holds
 * the write transaction, as for migrate_v2.
 */
#ifndef MIGRATE_V6_H
#define MIGRATE_V6_H

#include <sqlite3.h>

/* Runs the migration on a version 5 file.  SQLITE_OK or an SQLite error. */
int migrate_v6(sqlite3 *db);

#endif
