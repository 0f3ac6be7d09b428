/* evidence_read.c - read-only access to evidence.db (see evidence_read.h). */
#include "evidence_read.h"
#include "evidence.h"
#include "sqlutil.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#define EVR_BUSY_MS 5000

const char *evr_verdict_name(enum evr_verdict v)
{
    return v == EVR_MATCH ? "MATCH" : v == EVR_MISMATCH ? "MISMATCH" : "UNKNOWN";
}

enum evr_verdict evr_verdict_parse(const char *s)
{
    if (s && !strcmp(s, "MATCH"))
        return EVR_MATCH;
    if (s && !strcmp(s, "MISMATCH"))
        return EVR_MISMATCH;
    return EVR_UNKNOWN;
}

void evr_set_field(struct evr_row *row, char *dst, const char *src)
{
    if (!src) {
        dst[0] = '\0';
        return;
    }
    if (strlen(src) >= EVR_STR) {
        dst[0] = '\0';
        row->malformed = true;
        return;
    }
    strcpy(dst, src);
}

int evr_append(struct evr_set *set, const struct evr_row *row)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        struct evr_row *r = realloc(set->rows, cap * sizeof *r);
        if (!r)
            return -1;
        set->rows = r;
        set->cap = cap;
    }
    set->rows[set->n++] = *row;
    return 0;
}

void evr_free(struct evr_set *set)
{
    free(set->rows);
    memset(set, 0, sizeof *set);
}

#define EVR_COLUMNS                                                                          \
    "id, check_kind, verdict, reason, profile_id, path_id, channel, rendition, "             \
    "program_version, reference_version, observed_at_ms, recorded_at_ms"

static const char *text(sqlite3_stmt *st, int col, struct evr_row *row)
{
    int t = sqlite3_column_type(st, col);
    if (t == SQLITE_NULL)
        return NULL;
    if (t != SQLITE_TEXT)
        row->malformed = true; /* the schema says TEXT; anything else is not trusted */
    return (const char *)sqlite3_column_text(st, col);
}

static void row_from_stmt(sqlite3_stmt *st, struct evr_row *r)
{
    memset(r, 0, sizeof *r);
    evr_set_field(r, r->id, text(st, 0, r));
    evr_set_field(r, r->check_kind, text(st, 1, r));
    const char *v = text(st, 2, r);
    r->verdict = evr_verdict_parse(v);
    evr_set_field(r, r->reason, text(st, 3, r));
    evr_set_field(r, r->profile_id, text(st, 4, r));
    evr_set_field(r, r->path_id, text(st, 5, r));
    evr_set_field(r, r->channel, text(st, 6, r));
    evr_set_field(r, r->rendition, text(st, 7, r));
    evr_set_field(r, r->program_version, text(st, 8, r));
    evr_set_field(r, r->reference_version, text(st, 9, r));
    if (sqlite3_column_type(st, 10) != SQLITE_INTEGER || sqlite3_column_type(st, 11) != SQLITE_INTEGER)
        r->malformed = true;
    r->observed_at_ms = sqlite3_column_int64(st, 10);
    r->recorded_at_ms = sqlite3_column_int64(st, 11);
}

/* Runs one prepared query with n text parameters; appends at most one row.
 * Returns 1 when a row was appended, 0 when none, -1 on error. */
static int newest(sqlite3 *db, const char *sql, const char *const *params, int n,
                  struct evr_set *out)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    for (int i = 0; i < n; i++)
        sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), res = 0;
    if (rc == SQLITE_ROW) {
        struct evr_row r;
        row_from_stmt(st, &r);
        res = evr_append(out, &r) == 0 ? 1 : -1;
    } else if (rc != SQLITE_DONE) {
        res = -1;
    }
    sqlite3_finalize(st);
    return res;
}

/* "Newest" is the same rule as `exactav evidence latest`: on equal observation
 * times a non-MATCH row wins (a MATCH never hides a simultaneous MISMATCH or
 * UNKNOWN), then the later recording, then the id. */
#define EVR_NEWEST "ORDER BY observed_at_ms DESC, verdict = 'MATCH' ASC, recorded_at_ms DESC, id DESC LIMIT 1"

static int read_candidate(sqlite3 *db, const struct sit_situation *s, const char *path_id,
                          struct evr_set *out)
{
    static const char scope_sql[] =
        "SELECT " EVR_COLUMNS " FROM evidence WHERE path_id = ?1 AND channel = ?2 AND "
        "rendition = ?3 AND program_version = ?4 AND check_kind = 'exact-av-v1' " EVR_NEWEST;
    static const char other_sql[] =
        "SELECT " EVR_COLUMNS " FROM evidence WHERE path_id = ?1 AND channel = ?2 AND "
        "check_kind = 'exact-av-v1' " EVR_NEWEST;
    const char *p[4] = {path_id, s->action.cohort.channel, s->action.cohort.rendition,
                        s->action.program_version};
    int r = newest(db, scope_sql, p, 4, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return newest(db, other_sql, p, 2, out) < 0 ? -1 : 0;
}

enum evr_status evr_read(const char *db_path, const struct sit_situation *s, struct evr_set *out,
                         char *err, size_t errlen)
{
    assert(db_path && s && out);
    memset(out, 0, sizeof *out);
    sqlite3 *db = NULL;
    /* READONLY: the controller never writes evidence, not even a journal. */
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open evidence store %s: %s", db_path,
                 db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return EVR_OPEN_FAILED;
    }
    sqlite3_busy_timeout(db, EVR_BUSY_MS);
    int v = sqlutil_user_version(db);
    if (v < 1 || v > EVIDENCE_SCHEMA_VERSION) { /* v2 only adds columns and tables */
        snprintf(err, errlen, "%s is not an evidence store v1..v%d (user_version %d)", db_path,
                 EVIDENCE_SCHEMA_VERSION, v);
        sqlite3_close(db);
        return EVR_BAD_VERSION;
    }
    enum evr_status rc = EVR_OK;
    /* One read transaction: every candidate sees the same snapshot. */
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (size_t i = 0; i < s->n_candidates && rc == EVR_OK; i++)
        if (read_candidate(db, s, s->candidates[i].path_id, out) < 0) {
            snprintf(err, errlen, "evidence query failed on %s: %s", db_path, sqlite3_errmsg(db));
            rc = EVR_QUERY_FAILED;
        }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    if (rc != EVR_OK)
        evr_free(out);
    return rc;
}
