/* sqlutil.h - small SQLite helpers shared by the controller's two stores
 * (the read-only evidence store and control.db). */
#ifndef SQLUTIL_H
#define SQLUTIL_H

#include <stddef.h>

#include <jansson.h>
#include <sqlite3.h>

/* PRAGMA user_version, or -1 when it cannot be read. */
int sqlutil_user_version(sqlite3 *db);

/* Opens an existing database strictly read-only (the file is never
 * written, not even a journal) with a busy time-out.  SQLITE_OK, or an
 * error with err saying why (then *db is NULL). */
int sqlutil_open_readonly(const char *path, int busy_ms, sqlite3 **db, char *err, size_t errlen);

/* Runs sql with one text parameter (?1) and returns every row as a JSON
 * object keyed by column name (INTEGER -> integer, NULL -> null, anything
 * else -> string), in row order; NULL on error. */
json_t *sqlutil_rows_json(sqlite3 *db, const char *sql, const char *param);

/* Prepared statements kept for a connection's hot path (the admission
 * service's writer), keyed by the address of the statement's SQL text (a
 * static const array).  With a NULL cache, statements are prepared and
 * finalized each time. */
#define SQLUTIL_CACHE_SIZE 16
struct sqlutil_cache {
    const char *sql[SQLUTIL_CACHE_SIZE];
    sqlite3_stmt *st[SQLUTIL_CACHE_SIZE];
    size_t n;
};

/* A statement ready to bind (NULL on error). */
sqlite3_stmt *sqlutil_prepare(sqlite3 *db, struct sqlutil_cache *c, const char *sql);
/* Done with it: reset and unbound when cached, finalized otherwise. */
void sqlutil_done(struct sqlutil_cache *c, sqlite3_stmt *st);
void sqlutil_cache_clear(struct sqlutil_cache *c);

#endif
