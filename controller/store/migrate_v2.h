/* migrate_v2.h - control.db schema version 1 -> 2 (migrate_v2.sql).
 *
 * Adds grants, allocations, reservations (the commitments ledger),
 * grant_events, decision_commitments and next_decisions, and sets
 * PRAGMA user_version = 2.  The caller holds the write transaction: the
 * migration is all or nothing together with whatever else it commits.
 */
#ifndef MIGRATE_V2_H
#define MIGRATE_V2_H

#include <sqlite3.h>

/* Runs the migration on a version 1 file.  SQLITE_OK or an SQLite error. */
int migrate_v2(sqlite3 *db);

#endif
