/* migrate_v3.h - control.db schema version 2 -> 3 (migrate_v3.sql).
 *
 * Adds sessions and session_reports (QoE from the viewers' own CMCD
 * reports, docs/qoe.md) and sets PRAGMA user_version = 3.  The caller
 * holds the write transaction, as for migrate_v2.
 */
#ifndef MIGRATE_V3_H
#define MIGRATE_V3_H

#include <sqlite3.h>

/* Runs the migration on a version 2 file.  SQLITE_OK or an SQLite error. */
int migrate_v3(sqlite3 *db);

#endif
