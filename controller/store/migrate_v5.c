/* migrate_v5.c - control.db schema 4 -> 5 (see migrate_v5.h). */
#include "migrate_v5.h"

#include "migrate.h"

extern const char ctl_migrate_v5_sql[]; /* migrate_v5.sql, embedded at build time */

int migrate_v5(sqlite3 *db)
{
    return migrate_apply(db, 4, ctl_migrate_v5_sql);
}
