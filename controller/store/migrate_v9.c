/* migrate_v9.c - control.db schema 8 -> 9 (see migrate_v9.h). */
#include "migrate_v9.h"

#include "migrate.h"

extern const char ctl_migrate_v9_sql[]; /* migrate_v9.sql, embedded at build time */

int migrate_v9(sqlite3 *db)
{
    return migrate_apply(db, 8, ctl_migrate_v9_sql);
}
