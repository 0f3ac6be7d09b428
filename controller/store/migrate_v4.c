/* migrate_v4.c - control.db schema 3 -> 4 (see migrate_v4.h). */
#include "migrate_v4.h"

#include "migrate.h"

extern const char ctl_migrate_v4_sql[]; /* migrate_v4.sql, embedded at build time */

int migrate_v4(sqlite3 *db)
{
    return migrate_apply(db, 3, ctl_migrate_v4_sql);
}
