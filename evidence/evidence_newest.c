/* The controller's query (evidence_newest, see evidence.h): the newest row
 * of each scope, read in one snapshot, each row checked against the rules
 * of a valid row before anyone can act on it. */
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
       C_N };

#define NEWEST_ORDER " ORDER BY " EVIDENCE_NEWEST_ORDER " LIMIT 1"

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
#define SCOPE_WHERE(cols)                                                                        \
    "SELECT " NEWEST_COLUMNS_V1 ", " cols " FROM evidence WHERE path_id = ?1 AND channel = ?2 AND " \
    "rendition = ?3 AND program_version = ?4 AND check_kind = '" EVIDENCE_CHECK_KIND "'" NEWEST_ORDER
#define OTHER_WHERE(cols)                                                                        \
    "SELECT " NEWEST_COLUMNS_V1 ", " cols " FROM evidence WHERE path_id = ?1 AND channel = ?2 AND " \
    "check_kind = '" EVIDENCE_CHECK_KIND "'" NEWEST_ORDER
    static const char *const scope_sql[2] = {SCOPE_WHERE("NULL"), SCOPE_WHERE("media_sequence")};
    static const char *const other_sql[2] = {OTHER_WHERE("NULL"), OTHER_WHERE("media_sequence")};
#undef SCOPE_WHERE
#undef OTHER_WHERE
    const char *p[4] = {s->path_id, s->channel, s->rendition, s->program_version};
    int v2 = version >= 2;
    int r = newest_one(sql, scope_sql[v2], p, 4, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return newest_one(sql, other_sql[v2], p, 2, out) < 0 ? -1 : 0;
}

enum evidence_rc evidence_newest(struct evidence_db *db, const struct evidence_scope *scopes,
                                 size_t n, struct evidence_rows *out, char *err, size_t errlen)
{
    assert(db && out && (scopes || n == 0));
    memset(out, 0, sizeof *out);
    /* One read transaction: every scope sees the same snapshot. */
    if (sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        evidence_seterr(err, errlen, "BEGIN: %s", sqlite3_errmsg(db->sql));
        return EVIDENCE_E_INTERNAL;
    }
    enum evidence_rc rc = EVIDENCE_OK;
    for (size_t i = 0; i < n && rc == EVIDENCE_OK; i++)
        if (read_scope(db->sql, db->schema_version, &scopes[i], out) < 0) {
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
