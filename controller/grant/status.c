/* status.c - the operator's view of the loop (see status.h). */
#include "status.h"

#include <stdio.h>
#include <string.h>

#include "evidence.h"
#include "grant.h"
#include "next.h"
#include "qoe_situation.h"

/* The newest Exact-AV row of each candidate of the decision. */
static json_t *evidence_of(const char *evidence_path, const json_t *result, char *why,
                           size_t whylen)
{
    const json_t *act = json_object_get(result, "action");
    const json_t *cohort = json_object_get(act, "cohort");
    struct evidence_scope sc[SIT_MAX_CANDIDATES];
    size_t n = 0, i;
    const json_t *c;
    json_array_foreach(json_object_get(result, "candidates"), i, c) if (n < SIT_MAX_CANDIDATES)
        sc[n++] = (struct evidence_scope){
            json_string_value(json_object_get(c, "path_id")),
            json_string_value(json_object_get(cohort, "channel")),
            json_string_value(json_object_get(cohort, "rendition")),
            json_string_value(json_object_get(act, "program_version"))};
    struct evidence_db *db = NULL;
    struct evidence_rows rows = {0};
    char err[700] = "";
    enum evidence_rc rc = evidence_open(evidence_path, EVIDENCE_OPEN_RO, &db, err, sizeof err);
    if (rc == EVIDENCE_OK)
        rc = evidence_newest(db, sc, n, &rows, err, sizeof err);
    evidence_close(db);
    if (rc != EVIDENCE_OK) /* "evidence.db": the caller's exit 66 */
        snprintf(why, whylen, "evidence.db --evidence %s: %s", evidence_path, err);
    json_t *a = rc == EVIDENCE_OK ? json_array() : NULL;
    for (size_t k = 0; a && k < rows.n; k++) {
        const struct evidence_row *r = &rows.rows[k];
        json_array_append_new(
            a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:b}", "path_id", r->path_id, "id", r->id,
                         "verdict", evidence_verdict_name(r->verdict), "rendition", r->rendition,
                         "program_version", r->program_version, "observed_at_ms",
                         (json_int_t)r->observed_at_ms, "malformed", r->malformed));
    }
    evidence_rows_free(&rows);
    return a;
}

/* What next of this grant did, or would do now (the dry run). */
static json_t *next_of(sqlite3 *db, const struct grt_grant *g, const char *evidence_path,
                       int64_t now_ms)
{
    json_t *done = NULL;
    if (nxt_load(db, g->id, &done) == 0) {
        json_t *r = json_pack("{s:s,s:O,s:O,s:O}", "review", "recorded", "branch",
                              json_object_get(done, "branch"), "status",
                              json_object_get(done, "status"), "reason",
                              json_object_get(done, "reason"));
        json_decref(done);
        return r;
    }
    json_decref(done);
    if (!evidence_path || !strcmp(g->status, "revoked"))
        return json_null();
    struct nxt_request rq = {g->id, evidence_path, "status", NULL, 0, true};
    json_t *ans = NULL;
    char why[1024];
    enum nxt_outcome o = nxt_run(db, &rq, now_ms, &ans, why, sizeof why);
    json_t *r = o == NXT_POSITIVE || o == NXT_NEGATIVE
                    ? json_pack("{s:s,s:O,s:O,s:O}", "review", "dry_run", "branch",
                                json_object_get(ans, "branch"), "status",
                                json_object_get(ans, "status"), "reason",
                                json_object_get(ans, "reason"))
                    : json_pack("{s:s,s:s}", "review", "not_possible", "reason", why);
    json_decref(ans);
    return r;
}

static json_t *grant_of(sqlite3 *db, const json_t *cohort, const char *evidence_path,
                        int64_t now_ms, int *err)
{
    struct sit_cohort c;
    struct grt_grant g;
    qoe_cohort_of(cohort, &c);
    int rc = grt_load_cohort(db, NULL, &c, &g);
    if (rc != 0) {
        *err = rc < 0;
        return json_null();
    }
    return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:o}", "id", g.id, "decision_id", g.decision_id,
                     "state", grt_state_name(grt_state(&g, now_ms)), "allocated",
                     (json_int_t)g.allocated, "max_allocations", (json_int_t)g.max_allocations,
                     "remaining", (json_int_t)(g.max_allocations - g.allocated), "next",
                     next_of(db, &g, evidence_path, now_ms));
}

/* One cohort's entry from its newest decision (d: id, outcome,
 * recorded_at_ms, result). */
static json_t *cohort_entry(sqlite3 *db, const json_t *d, const char *evidence_path,
                            int64_t now_ms, char *why, size_t whylen)
{
    const json_t *result = json_object_get(d, "result");
    const json_t *cohort = json_object_get(json_object_get(result, "action"), "cohort");
    int err = 0;
    json_t *e = json_is_object(cohort)
                    ? json_pack("{s:O,s:{s:O,s:O,s:O,s:O},s:o}", "cohort", cohort, "decision",
                                "id", json_object_get(d, "id"), "outcome",
                                json_object_get(d, "outcome"), "chosen",
                                json_object_get(result, "chosen"), "recorded_at_ms",
                                json_object_get(d, "recorded_at_ms"), "grant",
                                grant_of(db, cohort, evidence_path, now_ms, &err))
                    : NULL;
    if (e && evidence_path) {
        json_t *ev = evidence_of(evidence_path, result, why, whylen);
        if (!ev)
            err = 1;
        json_object_set_new(e, "evidence", ev ? ev : json_null());
    }
    if (err || !e) {
        if (!why[0])
            snprintf(why, whylen, "control.db: %s", sqlite3_errmsg(db));
        json_decref(e);
        return NULL;
    }
    return e;
}

/* The newest decision of each cohort, newest first, read (and the
 * statement finished) before any review runs its own transaction. */
static json_t *newest_per_cohort(sqlite3 *db)
{
    static const char sql[] =
        "SELECT id, outcome, recorded_at_ms, result, json_extract(result, '$.action.cohort') "
        "FROM decisions ORDER BY recorded_at_ms DESC, rowid DESC LIMIT ?1";
    sqlite3_stmt *st = NULL;
    json_t *seen = json_object(), *list = json_array();
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && seen && list ? 0 : -1;
    if (rc == 0)
        sqlite3_bind_int(st, 1, STAT_MAX_DECISIONS);
    int step;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 4);
        if (!key || json_object_get(seen, key))
            continue; /* an older decision of a cohort already listed */
        json_object_set_new(seen, key, json_true());
        json_t *d = json_pack("{s:s,s:s,s:I,s:o}", "id", sqlite3_column_text(st, 0), "outcome",
                              sqlite3_column_text(st, 1), "recorded_at_ms",
                              (json_int_t)sqlite3_column_int64(st, 2), "result",
                              json_loads((const char *)sqlite3_column_text(st, 3), 0, NULL));
        rc = d && json_array_append_new(list, d) == 0 ? 0 : -1;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(st);
    json_decref(seen);
    if (rc != 0) {
        json_decref(list);
        return NULL;
    }
    return list;
}

int stat_collect(sqlite3 *db, const char *evidence_path, int64_t now_ms, json_t **out,
                 char *why, size_t whylen)
{
    why[0] = '\0';
    *out = NULL;
    json_t *decisions = newest_per_cohort(db), *list = json_array(), *d;
    int rc = decisions && list ? 0 : -1;
    size_t i;
    json_array_foreach(decisions, i, d)
    {
        json_t *e = rc == 0 ? cohort_entry(db, d, evidence_path, now_ms, why, whylen) : NULL;
        rc = e && json_array_append_new(list, e) == 0 ? 0 : -1;
    }
    if (rc != 0 && !why[0])
        snprintf(why, whylen, "control.db: %s", sqlite3_errmsg(db));
    json_decref(decisions);
    if (rc == 0)
        *out = json_pack("{s:I,s:O}", "at_ms", (json_int_t)now_ms, "cohorts", list);
    json_decref(list);
    return rc == 0 && *out ? 0 : -1;
}
