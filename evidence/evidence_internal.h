/* Private to evidence/: the connection struct and helpers shared by the
 * store's source files.  Not installed, not included outside evidence/. */
#ifndef EVIDENCE_INTERNAL_H
#define EVIDENCE_INTERNAL_H

#include "evidence.h"

#include <sqlite3.h>

struct evidence_db {
    sqlite3 *sql;
    enum evidence_open_mode mode;
    int schema_version;
};

/* printf-style message into err (truncated, always NUL-terminated). */
void evidence_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* BEGIN IMMEDIATE, retried on SQLITE_BUSY/LOCKED until
 * EVIDENCE_LOCK_DEADLINE_MS (the busy time-out already waits inside). */
enum evidence_rc evidence_begin_immediate(sqlite3 *sql, char *err, size_t errlen);
/* COMMIT (retried on busy); ROLLBACK that ignores "no transaction". */
enum evidence_rc evidence_commit(sqlite3 *sql, char *err, size_t errlen);
void evidence_rollback(sqlite3 *sql);

/* Insert rows inside an already open transaction (no BEGIN/COMMIT). */
enum evidence_rc evidence_insert_in_txn(sqlite3 *sql, const struct evidence_record *rec,
                                        char *err, size_t errlen);
/* Checks what the schema cannot (required text, ranges, JSON shape). */
enum evidence_rc evidence_validate_record(const struct evidence_record *rec, int64_t now_ms,
                                          char *err, size_t errlen);
bool evidence_id_valid(const char *id);

/* Bind a borrowed string (NULL -> SQL NULL) / a nullable integer
 * (evidence_insert.c). */
void evidence_bind_text(sqlite3_stmt *st, int col, const char *s);
void evidence_bind_int(sqlite3_stmt *st, int col, struct evidence_int v);

/* Steps st to its end, appending each row (a JSON object keyed by column
 * name) to a new array in *out (evidence_query.c). */
enum evidence_rc evidence_collect_rows(sqlite3 *sql, sqlite3_stmt *st, json_t **out, char *err,
                                       size_t errlen);

/* Sleep a few milliseconds (retry back-off). */
void evidence_sleep_ms(int ms);

#endif
