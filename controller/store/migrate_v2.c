/* migrate_v2.c - control.db schema 1 -> 2 (see migrate_v2.h). */
#include "migrate_v2.h"

#include <assert.h>
#include <stddef.h>

#include "dbfile.h"

extern const char ctl_migrate_v2_sql[]; /* migrate_v2.sql, embedded at build time */

int migrate_v2(sqlite3 *db)
{
    assert(sqlite3_get_autocommit(db) == 0); /* inside the caller's transaction */
    if (dbfile_user_version(db) != 1)
        return SQLITE_MISMATCH;
    return sqlite3_exec(db, ctl_migrate_v2_sql, NULL, NULL, NULL);
}
