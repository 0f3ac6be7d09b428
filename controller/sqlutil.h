/* sqlutil.h - small SQLite helpers shared by the controller's two stores
 * (the read-only evidence store and control.db). */
#ifndef SQLUTIL_H
#define SQLUTIL_H

#include <sqlite3.h>

/* PRAGMA user_version, or -1 when it cannot be read. */
int sqlutil_user_version(sqlite3 *db);

#endif
