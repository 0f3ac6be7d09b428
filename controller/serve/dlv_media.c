/* dlv_media.c - signed live media playlists (see dlv.h).
 *
 * One upstream entry per (path, rendition) holds the live media playlist
 * as last fetched, already turned into a template: every URI (segment
 * lines, and URI="..." attributes such as EXT-X-MAP and EXT-X-KEY)
 * resolved against the playlist's URL (libcurl's URL API, RFC 3986) and
 * followed by one marker byte where the signing query goes ('\1' for '?',
 * '\2' for '&').  Each request then only copies the template and puts the
 * allocation's signed query at the markers: no parsing, no signature in
 * the steady state.  The template is fetched again when older than
 * playlist_cache_ms; one thread fetches while the others wait for it (or
 * use the previous one while it is fresh), so a CDN sees at most one
 * request per rendition and period.  The fetch is bounded
 * (DLV_PLAYLIST_MAX bytes, DLV_FETCH_TIMEOUT_MS, http and https only, no
 * redirect) and signed with the service's own wildcard policy.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "dlv_internal.h"

struct dlv_upstream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool fetching;
    char *tmpl; /* the template, NULL before the first good fetch */
    size_t len;
    int64_t at_ms;        /* when tmpl (or the failure) was fetched */
    int status;           /* 0: tmpl is good; else the HTTP status to answer */
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

/* A copy of the fresh template of (p, r), fetching it when due.  0 with
 * *tmpl (malloc'd), or 1 with the error answer in out. */
static int upstream(struct dlv *d, size_t pi, size_t ri, int64_t now_ms, char **tmpl,
                    size_t *tlen, struct dlv_answer *out)
{
    const struct dlv_path *p = &d->paths->p[pi];
    const struct dlv_rendition *r = &p->r[ri];
    struct dlv_upstream *u = &d->up[pi * DLV_MAX_RENDITIONS + ri];
    int64_t ttl = d->paths->playlist_cache_ms;
    pthread_mutex_lock(&u->mu);
    while (u->fetching && !(u->tmpl && u->status == 0 && now_ms - u->at_ms < ttl))
        pthread_cond_wait(&u->cv, &u->mu);
    if (!u->fetching && (u->at_ms == 0 || now_ms - u->at_ms >= ttl)) {
        u->fetching = true;
        pthread_mutex_unlock(&u->mu);
        char q[DLV_QUERY_MAX], url[DLV_URL_MAX + DLV_QUERY_MAX + 2], key[DLV_ID_MAX * 2 + 8];
        char code[32] = "", detail[256] = "";
        struct body b = {0}, t = {0};
        snprintf(key, sizeof key, "/%s/%s", p->id, r->name); /* the service's own, no allocation */
        int rc = -1;
        if (!dlv_signed_query(d, p, key, r->resource, now_ms, INT64_MAX, q, sizeof q, detail,
                              sizeof detail))
            snprintf(code, sizeof code, "signing_failed");
        else if (!cfsign_append_query(r->url, q, url, sizeof url))
            snprintf(code, sizeof code, "signing_failed");
        else if (fetch(url, &b, code, sizeof code, detail, sizeof detail) == 0)
            rc = make_template(b.p, b.len, r, &t, detail, sizeof detail);
        if (rc != 0 && !code[0])
            snprintf(code, sizeof code, "upstream_invalid");
        free(b.p);
        pthread_mutex_lock(&u->mu);
        free(u->tmpl);
        u->tmpl = rc == 0 ? t.p : NULL;
        u->len = rc == 0 ? t.len : 0;
        if (rc != 0)
            free(t.p);
        u->status = rc == 0 ? 0 : 502;
        snprintf(u->code, sizeof u->code, "%s", code);
        snprintf(u->detail, sizeof u->detail, "%s", detail);
        u->at_ms = now_ms;
        u->fetching = false;
        pthread_cond_broadcast(&u->cv);
    }
    int res = 0;
    *tmpl = NULL;
    if (u->status == 0 && u->tmpl && (*tmpl = malloc(u->len + 1))) {
        memcpy(*tmpl, u->tmpl, u->len + 1);
        *tlen = u->len;
    } else if (u->status != 0) {
        res = dlv_error(out, u->status, u->code, u->detail) == 0 ? 1 : -1;
    } else {
        res = -1;
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
