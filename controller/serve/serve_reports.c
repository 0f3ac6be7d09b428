/* serve_reports.c - session reports over HTTP (see serve_reports.h). */
#include "serve_reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliutil.h"
#include "cmcd.h"
#include "dlv_paths.h"
#include "qoe_ingest.h"

/* One report between its arrival and its answer. */
struct srep_request {
    struct swr_job job;
    struct srv_request *rq;
    char sid[AREQ_ID_MAX + 1];
    bool query; /* the ?CMCD= form */
    const struct dlv_paths *paths; /* where each path's media is: served by */
    struct cmcd_batch batch;
    struct qing_result result;
};

static const char *served_by(const void *paths, const char *url)
{
    return dlv_paths_served_by(paths, url);
}

static int run(sqlite3 *db, struct stmtcache *cache, struct swr_job *j)
{
    struct srep_request *r = j->arg;
    return qing_store(db, cache, r->sid, &r->batch, r->query, cli_now_ms(), served_by, r->paths,
                      &r->result);
}

static void done(struct swr_job *j)
{
    struct srep_request *r = j->arg;
    srv_resume(r->rq);
}

static void request_free(void *arg)
{
    struct srep_request *r = arg;
    cmcd_batch_free(&r->batch);
    free(r);
}

static enum MHD_Result error(struct srv_request *rq, unsigned status, const char *code,
                             const char *detail, const char *retry_after)
{
    json_t *o = json_pack("{s:s,s:s}", "error", code, "detail", detail);
    char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!t)
        return MHD_NO;
    enum MHD_Result res = srv_respond(rq, status, "application/json", t, strlen(t), retry_after);
    free(t);
    return res;
}

static enum MHD_Result answered(struct srv *s, struct srv_request *rq)
{
    (void)s;
    struct srep_request *r = srv_user(rq);
    const struct qing_result *q = &r->result;
    char retry[24];
    if (r->job.failed)
        return error(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "store_unavailable",
                     "the report could not be recorded; nothing was written, retry", NULL);
    switch (q->status) {
    case QING_GONE:
        return q->unknown ? error(rq, MHD_HTTP_GONE, "unknown_session",
                                  "no session has this id: stop sending", NULL)
                          : error(rq, MHD_HTTP_GONE, "session_ended",
                                  "the session has ended: stop sending", NULL);
    case QING_RATE:
        snprintf(retry, sizeof retry, "%lld", (long long)q->retry_after_s);
        return error(rq, MHD_HTTP_TOO_MANY_REQUESTS, "report_rate_exceeded",
                     "the session sends more reports than its rate; nothing was counted", retry);
    default:
        if (!q->stored && !q->duplicates && !r->batch.n)
            return error(rq, MHD_HTTP_BAD_REQUEST, "cmcd_version_unsupported",
                         "every record has v above 2 (refused, counted)", NULL);
        return srv_respond(rq, MHD_HTTP_NO_CONTENT, NULL, "", 0, NULL);
    }
}

/* Parses the query form when present, else the body.  false: not CMCD. */
static bool parse(struct srv_request *rq, struct srep_request *r, const char *body, size_t len)
{
    const char *q = srv_query_arg(rq, "CMCD");
    r->query = q != NULL;
    if (q)
        cmcd_parse_query(q, strlen(q), &r->batch);
    else
        cmcd_parse_body(body, len, &r->batch);
    return r->batch.n || r->batch.refused;
}

static enum MHD_Result report(struct srv *s, struct srv_request *rq)
{
    size_t len;
    bool too_big;
    const char *body = srv_body(rq, &len, &too_big);
    if (too_big)
        return error(rq, MHD_HTTP_CONTENT_TOO_LARGE, "body_too_large",
                     "a report body is at most 4096 bytes", NULL);
    struct srep_request *r = calloc(1, sizeof *r);
    if (!r)
        return MHD_NO;
    bool cmcd = parse(rq, r, body, len), oom = r->batch.oom;
    if (!cmcd || oom) {
        request_free(r);
        return oom ? error(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "out_of_memory",
                           "the report could not be read; nothing was written, retry", NULL)
                   : error(rq, MHD_HTTP_BAD_REQUEST, "not_cmcd",
                           "the report is not CMCD: no record with a valid key=value pair", NULL);
    }
    pthread_mutex_lock(&s->mu);
    bool draining = s->draining;
    pthread_mutex_unlock(&s->mu);
    if (draining) {
        request_free(r);
        return error(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "draining",
                     "the service is shutting down; retry later", NULL);
    }
    snprintf(r->sid, sizeof r->sid, "%s", srv_param(rq));
    r->rq = rq;
    r->paths = s->cfg->paths;
    r->job.run = run;
    r->job.done = done;
    r->job.arg = r;
    srv_set_user(rq, r, request_free);
    srv_defer(rq, answered);
    swr_submit(s->writer, &r->job);
    return MHD_YES;
}

/* ---- the master playlist's first fetch ------------------------------------ */

struct srep_fetch {
    struct swr_job job;
    char session_id[AREQ_ID_MAX + 1];
    int64_t at_ms;
};

static int run_fetch(sqlite3 *db, struct stmtcache *cache, struct swr_job *j)
{
    struct srep_fetch *f = j->arg;
    return qing_master_fetched(db, cache, f->session_id, f->at_ms);
}

static void done_fetch(struct swr_job *j)
{
    free(j->arg);
}

void srep_master_fetched(struct srv *s, const char *session_id)
{
    struct srep_fetch *f = calloc(1, sizeof *f);
    if (!f)
        return; /* the fetch stays unrecorded: the session then counts as unused */
    snprintf(f->session_id, sizeof f->session_id, "%s", session_id);
    f->at_ms = cli_now_ms();
    f->job.run = run_fetch;
    f->job.done = done_fetch;
    f->job.arg = f;
    swr_submit(s->writer, &f->job);
}

static const struct srv_route routes[] = {
    {"POST", "/v1/sessions/{}/reports", report, "session_reports", false},
};

const struct srv_route_table srv_reports_table = {routes, sizeof routes / sizeof routes[0]};
