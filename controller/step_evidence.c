/* step_evidence.c - evidence observed during a step (see step_evidence.h). */
#include "step_evidence.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "sqlutil.h"

static const char *col(sqlite3_stmt *st, int c, struct evr_row *r)
{
    if (sqlite3_column_type(st, c) != SQLITE_TEXT) {
        r->malformed = true;
        return NULL;
    }
    return (const char *)sqlite3_column_text(st, c);
}

static void read_row(sqlite3_stmt *st, struct evr_row *r, struct stev_tracks *t)
{
    memset(r, 0, sizeof *r);
    char *dst[] = {r->id,        r->check_kind,       NULL,           r->reason,
                   r->profile_id, r->path_id,         r->channel,     r->rendition,
                   r->program_version, r->reference_version};
    for (int c = 0; c < 10; c++)
        if (dst[c])
            evr_set_field(r, dst[c], col(st, c, r));
    r->verdict = evr_verdict_parse(col(st, 2, r));
    if (sqlite3_column_type(st, 10) != SQLITE_INTEGER || sqlite3_column_type(st, 11) != SQLITE_INTEGER)
        r->malformed = true;
    r->observed_at_ms = sqlite3_column_int64(st, 10);
    r->recorded_at_ms = sqlite3_column_int64(st, 11);
    t->video = evr_verdict_parse((const char *)sqlite3_column_text(st, 12));
    t->audio = evr_verdict_parse((const char *)sqlite3_column_text(st, 13));
}

/* Appends the rows of one pass; a second pass (mismatch_only) fetches the
 * newest MISMATCH when the newest rows held none, so a difference is never
 * hidden behind many later checks. */
static int pass(sqlite3 *db, const struct stev_scope *sc, bool mismatch_only, int limit,
                struct stev_set *out)
{
    static const char sql[] =
        "SELECT id, check_kind, verdict, reason, profile_id, path_id, channel, rendition, "
        "program_version, reference_version, observed_at_ms, recorded_at_ms, "
        "json_extract(report, '$.video.verdict'), json_extract(report, '$.audio.verdict') "
        "FROM evidence WHERE path_id = ?1 AND channel = ?2 AND rendition = ?3 AND "
        "program_version = ?4 AND profile_id = ?5 AND check_kind = 'exact-av-v1' AND "
        "observed_at_ms > ?6 AND (?7 = 0 OR verdict = 'MISMATCH') ORDER BY observed_at_ms DESC, "
        "verdict = 'MATCH' ASC, recorded_at_ms DESC, id DESC LIMIT ?8";
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    const char *p[] = {sc->path_id, sc->channel, sc->rendition, sc->program_version,
                       sc->profile_id};
    for (int i = 0; rc == SQLITE_OK && i < 5; i++)
        sqlite3_bind_text(st, i + 1, p[i], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, sc->after_ms);
    sqlite3_bind_int(st, 7, mismatch_only);
    sqlite3_bind_int(st, 8, limit);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct evr_row r;
        assert(out->rows.n < STEV_MAX_ROWS);
        read_row(st, &r, &out->tracks[out->rows.n]);
        rc = evr_append(&out->rows, &r) == 0 ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

enum evr_status stev_read(const char *db_path, const struct stev_scope *sc, struct stev_set *out,
                          char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    sqlite3 *db = NULL;
    if (sqlutil_open_readonly(db_path, 5000, &db, err, errlen) != SQLITE_OK)
        return EVR_OPEN_FAILED;
    if (sqlutil_user_version(db) != 1) {
        snprintf(err, errlen, "%s is not an evidence store v1", db_path);
        sqlite3_close(db);
        return EVR_BAD_VERSION;
    }
    /* One read transaction: both passes see the same snapshot. */
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    int rc = pass(db, sc, false, STEV_MAX_ROWS - 1, out);
    bool seen = false;
    for (size_t i = 0; i < out->rows.n; i++)
        seen = seen || out->rows.rows[i].verdict == EVR_MISMATCH;
    if (rc == 0 && !seen)
        rc = pass(db, sc, true, 1, out);
    if (rc != 0) {
        snprintf(err, errlen, "evidence query failed on %s: %s", db_path, sqlite3_errmsg(db));
        evr_free(&out->rows);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == 0 ? EVR_OK : EVR_QUERY_FAILED;
}

json_t *stev_rows_json(const struct stev_set *set)
{
    json_t *a = json_array();
    for (size_t i = 0; i < set->rows.n; i++) {
        const struct evr_row *e = &set->rows.rows[i];
        json_array_append_new(
            a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:b}", "id", e->id, "verdict",
                         evr_verdict_name(e->verdict), "video", evr_verdict_name(set->tracks[i].video),
                         "audio", evr_verdict_name(set->tracks[i].audio), "reason", e->reason,
                         "reference_version", e->reference_version, "observed_at_ms",
                         (json_int_t)e->observed_at_ms, "recorded_at_ms",
                         (json_int_t)e->recorded_at_ms, "malformed", e->malformed));
    }
    return a;
}
