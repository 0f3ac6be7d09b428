/* Read side: list, latest, show.  Rows come back as JSON objects keyed by
 * column name; formatting is evidence_write.c's job. */
#include "evidence_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Every column of `evidence` except `report` (large; show returns it).  A
 * version-1 store (readable read-only) has no media_sequence: it reads as
 * NULL there. */
#define ROW_COLUMNS_V1                                                                         \
    "id, check_kind, verdict, reason, profile_id, profile_fingerprint, path_id, channel,"     \
    " rendition, program_version, reference_version, object, interval_start, interval_end,"  \
    " observed_at_ms, observed_end_ms, recorded_at_ms"
#define ROW_COLUMNS ROW_COLUMNS_V1 ", media_sequence"

/* The FROM clause: the evidence table as version 2 shows it. */
static const char *evidence_from(const struct evidence_db *db)
{
    return db->schema_version >= 2 ? "evidence"
                                   : "(SELECT " ROW_COLUMNS_V1 ", report, NULL AS media_sequence FROM evidence)";
}

#define FETCH_COLUMNS                                                                          \
    "evidence_id, seq, url, effective_url, http_status, bytes, content_length, started_at_ms," \
    " ended_at_ms, redirects, age, via, x_cache, server, etag, content_type, error"

/* Parameter numbers are fixed so that only the filters in use are bound. */
enum { P_PATH = 1, P_CHANNEL, P_RENDITION, P_PROGRAM, P_VERDICT, P_MIN_OBSERVED, P_LIMIT, P_MEDIA_SEQ };

/* Text that is not valid UTF-8 (a raw header byte, say) cannot be a JSON
 * string: non-ASCII bytes become '?' rather than failing the query. */
static json_t *text_value(const unsigned char *s, int n)
{
    json_t *v = json_stringn((const char *)s, (size_t)n);
    if (v)
        return v;
    char *copy = malloc((size_t)n + 1);
    if (!copy)
        return NULL;
    for (int i = 0; i < n; i++)
        copy[i] = (s[i] >= 0x80 || s[i] == 0) ? '?' : (char)s[i];
    v = json_stringn(copy, (size_t)n);
    free(copy);
    return v;
}

/* JSON-valued columns go back to JSON; if the text does not parse it is
 * returned as a string, never dropped. */
static bool is_json_column(const char *name)
{
    return strcmp(name, "redirects") == 0 || strcmp(name, "report") == 0;
}

static json_t *column_value(sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT:
        return json_real(sqlite3_column_double(st, i));
    case SQLITE_NULL:
        return json_null();
    default:
        break;
    }
    const unsigned char *s = sqlite3_column_text(st, i);
    int n = sqlite3_column_bytes(st, i);
    if (s && is_json_column(sqlite3_column_name(st, i))) {
        json_t *v = json_loadb((const char *)s, (size_t)n, JSON_DECODE_ANY, NULL);
        if (v)
            return v;
    }
    return s ? text_value(s, n) : json_null();
}

static json_t *row_object(sqlite3_stmt *st)
{
    json_t *obj = json_object();
    for (int i = 0; obj && i < sqlite3_column_count(st); i++) {
        json_t *v = column_value(st, i);
        if (!v || json_object_set_new(obj, sqlite3_column_name(st, i), v) != 0) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

/* Steps st to the end, appending each row to a new array (evidence_internal.h). */
enum evidence_rc evidence_collect_rows(sqlite3 *sql, sqlite3_stmt *st, json_t **out, char *err,
                                       size_t errlen)
{
    json_t *arr = json_array();
    int rc = SQLITE_ERROR;
    while (arr && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *row = row_object(st);
        if (!row || json_array_append_new(arr, row) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    if (!arr || rc != SQLITE_DONE) {
        evidence_seterr(err, errlen, "query: %s", arr ? sqlite3_errmsg(sql) : "out of memory");
        json_decref(arr);
        return EVIDENCE_E_INTERNAL;
    }
    *out = arr;
    return EVIDENCE_OK;
}

/* The buffers are sized for every filter at once; never overflow anyway. */
static void append(char *buf, size_t n, const char *s)
{
    size_t len = strlen(buf), add = strlen(s);
    assert(len + add < n);
    if (len + add < n)
        memcpy(buf + len, s, add + 1);
}

/* The WHERE clause for the filters in use (static text: values are bound). */
static void where_clause(const struct evidence_filter *f, char *buf, size_t n)
{
    buf[0] = '\0';
    append(buf, n, " WHERE 1");
    if (f->path_id) append(buf, n, " AND path_id = ?1");
    if (f->channel) append(buf, n, " AND channel = ?2");
    if (f->rendition) append(buf, n, " AND rendition = ?3");
    if (f->program_version) append(buf, n, " AND program_version = ?4");
    if (f->verdict) append(buf, n, " AND verdict = ?5");
    if (f->has_max_age) append(buf, n, " AND observed_at_ms >= ?6");
    if (f->has_media_sequence) append(buf, n, " AND media_sequence = ?8");
}

/* Freshness counts from observed_at_ms only: age = now - observed_at_ms. */
static int64_t min_observed_ms(const struct evidence_filter *f)
{
    int64_t age_ms = f->max_age_s > INT64_MAX / 2000 ? INT64_MAX / 2 : f->max_age_s * 1000;
    return f->now_ms - age_ms;
}

static void bind_filter(sqlite3_stmt *st, const struct evidence_filter *f)
{
    const char *text[] = {f->path_id, f->channel, f->rendition, f->program_version, f->verdict};
    for (int i = 0; i < 5; i++)
        if (text[i])
            sqlite3_bind_text(st, P_PATH + i, text[i], -1, SQLITE_STATIC);
    if (f->has_max_age)
        sqlite3_bind_int64(st, P_MIN_OBSERVED, min_observed_ms(f));
    if (f->limit > 0)
        sqlite3_bind_int64(st, P_LIMIT, f->limit);
    if (f->has_media_sequence)
        sqlite3_bind_int64(st, P_MEDIA_SEQ, f->media_sequence);
}

static enum evidence_rc run_filtered(struct evidence_db *db, const char *sql,
                                     const struct evidence_filter *f, json_t **rows, char *err,
                                     size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "prepare: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    bind_filter(st, f);
    enum evidence_rc rc = evidence_collect_rows(db->sql, st, rows, err, errlen);
    sqlite3_finalize(st);
    if (rc == EVIDENCE_OK && (rc = evidence_read_done(db, err, errlen)) != EVIDENCE_OK) {
        json_decref(*rows);
        *rows = NULL;
    }
    return rc;
}

static enum evidence_rc check_filter(const struct evidence_filter *f, char *err, size_t errlen)
{
    enum evidence_verdict v;
    if (f->verdict && !evidence_verdict_parse(f->verdict, &v)) {
        evidence_seterr(err, errlen, "verdict filter must be MATCH, MISMATCH or UNKNOWN");
        return EVIDENCE_E_INVALID;
    }
    if (f->has_max_age && f->max_age_s < 0) {
        evidence_seterr(err, errlen, "max age must be >= 0");
        return EVIDENCE_E_INVALID;
    }
    if (f->has_media_sequence && f->media_sequence < 0) {
        evidence_seterr(err, errlen, "media sequence must be >= 0");
        return EVIDENCE_E_INVALID;
    }
    return EVIDENCE_OK;
}

enum evidence_rc evidence_list(struct evidence_db *db, const struct evidence_filter *f,
                               json_t **rows, char *err, size_t errlen)
{
    assert(db && f && rows);
    *rows = NULL;
    enum evidence_rc rc = check_filter(f, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    char where[512], sql[2048];
    where_clause(f, where, sizeof where);
    snprintf(sql, sizeof sql, "SELECT " ROW_COLUMNS " FROM %s%s"
             " ORDER BY observed_at_ms DESC, id ASC%s", evidence_from(db), where,
             f->limit > 0 ? " LIMIT ?7" : "");
    return run_filtered(db, sql, f, rows, err, errlen);
}

/* Newest observation per scope among the selected rows.  A tie on
 * observed_at_ms is broken towards the non-MATCH row (the safe reading),
 * then the later recording, then the id, so the answer is deterministic. */
enum evidence_rc evidence_latest(struct evidence_db *db, const struct evidence_filter *f,
                                 json_t **rows, char *err, size_t errlen)
{
    assert(db && f && rows);
    *rows = NULL;
    enum evidence_rc rc = check_filter(f, err, errlen);
    if (rc != EVIDENCE_OK)
        return rc;
    char where[512], sql[3072];
    where_clause(f, where, sizeof where);
    snprintf(sql, sizeof sql,
             "SELECT " ROW_COLUMNS " FROM (SELECT " ROW_COLUMNS ", row_number() OVER ("
             "PARTITION BY path_id, channel, rendition, program_version "
             "ORDER BY " EVIDENCE_NEWEST_ORDER
             ") AS rn FROM %s%s) WHERE rn = 1"
             " ORDER BY observed_at_ms DESC, id ASC%s", evidence_from(db), where,
             f->limit > 0 ? " LIMIT ?7" : "");
    return run_filtered(db, sql, f, rows, err, errlen);
}

/* Runs a one-parameter query by id into a JSON array. */
static enum evidence_rc rows_by_id(struct evidence_db *db, const char *sql, const char *id,
                                   json_t **rows, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "prepare: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    enum evidence_rc rc = evidence_collect_rows(db->sql, st, rows, err, errlen);
    sqlite3_finalize(st);
    return rc;
}

/* Both reads in one read transaction: the record and its fetches are one
 * consistent snapshot even while writers commit. */
static enum evidence_rc show_in_txn(struct evidence_db *db, const char *id, json_t **record,
                                    char *err, size_t errlen)
{
    json_t *rows = NULL, *fetches = NULL;
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT " ROW_COLUMNS ", report FROM %s WHERE id = ?1", evidence_from(db));
    enum evidence_rc rc = rows_by_id(db, sql, id, &rows, err, errlen);
    if (rc == EVIDENCE_OK && json_array_size(rows) == 0) {
        evidence_seterr(err, errlen, "no evidence with id %s", id);
        rc = EVIDENCE_E_NOTFOUND;
    }
    if (rc == EVIDENCE_OK)
        rc = rows_by_id(db, "SELECT " FETCH_COLUMNS " FROM fetches WHERE evidence_id = ?1 ORDER BY seq",
                        id, &fetches, err, errlen);
    if (rc == EVIDENCE_OK) {
        *record = json_incref(json_array_get(rows, 0));
        if (json_object_set_new(*record, "fetches", fetches) != 0)
            rc = EVIDENCE_E_INTERNAL;
        fetches = NULL;
    }
    json_decref(fetches);
    json_decref(rows);
    return rc;
}

enum evidence_rc evidence_show(struct evidence_db *db, const char *id, json_t **record,
                               char *err, size_t errlen)
{
    assert(db && record);
    *record = NULL;
    if (!id) {
        evidence_seterr(err, errlen, "no id");
        return EVIDENCE_E_NOTFOUND;
    }
    if (sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "BEGIN: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    enum evidence_rc rc = show_in_txn(db, id, record, err, errlen);
    evidence_rollback(db->sql); /* read-only transaction: nothing to commit */
    if (rc == EVIDENCE_OK)
        rc = evidence_read_done(db, err, errlen);
    if (rc != EVIDENCE_OK) {
        json_decref(*record);
        *record = NULL;
    }
    return rc;
}
