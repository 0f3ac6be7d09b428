/* migrate_v3.c - control.db schema 2 -> 3 (see migrate_v3.h). */
#include "migrate_v3.h"

#include "migrate.h"

extern const char ctl_migrate_v3_sql[]; /* migrate_v3.sql, embedded at build time */

int migrate_v3(sqlite3 *db)
{
    return migrate_apply(db, 2, ctl_migrate_v3_sql);
}
