/* dlv_alloc.c - an allocation as stored, and its pathway list (dlv.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dlv_internal.h"
#include "record.h"
#include "step_evidence.h"

#define DROPPED_RECHECK_MS 1000 /* evidence.db is read at most this often per (decision, path) */

/* A read-only connection of the pool (opened when none is free), NULL when
 * control.db cannot be opened. */
static sqlite3 *reader_take(struct dlv *d)
{
    sqlite3 *db = NULL;
    pthread_mutex_lock(&d->mu);
    if (d->n_readers)
        db = d->readers[--d->n_readers];
    pthread_mutex_unlock(&d->mu);
    char err[512];
    if (!db && rec_open(d->db_path, REC_READ, &db, err, sizeof err) != REC_OK) {
        fprintf(stderr, "stepctl serve: control.db cannot be read: %s\n", err);
        sqlite3_close(db);
        db = NULL;
    }
    return db;
}

static void reader_give(struct dlv *d, sqlite3 *db)
{
    pthread_mutex_lock(&d->mu);
    if (d->n_readers < sizeof d->readers / sizeof d->readers[0]) {
        d->readers[d->n_readers++] = db;
        db = NULL;
    }
    pthread_mutex_unlock(&d->mu);
    sqlite3_close(db);
}

static void col(sqlite3_stmt *st, int i, char *out, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
}

/* The row into a.  0, 1 none, -1. */
static int read_row(sqlite3 *db, const char *id, struct dlv_alloc *a)
{
    static const char sql[] =
        "SELECT a.path_id, a.fallback_path_ids, a.created_at_ms, a.expires_at_ms, "
        "a.commitment_until_ms, a.decision_id, d.decision_time_ms, d.channel, d.rendition, "
        "d.program_version, json_extract(d.situation, '$.policy.content.profile_id'), "
        "json_extract(d.situation, '$.policy.active_sessions.on_content_violation') "
        "FROM allocations a JOIN decisions d ON d.id = a.decision_id WHERE a.id = ?1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), res = rc == SQLITE_DONE ? 1 : -1;
    if (rc == SQLITE_ROW) {
        memset(a, 0, sizeof *a);
        col(st, 0, a->path_id, sizeof a->path_id);
        json_t *fb = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL), *v;
        size_t i;
        json_array_foreach(fb, i, v)
            if (json_is_string(v) && a->n_fallbacks < DLV_MAX_PATHS)
                snprintf(a->fallbacks[a->n_fallbacks++], SIT_STR, "%s", json_string_value(v));
        json_decref(fb);
        a->created_at_ms = sqlite3_column_int64(st, 2);
        a->expires_at_ms = sqlite3_column_int64(st, 3);
        a->commitment_until_ms = sqlite3_column_int64(st, 4);
        col(st, 5, a->decision_id, sizeof a->decision_id);
        a->decision_time_ms = sqlite3_column_int64(st, 6);
        col(st, 7, a->channel, sizeof a->channel);
        col(st, 8, a->rendition, sizeof a->rendition);
        col(st, 9, a->program_version, sizeof a->program_version);
        col(st, 10, a->profile_id, sizeof a->profile_id);
        /* decide checked the value (loop_policy.h): absent is steer_away */
        const unsigned char *ocv = sqlite3_column_text(st, 11);
        a->keep_on_violation = ocv && !strcmp((const char *)ocv, "keep");
        res = 0;
    }
    sqlite3_finalize(st);
    return res;
}

int dlv_alloc_load(struct dlv *d, const char *id, struct dlv_alloc *a)
{
    size_t len = 0;
    char *cached = dcache_get(d->allocs, id, &len);
    if (cached && len == sizeof *a) {
        memcpy(a, cached, sizeof *a);
        free(cached);
        return 0;
    }
    free(cached);
    sqlite3 *db = reader_take(d);
    if (!db)
        return -1;
    int rc = read_row(db, id, a);
    reader_give(d, db);
    if (rc == 0) /* rows never change: kept for the life of the process */
        dcache_put(d->allocs, id, a, sizeof *a);
    return rc;
}

int dlv_session_allocation(struct dlv *d, const char *sid, char *alloc_id, size_t cap)
{
    char *cached = dcache_get(d->sessions, sid, NULL);
    if (cached) {
        snprintf(alloc_id, cap, "%s", cached);
        free(cached);
        return 0;
    }
    sqlite3 *db = reader_take(d);
    if (!db)
        return -1;
    sqlite3_stmt *st = NULL;
    int rc = -1;
    /* a control.db of schema 2 has no sessions: no session is found */
    if (sqlite3_prepare_v2(db, "SELECT allocation_id FROM sessions WHERE id = ?1", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
        int r = sqlite3_step(st);
        rc = r == SQLITE_ROW ? 0 : r == SQLITE_DONE ? 1 : -1;
        if (rc == 0)
            snprintf(alloc_id, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    } else if (rec_schema_version(db) < 3) {
        rc = 1;
    }
    sqlite3_finalize(st);
    reader_give(d, db);
    if (rc == 0) /* a session's allocation never changes (only found ones are kept) */
        dcache_put(d->sessions, sid, alloc_id, strlen(alloc_id) + 1);
    return rc;
}

/* Was path already removed from the decision's list (control.db)?  1, 0,
 * -1 when control.db cannot be read now. */
static int removal_recorded(struct dlv *d, const struct dlv_alloc *a, const char *path)
{
    sqlite3 *db = reader_take(d);
    int found = db ? dlv_removal_find(db, a->decision_id, path) : -1;
    if (db)
        reader_give(d, db);
    return found;
}

/* Has path a valid MISMATCH of the decision's scope (for rendition, NULL:
 * the cohort's) observed after the decision's time?  When a path has one,
 * its removal is recorded in control.db (so a pruned MISMATCH row brings
 * no path back).  *unread: evidence.db could not be read now. */
static bool mismatch_seen(struct dlv *d, const struct dlv_alloc *a, const char *path,
                          const char *rendition, int64_t now_ms, bool *unread)
{
    struct stev_scope sc = {path,          a->channel,    rendition ? rendition : a->rendition,
                            a->program_version, a->profile_id, a->decision_time_ms, NULL};
    struct evidence_rows rows;
    char err[512];
    enum evidence_rc rc = stev_read(d->evidence_path, &sc, &rows, err, sizeof err);
    const struct evidence_row *mm = NULL;
    *unread = rc != EVIDENCE_OK;
    if (rc != EVIDENCE_OK) /* unreadable: the caller lists no fallback (fail closed) */
        fprintf(stderr, "stepctl serve: evidence for path %s not read: %s\n", path, err);
    for (size_t i = 0; rc == EVIDENCE_OK && i < rows.n && !mm; i++)
        if (!rows.rows[i].malformed && rows.rows[i].verdict == EVIDENCE_VERDICT_MISMATCH)
            mm = &rows.rows[i];
    if (mm && !rendition)
        dlv_removal_record(d->db_path, a->decision_id, path, mm->id, mm->observed_at_ms, now_ms);
    evidence_rows_free(&rows); /* stev_read zeroed it first */
    return mm != NULL;
}

/* Is path (or one rendition of it) out of the decision's lists: a removal
 * recorded in control.db (paths), or a MISMATCH in evidence.db?  Once
 * DLV_GONE, gone for good.  DLV_UNSHOWN: the path's evidence cannot be read
 * now (asked again after DROPPED_RECHECK_MS); renditions are never
 * unshown (they stay when the store cannot be read). */
enum drop_state { DLV_LISTED = 0, DLV_GONE = 1, DLV_UNSHOWN = 2 };
static enum drop_state drop_state(struct dlv *d, const struct dlv_alloc *a, const char *path,
                                  const char *rendition, int64_t now_ms)
{
    char key[3 * SIT_STR + 4];
    snprintf(key, sizeof key, "%s/%s%s%s", a->decision_id, path, rendition ? "/r:" : "",
             rendition ? rendition : "");
    char *c = dcache_get(d->dropped, key, NULL);
    int64_t checked = 0;
    int was = DLV_LISTED;
    if (c && sscanf(c, "%" SCNd64 " %d", &checked, &was) == 2 &&
        (was == DLV_GONE || now_ms - checked < DROPPED_RECHECK_MS)) {
        free(c);
        return (enum drop_state)was;
    }
    free(c);
    int recorded = rendition ? 0 : removal_recorded(d, a, path);
    bool unread = recorded < 0;
    bool gone = recorded == 1 ||
                (!unread && d->evidence_path && mismatch_seen(d, a, path, rendition, now_ms, &unread));
    enum drop_state now = gone ? DLV_GONE : unread && !rendition ? DLV_UNSHOWN : DLV_LISTED;
    char val[48];
    int n = snprintf(val, sizeof val, "%" PRId64 " %d", now_ms, (int)now);
    dcache_put(d->dropped, key, val, (size_t)n);
    return now;
}

/* A fallback is out when gone, and for this look when it cannot be shown
 * free of MISMATCH (fail closed: it comes back when the store can be read
 * again and shows none). */
static bool dropped(struct dlv *d, const struct dlv_alloc *a, const char *path,
                    const char *rendition, int64_t now_ms)
{
    return drop_state(d, a, path, rendition, now_ms) != DLV_LISTED;
}

bool dlv_rendition_dropped(struct dlv *d, const struct dlv_alloc *a, const char *path,
                           const char *rendition, int64_t now_ms)
{
    return dropped(d, a, path, rendition, now_ms);
}

void dlv_pathways(struct dlv *d, const struct dlv_alloc *a, int64_t now_ms,
                  struct dlv_pathways *out)
{
    out->n = 0;
    /* The allocated path leaves only for a MISMATCH, and only under
     * steer_away (issue 19: existing sessions kept the violating path first
     * and its freshly signed playlists until their commitment ended); an
     * unreadable store never withdraws what the viewer is playing. */
    if (a->keep_on_violation || drop_state(d, a, a->path_id, NULL, now_ms) != DLV_GONE)
        out->id[out->n++] = a->path_id;
    for (size_t i = 0; i < a->n_fallbacks; i++)
        if (dlv_paths_find(d->paths, a->fallbacks[i]) && !dropped(d, a, a->fallbacks[i], NULL, now_ms))
            out->id[out->n++] = a->fallbacks[i];
}
