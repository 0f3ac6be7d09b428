/* sqlutil.h - small SQLite helpers shared by the controller's two stores
 * (the read-only evidence store and control.db). */
#ifndef SQLUTIL_H
#define SQLUTIL_H

#include <jansson.h>
#include <sqlite3.h>

/* PRAGMA user_version, or -1 when it cannot be read. */
int sqlutil_user_version(sqlite3 *db);

/* Runs sql with one text parameter (?1) and returns every row as a JSON
 * object keyed by column name (INTEGER -> integer, NULL -> null, anything
 * else -> string), in row order; NULL on error. */
json_t *sqlutil_rows_json(sqlite3 *db, const char *sql, const char *param);

#endif
