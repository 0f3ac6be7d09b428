/* migrate_v8.c - control.db schema 7 -> 8 (see migrate_v8.h). */
#include "migrate_v8.h"

#include "migrate.h"

extern const char ctl_migrate_v8_sql[]; /* migrate_v8.sql, embedded at build time */

int migrate_v8(sqlite3 *db)
{
    return migrate_apply(db, 7, ctl_migrate_v8_sql);
}
