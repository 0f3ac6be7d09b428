/* migrate_v4.h - control.db schema version 3 -> 4 (migrate_v4.sql).
 *
 * Adds delivery_removals (a path removed from a decision's fallbacks by a
 * MISMATCH, docs/delivery.md#removals) and sets PRAGMA user_version = 4.
 * The caller holds the write transaction, as for migrate_v2.
 */
#ifndef MIGRATE_V4_H
#define MIGRATE_V4_H

#include <sqlite3.h>

/* Runs the migration on a version 3 file.  SQLITE_OK or an SQLite error. */
int migrate_v4(sqlite3 *db);

#endif
