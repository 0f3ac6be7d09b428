/* clock.c - control.db's clock marks (see clock.h). */
#include "clock.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dbfile.h"
#include "stmtcache.h"

#define CLK_SCHEMA 5 /* the schema version that added clock_marks (migrate_v5.sql) */

/* The schema's version; with a cache, its statement is prepared once. */
static int user_version(sqlite3 *db, struct stmtcache *c)
{
    static const char sql[] = "PRAGMA user_version";
    if (!c)
        return dbfile_user_version(db);
    sqlite3_stmt *st = stmtcache_prepare(db, c, sql);
    if (!st)
        return -1;
    int v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    stmtcache_done(c, st);
    return v;
}

static int read_mark(sqlite3 *db, struct stmtcache *c, const char *mark, int64_t *at_ms)
{
    static const char sql[] = "SELECT at_ms FROM clock_marks WHERE name = ?1";
    /* Older schemas have no clock_marks: nothing was ever marked. */
    if (user_version(db, c) < CLK_SCHEMA)
        return 1;
    sqlite3_stmt *st = stmtcache_prepare(db, c, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, mark, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *at_ms = sqlite3_column_int64(st, 0);
    stmtcache_done(c, st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int clk_read(sqlite3 *db, const char *mark, int64_t *at_ms)
{
    return read_mark(db, NULL, mark, at_ms);
}

int clk_advance_cached(sqlite3 *db, struct stmtcache *c, const char *mark, int64_t at_ms)
{
    static const char sql[] = "INSERT INTO clock_marks (name, at_ms) VALUES (?1, ?2) "
                              "ON CONFLICT (name) DO UPDATE SET at_ms = excluded.at_ms "
                              "WHERE excluded.at_ms > clock_marks.at_ms";
    sqlite3_stmt *st = stmtcache_prepare(db, c, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, mark, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, at_ms);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    stmtcache_done(c, st);
    return rc;
}

int clk_advance(sqlite3 *db, const char *mark, int64_t at_ms)
{
    return clk_advance_cached(db, NULL, mark, at_ms);
}

static enum clk_rc check(sqlite3 *db, struct stmtcache *c, int64_t now_ms, int64_t *acting_ms)
{
    int64_t hw = 0;
    int r = read_mark(db, c, CLK_HIGH_WATER, &hw);
    if (r < 0)
        return CLK_FAILED;
    if (r == 0 && now_ms + CLK_SKEW_MS < hw) {
        *acting_ms = hw;
        return CLK_BEHIND;
    }
    *acting_ms = r == 0 && hw > now_ms ? hw : now_ms;
    return CLK_OK;
}

enum clk_rc clk_check(sqlite3 *db, int64_t now_ms, int64_t *acting_ms)
{
    return check(db, NULL, now_ms, acting_ms);
}

enum clk_rc clk_enter_cached(sqlite3 *db, struct stmtcache *c, int64_t now_ms,
                             int64_t *acting_ms)
{
    assert(sqlite3_get_autocommit(db) == 0); /* inside the caller's write transaction */
    enum clk_rc rc = check(db, c, now_ms, acting_ms);
    if (rc != CLK_OK)
        return rc;
    return clk_advance_cached(db, c, CLK_HIGH_WATER, *acting_ms) == 0 ? CLK_OK : CLK_FAILED;
}

enum clk_rc clk_enter(sqlite3 *db, int64_t now_ms, int64_t *acting_ms)
{
    return clk_enter_cached(db, NULL, now_ms, acting_ms);
}

void clk_behind_text(char *buf, size_t len, int64_t now_ms, int64_t high_water_ms)
{
    snprintf(buf, len,
             "clock_behind: this clock reads %" PRId64 " ms, control.db has acted at %" PRId64
             " ms (%" PRId64 " ms later; %d ms allowed): fix the clock (NTP), nothing was done",
             now_ms, high_water_ms, high_water_ms - now_ms, CLK_SKEW_MS);
}
