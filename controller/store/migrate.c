/* migrate.c - one forward schema step (see migrate.h). */
#include "migrate.h"

#include <assert.h>
#include <stddef.h>

#include "dbfile.h"

int migrate_apply(sqlite3 *db, int from_version, const char *sql)
{
    assert(sqlite3_get_autocommit(db) == 0); /* inside the caller's transaction */
    if (dbfile_user_version(db) != from_version)
        return SQLITE_MISMATCH;
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}
