/* dlv.c - the delivery layer: master.m3u8, steering, signing (see dlv.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "areq.h"
#include "dlv_internal.h"

#define ALLOC_SLOTS 16384
#define SIGNED_SLOTS 16384
#define DROPPED_SLOTS 1024

struct dlv *dlv_new(const struct dlv_paths *paths, const char *db_path,
                    const char *evidence_path, const char *url_path)
{
    if (strlen(url_path) >= sizeof ((struct dlv *)NULL)->url_path)
        return NULL;
    struct dlv *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    *d = (struct dlv){.paths = paths, .db_path = db_path, .evidence_path = evidence_path};
    snprintf(d->url_path, sizeof d->url_path, "%s", url_path);
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->fetch_mu, NULL);
    pthread_cond_init(&d->fetch_cv, NULL);
    d->allocs = dcache_new(ALLOC_SLOTS);
    d->sessions = dcache_new(ALLOC_SLOTS);
    d->dropped = dcache_new(DROPPED_SLOTS);
    d->signed_q = dcache_new(SIGNED_SLOTS);
    d->up = dlv_upstream_new(DLV_MAX_PATHS * DLV_MAX_RENDITIONS);
    if (!d->allocs || !d->sessions || !d->dropped || !d->signed_q || !d->up) {
        dlv_free(d);
        return NULL;
    }
    dlv_upstream_prefetch(d);
    return d;
}

void dlv_free(struct dlv *d)
{
    if (!d)
        return;
    dlv_upstream_stop(d);
    for (size_t i = 0; i < d->n_readers; i++)
        sqlite3_close(d->readers[i]);
    dcache_free(d->allocs);
    dcache_free(d->sessions);
    dcache_free(d->dropped);
    dcache_free(d->signed_q);
    dlv_upstream_free(d->up, DLV_MAX_PATHS * DLV_MAX_RENDITIONS);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->fetch_mu);
    pthread_cond_destroy(&d->fetch_cv);
    free(d);
}

void dlv_answer_free(struct dlv_answer *a)
{
    free(a->body);
    for (size_t i = 0; i < a->n_cookies; i++)
        free(a->cookies[i]);
    memset(a, 0, sizeof *a);
}

int dlv_error(struct dlv_answer *out, int status, const char *code, const char *detail)
{
    json_t *o = json_pack("{s:s,s:s}", "error", code, "detail", detail);
    out->status = status;
    out->content_type = "application/json";
    out->body = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    out->len = out->body ? strlen(out->body) : 0;
    json_decref(o);
    return out->body ? 0 : -1;
}

static int text(struct dlv_answer *out, const char *content_type, char *body, size_t len)
{
    out->status = 200;
    out->content_type = content_type;
    out->body = body;
    out->len = len;
    return body ? 0 : -1;
}

/* ---- signing ----------------------------------------------------------------- */

bool dlv_signed_query(struct dlv *d, const struct dlv_path *p, const char *cache_key,
                      const char *resource, int64_t now_ms, int64_t cap_s, char *q, size_t cap,
                      char *err, size_t errlen)
{
    int64_t now_s = now_ms / 1000, want = now_s + p->url_ttl_s, dlt = 0;
    if (want > cap_s)
        want = cap_s;
    if (want <= now_s) {
        snprintf(err, errlen, "nothing left to sign for");
        return false;
    }
    char *c = dcache_get(d->signed_q, cache_key, NULL);
    int off = 0;
    if (c && sscanf(c, "%" SCNd64 " %n", &dlt, &off) == 1 && off > 0 && dlt > now_s &&
        (dlt - now_s >= p->url_ttl_s / 2 || dlt == want) && strlen(c + off) < cap) {
        strcpy(q, c + off);
        free(c);
        return true;
    }
    free(c);
    struct cfsign_policy pol = {resource, want, 0, NULL};
    struct cfsign_values v;
    if (!cfsign_make(p->key, p->key_pair_id, p->hash, &pol, false, &v, err, errlen))
        return false;
    if (!cfsign_query(&v, q, cap)) {
        snprintf(err, errlen, "the signed query does not fit");
        return false;
    }
    char *val = malloc(strlen(q) + 32);
    if (val) {
        int n = sprintf(val, "%" PRId64 " %s", want, q);
        dcache_put(d->signed_q, cache_key, val, (size_t)n);
    }
    free(val);
    return true;
}

/* ---- master.m3u8 -------------------------------------------------------------- */

/* The wildcard shared by every rendition of p: the longest common prefix
 * of their resources, cut after its last '/', then '*'. */
static void path_resource(const struct dlv_path *p, char *out, size_t cap)
{
    size_t n = strlen(p->r[0].resource) - 1; /* without the '*' */
    for (size_t i = 1; i < p->n; i++) {
        size_t k = 0;
        while (k < n && p->r[i].resource[k] == p->r[0].resource[k])
            k++;
        n = k;
    }
    while (n > 0 && p->r[0].resource[n - 1] != '/')
        n--;
    snprintf(out, cap, "%.*s*", (int)n, p->r[0].resource);
}

/* The Set-Cookie values of a cloudfront-cookies path for allocation id. */
static int cookies(struct dlv *d, const struct dlv_alloc *a, const char *id,
                   const struct dlv_path *p, int64_t now_ms, struct dlv_answer *out)
{
    char resource[DLV_URL_MAX + 2], key[3 * SIT_STR], q[DLV_QUERY_MAX], err[256];
    path_resource(p, resource, sizeof resource);
    snprintf(key, sizeof key, "%s/%s/*cookies", id, p->id);
    if (!dlv_signed_query(d, p, key, resource, now_ms, (a->commitment_until_ms + 999) / 1000, q,
                          sizeof q, err, sizeof err)) {
        fprintf(stderr, "stepctl serve: cookies for path %s not signed: %s\n", p->id, err);
        return -1;
    }
    /* paths.json keeps a cookies path on one origin (dlv_paths.c); the
     * resource is checked here anyway: no Path, no cookies. */
    const char *sep = strstr(resource, "://"), *path = sep ? strchr(sep + 3, '/') : NULL;
    if (!path || strlen(path) < 2) {
        fprintf(stderr, "stepctl serve: cookies for path %s not signed: no common directory\n",
                p->id);
        return -1;
    }
    bool https = !strncmp(resource, "https:", 6);
    /* strtok_r: strtok's position is one for the whole process, and
     * concurrent master playlists cut each other's queries (issue 19) */
    char *at = NULL;
    for (char *f = strtok_r(q, "&", &at); f && out->n_cookies < DLV_MAX_COOKIES;
         f = strtok_r(NULL, "&", &at)) {
        char c[DLV_QUERY_MAX + DLV_URL_MAX + 512];
        snprintf(c, sizeof c, "CloudFront-%s; Path=%.*s%s%s; HttpOnly%s", f,
                 (int)(strlen(path) - 1), path, p->cookie_domain[0] ? "; Domain=" : "",
                 p->cookie_domain, https ? "; Secure; SameSite=None" : "");
        if (!(out->cookies[out->n_cookies++] = strdup(c)))
            return -1;
    }
    return 0;
}

/* Appends to a growing text; false when memory runs out. */
struct buf {
    char *p;
    size_t len, cap;
};
static bool put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool put(struct buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return false;
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return true;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return false;
        b->p = p;
        b->cap = cap;
    }
}

int dlv_begin(struct dlv *d, const char *sid, int64_t now_ms, bool master, struct dlv_alloc *a,
              struct dlv_pathways *pw, struct dlv_answer *out)
{
    memset(out, 0, sizeof *out);
    char id[AREQ_ID_MAX + 1];
    int r = dlv_session_allocation(d, sid, id, sizeof id);
    if (r == 0)
        r = dlv_alloc_load(d, id, a);
    if (r != 0)
        return dlv_error(out, r == 1 ? 404 : 503, r == 1 ? "no_such_session" : "store_unavailable",
                         r == 1 ? "no session has this id" : "control.db cannot be read now") ? -1 : 1;
    if (!dlv_paths_find(d->paths, a->path_id))
        return dlv_error(out, 404, "not_delivered",
                         "the allocated path has no delivery configuration (paths.json)") ? -1 : 1;
    if (now_ms >= (master ? a->expires_at_ms : a->commitment_until_ms))
        return dlv_error(out, 410, master ? "allocation_expired" : "allocation_ended",
                         master ? "the playback URL of this allocation has expired (expires_at_ms)"
                                : "the allocation's commitment has ended (expires_at_ms + "
                                  "expected play)") ? -1 : 1;
    dlv_pathways(d, a, now_ms, pw);
    if (pw->n == 0) /* steer_away with nowhere to steer to: nothing wrong is delivered */
        return dlv_error(out, 410, "path_withdrawn",
                         "the allocated path was found MISMATCH after the decision and no "
                         "fallback is listed (policy.active_sessions.on_content_violation: "
                         "steer_away)") ? -1 : 1;
    return 0;
}

/* id: the session id, which every URI of the playlist carries. */
int dlv_master(struct dlv *d, const char *id, int64_t now_ms, struct dlv_answer *out)
{
    struct dlv_alloc a;
    struct dlv_pathways pw;
    int r = dlv_begin(d, id, now_ms, true, &a, &pw, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    struct buf b = {0};
    bool ok = put(&b, "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n"
                      "#EXT-X-CONTENT-STEERING:SERVER-URI=\"%s/v1/sessions/%s/steering\","
                      "PATHWAY-ID=\"%s\"\n",
                  d->url_path, id, pw.id[0]);
    for (size_t i = 0; ok && i < pw.n; i++) {
        const struct dlv_path *p = dlv_paths_find(d->paths, pw.id[i]);
        if (p->auth == DLV_AUTH_CF_COOKIES && cookies(d, &a, id, p, now_ms, out) != 0)
            ok = false;
        for (size_t k = 0; ok && k < p->n; k++) {
            const struct dlv_rendition *v = &p->r[k];
            if (dlv_rendition_dropped(d, &a, p->id, v->name, now_ms))
                continue; /* a MISMATCH after the decision: not delivered (issue 17) */
            ok = put(&b, "#EXT-X-STREAM-INF:BANDWIDTH=%" PRId64, v->bandwidth) &&
                 (!v->codecs[0] || put(&b, ",CODECS=\"%s\"", v->codecs)) &&
                 (!v->resolution[0] || put(&b, ",RESOLUTION=%s", v->resolution)) &&
                 (!v->frame_rate[0] || put(&b, ",FRAME-RATE=%s", v->frame_rate)) &&
                 put(&b, ",STABLE-VARIANT-ID=\"%s\",PATHWAY-ID=\"%s\"\n", v->name, p->id) &&
                 (p->auth == DLV_AUTH_CF_URL
                      ? put(&b, "%s/v1/sessions/%s/%s/%s.m3u8\n", d->url_path, id, p->id,
                            v->name)
                      : put(&b, "%s\n", v->url));
        }
    }
    if (!ok) {
        free(b.p);
        dlv_answer_free(out);
        return dlv_error(out, 503, "signing_failed", "the cookies could not be signed");
    }
    return text(out, "application/vnd.apple.mpegurl", b.p, b.len);
}

int dlv_steering(struct dlv *d, const char *id, int64_t now_ms, struct dlv_answer *out)
{
    struct dlv_alloc a;
    struct dlv_pathways pw;
    int r = dlv_begin(d, id, now_ms, false, &a, &pw, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    json_t *list = json_array();
    for (size_t i = 0; i < pw.n; i++)
        json_array_append_new(list, json_string(pw.id[i]));
    json_t *o = json_pack("{s:i,s:I,s:o}", "VERSION", 1, "TTL",
                          (json_int_t)d->paths->steering_ttl_s, "PATHWAY-PRIORITY", list);
    char *body = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return text(out, "application/json", body, body ? strlen(body) : 0);
}
