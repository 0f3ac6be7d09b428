/* canary_alloc.c - allocation targets: a verification session from the
 * admission service, and the candidate it delivers (see canary_alloc.h). */
#include "canary_alloc.h"
#include "canary_cookies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "canary_fetch.h"
#include "exitcodes.h"
#include "redact.h"
#include "uri.h"
#include "util.h"

/* ---- the token file ---- */

int canary_alloc_read_token(const char *path, char **token, char *why, size_t whylen)
{
    char buf[CANARY_ALLOC_TOKEN_MAX + 2];
    unsigned mode = 0;
    *token = NULL;
    FILE *f = util_open_regular(path, &mode, why, whylen);
    if (!f)
        return EXACTAV_EXIT_NOINPUT;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    bool bad_read = ferror(f);
    fclose(f);
    buf[n] = '\0';
    int rc = 0;
    if (bad_read) {
        snprintf(why, whylen, "cannot read %s", path);
        rc = EXACTAV_EXIT_NOINPUT;
    } else if (mode & 077) { /* like a private key: the token is the canary's credential */
        snprintf(why, whylen, "%s is accessible by group or others (mode %04o): chmod 600 it", path, mode & 07777);
        rc = EXACTAV_EXIT_UNUSABLE;
    } else {
        while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
            n--;
        bool ok = n >= CANARY_ALLOC_TOKEN_MIN && n <= CANARY_ALLOC_TOKEN_MAX;
        for (size_t i = 0; ok && i < n; i++)
            ok = buf[i] > 0x20 && buf[i] < 0x7f; /* one header value: printable, no space */
        if (!ok) {
            snprintf(why, whylen, "%s: one line of %d to %d printable bytes expected", path, CANARY_ALLOC_TOKEN_MIN,
                     CANARY_ALLOC_TOKEN_MAX);
            rc = EXACTAV_EXIT_UNUSABLE;
        } else if (!(*token = strndup(buf, n))) {
            snprintf(why, whylen, "out of memory");
            rc = EXACTAV_EXIT_INTERNAL;
        }
    }
    OPENSSL_cleanse(buf, sizeof buf);
    return rc;
}

void canary_alloc_spec_free(struct canary_alloc_spec *s)
{
    if (!s)
        return;
    free(s->service);
    free(s->region);
    free(s->isp);
    free(s->client);
    free(s->build);
    free(s->token_file);
    if (s->token) {
        OPENSSL_cleanse(s->token, strlen(s->token));
        free(s->token);
    }
    free(s);
}

bool canary_alloc_due(const struct canary_alloc_spec *spec, const struct canary_alloc_session *s, int64_t now_ms)
{
    return !s->have || now_ms - s->taken_at_ms >= spec->every_ms || (s->expires_at_ms && now_ms >= s->expires_at_ms);
}

const char *canary_alloc_reason(enum canary_alloc_status st)
{
    return st == CANARY_ALLOC_NOT_DELIVERED ? "allocation_rendition_not_delivered" : "allocation_failed";
}

/* ---- the master playlist ---- */

/* The value of attribute name in an attribute list (RFC 8216 4.2: quoted
 * strings may hold commas), unquoted, into out; false when absent. */
static bool attr(const char *list, const char *name, char *out, size_t n)
{
    size_t nl = strlen(name);
    const char *p = list;
    while (*p) {
        const char *eq = strchr(p, '=');
        if (!eq)
            return false;
        bool hit = (size_t)(eq - p) == nl && !strncmp(p, name, nl);
        const char *v = eq + 1, *end;
        if (*v == '"') {
            v++;
            end = strchr(v, '"');
            if (!end)
                return false;
        } else {
            end = v + strcspn(v, ",");
        }
        if (hit) {
            snprintf(out, n, "%.*s", (int)(end - v), v);
            return true;
        }
        p = *end == '"' ? end + 1 : end;
        if (*p == ',')
            p++;
    }
    return false;
}

struct variant {
    char pathway[CANARY_MAX_NAME + 1], stable[CANARY_MAX_NAME + 1];
    char uri[CANARY_MAX_LOCATION + 1];
};

/* The next line of text (without its CR LF) into line; false at the end. */
static bool next_line(const char **p, char *line, size_t n)
{
    if (!**p)
        return false;
    size_t len = strcspn(*p, "\n");
    size_t keep = len && (*p)[len - 1] == '\r' ? len - 1 : len;
    snprintf(line, n, "%.*s", (int)keep, *p);
    *p += len + ((*p)[len] == '\n');
    return true;
}

/* Calls each variant of master in order (EXT-X-STREAM-INF and its URI
 * line; no PATHWAY-ID: the default pathway "."); stops when fn says so. */
static void each_variant(const char *master, bool (*fn)(const struct variant *v, void *arg), void *arg)
{
    char *l = malloc(CANARY_MAX_LOCATION + 64);
    struct variant *v = malloc(sizeof *v);
    bool pending = false;
    for (const char *p = master; l && v && next_line(&p, l, CANARY_MAX_LOCATION + 64);) {
        if (!strncmp(l, "#EXT-X-STREAM-INF:", 18)) {
            const char *list = l + 18;
            if (!attr(list, "PATHWAY-ID", v->pathway, sizeof v->pathway))
                snprintf(v->pathway, sizeof v->pathway, ".");
            if (!attr(list, "STABLE-VARIANT-ID", v->stable, sizeof v->stable))
                v->stable[0] = '\0';
            pending = true;
        } else if (pending && l[0] && l[0] != '#') {
            snprintf(v->uri, sizeof v->uri, "%s", l);
            pending = false;
            if (!fn(v, arg))
                break;
        }
    }
    free(l);
    free(v);
}

struct pick {
    const char *want_pathway, *rendition;
    bool listed;                 /* want_pathway has a variant */
    char first[CANARY_MAX_NAME + 1];
    char *uri;
    size_t urilen;
    bool found;
};

static bool note_pathway(const struct variant *v, void *arg)
{
    struct pick *k = arg;
    if (!k->first[0])
        snprintf(k->first, sizeof k->first, "%s", v->pathway);
    if (k->want_pathway && !strcmp(v->pathway, k->want_pathway))
        k->listed = true;
    return !k->listed;
}

/* The variant of the rendition: its STABLE-VARIANT-ID, or without one the
 * URI's last segment "<rendition>.m3u8" (/v1/sessions/SID/PATH/RENDITION.m3u8). */
static bool find_variant(const struct variant *v, void *arg)
{
    struct pick *k = arg;
    if (strcmp(v->pathway, k->want_pathway))
        return true;
    bool same = false;
    if (v->stable[0]) {
        same = !strcmp(v->stable, k->rendition);
    } else {
        size_t ul = strcspn(v->uri, "?#"), rl = strlen(k->rendition);
        same = ul >= rl + 6 && !strncmp(v->uri + ul - 5, ".m3u8", 5) &&
               !strncmp(v->uri + ul - 5 - rl, k->rendition, rl) && (ul == rl + 5 || v->uri[ul - 6 - rl] == '/');
    }
    if (same) {
        snprintf(k->uri, k->urilen, "%s", v->uri);
        k->found = true;
    }
    return !same;
}

int canary_alloc_pick(const char *master, const char *priority_json, const char *rendition, char *pathway,
                      size_t pathwaylen, char *uri, size_t urilen, char *why, size_t whylen)
{
    struct pick k = {.rendition = rendition, .uri = uri, .urilen = urilen};
    json_t *prio = priority_json ? json_loads(priority_json, 0, NULL) : NULL;
    size_t i;
    json_t *p;
    pathway[0] = '\0';
    json_array_foreach(prio, i, p) {
        if (!json_is_string(p))
            continue;
        k.want_pathway = json_string_value(p);
        each_variant(master, note_pathway, &k);
        if (k.listed)
            break;
    }
    if (k.listed)
        snprintf(pathway, pathwaylen, "%s", k.want_pathway);
    json_decref(prio);
    if (!pathway[0]) {
        k.want_pathway = NULL;
        each_variant(master, note_pathway, &k);
        if (!k.first[0]) {
            snprintf(why, whylen, "the master playlist lists no variant");
            return -1;
        }
        snprintf(pathway, pathwaylen, "%s", k.first);
    }
    k.want_pathway = pathway;
    each_variant(master, find_variant, &k);
    if (!k.found) {
        snprintf(why, whylen, "the master playlist has no variant of rendition %s on pathway %s", rendition, pathway);
        return 1;
    }
    return 0;
}

bool canary_alloc_steering_uri(const char *master, char *out, size_t outlen)
{
    char *l = malloc(CANARY_MAX_LOCATION + 64);
    bool found = false;
    for (const char *p = master; l && !found && next_line(&p, l, CANARY_MAX_LOCATION + 64);)
        if (!strncmp(l, "#EXT-X-CONTENT-STEERING:", 24))
            found = attr(l + 24, "SERVER-URI", out, outlen);
    free(l);
    return found;
}

/* ---- the requests ---- */

struct body {
    char *data;
    size_t len;
    bool over;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    size_t add = size * n;
    if (b->len + add > CANARY_ALLOC_MAX_BODY) {
        b->over = true;
        return 0;
    }
    char *d = realloc(b->data, b->len + add + 1);
    if (!d)
        return 0;
    memcpy(d + b->len, p, add);
    b->data = d;
    b->len += add;
    d[b->len] = '\0';
    return add;
}

static long left_ms(int64_t deadline_ms)
{
    int64_t left = deadline_ms - util_now_ms();
    return left > 0 ? (long)left : 1;
}

/* POST the allocation; its HTTP status (0: none) and its body. */
static long post_allocation(const struct canary_target *t, const struct fetch_options *fo, const char *id,
                            int64_t deadline_ms, struct body *b, char *detail, size_t n)
{
    const struct canary_alloc_spec *s = t->alloc;
    size_t sl = strlen(s->service);
    while (sl && s->service[sl - 1] == '/')
        sl--;
    char *url = malloc(sl + 20), *auth = malloc(strlen(s->token) + 32);
    json_t *req = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:b}", "allocation_id", id, "cohort", "channel",
                            t->channel, "region", s->region, "isp", s->isp, "client", s->client, "build",
                            s->build, "rendition", t->rendition, "verification", 1);
    char *text = req ? json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    CURL *c = curl_easy_init();
    long status = 0;
    struct curl_slist *h = NULL;
    if (!url || !auth || !text || !c) {
        snprintf(detail, n, "out of memory");
        goto done;
    }
    snprintf(url, sl + 20, "%.*s/v1/allocations", (int)sl, s->service);
    snprintf(auth, strlen(s->token) + 32, "Authorization: Bearer %s", s->token);
    struct curl_slist *h1 = curl_slist_append(NULL, "Content-Type: application/json");
    struct curl_slist *h2 = h1 ? curl_slist_append(h1, auth) : NULL;
    h = h2 ? h2 : h1;
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, left_ms(deadline_ms));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, left_ms(deadline_ms));
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (fo->cacert)
        curl_easy_setopt(c, CURLOPT_CAINFO, fo->cacert);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "exactav-canary");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    char shown[CANARY_MAX_LOCATION + 32]; /* what a message may say of the URL (redact.h) */
    redact_url(url, &fo->redact, shown, sizeof shown);
    if (b->over)
        snprintf(detail, n, "POST %s: HTTP %ld, an answer larger than %zu bytes", shown, status,
                 CANARY_ALLOC_MAX_BODY);
    else if (rc != CURLE_OK)
        snprintf(detail, n, "POST %s: %s", shown, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    if (b->over || rc != CURLE_OK)
        status = 0;
done:
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (auth) {
        OPENSSL_cleanse(auth, strlen(auth));
        free(auth);
    }
    free(text);
    json_decref(req);
    free(url);
    return status;
}

/* A short code of the service's answer: its "error" when it is one (letters,
 * digits, '_'), else a description of the body. */
static void service_error(const json_t *ans, char *out, size_t n)
{
    const char *e = json_string_value(json_object_get(ans, "error"));
    bool code = e && *e && strlen(e) <= 64;
    for (const char *p = e; code && *p; p++)
        code = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
    snprintf(out, n, "%s", code ? e : ans ? "no error code in the answer" : "the answer is not JSON");
}

/* GET url (at most CANARY_ALLOC_MAX_BODY bytes) as text; NULL with why.
 * *base: the last hop's URL (malloc'd), for resolving what it names.
 * set_cookie (may be NULL): the answer's Set-Cookie values (fetch.h,
 * credentials) move there. */
static char *get_text(const char *what, const char *url, const struct fetch_options *fo, int64_t deadline_ms,
                      char **base, long *status, char ***set_cookie, char *why, size_t n)
{
    struct fetch_options o = canary_fetch_options_until(fo, deadline_ms);
    o.max_bytes = CANARY_ALLOC_MAX_BODY;
    o.headers = NULL;
    o.n_headers = 0;
    o.cookie = NULL;
    o.keep_set_cookie = set_cookie != NULL;
    struct fetch_result r;
    char *text = NULL;
    enum fetch_error e = fetch_get(&o, url, &r);
    *status = r.http_status;
    if (e != FETCH_OK) {
        snprintf(why, n, "%s: %s (HTTP %ld)", what, fetch_error_code(e), r.http_status);
    } else if (!(text = malloc(r.size + 1)) || !(*base = strdup(r.raw_effective_url ? r.raw_effective_url : url))) {
        free(text);
        text = NULL;
        snprintf(why, n, "out of memory");
    } else {
        memcpy(text, r.data, r.size);
        text[r.size] = '\0';
        if (strlen(text) != r.size) {
            snprintf(why, n, "%s: a NUL byte in the answer", what);
            free(text);
            free(*base);
            *base = NULL;
            text = NULL;
        }
    }
    if (text && set_cookie) {
        *set_cookie = r.set_cookie;
        r.set_cookie = NULL;
    }
    fetch_result_free(&r);
    return text;
}

/* The steering manifest's PATHWAY-PRIORITY as JSON text (malloc'd); NULL
 * with why. */
static char *steering_priority(const char *master, const char *master_base, const struct fetch_options *fo,
                               int64_t deadline_ms, int64_t *ttl_s, long *status, char *why, size_t n)
{
    *ttl_s = 0;
    char *ref = malloc(CANARY_MAX_LOCATION + 1), *url = NULL, *base = NULL, *out = NULL;
    if (!ref || !canary_alloc_steering_uri(master, ref, CANARY_MAX_LOCATION + 1)) {
        free(ref);
        return NULL;
    }
    enum uri_status us = uri_resolve_alloc(master_base, ref, &url);
    char *text = us == URI_OK ? get_text("steering manifest", url, fo, deadline_ms, &base, status, NULL, why, n)
                              : NULL;
    if (us != URI_OK)
        snprintf(why, n, "steering SERVER-URI: %s", uri_status_code(us));
    json_t *m = text ? json_loads(text, 0, NULL) : NULL;
    json_t *prio = json_object_get(m, "PATHWAY-PRIORITY");
    if (text && !json_is_array(prio))
        snprintf(why, n, "steering manifest: %s", m ? "no PATHWAY-PRIORITY array" : "not JSON");
    else if (text && !(out = json_dumps(prio, JSON_COMPACT)))
        snprintf(why, n, "out of memory");
    /* its TTL, in seconds (RFC 8216bis, Content Steering: 300 when absent) */
    json_t *ttl = json_object_get(m, "TTL");
    if (out)
        *ttl_s = json_is_integer(ttl) && json_integer_value(ttl) >= 1 && json_integer_value(ttl) <= 86400
                     ? (int64_t)json_integer_value(ttl)
                     : 300;
    if (!out && !why[0])
        snprintf(why, n, "steering manifest: not read");
    json_decref(m);
    free(text);
    free(base);
    free(url);
    free(ref);
    return out ? out : strdup("");
}

/* 128 random bits, hex: the allocation id "canary-<32 hex digits>". */
static int new_allocation_id(char out[CANARY_ALLOC_ID_LEN + 1])
{
    unsigned char r[16];
    if (RAND_bytes(r, sizeof r) != 1)
        return -1;
    int k = snprintf(out, CANARY_ALLOC_ID_LEN + 1, "canary-");
    for (size_t i = 0; i < sizeof r; i++)
        k += snprintf(out + k, CANARY_ALLOC_ID_LEN + 1 - (size_t)k, "%02x", r[i]);
    return 0;
}

/* The 201: path_id, playback_url, expires_at_ms into s. */
static enum canary_alloc_status allocated(const json_t *ans, struct canary_alloc_session *s, const char **playback,
                                          char *detail, size_t n)
{
    const char *path = json_string_value(json_object_get(ans, "path_id"));
    *playback = json_string_value(json_object_get(ans, "playback_url"));
    if (!path || strlen(path) > CANARY_MAX_NAME) {
        snprintf(detail, n, "the allocation's answer has no path_id");
        return CANARY_ALLOC_FAILED;
    }
    snprintf(s->pathway, sizeof s->pathway, "%s", path);
    s->expires_at_ms = json_integer_value(json_object_get(ans, "expires_at_ms"));
    if (!*playback || !uri_is_http(*playback)) {
        snprintf(detail, n, "the allocation's answer has no playback_url (path %s is not delivered by the "
                 "service's --paths)", path);
        return CANARY_ALLOC_FAILED;
    }
    return CANARY_ALLOC_OK;
}

/* From the master playlist to the candidate media playlist. */
static enum canary_alloc_status follow(const struct canary_target *t, const struct fetch_options *fo,
                                       const char *playback, int64_t deadline_ms, struct canary_alloc_session *s,
                                       char *detail, size_t n)
{
    char *base = NULL, *uri = malloc(CANARY_MAX_LOCATION + 1), *media = NULL, pathway[CANARY_MAX_NAME + 1];
    char **cookies = NULL;
    long status = 0;
    int64_t ttl_s = 0;
    enum canary_alloc_status st = CANARY_ALLOC_FAILED;
    char *master =
        uri ? get_text("master playlist", playback, fo, deadline_ms, &base, &status, &cookies, detail, n) : NULL;
    char *prio = master ? steering_priority(master, base, fo, deadline_ms, &ttl_s, &status, detail, n) : NULL;
    s->last_status = status;
    if (!master || (prio && !prio[0]))
        goto done; /* the master, or the steering manifest it names, could not be had */
    s->steer_at_ms = ttl_s ? util_now_ms() + ttl_s * 1000 : 0;
    snprintf(s->playback, sizeof s->playback, "%s", playback);
    int k = canary_alloc_pick(master, prio, t->rendition, pathway, sizeof pathway, uri, CANARY_MAX_LOCATION + 1,
                              detail, n);
    if (k < 0)
        goto done;
    snprintf(s->pathway, sizeof s->pathway, "%s", pathway);
    if (k > 0) {
        st = CANARY_ALLOC_NOT_DELIVERED;
        goto done;
    }
    enum uri_status us = uri_resolve_alloc(base, uri, &media);
    if (us != URI_OK || !uri_is_http(media) || strlen(media) > CANARY_MAX_LOCATION) {
        snprintf(detail, n, "the variant URI of %s on pathway %s: %s", t->rendition, pathway,
                 us != URI_OK ? uri_status_code(us) : "not a usable http(s) URL");
        goto done;
    }
    /* what the master set for the CDN, sent on as a browser would */
    if (canary_cookies_for((const char *const *)cookies, base, media, s->cookie, sizeof s->cookie) != 0) {
        snprintf(detail, n, "the cookies the master playlist set do not fit in %d bytes", CANARY_ALLOC_COOKIE_MAX);
        goto done;
    }
    snprintf(s->url, sizeof s->url, "%s", media);
    detail[0] = '\0';
    st = CANARY_ALLOC_OK;
done:
    fetch_set_cookie_free(cookies);
    free(media);
    free(prio);
    free(master);
    free(base);
    free(uri);
    return st;
}

int canary_alloc_steer(const struct canary_target *t, const struct fetch_options *fo, int64_t deadline_ms,
                       struct canary_alloc_session *s, char *detail, size_t detaillen)
{
    detail[0] = '\0';
    int64_t now = util_now_ms();
    if (!s->have || !s->steer_at_ms || now < s->steer_at_ms)
        return 0;
    struct canary_alloc_session *c = malloc(sizeof *c);
    if (!c)
        return 0;
    *c = *s;
    char why[320] = "";
    enum canary_alloc_status st = follow(t, fo, s->playback, deadline_ms, c, why, sizeof why);
    int res = 0;
    if (c->last_status == 410) {
        res = -1; /* the session ended (its master or steering: allocation_ended) */
    } else if (st != CANARY_ALLOC_OK) {
        s->steer_at_ms = now + CANARY_ALLOC_STEER_RETRY_S * 1000; /* keep playing what it plays */
    } else {
        if (strcmp(c->pathway, s->pathway)) {
            snprintf(detail, detaillen, "pathway %s -> %s (steering)", s->pathway, c->pathway);
            res = 1;
        }
        *s = *c;
    }
    OPENSSL_cleanse(c, sizeof *c); /* its cookie */
    free(c);
    return res;
}

enum canary_alloc_status canary_alloc_take(const struct canary_target *t, const struct fetch_options *fo,
                                           int64_t deadline_ms, struct canary_alloc_session *s, char *detail,
                                           size_t detaillen)
{
    OPENSSL_cleanse(s, sizeof *s); /* the session replaced, its cookie with it */
    detail[0] = '\0';
    char id[CANARY_ALLOC_ID_LEN + 1];
    if (new_allocation_id(id) != 0) {
        snprintf(detail, detaillen, "no randomness for an allocation id");
        return CANARY_ALLOC_FAILED;
    }
    struct body b = {0};
    long status = post_allocation(t, fo, id, deadline_ms, &b, detail, detaillen);
    json_t *ans = status && b.data ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    enum canary_alloc_status st = CANARY_ALLOC_FAILED;
    const char *playback = NULL;
    if (status == 201 || status == 200) {
        snprintf(s->allocation_id, sizeof s->allocation_id, "%s", id);
        st = json_is_object(ans) ? allocated(ans, s, &playback, detail, detaillen) : CANARY_ALLOC_FAILED;
        if (!json_is_object(ans))
            snprintf(detail, detaillen, "the allocation's answer (HTTP %ld) is not a JSON object", status);
    } else if (status) {
        char code[80];
        service_error(ans, code, sizeof code);
        snprintf(detail, detaillen, "the service refused the allocation: HTTP %ld, error %s", status, code);
    }
    if (st == CANARY_ALLOC_OK)
        st = follow(t, fo, playback, deadline_ms, s, detail, detaillen);
    if (st == CANARY_ALLOC_OK) {
        s->have = true;
        s->taken_at_ms = util_now_ms();
    }
    json_decref(ans);
    free(b.data);
    return st;
}
