/* fetch: see fetch.h.  Redirects are followed here, hop by hop, rather than
 * by libcurl, so that every hop's URL and status are recorded and the total
 * time-out spans the whole chain.  Every hop uses a fresh connection:
 * libcurl silently re-sends a request when a reused connection turns out to
 * be dead, and an observation must never hide a retry. */
#include "fetch.h"

#include "redact.h"

#include <assert.h>
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#ifndef EXACTAV_VERSION
#define EXACTAV_VERSION "unknown"
#endif

/* Bodies of redirect and error responses are read (to keep the connection
 * protocol sane) but not kept. */
#define DISCARD_LIMIT ((uint64_t)1024 * 1024)

/* How the body of the current hop is handled, decided at its first byte. */
enum body_mode { BODY_UNDECIDED = 0, BODY_KEEP_ALL, BODY_KEEP_SLICE, BODY_DISCARD };

struct hop_state {
    CURL *curl;
    const struct fetch_options *opt;
    enum body_mode mode;
    unsigned char *data;
    size_t len, cap;
    uint64_t received;
    int too_large; /* the write callback aborted because of max_bytes */
    int enough;    /* the write callback stopped once the slice was complete */
    int oom;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int fetch_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void fetch_global_cleanup(void)
{
    curl_global_cleanup();
}

struct fetch_options fetch_options_default(void)
{
    struct fetch_options o = {0};
    o.connect_timeout_ms = FETCH_DEFAULT_CONNECT_TIMEOUT_MS;
    o.total_timeout_ms = FETCH_DEFAULT_TOTAL_TIMEOUT_MS;
    o.low_speed_limit = FETCH_DEFAULT_LOW_SPEED_LIMIT;
    o.low_speed_time_s = FETCH_DEFAULT_LOW_SPEED_TIME_S;
    o.max_bytes = FETCH_DEFAULT_MAX_BYTES;
    o.max_redirects = FETCH_DEFAULT_MAX_REDIRECTS;
    return o;
}

/* The options actually used: zeros become defaults, limits are clamped. */
static struct fetch_options effective_options(const struct fetch_options *in)
{
    struct fetch_options o = in ? *in : fetch_options_default();
    if (o.connect_timeout_ms <= 0)
        o.connect_timeout_ms = FETCH_DEFAULT_CONNECT_TIMEOUT_MS;
    if (o.total_timeout_ms <= 0)
        o.total_timeout_ms = FETCH_DEFAULT_TOTAL_TIMEOUT_MS;
    if (o.low_speed_limit <= 0)
        o.low_speed_limit = FETCH_DEFAULT_LOW_SPEED_LIMIT;
    if (o.low_speed_time_s <= 0)
        o.low_speed_time_s = FETCH_DEFAULT_LOW_SPEED_TIME_S;
    if (o.max_bytes == 0)
        o.max_bytes = FETCH_DEFAULT_MAX_BYTES;
    if (o.max_redirects < 0)
        o.max_redirects = 0;
    if (o.max_redirects > FETCH_MAX_REDIRECTS_LIMIT)
        o.max_redirects = FETCH_MAX_REDIRECTS_LIMIT;
    return o;
}

const char *fetch_error_code(enum fetch_error e)
{
    switch (e) {
    case FETCH_NOT_ATTEMPTED: return "not_attempted";
    case FETCH_OK: return "ok";
    case FETCH_HTTP_ERROR: return "http_error";
    case FETCH_SHORT_TRANSFER: return "short_transfer";
    case FETCH_TIMEOUT: return "timeout";
    case FETCH_TOO_LARGE: return "too_large";
    case FETCH_TOO_MANY_REDIRECTS: return "too_many_redirects";
    case FETCH_CONNECT_ERROR: return "connect_error";
    case FETCH_TLS_ERROR: return "tls_error";
    case FETCH_BAD_URL: return "bad_url";
    case FETCH_BAD_RANGE: return "bad_range";
    case FETCH_TRANSFER_ERROR: return "transfer_error";
    case FETCH_INTERNAL_ERROR: return "internal_error";
    case FETCH_REDIRECT_NOT_ALLOWED: return "redirect_not_allowed";
    }
    return "internal_error";
}

static enum fetch_error fail(struct fetch_result *res, enum fetch_error e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum fetch_error fail(struct fetch_result *res, enum fetch_error e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
    for (char *p = res->message; *p; p++) /* plain ASCII: it goes into JSON and SQLite */
        if (*p < 0x20 || *p > 0x7e)
            *p = '?';
    res->error = e;
    return e;
}

/* ---- body handling ------------------------------------------------------ */

static int reserve(struct hop_state *hs, size_t need)
{
    if (need <= hs->cap)
        return 0;
    size_t cap = hs->cap ? hs->cap : 64 * 1024;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    unsigned char *p = realloc(hs->data, cap);
    if (!p)
        return -1;
    hs->data = p;
    hs->cap = cap;
    return 0;
}

static enum body_mode decide_mode(struct hop_state *hs)
{
    long status = 0;
    curl_easy_getinfo(hs->curl, CURLINFO_RESPONSE_CODE, &status);
    if (hs->opt->range.length && status == 200)
        return BODY_KEEP_SLICE;
    if (status == 200 || (hs->opt->range.length && status == 206))
        return BODY_KEEP_ALL;
    return BODY_DISCARD;
}

/* Appends the part of [pos, pos+n) of the body that is kept. */
static int keep(struct hop_state *hs, const char *p, size_t n, uint64_t pos)
{
    uint64_t from = 0, to = UINT64_MAX;
    if (hs->mode == BODY_KEEP_SLICE) {
        from = hs->opt->range.offset;
        to = hs->opt->range.offset + hs->opt->range.length;
    }
    uint64_t a = pos > from ? pos : from, b = pos + n < to ? pos + n : to;
    if (a >= b)
        return 0;
    if (hs->len + (b - a) > hs->opt->max_bytes) {
        hs->too_large = 1;
        return -1;
    }
    if (reserve(hs, hs->len + (size_t)(b - a)) != 0) {
        hs->oom = 1;
        return -1;
    }
    memcpy(hs->data + hs->len, p + (a - pos), (size_t)(b - a));
    hs->len += (size_t)(b - a);
    return 0;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *userdata)
{
    struct hop_state *hs = userdata;
    size_t n = size * nmemb;
    if (hs->mode == BODY_UNDECIDED) {
        hs->mode = decide_mode(hs);
        curl_off_t cl = -1;
        curl_easy_getinfo(hs->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
        if (hs->mode == BODY_KEEP_ALL && cl > 0 && (uint64_t)cl > hs->opt->max_bytes) {
            hs->too_large = 1; /* declared too large: do not even start */
            return 0;
        }
    }
    uint64_t pos = hs->received;
    hs->received += n;
    if (hs->mode == BODY_DISCARD)
        return hs->received > DISCARD_LIMIT ? 0 : n;
    if (keep(hs, p, n, pos) != 0)
        return 0;
    if (hs->mode == BODY_KEEP_SLICE && hs->len == hs->opt->range.length) {
        hs->enough = 1; /* the slice is complete: the rest of the body is not needed */
        return 0;
    }
    return n;
}

/* ---- one hop -------------------------------------------------------------- */

static void set_options(CURL *c, const struct fetch_options *o, const char *url, long timeout_ms,
                        struct hop_state *hs, char *errbuf)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_limit);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o->low_speed_time_s);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (o->cacert)
        curl_easy_setopt(c, CURLOPT_CAINFO, o->cacert); /* CAPATH keeps the system store */
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "exactav/" EXACTAV_VERSION);
    /* NULL: no Accept-Encoding sent and nothing decoded (a segment's bytes
     * are checked as they came) */
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, o->accept_encoding ? "gzip, deflate" : NULL);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, hs);
}

static void set_range(CURL *c, const struct fetch_range *r, char *buf, size_t n)
{
    if (!r->length)
        return;
    snprintf(buf, n, "%" PRIu64 "-%" PRIu64, r->offset, r->offset + r->length - 1);
    curl_easy_setopt(c, CURLOPT_RANGE, buf);
}

static enum fetch_error classify_curl(CURLcode rc, const struct hop_state *hs)
{
    switch (rc) {
    case CURLE_OK: return FETCH_OK;
    case CURLE_WRITE_ERROR:
        /* Stopped on purpose: the slice is complete, or the body of a redirect
         * or error response is not worth reading to its end. */
        if (hs->enough || hs->mode == BODY_DISCARD)
            return FETCH_OK;
        return hs->too_large ? FETCH_TOO_LARGE
               : hs->oom     ? FETCH_INTERNAL_ERROR
                             : FETCH_TRANSFER_ERROR;
    case CURLE_OPERATION_TIMEDOUT: return FETCH_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED: return FETCH_TOO_LARGE;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return FETCH_SHORT_TRANSFER;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return FETCH_CONNECT_ERROR;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_USE_SSL_FAILED:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED: return FETCH_TLS_ERROR;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL: return FETCH_BAD_URL;
    case CURLE_OUT_OF_MEMORY:
    case CURLE_FAILED_INIT: return FETCH_INTERNAL_ERROR;
    default: return FETCH_TRANSFER_ERROR;
    }
}

/* libcurl's detailed message unless it could quote part of a URL (a query
 * or a userinfo); then only the generic text of the code. */
static const char *safe_curl_message(CURLcode rc, const char *errbuf)
{
    if (errbuf[0] && !strpbrk(errbuf, "?@&;="))
        return errbuf;
    return curl_easy_strerror(rc);
}

/* ---- headers ---------------------------------------------------------------- */

/* Joins every occurrence of header name in the last response; NULL if none. */
static char *header_value(CURL *c, const char *name)
{
    struct curl_header *h = NULL;
    if (curl_easy_header(c, name, 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h)
        return NULL;
    size_t amount = h->amount;
    char *out = calloc(1, FETCH_HEADER_MAX + 1);
    if (!out)
        return NULL;
    size_t len = 0;
    for (size_t i = 0; i < amount && len < FETCH_HEADER_MAX; i++) {
        if (curl_easy_header(c, name, i, CURLH_HEADER, -1, &h) != CURLHE_OK)
            break;
        if (i > 0)
            len += (size_t)snprintf(out + len, FETCH_HEADER_MAX + 1 - len, ", ");
        for (const char *v = h->value; *v && len < FETCH_HEADER_MAX; v++)
            out[len++] = (*v >= 0x20 && *v < 0x7f) ? *v : '?';
    }
    out[len < FETCH_HEADER_MAX ? len : FETCH_HEADER_MAX] = '\0';
    return out;
}

/* Every Set-Cookie value of the last response, as sent (fetch.h). */
static char **set_cookie_values(CURL *c)
{
    struct curl_header *h = NULL;
    if (curl_easy_header(c, "Set-Cookie", 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h)
        return NULL;
    size_t amount = h->amount < FETCH_MAX_SET_COOKIE ? h->amount : FETCH_MAX_SET_COOKIE, n = 0;
    char **out = calloc(amount + 1, sizeof *out);
    for (size_t i = 0; out && i < amount; i++)
        if (curl_easy_header(c, "Set-Cookie", i, CURLH_HEADER, -1, &h) == CURLHE_OK &&
            strlen(h->value) <= FETCH_SET_COOKIE_MAX && (out[n] = strdup(h->value)))
            n++;
    return out;
}

void fetch_set_cookie_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++) {
        OPENSSL_cleanse(v[i], strlen(v[i]));
        free(v[i]);
    }
    free(v);
}

static void headers_free(struct fetch_headers *h)
{
    free(h->age);
    free(h->via);
    free(h->x_cache);
    free(h->server);
    free(h->etag);
    free(h->content_type);
    free(h->content_encoding);
    memset(h, 0, sizeof *h);
}

/* A header value as recorded: redacted like a URL (it may quote one, or
 * carry NAME=VALUE tokens). */
static char *recorded_header(CURL *c, const char *name, const struct redact_policy *pol)
{
    char *raw = header_value(c, name);
    char *red = redact_text_dup(raw, pol);
    free(raw);
    return red;
}

/* Only the documented headers are ever recorded (fetch.h). */
static void record_headers(CURL *c, struct fetch_headers *h, const struct redact_policy *pol)
{
    headers_free(h);
    h->age = recorded_header(c, "Age", pol);
    h->via = recorded_header(c, "Via", pol);
    h->x_cache = recorded_header(c, "X-Cache", pol);
    h->server = recorded_header(c, "Server", pol);
    h->etag = recorded_header(c, "ETag", pol);
    h->content_type = recorded_header(c, "Content-Type", pol);
    h->content_encoding = recorded_header(c, "Content-Encoding", pol);
}

/* Whether the body's end was declared: a Content-Length, chunked transfer
 * coding (its last chunk), or HTTP/2+ framing (END_STREAM).  Otherwise the
 * body ends when the connection closes, and a cut looks like an end. */
static bool length_unproven(CURL *c, int64_t content_length)
{
    long version = 0;
    struct curl_header *h = NULL;
    curl_easy_getinfo(c, CURLINFO_HTTP_VERSION, &version);
    if (content_length >= 0 || version >= CURL_HTTP_VERSION_2_0)
        return false;
    if (curl_easy_header(c, "Transfer-Encoding", 0, CURLH_HEADER, -1, &h) == CURLHE_OK && h &&
        strstr(h->value, "chunked"))
        return false;
    return true;
}

/* ---- final response checks ------------------------------------------------ */

/* A 206 must carry exactly the asked range: "bytes a-b/total". */
static int content_range_matches(CURL *c, const struct fetch_range *r)
{
    struct curl_header *h = NULL;
    if (curl_easy_header(c, "Content-Range", 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h)
        return 0;
    uint64_t a = 0, b = 0;
    if (sscanf(h->value, "bytes %" SCNu64 "-%" SCNu64 "/", &a, &b) != 2)
        return 0;
    return a == r->offset && b == r->offset + r->length - 1;
}

static enum fetch_error check_ranged(struct fetch_result *res, CURL *c,
                                     const struct fetch_options *o, const struct hop_state *hs)
{
    if (res->http_status == 206) {
        res->range_mode = FETCH_RANGE_PARTIAL;
        if (!content_range_matches(c, &o->range))
            return fail(res, FETCH_BAD_RANGE,
                        "206 with a Content-Range other than the asked range");
    } else {
        res->range_mode = FETCH_RANGE_SLICED_FULL;
    }
    if (hs->len < o->range.length)
        return fail(res,
                    res->range_mode == FETCH_RANGE_PARTIAL ? FETCH_SHORT_TRANSFER : FETCH_BAD_RANGE,
                    "range of %" PRIu64 " bytes, got %zu", o->range.length, hs->len);
    return FETCH_OK;
}

/* The last hop completed at the transfer level: is it the object we asked? */
static enum fetch_error check_final(struct fetch_result *res, CURL *c,
                                    const struct fetch_options *o, const struct hop_state *hs)
{
    long st = res->http_status;
    int expected = st == 200 || (o->range.length && st == 206);
    if (!expected)
        return fail(res, FETCH_HTTP_ERROR, "HTTP status %ld", st);
    if (o->range.length)
        return check_ranged(res, c, o, hs);
    if (res->content_length >= 0 && res->wire_bytes != (uint64_t)res->content_length)
        return fail(res, FETCH_SHORT_TRANSFER, "%" PRIu64 " of %" PRId64 " declared bytes",
                    res->wire_bytes, res->content_length);
    return FETCH_OK;
}

/* A range comes from a playlist (untrusted): refuse what cannot be asked
 * before sending anything. */
static enum fetch_error check_range_request(struct fetch_result *res, const struct fetch_options *o)
{
    const struct fetch_range *r = &o->range;
    if (r->length == 0)
        return FETCH_OK;
    if (r->offset > (uint64_t)INT64_MAX - r->length)
        return fail(res, FETCH_BAD_RANGE, "range %" PRIu64 "@%" PRIu64 " out of bounds", r->length,
                    r->offset);
    if (r->length > o->max_bytes)
        return fail(res, FETCH_TOO_LARGE, "range of %" PRIu64 " bytes over the %zu byte limit",
                    r->length, o->max_bytes);
    return FETCH_OK;
}

/* ---- the hop loop ------------------------------------------------------------ */

static int add_hop(struct fetch_result *res, const char *url, long status, const char *location,
                   const struct fetch_options *o)
{
    struct fetch_hop *h = realloc(res->redirects, (res->n_redirects + 1) * sizeof *h);
    if (!h)
        return -1;
    res->redirects = h;
    h += res->n_redirects++;
    h->url = redact_url_dup(url, &o->redact);
    h->http_status = status;
    h->location = redact_url_dup(location, &o->redact);
    return h->url && h->location ? 0 : -1;
}

/* Performs one request for url (with the caller's headers and cookie when
 * credentials); on return hs holds the body. */
static CURLcode perform_hop(CURL *c, const struct fetch_options *o, const char *url,
                            long timeout_ms, struct hop_state *hs, char *errbuf, bool credentials)
{
    char range[64];
    curl_easy_reset(c);
    free(hs->data);
    *hs = (struct hop_state){.curl = c, .opt = o};
    errbuf[0] = '\0';
    set_options(c, o, url, timeout_ms, hs, errbuf);
    set_range(c, &o->range, range, sizeof range);
    struct curl_slist *headers = NULL, *more;
    for (size_t i = 0; credentials && i < o->n_headers; i++)
        if ((more = curl_slist_append(headers, o->headers[i])))
            headers = more;
    if (credentials && o->cookie)
        curl_easy_setopt(c, CURLOPT_COOKIE, o->cookie);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);
    return rc;
}

static void record_response(struct fetch_result *res, CURL *c, const struct hop_state *hs,
                            const struct fetch_options *o)
{
    curl_off_t cl = -1;
    res->http_status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res->http_status);
    curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    res->content_length = cl >= 0 ? (int64_t)cl : -1;
    res->bytes = hs->received;
    if (o->accept_encoding) {
        /* decoded: Content-Length counts the bytes on the wire, which libcurl
         * counts too (it checks the two itself: CURLE_PARTIAL_FILE) */
        curl_off_t wire = 0;
        curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &wire);
        res->wire_bytes = (uint64_t)wire;
    } else {
        res->wire_bytes = hs->received;
    }
    res->length_unproven = !o->range.length && length_unproven(c, res->content_length);
    record_headers(c, &res->headers, &o->redact);
    fetch_set_cookie_free(res->set_cookie);
    res->set_cookie = o->keep_set_cookie ? set_cookie_values(c) : NULL;
}

static int is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* The host of an absolute URL, lower case, without IPv6 brackets; NULL if
 * there is none.  malloc'd. */
static char *url_host(const char *url)
{
    CURLU *u = curl_url();
    char *host = NULL, *out = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host) {
        size_t n = strlen(host), skip = (n >= 2 && host[0] == '[' && host[n - 1] == ']');
        out = strndup(host + skip, n - 2 * skip);
        for (char *p = out; p && *p; p++)
            *p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
    }
    curl_free(host);
    curl_url_cleanup(u);
    return out;
}

static bool host_equal(const char *a, const char *b)
{
    size_t n = strlen(b), skip = (n >= 2 && b[0] == '[' && b[n - 1] == ']');
    return strlen(a) == n - 2 * skip && strncasecmp(a, b + skip, n - 2 * skip) == 0;
}

/* A redirect to next, from the chain that started at first_host: 0 to
 * follow it (marking a change of host), -1 when the allow list refuses it. */
static int check_redirect_host(struct fetch_result *res, const struct fetch_options *o,
                               const char *first_host, const char *next)
{
    char *host = url_host(next);
    bool same = host && first_host && host_equal(host, first_host);
    bool allowed = same || o->n_allow_redirect_hosts == 0;
    for (size_t i = 0; host && !allowed && i < o->n_allow_redirect_hosts; i++)
        allowed = o->allow_redirect_hosts[i] && host_equal(host, o->allow_redirect_hosts[i]);
    if (allowed && !same)
        res->other_host_redirect = true;
    if (!allowed)
        fail(res, FETCH_REDIRECT_NOT_ALLOWED, "redirect to host %.128s, not allowed (--allow-redirect-host)",
             host ? host : "(none)");
    free(host);
    return allowed ? 0 : -1;
}

/* One request of the chain: FETCH_NOT_ATTEMPTED when a redirect was
 * recorded and is to be followed (*current is then its target), else the
 * outcome of the chain. */
static enum fetch_error one_hop(struct fetch_result *res, CURL *c, const struct fetch_options *o,
                               char **current, struct hop_state *hs, char *errbuf,
                               const char *first_host)
{
    long left = o->total_timeout_ms - (long)(now_ms() - res->started_at_ms);
    if (left <= 0)
        return fail(res, FETCH_TIMEOUT, "total time-out of %ld ms spent in redirects",
                    o->total_timeout_ms);
    char *host = url_host(*current); /* credentials go to the requested host only */
    bool same = host && first_host && !strcasecmp(host, first_host);
    free(host);
    CURLcode rc = perform_hop(c, o, *current, left, hs, errbuf, same);
    record_response(res, c, hs, o);
    enum fetch_error e = classify_curl(rc, hs);
    if (e != FETCH_OK)
        return fail(res, e, "%s", safe_curl_message(rc, errbuf));
    char *next = NULL;
    curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &next);
    if (!is_redirect(res->http_status) || !next)
        return check_final(res, c, o, hs);
    if (add_hop(res, *current, res->http_status, next, o) != 0)
        return fail(res, FETCH_INTERNAL_ERROR, "out of memory");
    if (res->n_redirects > (size_t)o->max_redirects)
        return fail(res, FETCH_TOO_MANY_REDIRECTS, "more than %d redirects", o->max_redirects);
    if (check_redirect_host(res, o, first_host, next) != 0)
        return res->error;
    char *copy = strdup(next);
    if (!copy)
        return fail(res, FETCH_INTERNAL_ERROR, "out of memory");
    free(*current);
    *current = copy;
    return FETCH_NOT_ATTEMPTED;
}

/* Follows the chain from *current; leaves the last hop's URL in *current. */
static enum fetch_error run_hops(struct fetch_result *res, CURL *c, const struct fetch_options *o,
                                 char **current, struct hop_state *hs)
{
    char errbuf[CURL_ERROR_SIZE];
    char *first_host = url_host(*current);
    enum fetch_error e;
    while ((e = one_hop(res, c, o, current, hs, errbuf, first_host)) == FETCH_NOT_ATTEMPTED)
        ;
    free(first_host);
    return e;
}

enum fetch_error fetch_get(const struct fetch_options *opt_in, const char *url,
                           struct fetch_result *res)
{
    assert(res);
    memset(res, 0, sizeof *res);
    res->content_length = -1;
    struct fetch_options o = effective_options(opt_in);
    res->url = redact_url_dup(url, &o.redact);
    res->started_at_ms = now_ms();
    res->ended_at_ms = res->started_at_ms;
    if (!url)
        return fail(res, FETCH_BAD_URL, "no URL");
    if (!res->url)
        return fail(res, FETCH_INTERNAL_ERROR, "out of memory");
    if (check_range_request(res, &o) != FETCH_OK)
        return res->error;
    CURL *c = curl_easy_init();
    char *current = strdup(url);
    struct hop_state hs = {0};
    enum fetch_error e = (c && current) ? run_hops(res, c, &o, &current, &hs)
                                        : fail(res, FETCH_INTERNAL_ERROR, "libcurl set-up failed");
    res->ended_at_ms = now_ms();
    res->effective_url = redact_url_dup(current ? current : url, &o.redact);
    res->raw_effective_url = strdup(current ? current : url ? url : "");
    if (e == FETCH_OK) {
        res->error = FETCH_OK;
        res->message[0] = '\0';
        res->data = hs.data;
        res->size = hs.len;
    } else {
        free(hs.data);
    }
    free(current);
    if (c)
        curl_easy_cleanup(c);
    return res->error;
}

void fetch_result_free(struct fetch_result *res)
{
    if (!res)
        return;
    free(res->url);
    free(res->effective_url);
    free(res->raw_effective_url);
    for (size_t i = 0; i < res->n_redirects; i++) {
        free(res->redirects[i].url);
        free(res->redirects[i].location);
    }
    free(res->redirects);
    headers_free(&res->headers);
    fetch_set_cookie_free(res->set_cookie);
    free(res->data);
    memset(res, 0, sizeof *res);
    res->content_length = -1;
}

/* ---- JSON ----------------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_null();
}

static json_t *redirects_json(const struct fetch_result *res)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < res->n_redirects; i++) {
        const char *loc = res->redirects[i].location;
        if (json_array_append_new(a, json_string(loc ? loc : REDACT_PLACEHOLDER_URL)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *headers_json(const struct fetch_headers *h)
{
    json_t *o = json_object();
    json_object_set_new(o, "age", str_or_null(h->age));
    json_object_set_new(o, "via", str_or_null(h->via));
    json_object_set_new(o, "x_cache", str_or_null(h->x_cache));
    json_object_set_new(o, "server", str_or_null(h->server));
    json_object_set_new(o, "etag", str_or_null(h->etag));
    json_object_set_new(o, "content_type", str_or_null(h->content_type));
    json_object_set_new(o, "content_encoding", str_or_null(h->content_encoding));
    return o;
}

static json_t *error_json(const struct fetch_result *res)
{
    if (res->error == FETCH_OK)
        return json_null();
    char *text = fetch_result_error_text(res);
    json_t *j = text ? json_string(text) : NULL;
    free(text);
    return j;
}

json_t *fetch_result_to_json(const struct fetch_result *res, int seq)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "seq", json_integer(seq));
    json_object_set_new(o, "url", str_or_null(res->url));
    json_object_set_new(o, "effective_url", str_or_null(res->effective_url));
    json_object_set_new(o, "http_status",
                        res->http_status > 0 ? json_integer(res->http_status) : json_null());
    json_object_set_new(o, "bytes", json_integer((json_int_t)res->bytes));
    json_object_set_new(o, "content_length",
                        res->content_length >= 0 ? json_integer(res->content_length) : json_null());
    json_object_set_new(o, "started_at_ms", json_integer(res->started_at_ms));
    json_object_set_new(o, "ended_at_ms", json_integer(res->ended_at_ms));
    json_object_set_new(o, "redirects", redirects_json(res));
    json_object_set_new(o, "headers", headers_json(&res->headers));
    json_object_set_new(o, "error", error_json(res));
    if (json_object_size(o) != 11) { /* a sub-object failed to allocate */
        json_decref(o);
        return NULL;
    }
    return o;
}

char *fetch_result_error_text(const struct fetch_result *res)
{
    if (res->error == FETCH_OK)
        return NULL;
    const char *code = fetch_error_code(res->error);
    size_t n = strlen(code) + 2 + strlen(res->message) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s: %s", code, res->message);
    return s;
}
