/* migrate_v6.c - control.db schema 5 -> 6 (see migrate_v6.h). */
#include "migrate_v6.h"

#include "migrate.h"

extern const char ctl_migrate_v6_sql[]; /* migrate_v6.sql, embedded at build time */

int migrate_v6(sqlite3 *db)
{
    return migrate_apply(db, 5, ctl_migrate_v6_sql);
}
