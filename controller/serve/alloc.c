/* alloc.c - one allocation request (see alloc.h). */
#include "alloc.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alloc_session.h"
#include "grant.h"
#include "tbucket.h"

const char *alc_result_name(enum alc_result r)
{
    static const char *const names[] = {"failed",  "created", "replayed",
                                        "conflict", "refused", "rate_limited"};
    return names[r];
}

void alc_reply_free(struct alc_reply *r)
{
    free(r->body);
    r->body = NULL;
}

/* Sets the reply from a JSON object (stolen). */
static int reply(struct alc_reply *out, enum alc_result res, int status, json_t *o)
{
    out->result = res;
    out->http_status = status;
    out->body = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return out->body ? 0 : -1;
}

static int refused(struct alc_reply *out, const char *code, const char *detail, json_t *extra)
{
    json_t *o = json_pack("{s:s,s:s}", "error", code, "detail", detail);
    if (o && extra)
        json_object_update(o, extra);
    json_decref(extra);
    snprintf(out->error, sizeof out->error, "%s", code);
    return reply(out, ALC_REFUSED, 403, o);
}

/* Is the stored row's subject (NULL: none) the caller's? */
static bool same_subject(const unsigned char *stored, const struct alc_client *client)
{
    return client ? stored && !strcmp((const char *)stored, client->subject) : !stored;
}

/* 1. A known allocation id: 1 answered, 0 unknown, -1 error.  The id of
 * another subject says only that it is taken: no digest compared, nothing
 * of its answer shown. */
static int replay(sqlite3 *db, struct stmtcache *cache, const struct areq *req,
                  const char *digest, const struct alc_client *client, struct alc_reply *out)
{
    static const char sql[] =
        "SELECT request_sha256, response, subject FROM allocations WHERE id = ?1";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, req->allocation_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), res = rc == SQLITE_DONE ? 0 : -1;
    if (rc == SQLITE_ROW && !same_subject(sqlite3_column_text(st, 2), client)) {
        json_t *o = json_pack("{s:s,s:s}", "error", "allocation_id_taken", "detail",
                              "this allocation_id belongs to another client; choose another");
        snprintf(out->error, sizeof out->error, "allocation_id_taken");
        res = reply(out, ALC_CONFLICT, 422, o) == 0 ? 1 : -1;
    } else if (rc == SQLITE_ROW) {
        const char *stored = (const char *)sqlite3_column_text(st, 0);
        if (stored && !strcmp(stored, digest)) {
            out->result = ALC_REPLAYED;
            out->http_status = 200;
            out->body = strdup((const char *)sqlite3_column_text(st, 1));
            res = out->body ? 1 : -1;
        } else {
            json_t *o = json_pack("{s:s,s:s,s:s}", "error", "idempotency_key_reused", "detail",
                                  "this allocation_id was used for another request",
                                  "allocation_id", req->allocation_id);
            res = reply(out, ALC_CONFLICT, 422, o) == 0 ? 1 : -1;
        }
    }
    stmtcache_done(cache, st);
    return res;
}

/* 1b. The subject's allocations still within their commitment: 1 at its
 * cap (429, Retry-After when the oldest of them ends), 0 below, -1 error. */
static int subject_cap(sqlite3 *db, struct stmtcache *cache, const struct alc_client *client,
                       int64_t now, struct alc_reply *out)
{
    static const char sql[] = "SELECT count(*), min(commitment_until_ms) FROM allocations "
                              "WHERE subject = ?1 AND commitment_until_ms > ?2";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, client->subject, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, now);
    int res = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (res == 0 && sqlite3_column_int64(st, 0) >= client->cap) {
        int64_t wait_ms = sqlite3_column_int64(st, 1) - now;
        out->retry_after_s = wait_ms <= 1000 ? 1 : (wait_ms + 999) / 1000;
        json_t *o = json_pack("{s:s,s:s,s:I,s:I}", "error", "subject_quota_exceeded", "detail",
                              "this client holds as many allocations as it may; retry later",
                              "per_subject_cap", (json_int_t)client->cap, "retry_after_s",
                              (json_int_t)out->retry_after_s);
        snprintf(out->error, sizeof out->error, "subject_quota_exceeded");
        res = reply(out, ALC_RATE_LIMITED, 429, o) == 0 ? 1 : -1;
    }
    stmtcache_done(cache, st);
    return res;
}

/* The refusal answered as policy.refusal declares it (issue 17): its
 * http_status (column col) instead of 403 and its retry_after_s (col + 1)
 * as Retry-After, both also in the body's refusal object. */
static void declared_answer(sqlite3_stmt *st, int col, json_t *refusal, struct alc_reply *out)
{
    if (sqlite3_column_type(st, col) == SQLITE_INTEGER) {
        out->http_status = sqlite3_column_int(st, col);
        json_object_set_new(refusal, "http_status", json_integer(out->http_status));
    }
    if (sqlite3_column_type(st, col + 1) == SQLITE_INTEGER) {
        out->retry_after_s = sqlite3_column_int64(st, col + 1);
        json_object_set_new(refusal, "retry_after_s", json_integer(out->retry_after_s));
    }
}

/* The pre-declared refusal of the cohort's newest decision when that
 * decision found no eligible path and is newer than since_ms.  1 answered,
 * 0 none, -1 error. */
static int no_path_refusal(sqlite3 *db, const struct sit_cohort *c, int64_t since_ms,
                           struct alc_reply *out)
{
    static const char sql[] =
        "SELECT id, outcome, recorded_at_ms, json_extract(result, '$.refusal.id'), "
        "json_extract(result, '$.refusal.description'), json_extract(result, "
        "'$.refusal.http_status'), json_extract(result, '$.refusal.retry_after_s') "
        "FROM decisions WHERE channel = ?1 AND "
        "rendition = ?2 AND json_extract(result, '$.action.cohort.region') = ?3 AND "
        "json_extract(result, '$.action.cohort.isp') = ?4 AND "
        "json_extract(result, '$.action.cohort.client') = ?5 AND "
        "json_extract(result, '$.action.cohort.build') = ?6 "
        "ORDER BY recorded_at_ms DESC, rowid DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    const char *p[] = {c->channel, c->region, c->isp, c->client, c->build, c->rendition};
    const int order[] = {0, 5, 1, 2, 3, 4};
    for (int i = 0; i < 6; i++)
        sqlite3_bind_text(st, i + 1, p[order[i]], -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), res = rc == SQLITE_DONE ? 0 : rc == SQLITE_ROW ? 0 : -1;
    if (rc == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 1), "no_eligible_path") &&
        sqlite3_column_int64(st, 2) > since_ms) {
        json_t *extra = json_pack("{s:s,s:{s:s?,s:s?}}", "decision_id", sqlite3_column_text(st, 0),
                                  "refusal", "id", sqlite3_column_text(st, 3), "description",
                                  sqlite3_column_text(st, 4));
        struct alc_reply declared = {.http_status = 403};
        declared_answer(st, 5, json_object_get(extra, "refusal"), &declared);
        res = refused(out, "no_eligible_path",
                      "no path is eligible for this cohort: the policy's pre-declared refusal",
                      extra) == 0
                  ? 1
                  : -1;
        out->http_status = declared.http_status;
        out->retry_after_s = declared.retry_after_s;
    }
    sqlite3_finalize(st);
    return res;
}

/* 2. A grant that cannot allocate now: the 403 that says why. */
static int grant_refusal(sqlite3 *db, struct grt_grant *g, enum grt_state s, int64_t now,
                         struct alc_reply *out)
{
    if (grt_settle(db, g, now, "stepctl serve") < 0)
        return -1;
    json_t *extra = json_pack("{s:s}", "grant_id", g->id);
    switch (s) {
    case GRT_REVOKED:
    case GRT_CLOSED:
        json_object_set_new(extra, "reason", json_string(g->close_reason));
        return refused(out, "grant_revoked",
                       s == GRT_REVOKED ? "the grant was revoked" : "issuance was closed by next",
                       extra);
    case GRT_EXPIRED:
        json_object_set_new(extra, "valid_until_ms", json_integer(g->valid_until_ms));
        return refused(out, "grant_expired", "the grant's validity has ended", extra);
    case GRT_EXHAUSTED:
        json_object_set_new(extra, "max_allocations", json_integer(g->max_allocations));
        return refused(out, "quota_exhausted", "every allocation of the grant was issued", extra);
    default:
        return refused(out, "no_active_grant", "no active grant for this cohort", extra);
    }
}

/* A grant whose policy or intent version a newer decision superseded:
 * 1 answered (403 policy_changed), 0 current, -1 error. */
static int policy_refusal(sqlite3 *db, struct stmtcache *cache, const struct grt_grant *g,
                          struct alc_reply *out)
{
    int r = grt_policy_current(db, cache, g->policy_id, g->policy_version, g->intent_version);
    if (r != 0)
        return r < 0 ? -1 : 0;
    return refused(out, "policy_changed",
                   "a newer decision carries another policy or intent version",
                   json_pack("{s:s}", "grant_id", g->id)) == 0
               ? 1
               : -1;
}

/* Does the service deliver this allocation (playback_url, a session)? */
static bool delivered(const struct grt_grant *g, const struct alc_delivery *d)
{
    return d && dlv_paths_find(d->paths, g->path_id);
}

/* The 201 body, stored with the allocation and returned byte for byte on a
 * retry.  The delivery fields come last when the service delivers the
 * allocated path: the session (sid, alloc_session.h), then playback_url. */
static json_t *created_body(const struct areq *req, const struct grt_grant *g, int64_t now,
                            int64_t expires, const struct alc_delivery *d, const char *sid)
{
    json_t *fb = json_loads(g->fallbacks, 0, NULL);
    const struct sit_cohort *c = &req->cohort;
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:o,s:{s:s,s:s,s:s,s:s,s:s,s:s},s:s,s:I,s:I,s:I,s:I}",
                     "allocation_id", req->allocation_id, "grant_id", g->id, "decision_id",
                     g->decision_id, "path_id", g->path_id, "fallback_path_ids",
                     fb ? fb : json_array(), "cohort", "channel", c->channel, "region", c->region,
                     "isp", c->isp, "client", c->client, "build", c->build, "rendition",
                     c->rendition, "program_version", g->program_version, "created_at_ms",
                     (json_int_t)now, "expires_at_ms", (json_int_t)expires,
                     "grant_valid_until_ms", (json_int_t)g->valid_until_ms, "expected_play_s",
                     (json_int_t)g->expected_play_s);
    if (o && req->verification) /* issue 17: only in a verification session's answer */
        json_object_set_new(o, "verification", json_true());
    if (o && delivered(g, d)) {
        char url[512];
        json_object_set_new(o, "session", ases_json(sid, d->base_url, c->channel));
        /* the session id is the capability: the client-chosen allocation
         * id may be guessed, so it opens nothing (issue 19) */
        snprintf(url, sizeof url, "%s/v1/sessions/%s/master.m3u8", d->base_url, sid);
        json_object_set_new(o, "playback_url", json_string(url));
    }
    return o;
}

static int insert(sqlite3 *db, struct stmtcache *cache, const struct areq *req,
                  const struct grt_grant *g, const char *digest, int64_t now, int64_t expires,
                  const char *body, const char *subject)
{
    static const char sql[] =
        "INSERT INTO allocations (id, grant_id, seq, decision_id, path_id, fallback_path_ids, "
        "created_at_ms, expires_at_ms, commitment_until_ms, request_sha256, request, response, "
        "subject, verification) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)";
    char canon[2 * AREQ_MAX_BODY];
    if (areq_canonical(req, canon, sizeof canon) < 0)
        return -1;
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, req->allocation_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, g->id, -1, SQLITE_STATIC);
    /* a verification allocation's slots lie above the viewers' (migrate_v8.sql) */
    sqlite3_bind_int64(st, 3, req->verification ? g->max_allocations + g->verification_allocated + 1
                                                : g->allocated + 1);
    sqlite3_bind_text(st, 4, g->decision_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, g->path_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, g->fallbacks, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, now);
    sqlite3_bind_int64(st, 8, expires);
    sqlite3_bind_int64(st, 9, expires + g->expected_play_s * 1000);
    sqlite3_bind_text(st, 10, digest, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 11, canon, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 12, body, -1, SQLITE_STATIC);
    if (subject) /* NULL without --client-auth */
        sqlite3_bind_text(st, 13, subject, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 14, req->verification);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    stmtcache_done(cache, st);
    return rc;
}

/* The grant's count and bucket; the WHERE clause re-checks the count read,
 * so a lost update can never hand out the same slot twice. */
static int count(sqlite3 *db, struct stmtcache *cache, struct grt_grant *g,
                 const struct tb_bucket *b, int64_t now)
{
    static const char sql[] =
        "UPDATE grants SET allocated = allocated + 1, first_allocation_ms = "
        "COALESCE(first_allocation_ms, ?1), bucket_tokens_nano = ?2, bucket_at_ms = ?3 "
        "WHERE id = ?4 AND allocated = ?5 AND status = 'active'";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, now);
    sqlite3_bind_int64(st, 2, b->tokens_nano);
    sqlite3_bind_int64(st, 3, b->at_ms);
    sqlite3_bind_text(st, 4, g->id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, g->allocated);
    int rc = sqlite3_step(st) == SQLITE_DONE && sqlite3_changes(db) == 1 ? 0 : -1;
    stmtcache_done(cache, st);
    if (rc == 0) {
        g->allocated++;
        if (!g->has_first_allocation)
            g->first_allocation_ms = now;
        g->has_first_allocation = true;
    }
    return rc;
}

/* The allocation row, its session when the service delivers it, and the
 * 201 body stored with them (returned, malloc'd; NULL on any failure).
 * The caller counts it. */
static char *write_allocation(sqlite3 *db, struct stmtcache *cache, const struct areq *req,
                              const struct grt_grant *g, const char *digest, int64_t now,
                              const struct alc_delivery *d, const char *subject)
{
    int64_t expires = now + g->url_ttl_s * 1000;
    char sid[REC_ID_LEN] = "";
    if (delivered(g, d) && rec_new_id(sid) != 0)
        return NULL;
    json_t *o = created_body(req, g, now, expires, d, sid);
    char *body = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (body && insert(db, cache, req, g, digest, now, expires, body, subject) == 0 &&
        (!sid[0] ||
         ases_insert(db, cache, sid, req, g, now, expires + g->expected_play_s * 1000) == 0))
        return body;
    free(body);
    return NULL;
}

/* A verification allocation counts in its own column, never in allocated:
 * no viewer slot, no token, no first_allocation_ms (the step's viewers
 * start it). */
static int count_verification(sqlite3 *db, struct stmtcache *cache, struct grt_grant *g)
{
    static const char sql[] =
        "UPDATE grants SET verification_allocated = verification_allocated + 1 "
        "WHERE id = ?1 AND verification_allocated = ?2 AND status = 'active'";
    sqlite3_stmt *st = stmtcache_prepare(db, cache, sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, g->id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, g->verification_allocated);
    int rc = sqlite3_step(st) == SQLITE_DONE && sqlite3_changes(db) == 1 ? 0 : -1;
    stmtcache_done(cache, st);
    if (rc == 0)
        g->verification_allocated++;
    return rc;
}

/* The 201 of a verification request within the grant's verification quota
 * (the caller checked it). */
static int allocate_verification(sqlite3 *db, struct stmtcache *cache, const struct areq *req,
                                 struct grt_grant *g, const char *digest, int64_t now,
                                 const struct alc_delivery *d, struct alc_reply *out)
{
    char *body = write_allocation(db, cache, req, g, digest, now, d, NULL);
    if (!body || count_verification(db, cache, g) != 0) {
        free(body);
        return -1;
    }
    out->result = ALC_CREATED;
    out->http_status = 201;
    out->body = body;
    return 0;
}

/* A verification request (issue 17): the grant must be valid (its viewers'
 * quota may be used up: the step is still observed), under the current
 * policy, with verification quota left. */
static int verify_request(sqlite3 *db, struct stmtcache *cache, const struct areq *req,
                          struct grt_grant *g, enum grt_state s, const char *digest, int64_t now,
                          const struct alc_delivery *d, struct alc_reply *out)
{
    if (s != GRT_ACTIVE && s != GRT_EXHAUSTED)
        return grant_refusal(db, g, s, now, out);
    int r = policy_refusal(db, cache, g, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    if (grt_load_verification(db, cache, g) != 0)
        return -1;
    if (g->verification_allocated >= g->verification_max)
        return refused(out, "verification_quota_exhausted",
                       g->verification_max == 0
                           ? "the grant has no verification quota (stepctl grant "
                             "--verification-allocations N)"
                           : "every verification allocation of the grant was issued",
                       json_pack("{s:s,s:I}", "grant_id", g->id, "verification_allocations",
                                 (json_int_t)g->verification_max));
    return allocate_verification(db, cache, req, g, digest, now, d, out);
}

static int allocate(sqlite3 *db, struct stmtcache *cache, const struct areq *req,
                    struct grt_grant *g, const char *digest, int64_t now,
                    const struct alc_delivery *d, const struct alc_client *client,
                    struct alc_reply *out)
{
    struct tb_bucket b = {g->bucket_tokens_nano, g->bucket_at_ms};
    int64_t wait_ms = 0;
    if (!tb_take(&b, g->max_rate_micro, g->burst, now, &wait_ms)) {
        out->retry_after_s = wait_ms <= 1000 ? 1 : (wait_ms + 999) / 1000;
        json_t *o = json_pack("{s:s,s:s,s:s,s:I}", "error", "rate_limited", "detail",
                              "the grant's allocation rate is used up; retry later", "grant_id",
                              g->id, "retry_after_s", (json_int_t)out->retry_after_s);
        return reply(out, ALC_RATE_LIMITED, 429, o);
    }
    char *body = write_allocation(db, cache, req, g, digest, now, d,
                                  client ? client->subject : NULL);
    int rc = body && count(db, cache, g, &b, now) == 0 &&
                     (g->allocated < g->max_allocations || grt_settle(db, g, now, "stepctl serve") == 0)
                 ? 0
                 : -1;
    if (rc == 0) {
        out->result = ALC_CREATED;
        out->http_status = 201;
        out->body = body;
        return 0;
    }
    free(body);
    return -1;
}

int alc_process(sqlite3 *db, struct stmtcache *cache, const struct areq *req, int64_t now_ms,
                const struct alc_delivery *delivery, const struct alc_client *client,
                struct alc_reply *out)
{
    assert(db && req && out && sqlite3_get_autocommit(db) == 0);
    memset(out, 0, sizeof *out);
    char digest[65];
    areq_digest(req, digest);
    if (!digest[0])
        return -1;
    int r = replay(db, cache, req, digest, client, out);
    if (r == 0 && client)
        r = subject_cap(db, cache, client, now_ms, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    struct grt_grant *g = malloc(sizeof *g);
    if (!g)
        return -1;
    int none = grt_load_cohort(db, cache, &req->cohort, g), rc = -1; /* 0 found, 1 none */
    enum grt_state s = none == 0 ? grt_state(g, now_ms) : GRT_STATE_UNKNOWN;
    if (none < 0) {
        rc = -1;
    } else if (req->verification) {
        rc = none ? refused(out, "no_active_grant", "no grant exists for this cohort", NULL)
                  : verify_request(db, cache, req, g, s, digest, now_ms, delivery, out);
    } else if (s != GRT_ACTIVE) {
        r = no_path_refusal(db, &req->cohort, none ? INT64_MIN : g->created_at_ms, out);
        rc = r < 0    ? -1
             : r == 1 ? 0
             : none   ? refused(out, "no_active_grant", "no grant exists for this cohort", NULL)
                      : grant_refusal(db, g, s, now_ms, out);
    } else {
        r = policy_refusal(db, cache, g, out);
        rc = r < 0    ? -1
             : r == 1 ? 0
                      : allocate(db, cache, req, g, digest, now_ms, delivery, client, out);
    }
    free(g);
    if (rc != 0)
        alc_reply_free(out);
    return rc;
}
