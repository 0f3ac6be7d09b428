/* The controller's queries (see evidence.h): evidence_newest, the newest
 * row of each scope, and evidence_observed_after, the rows of one step;
 * each read in one snapshot, every row checked against the rules of a
 * valid row before anyone can act on it. */
#include "evidence_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void evidence_row_set(struct evidence_row *row, char *dst, const char *src)
{
    if (!src)
        src = "";
    if (strlen(src) >= EVIDENCE_ROW_STR) {
        dst[0] = '\0';
        row->malformed = true;
        snprintf(row->why, sizeof row->why, "a column is longer than %d bytes", EVIDENCE_ROW_STR - 1);
        return;
    }
    strcpy(dst, src);
}

int evidence_rows_append(struct evidence_rows *set, const struct evidence_row *row)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        struct evidence_row *r = realloc(set->rows, cap * sizeof *r);
        if (!r)
            return -1;
        set->rows = r;
        set->cap = cap;
    }
    set->rows[set->n++] = *row;
    return 0;
}

void evidence_rows_free(struct evidence_rows *set)
{
    free(set->rows);
    memset(set, 0, sizeof *set);
}

/* Every column the rules compare, then the report; media_sequence last
 * (schema v2; a version-1 store, read as it is, has none: NULL). */
#define NEWEST_COLUMNS_V1                                                                       \
    "id, check_kind, verdict, reason, profile_id, profile_fingerprint, path_id, channel,"      \
    " rendition, program_version, reference_version, object, interval_start, interval_end,"   \
    " observed_at_ms, observed_end_ms, recorded_at_ms, report"
enum { C_ID, C_KIND, C_VERDICT, C_REASON, C_PROFILE, C_FP, C_PATH, C_CHANNEL, C_RENDITION,
       C_PROGRAM, C_REFV, C_OBJECT, C_ISTART, C_IEND, C_OBS, C_OBS_END, C_REC, C_REPORT, C_MSEQ,
       C_PIDX, C_ALLOC, C_PATHWAY, C_N };

#define NEWEST_ORDER " ORDER BY " EVIDENCE_NEWEST_ORDER " LIMIT 1"
/* The select list; mseq is "media_sequence, part_index, allocation_id,
 * pathway" on v6, NULL for each column a store of an older version lacks
 * (by version_index). */
#define SELECT_COLUMNS(mseq) "SELECT " NEWEST_COLUMNS_V1 ", " mseq
#define MSEQ_V1 "NULL, NULL, NULL, NULL"
#define MSEQ_V2 "media_sequence, NULL, NULL, NULL"
#define MSEQ_V5 "media_sequence, part_index, NULL, NULL"
#define MSEQ_V6 "media_sequence, part_index, allocation_id, pathway"
static int version_index(int version)
{
    return version >= 6 ? 3 : version >= 5 ? 2 : version >= 2 ? 1 : 0;
}

/* EVIDENCE_NEWEST_ORDER as a comparison. */
bool evidence_row_newer(const struct evidence_row *a, const struct evidence_row *b)
{
    if (a->observed_at_ms != b->observed_at_ms)
        return a->observed_at_ms > b->observed_at_ms;
    bool a_match = a->verdict == EVIDENCE_VERDICT_MATCH, b_match = b->verdict == EVIDENCE_VERDICT_MATCH;
    if (a_match != b_match)
        return !a_match;
    if (a->recorded_at_ms != b->recorded_at_ms)
        return a->recorded_at_ms > b->recorded_at_ms;
    return strcmp(a->id, b->id) > 0;
}

/* A TEXT column as text; NULL for SQL NULL; anything else breaks the schema. */
static const char *text_col(sqlite3_stmt *st, int col, bool *bad)
{
    int t = sqlite3_column_type(st, col);
    if (t == SQLITE_NULL)
        return NULL;
    if (t != SQLITE_TEXT)
        *bad = true;
    return (const char *)sqlite3_column_text(st, col);
}

static struct evidence_int int_col(sqlite3_stmt *st, int col, bool *bad)
{
    int t = sqlite3_column_type(st, col);
    if (t != SQLITE_NULL && t != SQLITE_INTEGER)
        *bad = true;
    return (struct evidence_int){t == SQLITE_INTEGER, sqlite3_column_int64(st, col)};
}

/* The track verdicts of a valid report (UNKNOWN for an absent track). */
static void track_verdicts(const json_t *report, struct evidence_row *r)
{
    const char *v = json_string_value(json_object_get(json_object_get(report, "video"), "verdict"));
    const char *a = json_string_value(json_object_get(json_object_get(report, "audio"), "verdict"));
    if (!evidence_verdict_parse(v, &r->video))
        r->video = EVIDENCE_VERDICT_UNKNOWN;
    if (!evidence_verdict_parse(a, &r->audio))
        r->audio = EVIDENCE_VERDICT_UNKNOWN;
}

/* The rules of a valid row (evidence_rules.c) on the current result row. */
static void check(sqlite3_stmt *st, struct evidence_row *r)
{
    bool bad = false;
    const char *verdict = text_col(st, C_VERDICT, &bad);
    struct evidence_record rec = {
        .id = text_col(st, C_ID, &bad), .check_kind = text_col(st, C_KIND, &bad),
        .reason = text_col(st, C_REASON, &bad), .profile_id = text_col(st, C_PROFILE, &bad),
        .profile_fingerprint = text_col(st, C_FP, &bad), .path_id = text_col(st, C_PATH, &bad),
        .channel = text_col(st, C_CHANNEL, &bad), .rendition = text_col(st, C_RENDITION, &bad),
        .program_version = text_col(st, C_PROGRAM, &bad),
        .reference_version = text_col(st, C_REFV, &bad), .object = text_col(st, C_OBJECT, &bad),
        .interval_start = int_col(st, C_ISTART, &bad), .interval_end = int_col(st, C_IEND, &bad),
        .observed_at_ms = int_col(st, C_OBS, &bad).value,
        .observed_end_ms = int_col(st, C_OBS_END, &bad).value,
        .media_sequence = int_col(st, C_MSEQ, &bad),
        .part_index = int_col(st, C_PIDX, &bad),
        .allocation_id = text_col(st, C_ALLOC, &bad), .pathway = text_col(st, C_PATHWAY, &bad),
    };
    const char *report = text_col(st, C_REPORT, &bad);
    if (bad || !evidence_verdict_parse(verdict, &rec.verdict) ||
        sqlite3_column_type(st, C_OBS) != SQLITE_INTEGER ||
        sqlite3_column_type(st, C_REC) != SQLITE_INTEGER) {
        r->malformed = true;
        snprintf(r->why, sizeof r->why, "a column has a value the schema does not allow");
        return;
    }
    json_t *root = report ? json_loadb(report, (size_t)sqlite3_column_bytes(st, C_REPORT),
                                       JSON_REJECT_DUPLICATES, NULL)
                          : NULL;
    if (!json_is_object(root)) {
        r->malformed = true;
        snprintf(r->why, sizeof r->why, "report: not a JSON object");
    } else if (evidence_check_row(&rec, root, r->why, sizeof r->why) != EVIDENCE_OK) {
        r->malformed = true;
    } else {
        track_verdicts(root, r);
    }
    json_decref(root);
}

static void row_from_stmt(sqlite3_stmt *st, struct evidence_row *r)
{
    bool bad = false;
    memset(r, 0, sizeof *r);
    evidence_row_set(r, r->id, text_col(st, C_ID, &bad));
    evidence_row_set(r, r->check_kind, text_col(st, C_KIND, &bad));
    if (!evidence_verdict_parse(text_col(st, C_VERDICT, &bad), &r->verdict))
        r->verdict = EVIDENCE_VERDICT_UNKNOWN;
    evidence_row_set(r, r->reason, text_col(st, C_REASON, &bad));
    evidence_row_set(r, r->profile_id, text_col(st, C_PROFILE, &bad));
    evidence_row_set(r, r->path_id, text_col(st, C_PATH, &bad));
    evidence_row_set(r, r->channel, text_col(st, C_CHANNEL, &bad));
    evidence_row_set(r, r->rendition, text_col(st, C_RENDITION, &bad));
    evidence_row_set(r, r->program_version, text_col(st, C_PROGRAM, &bad));
    evidence_row_set(r, r->reference_version, text_col(st, C_REFV, &bad));
    evidence_row_set(r, r->allocation_id, text_col(st, C_ALLOC, &bad));
    evidence_row_set(r, r->pathway, text_col(st, C_PATHWAY, &bad));
    r->observed_at_ms = sqlite3_column_int64(st, C_OBS);
    r->recorded_at_ms = sqlite3_column_int64(st, C_REC);
    if (!r->malformed)
        check(st, r);
}

/* Runs one query with n text parameters; appends at most one row.
 * 1 when a row was appended, 0 when none, -1 on error. */
static int newest_one(sqlite3 *sql, const char *query, const char *const *params, int n,
                      struct evidence_rows *out)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sql, query, -1, &st, NULL) != SQLITE_OK)
        return -1;
    for (int i = 0; i < n; i++)
        sqlite3_bind_text(st, i + 1, params[i] ? params[i] : "", -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), res = 0;
    if (rc == SQLITE_ROW) {
        struct evidence_row r;
        row_from_stmt(st, &r);
        res = evidence_rows_append(out, &r) == 0 ? 1 : -1;
    } else if (rc != SQLITE_DONE) {
        res = -1;
    }
    sqlite3_finalize(st);
    return res;
}

static int read_scope(sqlite3 *sql, int version, const struct evidence_scope *s,
                      struct evidence_rows *out)
{
#define SCOPE_WHERE(mseq)                                                                        \
    SELECT_COLUMNS(mseq) " FROM evidence WHERE path_id = ?1 AND channel = ?2 AND "                \
    "rendition = ?3 AND program_version = ?4 AND check_kind = '" EVIDENCE_CHECK_KIND "'" NEWEST_ORDER
#define OTHER_WHERE(mseq)                                                                        \
    SELECT_COLUMNS(mseq) " FROM evidence WHERE path_id = ?1 AND channel = ?2 AND "                \
    "check_kind = '" EVIDENCE_CHECK_KIND "'" NEWEST_ORDER
    static const char *const scope_sql[4] = {SCOPE_WHERE(MSEQ_V1), SCOPE_WHERE(MSEQ_V2),
                                             SCOPE_WHERE(MSEQ_V5), SCOPE_WHERE(MSEQ_V6)};
    static const char *const other_sql[4] = {OTHER_WHERE(MSEQ_V1), OTHER_WHERE(MSEQ_V2),
                                             OTHER_WHERE(MSEQ_V5), OTHER_WHERE(MSEQ_V6)};
#undef SCOPE_WHERE
#undef OTHER_WHERE
    const char *p[4] = {s->path_id, s->channel, s->rendition, s->program_version};
    int v2 = version_index(version);
    int r = newest_one(sql, scope_sql[v2], p, 4, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return newest_one(sql, other_sql[v2], p, 2, out) < 0 ? -1 : 0;
}

/* Runs reads(sql, schema version, arg, out) in one read transaction (one
 * snapshot for all it reads); on failure *out is freed and err says why. */
static enum evidence_rc snapshot(struct evidence_db *db,
                                 int (*reads)(sqlite3 *, int, const void *, struct evidence_rows *),
                                 const void *arg, struct evidence_rows *out, char *err,
                                 size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "BEGIN: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    enum evidence_rc rc = EVIDENCE_OK;
    if (reads(db->sql, db->schema_version, arg, out) < 0) {
        evidence_seterr(err, errlen, "query: %s", sqlite3_errmsg(db->sql));
        rc = EVIDENCE_E_INTERNAL;
    }
    evidence_rollback(db->sql); /* a read transaction: nothing to commit */
    if (rc == EVIDENCE_OK)
        rc = evidence_read_done(db, err, errlen);
    if (rc != EVIDENCE_OK)
        evidence_rows_free(out);
    return rc;
}

struct scopes {
    const struct evidence_scope *v;
    size_t n;
};

static int read_scopes(sqlite3 *sql, int version, const void *arg, struct evidence_rows *out)
{
    const struct scopes *s = arg;
    for (size_t i = 0; i < s->n; i++)
        if (read_scope(sql, version, &s->v[i], out) < 0)
            return -1;
    return 0;
}

enum evidence_rc evidence_newest(struct evidence_db *db, const struct evidence_scope *scopes,
                                 size_t n, struct evidence_rows *out, char *err, size_t errlen)
{
    assert(db && out && (scopes || n == 0));
    struct scopes s = {scopes, n};
    return snapshot(db, read_scopes, &s, out, err, errlen);
}

/* Appends the rows of one step's query: at most limit of them, or (first
 * valid) the first valid row only.  *mismatch: a valid MISMATCH appended. */
static int since_rows(sqlite3 *sql, const char *query, const struct evidence_since *q,
                      int64_t limit, bool first_valid, struct evidence_rows *out, bool *mismatch)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sql, query, -1, &st, NULL) != SQLITE_OK)
        return -1;
    const char *p[5] = {q->scope.path_id, q->scope.channel, q->scope.rendition,
                        q->scope.program_version, q->profile_id};
    for (int i = 0; i < 5; i++)
        sqlite3_bind_text(st, i + 1, p[i] ? p[i] : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, q->after_ms);
    sqlite3_bind_int64(st, 7, limit);
    if (q->allocation_ids)
        sqlite3_bind_text(st, 8, q->allocation_ids, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct evidence_row r;
        row_from_stmt(st, &r);
        if (first_valid && r.malformed)
            continue;
        if (evidence_rows_append(out, &r) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        *mismatch = *mismatch || (!r.malformed && r.verdict == EVIDENCE_VERDICT_MISMATCH);
        if (first_valid) {
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The step's rows, then (when the limit cut them short and they hold no
 * valid MISMATCH) the newest valid MISMATCH: an older one can remain only
 * then. */
static int read_since(sqlite3 *sql, int version, const void *arg, struct evidence_rows *out)
{
/* ?8: the allocation ids (JSON array) or NULL for any row; a store older
 * than v6 has no row of an allocation (ALLOC_OLD) */
#define SINCE_WHERE(alloc)                                                                     \
    " FROM evidence WHERE path_id = ?1 AND channel = ?2 AND rendition = ?3 AND "              \
    "program_version = ?4 AND profile_id = ?5 AND check_kind = '" EVIDENCE_CHECK_KIND "' AND " \
    "observed_at_ms > ?6 AND " alloc
#define ALLOC_OLD "?8 IS NULL"
#define ALLOC_V6 "(?8 IS NULL OR allocation_id IN (SELECT value FROM json_each(?8)))"
#define ROWS_SQL(mseq, alloc)                                                                  \
    SELECT_COLUMNS(mseq) SINCE_WHERE(alloc) " ORDER BY " EVIDENCE_NEWEST_ORDER " LIMIT ?7"
#define MISMATCH_SQL(mseq, alloc)                                                              \
    SELECT_COLUMNS(mseq) SINCE_WHERE(alloc) " AND verdict = 'MISMATCH' ORDER BY "             \
        EVIDENCE_NEWEST_ORDER " LIMIT ?7"
    static const char *const rows_sql[4] = {ROWS_SQL(MSEQ_V1, ALLOC_OLD), ROWS_SQL(MSEQ_V2, ALLOC_OLD),
                                            ROWS_SQL(MSEQ_V5, ALLOC_OLD), ROWS_SQL(MSEQ_V6, ALLOC_V6)};
    static const char *const mismatch_sql[4] = {
        MISMATCH_SQL(MSEQ_V1, ALLOC_OLD), MISMATCH_SQL(MSEQ_V2, ALLOC_OLD),
        MISMATCH_SQL(MSEQ_V5, ALLOC_OLD), MISMATCH_SQL(MSEQ_V6, ALLOC_V6)};
#undef MISMATCH_SQL
#undef ROWS_SQL
#undef SINCE_WHERE
#undef ALLOC_OLD
#undef ALLOC_V6
    const struct evidence_since *q = arg;
    bool mismatch = false;
    int v2 = version_index(version);
    int64_t limit = q->limit > INT64_MAX ? INT64_MAX : (int64_t)q->limit;
    int r = since_rows(sql, rows_sql[v2], q, limit, false, out, &mismatch);
    if (r == 0 && !mismatch && out->n == q->limit)
        r = since_rows(sql, mismatch_sql[v2], q, -1, true, out, &mismatch);
    return r;
}

enum evidence_rc evidence_observed_after(struct evidence_db *db, const struct evidence_since *q,
                                         struct evidence_rows *out, char *err, size_t errlen)
{
    assert(db && q && out && q->limit >= 1);
    return snapshot(db, read_since, q, out, err, errlen);
}

/* ---- every row, for `exactav evidence verify-store` ------------------------------------- */

struct scan {
    evidence_scan_fn each;
    void *ctx;
    size_t rows;
    bool stopped;
};

static int read_all(sqlite3 *sql, int version, const void *arg, struct evidence_rows *out)
{
    (void)out;
#define ALL_SQL(mseq) SELECT_COLUMNS(mseq) " FROM evidence ORDER BY rowid"
    static const char *const all_sql[4] = {ALL_SQL(MSEQ_V1), ALL_SQL(MSEQ_V2), ALL_SQL(MSEQ_V5),
                                           ALL_SQL(MSEQ_V6)};
#undef ALL_SQL
    struct scan *s = (struct scan *)arg;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sql, all_sql[version_index(version)], -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct evidence_row r;
        row_from_stmt(st, &r); /* the rules of a valid row, as the controller applies them */
        s->rows++;
        const char *report = (const char *)sqlite3_column_text(st, C_REPORT);
        size_t len = (size_t)sqlite3_column_bytes(st, C_REPORT);
        if (s->each(&r, report, len, s->ctx) != 0) {
            s->stopped = true;
            rc = SQLITE_DONE;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

enum evidence_rc evidence_scan(struct evidence_db *db, evidence_scan_fn each, void *ctx,
                               size_t *rows, char *err, size_t errlen)
{
    assert(db && each);
    struct scan s = {each, ctx, 0, false};
    struct evidence_rows unused;
    enum evidence_rc rc = snapshot(db, read_all, &s, &unused, err, errlen);
    evidence_rows_free(&unused);
    if (rows)
        *rows = s.rows;
    return rc;
}
