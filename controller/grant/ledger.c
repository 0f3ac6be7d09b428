/* ledger.c - the commitments ledger (see ledger.h). */
#include "ledger.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "record.h"

const char *ldg_scope(enum sit_resource r, const char *path_id)
{
    return r == SIT_RES_CDN ? path_id : "";
}

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > LDG_MAX_MICRO - b ? LDG_MAX_MICRO : a + b;
}

int ldg_committed(sqlite3 *db, enum sit_resource r, const char *scope, enum sit_metric m,
                  int64_t from, int64_t to, int64_t *sum)
{
    /* Rows are summed here, saturating, rather than by SUM() (which fails
     * on int64 overflow): a ledger above every limit is simply full. */
    static const char sql[] = "SELECT amount_micro FROM reservations WHERE resource = ?1 AND "
                              "scope = ?2 AND metric = ?3 AND end_ms > ?4 AND start_ms < ?5 "
                              "AND state IN ('pending','posted')";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, sit_resource_name(r), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, scope, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, sit_metric_name(m), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, from);
    sqlite3_bind_int64(st, 5, to);
    int64_t s = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t a = sqlite3_column_int64(st, 0);
        s = sat_add(s, a < 0 ? 0 : a);
    }
    sqlite3_finalize(st);
    *sum = s;
    return rc == SQLITE_DONE ? 0 : -1;
}

static int push_fill(struct ldg_fills *f, const struct ldg_fill *x)
{
    struct ldg_fill *v = realloc(f->v, (f->n + 1) * sizeof *v);
    if (!v)
        return -1;
    f->v = v;
    f->v[f->n++] = *x;
    return 0;
}

int ldg_fill(sqlite3 *db, struct sit_situation *s, struct ldg_fills *out)
{
    memset(out, 0, sizeof *out);
    for (size_t c = 0; c < s->n_candidates; c++) {
        struct sit_candidate *cand = &s->candidates[c];
        for (size_t w = 0; w < cand->resources.n_windows; w++) {
            struct sit_window *win = &cand->resources.windows[w];
            for (size_t i = 0; i < win->n_items; i++) {
                struct sit_item *it = &win->items[i];
                if (it->has_commitments)
                    continue;
                struct ldg_fill f = {.window = w, .item = i, .resource = it->resource,
                                     .metric = it->metric, .start_ms = win->start_ms,
                                     .end_ms = win->end_ms};
                snprintf(f.path_id, sizeof f.path_id, "%s", cand->path_id);
                if (ldg_committed(db, it->resource, ldg_scope(it->resource, cand->path_id),
                                  it->metric, win->start_ms, win->end_ms, &f.micro) < 0 ||
                    push_fill(out, &f) < 0) {
                    ldg_fills_free(out);
                    return -1;
                }
                it->commitments_upper = f.micro;
                it->has_commitments = it->commitments_from_ledger = true;
            }
        }
    }
    return 0;
}

static struct sit_item *fill_target(struct sit_situation *s, const struct ldg_fill *f)
{
    for (size_t c = 0; c < s->n_candidates; c++) {
        struct sit_candidate *cand = &s->candidates[c];
        if (strcmp(cand->path_id, f->path_id) || f->window >= cand->resources.n_windows)
            continue;
        struct sit_window *w = &cand->resources.windows[f->window];
        if (f->item >= w->n_items || w->start_ms != f->start_ms || w->end_ms != f->end_ms)
            return NULL;
        struct sit_item *it = &w->items[f->item];
        return it->resource == f->resource && it->metric == f->metric && !it->has_commitments
                   ? it
                   : NULL;
    }
    return NULL;
}

int ldg_apply(struct sit_situation *s, const struct ldg_fills *f, char *err, size_t errlen)
{
    for (size_t i = 0; i < f->n; i++) {
        struct sit_item *it = fill_target(s, &f->v[i]);
        if (!it) {
            snprintf(err, errlen,
                     "recorded ledger commitments for %s window %zu item %zu do not match the "
                     "recorded situation",
                     f->v[i].path_id, f->v[i].window, f->v[i].item);
            return -1;
        }
        it->commitments_upper = f->v[i].micro;
        it->has_commitments = it->commitments_from_ledger = true;
    }
    return 0;
}

int ldg_store_fills(sqlite3 *db, const char *decision_id, const struct ldg_fills *f)
{
    static const char sql[] = "INSERT INTO decision_commitments VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < f->n && rc == 0; i++) {
        const struct ldg_fill *x = &f->v[i];
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, decision_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, x->path_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)x->window);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)x->item);
        sqlite3_bind_text(st, 5, sit_resource_name(x->resource), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, ldg_scope(x->resource, x->path_id), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 7, sit_metric_name(x->metric), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 8, x->start_ms);
        sqlite3_bind_int64(st, 9, x->end_ms);
        sqlite3_bind_int64(st, 10, x->micro);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    }
    sqlite3_finalize(st);
    return rc;
}

static int parse_name(const char *s, const char *a, const char *b, const char *c)
{
    return !s ? -1 : !strcmp(s, a) ? 0 : !strcmp(s, b) ? 1 : c && !strcmp(s, c) ? 2 : -1;
}

int ldg_load_fills(sqlite3 *db, const char *decision_id, struct ldg_fills *out)
{
    static const char sql[] =
        "SELECT path_id, window_index, item_index, resource, metric, start_ms, end_ms, "
        "commitments_micro FROM decision_commitments WHERE decision_id = ?1 "
        "ORDER BY path_id, window_index, item_index";
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, decision_id, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct ldg_fill f;
        memset(&f, 0, sizeof f);
        const char *path = (const char *)sqlite3_column_text(st, 0);
        int r = parse_name((const char *)sqlite3_column_text(st, 3), "origin", "shield", "cdn");
        int m = parse_name((const char *)sqlite3_column_text(st, 4), "rps", "bytes_per_s", NULL);
        if (!path || strlen(path) >= sizeof f.path_id || r < 0 || m < 0) {
            rc = SQLITE_CORRUPT;
            break;
        }
        strcpy(f.path_id, path);
        f.window = (size_t)sqlite3_column_int64(st, 1);
        f.item = (size_t)sqlite3_column_int64(st, 2);
        f.resource = (enum sit_resource)r;
        f.metric = (enum sit_metric)m;
        f.start_ms = sqlite3_column_int64(st, 5);
        f.end_ms = sqlite3_column_int64(st, 6);
        f.micro = sqlite3_column_int64(st, 7);
        if (push_fill(out, &f) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        ldg_fills_free(out);
        return -1;
    }
    return 0;
}

void ldg_fills_free(struct ldg_fills *f)
{
    free(f->v);
    memset(f, 0, sizeof *f);
}

static bool overlaps(const struct sit_window *w, int64_t from, int64_t to)
{
    return w->start_ms < to && w->end_ms > from;
}

/* Checks one item of one window against the ledger as it is now. */
static int check_item(sqlite3 *db, const struct ldg_request *rq, const struct sit_window *w,
                      const struct sit_item *it, char *why, size_t whylen)
{
    int64_t ledger;
    if (ldg_committed(db, it->resource, ldg_scope(it->resource, rq->c->path_id), it->metric,
                      w->start_ms, w->end_ms, &ledger) < 0)
        return -1;
    /* A value the situation gave may know of commitments outside the ledger;
     * the larger of the two counts, never their sum (no double counting). */
    int64_t used = it->has_commitments && !it->commitments_from_ledger &&
                           it->commitments_upper > ledger
                       ? it->commitments_upper
                       : ledger;
    int64_t total = it->background_upper + used + it->step_upper + it->margin;
    if (total <= it->limit)
        return 0;
    char b[32], u[32], s[32], m[32], l[32];
    num_format(it->background_upper, b, sizeof b);
    num_format(used, u, sizeof u);
    num_format(it->step_upper, s, sizeof s);
    num_format(it->margin, m, sizeof m);
    num_format(it->limit, l, sizeof l);
    snprintf(why, whylen,
             "reservation_does_not_fit: window [%lld, %lld) %s/%s: background %s + commitments %s "
             "+ step %s + margin %s > limit %s",
             (long long)w->start_ms, (long long)w->end_ms, sit_resource_name(it->resource),
             sit_metric_name(it->metric), b, u, s, m, l);
    return 1;
}

static int insert_reservation(sqlite3 *db, const struct ldg_request *rq, enum sit_resource r,
                              enum sit_metric m, int64_t amount)
{
    static const char sql[] =
        "INSERT INTO reservations (grant_id, resource, scope, metric, start_ms, end_ms, "
        "amount_micro, state, created_at_ms) VALUES (?1,?2,?3,?4,?5,?6,?7,'pending',?8)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, rq->grant_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sit_resource_name(r), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, ldg_scope(r, rq->c->path_id), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, sit_metric_name(m), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, rq->start_ms);
    sqlite3_bind_int64(st, 6, rq->end_ms);
    sqlite3_bind_int64(st, 7, amount);
    sqlite3_bind_int64(st, 8, rq->now_ms);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

int ldg_reserve(sqlite3 *db, const struct ldg_request *rq, char *why, size_t whylen)
{
    assert(rq->end_ms > rq->start_ms && sqlite3_get_autocommit(db) == 0);
    const struct sit_resources *res = &rq->c->resources;
    int64_t amount[SIT_RES_N][SIT_MET_N];
    bool used[SIT_RES_N][SIT_MET_N];
    memset(used, 0, sizeof used);
    for (size_t w = 0; w < res->n_windows; w++) {
        const struct sit_window *win = &res->windows[w];
        if (!overlaps(win, rq->horizon_from, rq->horizon_to))
            continue;
        for (size_t i = 0; i < win->n_items; i++) {
            const struct sit_item *it = &win->items[i];
            int r = check_item(db, rq, win, it, why, whylen);
            if (r != 0)
                return r;
            int64_t *a = &amount[it->resource][it->metric];
            if (!used[it->resource][it->metric] || it->step_upper > *a)
                *a = it->step_upper;
            used[it->resource][it->metric] = true;
        }
    }
    for (int r = 0; r < SIT_RES_N; r++)
        for (int m = 0; m < SIT_MET_N; m++)
            if (used[r][m] && insert_reservation(db, rq, (enum sit_resource)r,
                                                 (enum sit_metric)m, amount[r][m]) < 0)
                return -1;
    return 0;
}

int ldg_resolve(sqlite3 *db, const char *grant_id, bool post, int64_t now_ms,
                const char *reason, int *changed)
{
    static const char sql[] = "UPDATE reservations SET state = ?1, resolved_at_ms = ?2, "
                              "resolve_reason = ?3 WHERE grant_id = ?4 AND state = 'pending'";
    sqlite3_stmt *st = NULL;
    *changed = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, post ? "posted" : "voided", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, now_ms);
    sqlite3_bind_text(st, 3, reason, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, grant_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    if (rc == 0)
        *changed = sqlite3_changes(db);
    return rc;
}

json_t *ldg_grant_json(sqlite3 *db, const char *grant_id)
{
    return rec_rows_json(db,
                         "SELECT resource, scope, metric, start_ms, end_ms, amount_micro, "
                         "state, created_at_ms, resolved_at_ms, resolve_reason FROM "
                         "reservations WHERE grant_id = ?1 ORDER BY id",
                         grant_id);
}
