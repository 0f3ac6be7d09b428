/* serve_delivery.c - the delivery endpoints of `stepctl serve --paths`:
 *
 *   GET /v1/sessions/{sid}/master.m3u8          the multivariant playlist
 *   GET /v1/sessions/{sid}/steering             the steering manifest
 *   GET /v1/sessions/{sid}/{path}/{rendition}.m3u8  a signed live media playlist
 * reached only through the allocation's session id (128 random bits: a
 * capability), never the client-chosen allocation id (issue 19).
 * Without --paths each answers 404 not_delivered.  What they answer is
 * dlv.h's; this file only maps it onto HTTP.  Contract: docs/delivery.md.
 */
#include <stdio.h>
#include <string.h>

#include "cliutil.h"
#include "dlv.h"
#include "serve.h"
#include "serve_reports.h"

static enum MHD_Result answer(struct srv_request *rq, int rc, struct dlv_answer *a)
{
    if (rc != 0)
        return MHD_NO;
    const char *headers[2 * DLV_MAX_COOKIES + 3];
    size_t n = 0;
    for (size_t i = 0; i < a->n_cookies; i++) {
        headers[n++] = MHD_HTTP_HEADER_SET_COOKIE;
        headers[n++] = a->cookies[i];
    }
    if (a->retry_after) {
        headers[n++] = MHD_HTTP_HEADER_RETRY_AFTER;
        headers[n++] = a->retry_after;
    }
    headers[n] = NULL;
    enum MHD_Result r =
        srv_respond_headers(rq, (unsigned)a->status, a->content_type, a->body, a->len, headers);
    dlv_answer_free(a);
    return r;
}

static enum MHD_Result not_delivered(struct srv_request *rq)
{
    return srv_respond_json(rq, MHD_HTTP_NOT_FOUND,
                            json_pack("{s:s,s:s}", "error", "not_delivered", "detail",
                                      "the service runs without --paths: it delivers nothing"));
}

static enum MHD_Result master(struct srv *s, struct srv_request *rq)
{
    struct dlv_answer a = {0};
    if (!s->dlv)
        return not_delivered(rq);
    int rc = dlv_master(s->dlv, srv_param(rq), cli_now_ms(), &a);
    if (rc == 0 && a.status == 200)
        srep_master_fetched(s, srv_param(rq)); /* the session is no longer unused */
    return answer(rq, rc, &a);
}

static enum MHD_Result steering(struct srv *s, struct srv_request *rq)
{
    struct dlv_answer a = {0};
    if (!s->dlv)
        return not_delivered(rq);
    return answer(rq, dlv_steering(s->dlv, srv_param(rq), cli_now_ms(), &a), &a);
}

static enum MHD_Result media(struct srv *s, struct srv_request *rq)
{
    struct dlv_answer a = {0};
    char rendition[AREQ_ID_MAX + 1];
    const char *last = srv_param_at(rq, 2);
    size_t n = strlen(last);
    if (n <= 5 || strcmp(last + n - 5, ".m3u8"))
        return srv_respond_json(rq, MHD_HTTP_NOT_FOUND,
                                json_pack("{s:s,s:s}", "error", "not_found", "detail",
                                          "no such endpoint"));
    if (!s->dlv)
        return not_delivered(rq);
    snprintf(rendition, sizeof rendition, "%.*s", (int)(n - 5), last);
    return answer(rq,
                  dlv_media(s->dlv, srv_param(rq), srv_param_at(rq, 1), rendition, cli_now_ms(),
                            &a),
                  &a);
}

static const struct srv_route routes[] = {
    {"GET", "/v1/sessions/{}/master.m3u8", master, "master", false},
    {"GET", "/v1/sessions/{}/steering", steering, "steering", false},
    {"GET", "/v1/sessions/{}/{}/{}", media, "media_playlist", false},
};

const struct srv_route_table srv_delivery_table = {routes, sizeof routes / sizeof routes[0]};
