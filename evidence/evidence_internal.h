/* Private to evidence/: the connection struct and helpers shared by the
 * store's source files.  Not installed, not included outside evidence/. */
#ifndef EVIDENCE_INTERNAL_H
#define EVIDENCE_INTERNAL_H

#include "evidence.h"

#include <sqlite3.h>

#include "dbfile.h"

struct evidence_db {
    sqlite3 *sql;
    enum evidence_open_mode mode;
    int schema_version;
    char *path;
    struct dbfile_found found; /* how the file was recognised and opened */
    bool keyed;                /* v8: keyed (evidence_keyed.c) */
    struct store_key *key;     /* a copy of the key opened with (NULL: none), wiped at close */
};

/* evidence_keyed.c: registers exactav_mac (with a copy of key, or failing
 * when NULL) and exactav_sum on the connection. */
int evidence_keyed_attach(sqlite3 *sql, const struct store_key *key);
/* After migration, with the key, in its own write transaction: keys an
 * unkeyed store, else checks the key id (EVIDENCE_E_KEY) and re-creates a
 * dropped MAC trigger. */
enum evidence_rc evidence_keyed_enter(struct evidence_db *db, const struct store_key *key,
                                      char *err, size_t errlen);
/* The schema this build creates, with the MAC triggers, in a new
 * in-memory database (for store_key_foreign_object); NULL on failure. */
sqlite3 *evidence_reference_schema(void);
/* Creates the MAC triggers (IF NOT EXISTS).  SQLITE_OK or not. */
int evidence_keyed_triggers(sqlite3 *sql);
/* 1 keyed, 0 not (or older than v8), -1 SQLite error. */
int evidence_keyed_probe(sqlite3 *sql, int version);
/* prune on a keyed store: a new checkpoint (its own transaction) that the
 * rows deleted next are added to. */
enum evidence_rc evidence_keyed_checkpoint(struct evidence_db *db, int64_t now_ms, char *err,
                                           size_t errlen);

/* After the reads of one query: EVIDENCE_E_OPEN when the store was read
 * through an immutable connection and a writer has started since. */
enum evidence_rc evidence_read_done(struct evidence_db *db, char *err, size_t errlen);

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

/* The columns of a report (the import mapping, docs/evidence.md): *r points
 * into root and into b, which owns what the mapping had to make (fetch
 * rows, JSON text).  r->report and r->recorded_at_ms are left to the
 * caller.  A missing or mistyped field is EVIDENCE_E_INVALID naming it. */
struct evidence_report_buf {
    struct evidence_fetch *fetches;
    char **owned; /* strings produced by json_dumps */
    size_t nowned, capowned;
};
enum evidence_rc evidence_record_from_report(const json_t *root, struct evidence_report_buf *b,
                                             struct evidence_record *r, char *err, size_t errlen);
void evidence_report_buf_free(struct evidence_report_buf *b);

/* The rules of a valid row: report passes evidence_check_report and every
 * column of row equals the report's field.  EVIDENCE_E_INVALID names the
 * first difference. */
enum evidence_rc evidence_check_row(const struct evidence_record *row, const json_t *report,
                                    char *err, size_t errlen);

/* "Newest first": the latest observation; on a tie a non-MATCH row first
 * (a MATCH never hides a simultaneous MISMATCH or UNKNOWN), then the later
 * recording, then the greater id.  `latest`, evidence_newest and
 * evidence_row_newer are this one rule. */
#define EVIDENCE_NEWEST_ORDER \
    "observed_at_ms DESC, verdict = 'MATCH' ASC, recorded_at_ms DESC, id DESC"

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
