/* serve_admission.c - the admission endpoints of `stepctl serve`.
 *
 *   POST /v1/allocations   under --client-auth the bearer token first (401,
 *                          then 403 when its cohorts do not cover the
 *                          request's: cauth.h, no database read),
 *                          parse (400 on anything but the documented body),
 *                          409 while the same allocation_id is in flight,
 *                          otherwise hand over to the group commit and answer
 *                          after it committed (alloc.h decides the answer)
 *   GET  /v1/grants/{id}   the grant: used, remaining, rate state
 *   GET  /healthz          200, or 503 while draining
 *   GET  /metrics          Prometheus text
 * Reads use their own read-only connection (WAL: never blocked by the
 * writer).  Contract: docs/serve.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cauth.h"
#include "serve_auth.h"
#include "cliutil.h"
#include "grant.h"
#include "serve.h"
#include "serve_deadline.h"
#include "record.h"

/* One allocation request between its arrival and its answer. */
struct adm_request {
    struct swr_job job;
    struct srv *srv;
    struct srv_request *rq;
    struct adm_request *next_inflight;
};

/* ---- allocation ids in flight (under srv->mu) ------------------------------ */

static size_t bucket(const char *id)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 16777619u;
    return h % SRV_INFLIGHT_BUCKETS;
}

static bool inflight_has(struct srv *s, const char *id)
{
    for (struct adm_request *a = s->inflight[bucket(id)]; a; a = a->next_inflight)
        if (!strcmp(a->job.req.allocation_id, id))
            return true;
    return false;
}

static void inflight_add(struct srv *s, struct adm_request *a)
{
    size_t b = bucket(a->job.req.allocation_id);
    a->next_inflight = s->inflight[b];
    s->inflight[b] = a;
}

static void inflight_remove(struct srv *s, struct adm_request *a)
{
    struct adm_request **p = &s->inflight[bucket(a->job.req.allocation_id)];
    while (*p && *p != a)
        p = &(*p)->next_inflight;
    if (*p)
        *p = a->next_inflight;
}

/* ---- POST /v1/allocations ----------------------------------------------- */

static void adm_free(void *p)
{
    struct adm_request *a = p;
    alc_reply_free(&a->job.reply);
    free(a);
}

static enum MHD_Result error(struct srv *s, struct srv_request *rq, unsigned status,
                             enum smet_result m, const char *code, const char *detail)
{
    smet_result(s->metrics, m, m == SMET_REFUSED ? code : NULL);
    return srv_respond_json(rq, status, json_pack("{s:s,s:s}", "error", code, "detail", detail));
}

/* Writer thread, after the batch committed (or failed). */
static void job_done(struct swr_job *j)
{
    struct adm_request *a = j->arg;
    pthread_mutex_lock(&a->srv->mu);
    inflight_remove(a->srv, a); /* a retry may come in as soon as the answer leaves */
    pthread_mutex_unlock(&a->srv->mu);
    srv_resume(a->rq);
}

static enum smet_result metric_of(enum alc_result r)
{
    switch (r) {
    case ALC_CREATED:
        return SMET_CREATED;
    case ALC_REPLAYED:
        return SMET_REPLAYED;
    case ALC_CONFLICT:
        return SMET_CONFLICT;
    case ALC_REFUSED:
        return SMET_REFUSED;
    case ALC_RATE_LIMITED:
        return SMET_RATE_LIMITED;
    default:
        return SMET_UNAVAILABLE;
    }
}

static enum MHD_Result allocated(struct srv *s, struct srv_request *rq)
{
    struct adm_request *a = srv_user(rq);
    struct alc_reply *r = &a->job.reply;
    if (a->job.failed || !r->body)
        return error(s, rq, MHD_HTTP_SERVICE_UNAVAILABLE, SMET_UNAVAILABLE, "store_unavailable",
                     "the allocation could not be recorded; nothing was written, retry");
    smet_result(s->metrics, metric_of(r->result), r->error[0] ? r->error : NULL);
    char retry[24];
    snprintf(retry, sizeof retry, "%lld", (long long)r->retry_after_s);
    return srv_respond(rq, (unsigned)r->http_status, "application/json", r->body,
                       strlen(r->body),
                       r->result == ALC_RATE_LIMITED || r->retry_after_s > 0 ? retry : NULL);
}

/* 401 (RFC 6750 3): the reason stays out of the answer, a client learns
 * nothing about which check failed. */
static enum MHD_Result unauthorized(struct srv *s, struct srv_request *rq)
{
    static const char body[] = "{\"error\":\"unauthorized\"}";
    static const char *const headers[] = {"WWW-Authenticate", "Bearer", NULL};
    smet_result(s->metrics, SMET_REFUSED, "unauthorized");
    return srv_respond_headers(rq, MHD_HTTP_UNAUTHORIZED, "application/json", body,
                               sizeof body - 1, headers);
}

/* --client-auth: the token verified and its subject into the job.  0 go
 * on, 1 answered (401). */
static int authenticate(struct srv *s, struct srv_request *rq, struct adm_request *a,
                        struct jwt_claims *cl)
{
    char err[256];
    if (cauth_check(s->cfg->client_auth, srv_header(rq, "Authorization"), cli_now_ms(), cl, err,
                    sizeof err) != 0)
        return 1;
    memcpy(a->job.sub, cl->sub, sizeof a->job.sub);
    a->job.client.subject = a->job.sub;
    a->job.client.cap = s->cfg->client_auth->per_subject_cap;
    return 0;
}

/* Is the Content-Type application/json (parameters such as charset allowed)? */
static bool json_content(const char *ct)
{
    static const char want[] = "application/json";
    if (!ct || strncasecmp(ct, want, sizeof want - 1))
        return false;
    char next = ct[sizeof want - 1];
    return next == '\0' || next == ';' || next == ' ' || next == '\t';
}

static enum MHD_Result allocate(struct srv *s, struct srv_request *rq)
{
    size_t len;
    bool too_big;
    const char *body = srv_body(rq, &len, &too_big);
    if (too_big)
        return error(s, rq, MHD_HTTP_BAD_REQUEST, SMET_BAD_REQUEST, "body_too_large",
                     "the request body is larger than 4096 bytes");
    if (!json_content(srv_header(rq, "Content-Type")))
        /* a text/plain POST is a "simple" cross-site request no preflight guards */
        return error(s, rq, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, SMET_BAD_REQUEST,
                     "unsupported_media_type", "the body must be Content-Type: application/json");
    struct adm_request *a = calloc(1, sizeof *a);
    char err[256];
    struct jwt_claims *cl = s->cfg->client_auth ? malloc(sizeof *cl) : NULL;
    if (!a || (s->cfg->client_auth && !cl)) {
        free(a);
        free(cl);
        return MHD_NO;
    }
    /* The verification token (issue 17) stands for the canary instead of a
     * viewer's JWT; it opens only verification requests, which nothing
     * else opens. */
    bool verifier = sauth_verification_ok(s->cfg, srv_header(rq, "Authorization"));
    if (cl && !verifier && authenticate(s, rq, a, cl) != 0) {
        free(a);
        free(cl);
        return unauthorized(s, rq);
    }
    if (areq_parse(body, len, &a->job.req, err, sizeof err) != 0) {
        free(a);
        free(cl);
        return error(s, rq, MHD_HTTP_BAD_REQUEST, SMET_BAD_REQUEST, "bad_request", err);
    }
    if (verifier != a->job.req.verification) {
        free(a);
        free(cl);
        if (verifier)
            return error(s, rq, MHD_HTTP_FORBIDDEN, SMET_REFUSED, "verification_only",
                         "the verification token allocates verification sessions only "
                         "(\"verification\": true)");
        return unauthorized(s, rq);
    }
    if (verifier) { /* no subject: its own quota, not a viewer's cap */
        free(cl);
        cl = NULL;
    }
    bool covered = !cl || cauth_covers(cl, &a->job.req.cohort);
    free(cl);
    if (!covered) {
        free(a);
        return error(s, rq, MHD_HTTP_FORBIDDEN, SMET_REFUSED, "cohort_not_allowed",
                     "the token's cohorts do not cover this request's cohort");
    }
    pthread_mutex_lock(&s->mu);
    bool draining = s->draining, busy = !draining && inflight_has(s, a->job.req.allocation_id);
    if (!draining && !busy)
        inflight_add(s, a);
    pthread_mutex_unlock(&s->mu);
    if (draining || busy) {
        free(a);
        return draining ? error(s, rq, MHD_HTTP_SERVICE_UNAVAILABLE, SMET_UNAVAILABLE, "draining",
                                "the service is shutting down; retry elsewhere or later")
                        : error(s, rq, MHD_HTTP_CONFLICT, SMET_IN_FLIGHT, "in_flight",
                                "a request with this allocation_id is still being processed");
    }
    a->srv = s;
    a->rq = rq;
    a->job.done = job_done;
    a->job.arg = a;
    srv_set_user(rq, a, adm_free);
    srv_defer(rq, allocated);
    swr_submit(s->writer, &a->job);
    return MHD_YES;
}

/* ---- reads ---------------------------------------------------------------- */

static sqlite3 *open_reader(struct srv *s)
{
    sqlite3 *db = NULL;
    char err[1024];
    rec_open(s->cfg->db_path, REC_READ, &db, err, sizeof err); /* NULL when it cannot */
    return db;
}

static enum MHD_Result grant(struct srv *s, struct srv_request *rq)
{
    sqlite3 *db = open_reader(s);
    struct grt_grant *g = malloc(sizeof *g);
    int r = db && g ? grt_load(db, srv_param(rq), g) : -1;
    enum MHD_Result res;
    if (r == 0)
        res = srv_respond_json(rq, MHD_HTTP_OK, grt_json(g, cli_now_ms()));
    else
        res = srv_respond_json(
            rq, r == 1 ? MHD_HTTP_NOT_FOUND : MHD_HTTP_SERVICE_UNAVAILABLE,
            json_pack("{s:s,s:s}", "error", r == 1 ? "no_such_grant" : "store_unavailable",
                      "grant_id", srv_param(rq)));
    free(g);
    sqlite3_close(db);
    return res;
}

static enum MHD_Result health(struct srv *s, struct srv_request *rq)
{
    pthread_mutex_lock(&s->mu);
    bool draining = s->draining;
    pthread_mutex_unlock(&s->mu);
    return srv_respond_json(rq, draining ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK,
                            json_pack("{s:s}", "status", draining ? "draining" : "ok"));
}

static enum MHD_Result metrics(struct srv *s, struct srv_request *rq)
{
    const char *names[SMET_MAX_ROUTES];
    size_t n = srv_route_names(names, SMET_MAX_ROUTES);
    struct smet_extra extra = {0, 0, sdl_cut_total(s->deadline)};
    swr_stats(s->writer, &extra.batches, &extra.jobs);
    sqlite3 *db = open_reader(s);
    char *text = smet_render(s->metrics, db, cli_now_ms(), names, n, &extra);
    sqlite3_close(db);
    if (!text)
        return MHD_NO;
    enum MHD_Result r =
        srv_respond(rq, MHD_HTTP_OK, "text/plain; version=0.0.4", text, strlen(text), NULL);
    free(text);
    return r;
}

static const struct srv_route routes[] = {
    {"POST", "/v1/allocations", allocate, "allocations", false},
    {"GET", "/v1/grants/{}", grant, "grants", true},
    {"GET", "/healthz", health, "healthz", false},
    {"GET", "/metrics", metrics, "metrics", true},
};

const struct srv_route_table srv_admission_table = {routes, sizeof routes / sizeof routes[0]};
