/* migrate.h - one forward step of control.db's schema (migrate_v2.h,
 * migrate_v3.h): the step's SQL applied to a file of exactly the version
 * before it, inside the caller's write transaction. */
#ifndef MIGRATE_H
#define MIGRATE_H

#include <sqlite3.h>

/* SQLITE_OK, SQLITE_MISMATCH when the file is not at from_version, or the
 * SQLite error of the SQL. */
int migrate_apply(sqlite3 *db, int from_version, const char *sql);

#endif
