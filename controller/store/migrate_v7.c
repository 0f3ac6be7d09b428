/* migrate_v7.c - control.db schema 6 -> 7 (see migrate_v7.h). */
#include "migrate_v7.h"

#include "migrate.h"

extern const char ctl_migrate_v7_sql[]; /* migrate_v7.sql, embedded at build time */

int migrate_v7(sqlite3 *db)
{
    return migrate_apply(db, 6, ctl_migrate_v7_sql);
}
