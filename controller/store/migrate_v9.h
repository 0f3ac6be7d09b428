/* migrate_v9.h - control.db schema version 8 -> 9 (migrate_v9.sql).
 *
 * Adds store_heads (a keyed head per chain of store_macs, smac_heads.h) and
 * sets PRAGMA user_version = 9.  The caller holds the write transaction, as
 * for migrate_v2.
 */
#ifndef MIGRATE_V9_H
#define MIGRATE_V9_H

#include <sqlite3.h>

/* Runs the migration on a version 8 file.  SQLITE_OK or an SQLite error. */
int migrate_v9(sqlite3 *db);

#endif
