/* dlv_media.c - signed live media playlists (see dlv.h).
 *
 * One upstream entry per (path, rendition) holds the live media playlist
 * as last fetched, already turned into a template: every URI (segment
 * lines, and URI="..." attributes such as EXT-X-MAP and EXT-X-KEY)
 * resolved against the playlist's URL (libcurl's URL API, RFC 3986) and
 * followed by one marker byte where the signing query goes ('\1' for '?',
 * '\2' for '&').  Each request then only copies the template and puts the
 * allocation's signed query at the markers: no parsing, no signature in
 * the steady state.
 *
 * Nothing slow reaches an HTTP thread (issue 19): the template is fetched
 * by a fetcher thread of its own, at most one in flight per (path,
 * rendition), started when the last attempt is older than
 * playlist_cache_ms (and for every rendition when the service starts).  A
 * template is stamped with the time its fetch COMPLETED, so a slow CDN's
 * answer is not stale on arrival.  A request is answered from the newest
 * good template while it is younger than DLV_STALE_MS beyond
 * playlist_cache_ms, whatever the CDN is doing (only the request that
 * starts a refresh waits for it, at most DLV_WAIT_MS, so a CDN that answers
 * in time is never served stale); with none that young one request at a
 * time waits at most DLV_WAIT_MS for a fetch in flight; a request then
 * without a usable template gets 502 with the
 * last failure when the CDN answered wrongly, or 503 upstream_pending
 * with Retry-After while a fetch is still under way.  The fetch is bounded
 * (DLV_PLAYLIST_MAX bytes, DLV_FETCH_TIMEOUT_MS, http and https only, no
 * redirect) and signed with the service's own wildcard policy.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "cliutil.h"
#include "dlv_internal.h"

struct dlv_upstream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool fetching;
    char *tmpl;           /* the newest good template, NULL before the first */
    size_t len;
    int64_t good_at_ms;   /* when the fetch that gave tmpl completed */
    int64_t tried_at_ms;  /* when the last fetch completed (good or not) */
    bool failed;          /* the last fetch failed: code, detail */
    bool waited_on;       /* a request waits for the fetch in flight */
    char code[32], detail[256];
};

struct dlv_upstream *dlv_upstream_new(size_t n)
{
    struct dlv_upstream *u = calloc(n, sizeof *u);
    for (size_t i = 0; u && i < n; i++) {
        pthread_mutex_init(&u[i].mu, NULL);
        pthread_cond_init(&u[i].cv, NULL);
    }
    return u;
}

void dlv_upstream_free(struct dlv_upstream *u, size_t n)
{
    for (size_t i = 0; u && i < n; i++) {
        free(u[i].tmpl);
        pthread_mutex_destroy(&u[i].mu);
        pthread_cond_destroy(&u[i].cv);
    }
    free(u);
}

/* ---- fetch ---------------------------------------------------------------------- */

struct body {
    char *p;
    size_t len;
    bool too_big;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    size_t len = size * n;
    if (b->len + len > DLV_PLAYLIST_MAX) {
        b->too_big = true;
        return 0; /* aborts the transfer */
    }
    char *q = realloc(b->p, b->len + len + 1);
    if (!q)
        return 0;
    memcpy(q + b->len, p, len);
    b->p = q;
    b->len += len;
    b->p[b->len] = '\0';
    return len;
}

/* GET url.  0 with the body, or -1 with code/detail set: upstream_invalid
 * for an answer too large to be a media playlist, upstream_unavailable for
 * no answer or another status than 200.  (The code was once set before the
 * answer was looked at, so that content make_template refused was
 * answered upstream_unavailable too.) */
static int fetch(const char *url, struct body *b, char *code, size_t ccap, char *detail,
                 size_t dcap)
{
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(code, ccap, "upstream_unavailable");
        snprintf(detail, dcap, "libcurl could not start");
        return -1;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)DLV_FETCH_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(DLV_FETCH_TIMEOUT_MS / 2));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "stepctl-serve");
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    snprintf(code, ccap, b->too_big ? "upstream_invalid" : "upstream_unavailable");
    if (b->too_big)
        snprintf(detail, dcap, "the path's media playlist is larger than %d bytes",
                 DLV_PLAYLIST_MAX);
    else if (rc != CURLE_OK)
        snprintf(detail, dcap, "the path's media playlist could not be fetched: %s",
                 curl_easy_strerror(rc));
    else if (status != 200)
        snprintf(detail, dcap, "the path answered HTTP %ld for its media playlist", status);
    else {
        code[0] = '\0'; /* content is judged by make_template */
        return 0;
    }
    return -1;
}

/* ---- the template ----------------------------------------------------------------- */

/* uri resolved against base into the template, then the marker.  false
 * with detail when it cannot be signed by the rendition's policy. */
static bool put_uri(struct body *t, const char *base, const char *uri, size_t ulen,
                    const char *prefix, char *detail, size_t dcap)
{
    char rel[DLV_URL_MAX + 1];
    if (ulen == 0 || ulen > DLV_URL_MAX) {
        snprintf(detail, dcap, "a URI of the media playlist is empty or too long");
        return false;
    }
    memcpy(rel, uri, ulen);
    rel[ulen] = '\0';
    CURLU *u = curl_url();
    char *abs = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
              curl_url_set(u, CURLUPART_URL, rel, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_URL, &abs, 0) == CURLUE_OK;
    curl_url_cleanup(u);
    if (!ok || cfsign_url_problem(abs) || strncmp(abs, prefix, strlen(prefix))) {
        snprintf(detail, dcap, "a URI of the media playlist %s",
                 !ok ? "does not resolve"
                     : cfsign_url_problem(abs) ? "cannot be signed (see docs/delivery.md)"
                                               : "is outside the rendition's directory (the "
                                                 "signed wildcard policy does not cover it)");
        curl_free(abs);
        return false;
    }
    char marker[2] = {strchr(abs, '?') ? '\2' : '\1', '\0'};
    ok = on_data(abs, 1, strlen(abs), t) && on_data(marker, 1, 1, t);
    curl_free(abs);
    if (!ok)
        snprintf(detail, dcap, "out of memory");
    return ok;
}

/* The value of a URI="..." attribute inside a tag line of n bytes, or NULL. */
static const char *uri_attr(const char *line, size_t n)
{
    for (size_t i = 0; i + 5 <= n; i++)
        if (!strncmp(line + i, "URI=\"", 5) && (i == 0 || line[i - 1] == ',' || line[i - 1] == ':'))
            return line + i;
    return NULL;
}

/* The template of a fetched playlist.  0, or -1 with detail. */
static int make_template(const char *text, size_t len, const struct dlv_rendition *r,
                         struct body *t, char *detail, size_t dcap)
{
    char prefix[DLV_URL_MAX + 2];
    snprintf(prefix, sizeof prefix, "%.*s", (int)strlen(r->resource) - 1, r->resource);
    if (len < 7 || strncmp(text, "#EXTM3U", 7)) {
        snprintf(detail, dcap, "the path's answer is not an HLS playlist");
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\0' || text[i] == '\1' || text[i] == '\2') {
            snprintf(detail, dcap, "the path's media playlist has a control byte");
            return -1;
        }
    for (const char *line = text, *end = text + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line), body = n;
        if (body && line[body - 1] == '\r')
            body--;
        const char *attr = line[0] == '#' ? uri_attr(line, body) : NULL;
        if (line[0] == '#' && (!strncmp(line, "#EXT-X-STREAM-INF", 17) ||
                               !strncmp(line, "#EXT-X-MEDIA:", 13))) {
            snprintf(detail, dcap, "the path's URL is a multivariant playlist, not a media one");
            return -1;
        }
        bool ok;
        if (attr) { /* URI="..." inside a tag */
            const char *v = attr + 5, *q = memchr(v, '"', (size_t)(line + body - v));
            ok = q && on_data((char *)line, 1, (size_t)(v - line), t) &&
                 put_uri(t, r->url, v, (size_t)(q - v), prefix, detail, dcap) &&
                 on_data((char *)q, 1, (size_t)(line + body - q), t);
            if (!q)
                snprintf(detail, dcap, "a URI attribute of the media playlist is not closed");
        } else if (body && line[0] != '#') {
            ok = put_uri(t, r->url, line, body, prefix, detail, dcap);
        } else {
            ok = on_data((char *)line, 1, body, t) || body == 0;
        }
        if (!ok || !on_data("\n", 1, 1, t))
            return -1;
        line += n + 1;
    }
    return 0;
}

/* ---- the fetcher threads ---------------------------------------------------------- */

struct fetch_job {
    struct dlv *d;
    size_t pi, ri;
};

/* One fetch of (pi, ri): the template, or the failure, stamped with the
 * time it completed. */
static void *fetcher(void *arg)
{
    struct fetch_job job = *(struct fetch_job *)arg;
    free(arg);
    struct dlv *d = job.d;
    const struct dlv_path *p = &d->paths->p[job.pi];
    const struct dlv_rendition *r = &p->r[job.ri];
    struct dlv_upstream *u = &d->up[job.pi * DLV_MAX_RENDITIONS + job.ri];
    char q[DLV_QUERY_MAX], url[DLV_URL_MAX + DLV_QUERY_MAX + 2], key[DLV_ID_MAX * 2 + 8];
    char code[32] = "", detail[256] = "";
    struct body b = {0}, t = {0};
    snprintf(key, sizeof key, "/%s/%s", p->id, r->name); /* the service's own, no allocation */
    int rc = -1;
    if (!dlv_signed_query(d, p, key, r->resource, cli_now_ms(), INT64_MAX, q, sizeof q, detail,
                          sizeof detail))
        snprintf(code, sizeof code, "signing_failed");
    else if (!cfsign_append_query(r->url, q, url, sizeof url))
        snprintf(code, sizeof code, "signing_failed");
    else if (fetch(url, &b, code, sizeof code, detail, sizeof detail) == 0)
        rc = make_template(b.p, b.len, r, &t, detail, sizeof detail);
    if (rc != 0 && !code[0])
        snprintf(code, sizeof code, "upstream_invalid");
    free(b.p);
    int64_t done = cli_now_ms();
    pthread_mutex_lock(&u->mu);
    if (rc == 0) {
        free(u->tmpl);
        u->tmpl = t.p;
        u->len = t.len;
        u->good_at_ms = done;
    } else {
        free(t.p);             /* the newest good template stays */
    }
    u->failed = rc != 0;
    snprintf(u->code, sizeof u->code, "%s", code);
    snprintf(u->detail, sizeof u->detail, "%s", detail);
    u->tried_at_ms = done;
    u->fetching = false;
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
    pthread_mutex_lock(&d->fetch_mu);
    d->fetchers--;
    pthread_cond_broadcast(&d->fetch_cv);
    pthread_mutex_unlock(&d->fetch_mu);
    return NULL;
}

/* Starts the fetch of (pi, ri) on a thread of its own; u->mu held.  When
 * no thread can start, nothing is in flight and a later request retries. */
static void start_fetch(struct dlv *d, size_t pi, size_t ri, struct dlv_upstream *u)
{
    struct fetch_job *job = malloc(sizeof *job);
    pthread_attr_t attr;
    pthread_t th;
    if (!job)
        return;
    *job = (struct fetch_job){d, pi, ri};
    pthread_mutex_lock(&d->fetch_mu);
    bool ok = !d->stopping && pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&th, &attr, fetcher, job) == 0;
        pthread_attr_destroy(&attr);
    }
    if (ok)
        d->fetchers++;
    pthread_mutex_unlock(&d->fetch_mu);
    if (!ok) {
        free(job);
        return;
    }
    u->fetching = true;
}

void dlv_upstream_prefetch(struct dlv *d)
{
    for (size_t pi = 0; pi < d->paths->n; pi++) {
        const struct dlv_path *p = &d->paths->p[pi];
        if (p->auth != DLV_AUTH_CF_URL)
            continue;
        for (size_t ri = 0; ri < p->n; ri++) {
            struct dlv_upstream *u = &d->up[pi * DLV_MAX_RENDITIONS + ri];
            pthread_mutex_lock(&u->mu);
            if (!u->fetching)
                start_fetch(d, pi, ri, u);
            pthread_mutex_unlock(&u->mu);
        }
    }
}

void dlv_upstream_stop(struct dlv *d)
{
    pthread_mutex_lock(&d->fetch_mu);
    d->stopping = true;
    while (d->fetchers > 0)   /* each ends within DLV_FETCH_TIMEOUT_MS */
        pthread_cond_wait(&d->fetch_cv, &d->fetch_mu);
    pthread_mutex_unlock(&d->fetch_mu);
}

/* ---- answering from the newest good template --------------------------------------- */

/* With playlist_cache_ms 0 nothing is reused: only a fetch that completed
 * after the request arrived (asked_ms) answers it. */
static bool usable(const struct dlv_upstream *u, int64_t now_ms, int64_t asked_ms, int64_t ttl)
{
    if (!u->tmpl)
        return false;
    return ttl > 0 ? now_ms - u->good_at_ms <= ttl + DLV_STALE_MS : u->good_at_ms >= asked_ms;
}

/* Waits (u->mu held) at most DLV_WAIT_MS for the fetch in flight. */
static void wait_for_fetch(struct dlv_upstream *u)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)(DLV_WAIT_MS % 1000) * 1000000L;
    until.tv_sec += DLV_WAIT_MS / 1000 + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    while (u->fetching && pthread_cond_timedwait(&u->cv, &u->mu, &until) != ETIMEDOUT)
        ;
}

/* A copy of the newest usable template of (p, r), starting a fetch when
 * due.  0 with *tmpl (malloc'd), 1 with the error answer in out, -1 out of
 * memory. */
static int upstream(struct dlv *d, size_t pi, size_t ri, int64_t now_ms, char **tmpl,
                    size_t *tlen, struct dlv_answer *out)
{
    struct dlv_upstream *u = &d->up[pi * DLV_MAX_RENDITIONS + ri];
    int64_t ttl = d->paths->playlist_cache_ms, asked_ms = now_ms;
    pthread_mutex_lock(&u->mu);
    bool started = false;
    if (!u->fetching && (u->tried_at_ms == 0 || now_ms - u->tried_at_ms >= ttl)) {
        start_fetch(d, pi, ri, u);
        started = u->fetching;
    }
    /* the request that starts a refresh waits a little for it (a CDN that
     * answers in time is never served stale); the others do not */
    if ((started || !usable(u, now_ms, asked_ms, ttl)) && u->fetching && !u->waited_on) {
        u->waited_on = true;   /* one waiter: a held CDN ties up one HTTP thread at most */
        wait_for_fetch(u);
        u->waited_on = false;
        now_ms = cli_now_ms();
    }
    int res = 0;
    *tmpl = NULL;
    if (usable(u, now_ms, asked_ms, ttl)) {
        if ((*tmpl = malloc(u->len + 1))) {
            memcpy(*tmpl, u->tmpl, u->len + 1);
            *tlen = u->len;
        } else {
            res = -1;
        }
    } else if (u->failed && !u->fetching) {
        res = dlv_error(out, 502, u->code, u->detail) == 0 ? 1 : -1;
    } else {
        res = dlv_error(out, 503, "upstream_pending",
                        u->failed ? u->detail
                                  : "the path's media playlist is being fetched; retry shortly") == 0
                  ? 1 : -1;
        out->retry_after = "1";
    }
    pthread_mutex_unlock(&u->mu);
    return res;
}

/* The template with the query at every marker. */
static char *fill(const char *tmpl, size_t tlen, const char *q, size_t *len)
{
    size_t ql = strlen(q), markers = 0;
    for (size_t i = 0; i < tlen; i++)
        markers += tmpl[i] == '\1' || tmpl[i] == '\2';
    char *out = malloc(tlen + markers * ql + 1), *w = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < tlen; i++) {
        if (tmpl[i] == '\1' || tmpl[i] == '\2') {
            *w++ = tmpl[i] == '\1' ? '?' : '&';
            memcpy(w, q, ql);
            w += ql;
        } else {
            *w++ = tmpl[i];
        }
    }
    *w = '\0';
    *len = (size_t)(w - out);
    return out;
}

int dlv_media(struct dlv *d, const char *id, const char *pathway, const char *rendition,
              int64_t now_ms, struct dlv_answer *out)
{
    struct dlv_alloc a;
    struct dlv_pathways pw;
    int r = dlv_begin(d, id, now_ms, false, &a, &pw, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    bool listed = false;
    for (size_t i = 0; i < pw.n && !listed; i++)
        listed = !strcmp(pw.id[i], pathway);
    const struct dlv_path *p = dlv_paths_find(d->paths, pathway);
    if (!listed || !p)
        return dlv_error(out, 403, "pathway_not_listed",
                         "this path is not in the allocation's pathway list (not admitted in its "
                         "decision, dropped after a MISMATCH, or not delivered)");
    if (p->auth != DLV_AUTH_CF_URL)
        return dlv_error(out, 404, "not_signed_here",
                         "this path's playlists come from the path itself (auth none or cookies)");
    const struct dlv_rendition *rd = dlv_path_rendition(p, rendition);
    if (!rd)
        return dlv_error(out, 404, "no_such_rendition", "the path has no rendition of this name");
    char *tmpl = NULL, q[DLV_QUERY_MAX], key[3 * SIT_STR], err[256];
    size_t tlen = 0;
    r = upstream(d, (size_t)(p - d->paths->p), (size_t)(rd - p->r), now_ms, &tmpl, &tlen, out);
    if (r != 0)
        return r < 0 ? -1 : 0;
    snprintf(key, sizeof key, "%s/%s/%s", id, p->id, rd->name);
    if (!dlv_signed_query(d, p, key, rd->resource, now_ms, (a.commitment_until_ms + 999) / 1000,
                          q, sizeof q, err, sizeof err)) {
        free(tmpl);
        fprintf(stderr, "stepctl serve: playlist of %s not signed: %s\n", id, err);
        return dlv_error(out, 503, "signing_failed", "the segment URLs could not be signed");
    }
    size_t len = 0;
    char *body = fill(tmpl, tlen, q, &len);
    free(tmpl);
    out->status = 200;
    out->content_type = "application/vnd.apple.mpegurl";
    out->body = body;
    out->len = len;
    return body ? 0 : -1;
}
