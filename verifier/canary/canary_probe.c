/* canary_probe.c - three-level availability probes (see canary_probe.h).
 * Levels 1 and 2 use libcurl directly (connect only; headers and the first
 * body byte); level 3 is the project's fetcher (fetch.h), so that the full
 * download is bounded and recorded like every other. */
#include "canary_probe.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "canary_fetch.h"
#include "redact.h"
#include "uri.h"
#include "util.h"

#ifndef EXACTAV_VERSION
#define EXACTAV_VERSION "unknown"
#endif

static struct evidence_int some(int64_t v)
{
    return (struct evidence_int){.present = true, .value = v};
}

/* The first failing level decides the reason; an HTTP error status at any
 * level makes the probe a VIOLATION (the path answered, and refused). */
static void failed(struct canary_probe *p, const char *level, const char *code, long http_status)
{
    if (http_status >= 400)
        p->row.status = EVIDENCE_PROBE_VIOLATION;
    if (!p->reason[0])
        snprintf(p->reason, sizeof p->reason, "%s_%s", level, code);
}

static const char *curl_code(CURLcode rc)
{
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT: return "timeout";
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return "connect_error";
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE: return "tls_error";
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL: return "bad_url";
    default: return "transfer_error";
    }
}

static CURL *easy(const char *url, const struct fetch_options *fo, int64_t deadline_ms)
{
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    struct fetch_options o = canary_fetch_options_until(fo, deadline_ms);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o.connect_timeout_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o.total_timeout_ms);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (o.cacert)
        curl_easy_setopt(c, CURLOPT_CAINFO, o.cacert);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "exactav/" EXACTAV_VERSION " canary-probe");
    return c;
}

/* Level 1: TCP connect time (libcurl's connect phase only). */
static void level_tcp(struct canary_probe *p, const char *url, const struct fetch_options *fo, int64_t deadline_ms)
{
    CURL *c = easy(url, fo, deadline_ms);
    CURLcode rc = c ? CURLE_OK : CURLE_FAILED_INIT;
    if (c) {
        curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
        rc = curl_easy_perform(c);
    }
    curl_off_t us = 0;
    if (rc == CURLE_OK && curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &us) == CURLE_OK) {
        p->row.tcp_connect_ms = some((int64_t)(us / 1000));
    } else {
        snprintf(p->tcp_error, sizeof p->tcp_error, "%s: %s", curl_code(rc), curl_easy_strerror(rc));
        p->row.tcp_error = p->tcp_error;
        failed(p, "tcp", curl_code(rc), 0);
    }
    if (c)
        curl_easy_cleanup(c);
}

/* A request that stops at the first body byte: the headers are what it
 * measures.  It sends the target's headers and cookie; with any of them it
 * never follows a redirect (a credential must not travel to another host:
 * the answer is the first one), without them it follows as the fetcher. */
struct head_answer {
    CURLcode rc;
    long status;
    int64_t ttfb_ms;             /* -1: unknown */
    char acao[256];              /* Access-Control-Allow-Origin, "" when absent */
    bool acac;                   /* Access-Control-Allow-Credentials: true */
    bool stopped;
};

static size_t first_byte(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    (void)ptr;
    (void)size;
    (void)nmemb;
    ((struct head_answer *)userdata)->stopped = true;
    return 0;
}

static void header_value(const char *line, size_t n, const char *name, char *out, size_t cap)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) || line[k] != ':')
        return;
    const char *v = line + k + 1;
    size_t len = n - k - 1;
    while (len && (*v == ' ' || *v == '\t'))
        v++, len--;
    while (len && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), v);
}

/* Each redirect hop's headers arrive here too: a new status line starts
 * the answer again, so only the final answer's CORS headers count. */
static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct head_answer *a = userdata;
    size_t n = size * nmemb;
    char acac[16] = "";
    if (n >= 5 && !strncmp(ptr, "HTTP/", 5)) {
        a->acao[0] = '\0';
        a->acac = false;
    }
    header_value(ptr, n, "access-control-allow-origin", a->acao, sizeof a->acao);
    header_value(ptr, n, "access-control-allow-credentials", acac, sizeof acac);
    if (acac[0])
        a->acac = !strcmp(acac, "true");
    return n;
}

static void head_request(const char *url, const struct fetch_options *fo, const char *origin, int64_t deadline_ms,
                         struct head_answer *a)
{
    memset(a, 0, sizeof *a);
    a->rc = CURLE_FAILED_INIT;
    a->ttfb_ms = -1;
    CURL *c = easy(url, fo, deadline_ms);
    struct curl_slist *hs = NULL;
    char line[320];
    if (origin) {
        snprintf(line, sizeof line, "Origin: %s", origin);
        hs = curl_slist_append(hs, line);
    }
    for (size_t i = 0; i < fo->n_headers; i++)
        hs = curl_slist_append(hs, fo->headers[i]);
    bool credentials = fo->n_headers || fo->cookie;
    if (c) {
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, credentials ? 0L : 1L);
        curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)(fo->max_redirects > 0 ? fo->max_redirects : 0));
        curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
        if (fo->cookie)
            curl_easy_setopt(c, CURLOPT_COOKIE, fo->cookie);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, first_byte);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
        a->rc = curl_easy_perform(c);
        if (a->rc == CURLE_WRITE_ERROR && a->stopped)
            a->rc = CURLE_OK;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
        curl_off_t us = 0;
        if (a->rc == CURLE_OK && curl_easy_getinfo(c, CURLINFO_STARTTRANSFER_TIME_T, &us) == CURLE_OK)
            a->ttfb_ms = (int64_t)(us / 1000);
        curl_easy_cleanup(c);
    }
    curl_slist_free_all(hs);
}

/* Level 2: the newest segment's response headers. */
static void level_headers(struct canary_probe *p, const char *url, const struct fetch_options *fo,
                          int64_t deadline_ms)
{
    struct head_answer a;
    head_request(url, fo, NULL, deadline_ms, &a);
    bool credentials = fo->n_headers || fo->cookie;
    if (a.status > 0)
        p->row.header_status = some(a.status);
    if (a.ttfb_ms >= 0)
        p->row.header_ttfb_ms = some(a.ttfb_ms);
    if (a.rc != CURLE_OK) {
        snprintf(p->header_error, sizeof p->header_error, "%s: %s", curl_code(a.rc), curl_easy_strerror(a.rc));
        failed(p, "headers", curl_code(a.rc), a.status);
    } else if (a.status < 200 || a.status > (credentials ? 399 : 299)) {
        snprintf(p->header_error, sizeof p->header_error, "http_error: HTTP status %ld", a.status);
        failed(p, "headers", "http_error", a.status);
    }
    if (p->header_error[0])
        p->row.header_error = p->header_error;
}

/* What a browser at origin would make of an answer to a plain (simple)
 * cross-origin GET: allowed when Access-Control-Allow-Origin is "*" or the
 * origin itself; a request with cookies (credentials) needs the origin
 * itself and Access-Control-Allow-Credentials: true.  NULL when allowed,
 * else why not. */
static const char *cors_refusal(const struct head_answer *a, const char *origin, bool cookies)
{
    if (!a->acao[0])
        return "no Access-Control-Allow-Origin";
    if (cookies && !strcmp(a->acao, "*"))
        return "Access-Control-Allow-Origin is * but the request carries cookies";
    if (strcmp(a->acao, "*") && strcmp(a->acao, origin))
        return "Access-Control-Allow-Origin names another origin";
    if (cookies && !a->acac)
        return "no Access-Control-Allow-Credentials: true for a request with cookies";
    return NULL;
}

/* Level 4: the checks a browser player makes, for each configured player
 * origin, on the playlist and on the newest segment (the signed URLs when
 * the target signs them).  A refusal is a VIOLATION: the path answers, and
 * every browser at that origin is refused. */
static void level_cors(struct canary_probe *p, const char *playlist, const char *segment,
                       const struct fetch_options *fo, const struct canary_probe_options *po, int64_t deadline_ms)
{
    for (size_t i = 0; i < po->n_origins && !p->reason[0]; i++) {
        const char *what[2] = {"playlist", "segment"}, *url[2] = {playlist, segment};
        for (int k = 0; k < 2 && !p->reason[0]; k++) {
            struct head_answer a;
            head_request(url[k], fo, po->origins[i], deadline_ms, &a);
            char why[160] = "";
            const char *refusal = NULL;
            /* the request with Origin failing is no CORS answer: never a PASS */
            if (a.rc != CURLE_OK)
                snprintf(why, sizeof why, "%s: %s", curl_code(a.rc), curl_easy_strerror(a.rc));
            else if (a.status < 200 || a.status > 399)
                snprintf(why, sizeof why, "http_error: HTTP status %ld", a.status);
            else if (!(refusal = cors_refusal(&a, po->origins[i], fo->cookie != NULL)))
                continue;
            char *err = k ? p->header_error : p->playlist_error;
            size_t cap = k ? sizeof p->header_error : sizeof p->playlist_error;
            snprintf(err, cap, refusal ? "cors: a player at %.200s is refused: %s"
                                       : "cors: a player at %.200s: its request failed: %s",
                     po->origins[i], refusal ? refusal : why);
            if (k)
                p->row.header_error = p->header_error;
            else
                p->row.playlist_error = p->playlist_error;
            if (refusal) {
                p->row.status = EVIDENCE_PROBE_VIOLATION;
                snprintf(p->reason, sizeof p->reason, "cors_%s_refused", what[k]);
            } else {
                failed(p, "cors", a.rc != CURLE_OK ? curl_code(a.rc) : "http_error", a.status);
            }
        }
    }
}

/* Level 3: the whole segment through the project's fetcher. */
static void level_download(struct canary_probe *p, const char *url, const struct hls_segment *h,
                           const struct fetch_options *fo, int64_t deadline_ms)
{
    struct fetch_options o = canary_segment_fetch_options(h, fo, deadline_ms);
    struct fetch_result res;
    fetch_get(&o, url, &res);
    if (res.http_status > 0)
        p->row.download_status = some(res.http_status);
    p->row.download_bytes = some((int64_t)res.bytes);
    p->row.download_ms = some(res.ended_at_ms - res.started_at_ms);
    if (res.error != FETCH_OK) {
        snprintf(p->download_error, sizeof p->download_error, "%s: %s", fetch_error_code(res.error), res.message);
        p->row.download_error = p->download_error;
        failed(p, "download", fetch_error_code(res.error), res.http_status);
    }
    fetch_result_free(&res);
}

void canary_probe_run(const char *url, const struct fetch_options *fo, const struct canary_probe_options *po,
                      int64_t deadline_ms, struct canary_probe *out)
{
    memset(out, 0, sizeof *out);
    struct evidence_probe *r = &out->row;
    if (evidence_new_id(out->id) != EVIDENCE_OK)
        snprintf(out->id, sizeof out->id, "no-randomness");
    r->id = out->id;
    r->observed_at_ms = util_now_ms();
    out->object = redact_url_dup(url, &fo->redact);
    r->object = out->object ? out->object : REDACT_PLACEHOLDER_URL;
    struct canary_playlist *pl = canary_playlist_read(url, fo, deadline_ms);
    uint64_t first = 0, last = 0;
    if (pl && pl->http_status > 0)
        r->playlist_status = some(pl->http_status);
    if (!pl || !canary_playlist_range(pl, &first, &last)) {
        snprintf(out->playlist_error, sizeof out->playlist_error, "%s: %.280s", pl ? pl->failure : "internal_error",
                 pl ? pl->detail : "out of memory");
        r->playlist_error = out->playlist_error;
        failed(out, "playlist", pl ? pl->failure : "internal_error", pl ? pl->http_status : 0);
    } else {
        char *seg = canary_playlist_segment_location(pl, last);
        r->media_sequence = some((int64_t)last);
        if (!seg || !uri_is_http(seg)) {
            snprintf(out->playlist_error, sizeof out->playlist_error, "bad_segment_uri: the newest segment's URI");
            r->playlist_error = out->playlist_error;
            failed(out, "playlist", "bad_segment_uri", 0);
        } else {
            out->segment = redact_url_dup(seg, &fo->redact);
            r->segment = out->segment;
            level_tcp(out, seg, fo, deadline_ms);
            level_headers(out, seg, fo, deadline_ms);
            level_download(out, seg, &pl->pl.segments[pl->pl.segment_count - 1], fo, deadline_ms);
            if (po)
                level_cors(out, url, seg, fo, po, deadline_ms);
        }
        free(seg);
    }
    canary_playlist_release(pl);
    if (!out->reason[0]) {
        snprintf(out->reason, sizeof out->reason, "ok");
        r->status = EVIDENCE_PROBE_PASS;
    }
    r->reason = out->reason;
    r->observed_end_ms = util_now_ms();
}

void canary_probe_free(struct canary_probe *p)
{
    free(p->object);
    free(p->segment);
    memset(p, 0, sizeof *p);
}
