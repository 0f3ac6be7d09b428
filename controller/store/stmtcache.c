/* stmtcache.c - prepared statements kept for a hot path (see stmtcache.h). */
#include "stmtcache.h"

sqlite3_stmt *stmtcache_prepare(sqlite3 *db, struct stmtcache *c, const char *sql)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->sql[i] == sql)
            return c->st[i];
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(db, sql, -1, c ? SQLITE_PREPARE_PERSISTENT : 0, &st, NULL) != SQLITE_OK)
        return NULL;
    if (c && c->n < STMTCACHE_SIZE) {
        c->sql[c->n] = sql;
        c->st[c->n++] = st;
    }
    return st;
}

void stmtcache_done(struct stmtcache *c, sqlite3_stmt *st)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->st[i] == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            return;
        }
    sqlite3_finalize(st);
}

void stmtcache_clear(struct stmtcache *c)
{
    for (size_t i = 0; i < c->n; i++)
        sqlite3_finalize(c->st[i]);
    c->n = 0;
}
