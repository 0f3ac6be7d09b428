/* qoe_ingest.c - storing CMCD reports (see qoe_ingest.h). */
#include "qoe_ingest.h"

#include <string.h>

#include "alloc_session.h"
#include "tbucket.h"

#define EXIT_EVENT "com.exactav-exit-before-start"

struct qing_session {
    int64_t ends_at_ms, reports, last_sn;
    bool ended, has_last_sn;
    struct tb_bucket bucket;
};

/* 0 found, 1 none, -1 error. */
static int load(sqlite3 *db, struct stmtcache *cache, const char *sid, struct qing_session *s)
{
    static const char sql[] = "SELECT ends_at_ms, ended_at_ms IS NOT NULL, rate_tokens_nano, "
                              "rate_at_ms, reports, last_sn FROM sessions WHERE id = ?1";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), r = rc == SQLITE_DONE ? 1 : rc == SQLITE_ROW ? 0 : -1;
    if (r == 0) {
        s->ends_at_ms = sqlite3_column_int64(st, 0);
        s->ended = sqlite3_column_int(st, 1) != 0;
        s->bucket.tokens_nano = sqlite3_column_int64(st, 2);
        s->bucket.at_ms = sqlite3_column_int64(st, 3);
        s->reports = sqlite3_column_int64(st, 4);
        s->has_last_sn = sqlite3_column_type(st, 5) != SQLITE_NULL;
        s->last_sn = sqlite3_column_int64(st, 5);
    }
    stmtcache_done(cache, st);
    return r;
}

/* Takes n records' tokens: true, or false with the wait in seconds. */
static bool take(struct tb_bucket *b, int64_t n, int64_t now_ms, int64_t *retry_s)
{
    tb_refill(b, ASES_RATE_MICRO, ASES_BURST, now_ms);
    int64_t need = n * TB_NANO;
    if (b->tokens_nano >= need) {
        b->tokens_nano -= need;
        return true;
    }
    /* A report larger than the burst can never pass: wait a full bucket. */
    int64_t deficit = (n > ASES_BURST ? ASES_BURST * TB_NANO : need) - b->tokens_nano;
    int64_t wait_ms = (deficit + ASES_RATE_MICRO - 1) / ASES_RATE_MICRO;
    *retry_s = wait_ms <= 1000 ? 1 : (wait_ms + 999) / 1000;
    return false;
}

static void bind_opt_int(sqlite3_stmt *st, int i, bool has, int64_t v)
{
    if (has)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_opt_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v[0])
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* 1 stored, 0 a replay (its sn is stored already), -1 error. */
static int insert(sqlite3 *db, struct stmtcache *cache, const char *sid, int64_t seq,
                  const struct cmcd_record *r, bool query, int64_t now_ms, const char *served_by)
{
    static const char sql[] = "INSERT OR IGNORE INTO session_reports VALUES "
                              "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_int64(st, 3, now_ms);
    sqlite3_bind_text(st, 4, query ? "query" : "body", -1, SQLITE_STATIC);
    bind_opt_int(st, 5, r->has_sn, r->sn);
    bind_opt_int(st, 6, r->has_ts, r->ts);
    bind_opt_text(st, 7, r->e);
    bind_opt_text(st, 8, r->sta);
    sqlite3_bind_int64(st, 9, r->invalid);
    sqlite3_bind_text(st, 10, r->text, (int)r->text_len, SQLITE_STATIC);
    if (served_by)
        sqlite3_bind_text(st, 11, served_by, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 11);
    int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(db) : -1;
    stmtcache_done(cache, st);
    return rc;
}

/* What ends a session: the player ended or quit, or the page went away. */
static const char *end_reason(const struct cmcd_record *r)
{
    if (!strcmp(r->sta, "e"))
        return "sta=e";
    if (!strcmp(r->sta, "q"))
        return "sta=q";
    return !strcmp(r->cen, EXIT_EVENT) ? "exit_before_start" : NULL;
}

static int update(sqlite3 *db, struct stmtcache *cache, const char *sid,
                  const struct qing_session *s, const struct cmcd_batch *b, unsigned refused,
                  const char *ended, int64_t now_ms)
{
    static const char sql[] =
        "UPDATE sessions SET reports = ?2, last_sn = ?3, invalid_values = invalid_values + ?4, "
        "refused_records = refused_records + ?5, rate_tokens_nano = ?6, rate_at_ms = ?7, "
        "ended_at_ms = CASE WHEN ?8 IS NULL THEN ended_at_ms ELSE ?9 END, "
        "end_reason = COALESCE(?8, end_reason) WHERE id = ?1";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, s->reports);
    bind_opt_int(st, 3, s->has_last_sn, s->last_sn);
    sqlite3_bind_int64(st, 4, b->invalid);
    sqlite3_bind_int64(st, 5, (int64_t)b->refused + refused);
    sqlite3_bind_int64(st, 6, s->bucket.tokens_nano);
    sqlite3_bind_int64(st, 7, s->bucket.at_ms);
    if (ended)
        sqlite3_bind_text(st, 8, ended, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 8);
    sqlite3_bind_int64(st, 9, now_ms);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    stmtcache_done(cache, st);
    return rc;
}

/* Stores the records in order until one ends the session. */
struct attribution {
    qing_served_by_fn fn;
    const void *ctx;
};

static const char *served_by(const struct attribution *at, const struct cmcd_record *r)
{
    return at->fn && !strcmp(r->e, "rr") && r->url[0] ? at->fn(at->ctx, r->url) : NULL;
}

static int store_records(sqlite3 *db, struct stmtcache *cache, const char *sid,
                         struct qing_session *s, const struct cmcd_batch *b, bool query,
                         int64_t now_ms, const struct attribution *at, struct qing_result *out,
                         const char **ended)
{
    for (size_t i = 0; i < b->n; i++) {
        const struct cmcd_record *r = &b->r[i];
        if (*ended || (r->sid[0] && strcmp(r->sid, sid))) {
            out->refused++;
            continue;
        }
        int rc = insert(db, cache, sid, s->reports + 1, r, query, now_ms, served_by(at, r));
        if (rc < 0)
            return -1;
        if (rc == 0) {
            out->duplicates++;
            continue;
        }
        s->reports++;
        out->stored++;
        if (r->has_sn && (!s->has_last_sn || r->sn > s->last_sn))
            s->last_sn = r->sn;
        s->has_last_sn = s->has_last_sn || r->has_sn;
        *ended = end_reason(r);
    }
    return 0;
}

int qing_store(sqlite3 *db, struct stmtcache *cache, const char *sid, const struct cmcd_batch *b,
               bool query, int64_t now_ms, qing_served_by_fn fn, const void *ctx,
               struct qing_result *out)
{
    const struct attribution at = {fn, ctx};
    memset(out, 0, sizeof *out);
    struct qing_session s;
    int r = load(db, cache, sid, &s);
    if (r != 0) {
        out->status = QING_GONE;
        out->unknown = true;
        return r < 0 ? -1 : 0;
    }
    if (s.ended || now_ms >= s.ends_at_ms) {
        out->status = QING_GONE;
        return 0;
    }
    if (!take(&s.bucket, b->n ? (int64_t)b->n : 1, now_ms, &out->retry_after_s)) {
        out->status = QING_RATE;
        return 0;
    }
    const char *ended = NULL;
    if (store_records(db, cache, sid, &s, b, query, now_ms, &at, out, &ended) != 0)
        return -1;
    return update(db, cache, sid, &s, b, out->refused, ended, now_ms);
}

int qing_master_fetched(sqlite3 *db, struct stmtcache *cache, const char *session_id,
                        int64_t now_ms)
{
    static const char sql[] = "UPDATE sessions SET master_fetched_at_ms = ?2 WHERE "
                              "id = ?1 AND master_fetched_at_ms IS NULL";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, session_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, now_ms);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    stmtcache_done(cache, st);
    return rc;
}
