/* migrate_v2.c - control.db schema 1 -> 2 (see migrate_v2.h). */
#include "migrate_v2.h"

#include "migrate.h"

extern const char ctl_migrate_v2_sql[]; /* migrate_v2.sql, embedded at build time */

int migrate_v2(sqlite3 *db)
{
    return migrate_apply(db, 1, ctl_migrate_v2_sql);
}
