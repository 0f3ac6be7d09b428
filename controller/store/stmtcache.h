/* stmtcache.h - prepared statements kept for a connection's hot path.
 *
 * The admission service's writer (serve_writer.c) runs the same few
 * statements for every allocation; preparing them once saves most of the
 * per-request SQLite work.  A statement is keyed by the address of its SQL
 * text, which must therefore be a static const array.  With a NULL cache,
 * statements are prepared and finalized each time (the commands that run a
 * statement once share the code of the service this way).
 */
#ifndef STMTCACHE_H
#define STMTCACHE_H

#include <stddef.h>

#include <sqlite3.h>

#define STMTCACHE_SIZE 32

struct stmtcache {
    const char *sql[STMTCACHE_SIZE];
    sqlite3_stmt *st[STMTCACHE_SIZE];
    size_t n;
};

/* A statement ready to bind (NULL on error). */
sqlite3_stmt *stmtcache_prepare(sqlite3 *db, struct stmtcache *c, const char *sql);
/* Done with it: reset and unbound when cached, finalized otherwise. */
void stmtcache_done(struct stmtcache *c, sqlite3_stmt *st);
/* Finalizes every cached statement (before the connection closes). */
void stmtcache_clear(struct stmtcache *c);

#endif
