/* migrate_v7.h - control.db schema version 6 -> 7 (migrate_v7.sql).
 *
 * Adds store_keying and store_macs (keyed tamper evidence, smac.h) and
 * sets PRAGMA user_version = 7.  The caller holds the write transaction, as
 * for migrate_v2.
 */
#ifndef MIGRATE_V7_H
#define MIGRATE_V7_H

#include <sqlite3.h>

/* Runs the migration on a version 6 file.  SQLITE_OK or an SQLite error. */
int migrate_v7(sqlite3 *db);

#endif
