/* sqlutil.c - small SQLite helpers (see sqlutil.h). */
#include "sqlutil.h"

#include <stddef.h>
#include <stdio.h>

int sqlutil_user_version(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

static json_t *column_json(sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER:
        return json_integer(sqlite3_column_int64(st, c));
    case SQLITE_NULL:
        return json_null();
    default:
        return json_string((const char *)sqlite3_column_text(st, c));
    }
}

json_t *sqlutil_rows_json(sqlite3 *db, const char *sql, const char *param)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_text(st, 1, param, -1, SQLITE_STATIC);
    json_t *a = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int c = 0; c < sqlite3_column_count(st); c++)
            json_object_set_new(o, sqlite3_column_name(st, c), column_json(st, c));
        json_array_append_new(a, o);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(a);
        return NULL;
    }
    return a;
}

int sqlutil_open_readonly(const char *path, int busy_ms, sqlite3 **db, char *err, size_t errlen)
{
    int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", path, *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        *db = NULL;
        return rc;
    }
    sqlite3_busy_timeout(*db, busy_ms);
    return SQLITE_OK;
}

sqlite3_stmt *sqlutil_prepare(sqlite3 *db, struct sqlutil_cache *c, const char *sql)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->sql[i] == sql)
            return c->st[i];
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(db, sql, -1, c ? SQLITE_PREPARE_PERSISTENT : 0, &st, NULL) != SQLITE_OK)
        return NULL;
    if (c && c->n < SQLUTIL_CACHE_SIZE) {
        c->sql[c->n] = sql;
        c->st[c->n++] = st;
    }
    return st;
}

void sqlutil_done(struct sqlutil_cache *c, sqlite3_stmt *st)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->st[i] == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            return;
        }
    sqlite3_finalize(st);
}

void sqlutil_cache_clear(struct sqlutil_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        sqlite3_finalize(c->st[i]);
    c->n = 0;
}
