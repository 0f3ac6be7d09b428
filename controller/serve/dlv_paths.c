/* dlv_paths.c - paths.json, the delivery configuration (see dlv_paths.h).
 *
 * Strict by design: a configuration that names a key the service does not
 * know is a mistake the operator must hear about (a misspelt "url_ttl_s"
 * would otherwise silently sign URLs for the default time).  Every message
 * names the member by its dotted path.
 */
#include "dlv_paths.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static bool id_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > DLV_ID_MAX)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* Every member of o must be one of names (NULL-terminated). */
static int only_keys(const json_t *o, const char *const *names, const char *where, char *err,
                     size_t errlen)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        bool known = false;
        for (size_t i = 0; names[i] && !known; i++)
            known = !strcmp(k, names[i]);
        if (!known)
            return fail(err, errlen, "%s.%.64s: unknown key", where, k);
    }
    return 0;
}

/* An integer member in [min, max], or def when absent. */
static int int_member(const json_t *o, const char *name, int64_t min, int64_t max, int64_t def,
                      int64_t *out, const char *where, char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, name);
    *out = def;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return fail(err, errlen, "%s.%s: an integer from %lld to %lld expected", where, name,
                    (long long)min, (long long)max);
    *out = json_integer_value(v);
    return 0;
}

/* A string member of 1..cap-1 bytes into out ("" when absent and optional). */
static int str_member(const json_t *o, const char *name, bool required, char *out, size_t cap,
                      const char *where, char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, name);
    out[0] = '\0';
    if (!v && !required)
        return 0;
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap ||
        strlen(json_string_value(v)) != json_string_length(v))
        return fail(err, errlen, "%s.%s: a string of 1 to %zu bytes expected", where, name,
                    cap - 1);
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

/* The wildcard resource of a rendition: its URL up to the last '/' of the
 * path (query dropped), then '*'. */
static void wildcard(const char *url, char *out, size_t cap)
{
    size_t end = strcspn(url, "?");
    const char *host = strstr(url, "://");
    size_t slash = 0;
    for (size_t i = host ? (size_t)(host - url) + 3 : 0; i < end; i++)
        if (url[i] == '/')
            slash = i;
    size_t n = slash ? slash + 1 : end; /* no path: the whole host */
    if (n + 3 > cap)
        n = cap - 3;
    memcpy(out, url, n);
    memcpy(out + n, slash ? "*" : "/*", slash ? 2 : 3);
}

/* HLS's FRAME-RATE: a decimal-floating-point, here digits with at most
 * three decimals (as written in a playlist, compared as text). */
static bool frame_rate_ok(const char *s)
{
    size_t digits = strspn(s, "0123456789");
    if (digits == 0 || digits > 4)
        return false;
    if (!s[digits])
        return true;
    size_t frac = strspn(s + digits + 1, "0123456789");
    return s[digits] == '.' && frac >= 1 && frac <= 3 && !s[digits + 1 + frac];
}

static int rendition(const char *name, const json_t *v, struct dlv_rendition *r,
                     const char *where, char *err, size_t errlen)
{
    char w[512];
    snprintf(w, sizeof w, "%.200s.%.64s", where, name);
    if (!id_ok(name))
        return fail(err, errlen, "%s: a rendition name is 1 to %d of A-Z a-z 0-9 . _ -", w,
                    DLV_ID_MAX);
    snprintf(r->name, sizeof r->name, "%s", name);
    const json_t *url = v;
    r->bandwidth = 1000000;
    if (json_is_object(v)) {
        static const char *const keys[] = {"url",        "bandwidth", "codecs",
                                           "resolution", "frame_rate", NULL};
        if (only_keys(v, keys, w, err, errlen) ||
            int_member(v, "bandwidth", 1, 1000000000000LL, 1000000, &r->bandwidth, w, err,
                       errlen) ||
            str_member(v, "codecs", false, r->codecs, sizeof r->codecs, w, err, errlen) ||
            str_member(v, "resolution", false, r->resolution, sizeof r->resolution, w, err,
                       errlen) ||
            str_member(v, "frame_rate", false, r->frame_rate, sizeof r->frame_rate, w, err,
                       errlen))
            return -1;
        if (r->frame_rate[0] && !frame_rate_ok(r->frame_rate))
            return fail(err, errlen, "%s.frame_rate: a decimal string expected (\"25\", \"29.97\")",
                        w);
        if (strpbrk(r->codecs, "\"\r\n"))
            return fail(err, errlen, "%s.codecs: no quote or line break", w);
        for (const char *c = r->resolution; *c; c++)
            if (!((*c >= '0' && *c <= '9') || *c == 'x'))
                return fail(err, errlen, "%s.resolution: WIDTHxHEIGHT expected", w);
        url = json_object_get(v, "url");
    }
    if (!json_is_string(url) || json_string_length(url) > DLV_URL_MAX ||
        strlen(json_string_value(url)) != json_string_length(url))
        return fail(err, errlen, "%s: a URL (string of at most %d bytes) or an object with url",
                    w, DLV_URL_MAX);
    const char *why = cfsign_url_problem(json_string_value(url));
    if (why)
        return fail(err, errlen, "%s: %s", w, why);
    snprintf(r->url, sizeof r->url, "%s", json_string_value(url));
    wildcard(r->url, r->resource, sizeof r->resource);
    return 0;
}

static int auth(const json_t *a, struct dlv_path *p, const char *base_dir, const char *where,
                char *err, size_t errlen)
{
    char w[512], type[32], file[4096], hash[16];
    snprintf(w, sizeof w, "%.200s.auth", where);
    if (!json_is_object(a))
        return fail(err, errlen, "%s: an object with \"type\" expected", w);
    if (str_member(a, "type", true, type, sizeof type, w, err, errlen))
        return -1;
    if (!strcmp(type, "none")) {
        static const char *const keys[] = {"type", NULL};
        p->auth = DLV_AUTH_NONE;
        return only_keys(a, keys, w, err, errlen);
    }
    p->auth = !strcmp(type, "cloudfront-url")       ? DLV_AUTH_CF_URL
              : !strcmp(type, "cloudfront-cookies") ? DLV_AUTH_CF_COOKIES
                                                    : DLV_AUTH_UNSET;
    if (p->auth == DLV_AUTH_UNSET)
        return fail(err, errlen, "%s.type: none, cloudfront-url or cloudfront-cookies expected",
                    w);
    static const char *const url_keys[] = {"type", "key_file", "key_pair_id", "hash", NULL};
    static const char *const cookie_keys[] = {"type", "key_file", "key_pair_id", "hash",
                                              "cookie_domain", NULL};
    if (only_keys(a, p->auth == DLV_AUTH_CF_URL ? url_keys : cookie_keys, w, err, errlen) ||
        str_member(a, "key_file", true, file, sizeof file, w, err, errlen) ||
        str_member(a, "key_pair_id", true, p->key_pair_id, sizeof p->key_pair_id, w, err,
                   errlen) ||
        str_member(a, "hash", false, hash, sizeof hash, w, err, errlen) ||
        str_member(a, "cookie_domain", false, p->cookie_domain, sizeof p->cookie_domain, w, err,
                   errlen))
        return -1;
    if (!cfsign_key_pair_id_ok(p->key_pair_id))
        return fail(err, errlen, "%s.key_pair_id: 1 to 128 of A-Z a-z 0-9 _ - expected", w);
    if (!hash[0] || !strcasecmp(hash, "sha1"))
        p->hash = CFSIGN_SHA1;
    else if (!strcasecmp(hash, "sha256"))
        p->hash = CFSIGN_SHA256;
    else
        return fail(err, errlen, "%s.hash: sha1 or sha256 expected", w);
    for (const char *c = p->cookie_domain; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '-'))
            return fail(err, errlen, "%s.cookie_domain: a host name expected", w);
    int n = file[0] == '/' ? snprintf(p->key_file, sizeof p->key_file, "%s", file)
                           : snprintf(p->key_file, sizeof p->key_file, "%s/%s",
                                      base_dir ? base_dir : ".", file);
    if (n < 0 || (size_t)n >= sizeof p->key_file)
        return fail(err, errlen, "%s.key_file: the path is too long", w);
    return 0;
}

static int path(const char *id, const json_t *v, struct dlv_path *p, const char *base_dir,
                char *err, size_t errlen)
{
    char w[512];
    snprintf(w, sizeof w, "paths.%.64s", id);
    static const char *const keys[] = {"renditions", "auth", "url_ttl_s", NULL};
    if (!id_ok(id))
        return fail(err, errlen, "%s: a path id is 1 to %d of A-Z a-z 0-9 . _ -", w, DLV_ID_MAX);
    if (!json_is_object(v))
        return fail(err, errlen, "%s: an object expected", w);
    if (only_keys(v, keys, w, err, errlen))
        return -1;
    snprintf(p->id, sizeof p->id, "%s", id);
    const json_t *rs = json_object_get(v, "renditions");
    if (!json_is_object(rs) || json_object_size(rs) == 0 ||
        json_object_size(rs) > DLV_MAX_RENDITIONS)
        return fail(err, errlen, "%s.renditions: an object of 1 to %d renditions expected", w,
                    DLV_MAX_RENDITIONS);
    char rw[512];
    snprintf(rw, sizeof rw, "%.200s.renditions", w);
    const char *name;
    json_t *r;
    json_object_foreach((json_t *)rs, name, r)
        if (rendition(name, r, &p->r[p->n++], rw, err, errlen))
            return -1;
    if (auth(json_object_get(v, "auth"), p, base_dir, w, err, errlen))
        return -1;
    if (p->auth == DLV_AUTH_NONE && json_object_get(v, "url_ttl_s"))
        return fail(err, errlen, "%s.url_ttl_s: only for a path that signs (auth.type "
                                 "cloudfront-url or cloudfront-cookies)", w);
    return int_member(v, "url_ttl_s", 10, 7 * 86400, 300, &p->url_ttl_s, w, err, errlen);
}

/* The scheme and authority of an absolute URL as written ("https://h:1"):
 * its length, 0 when there is no "://". */
static size_t origin_len(const char *url)
{
    const char *sep = strstr(url, "://");
    return sep ? (size_t)(sep - url) + 3 + strcspn(sep + 3, "/?#") : 0;
}

/* Signed cookies are set for one host and one Path, over one wildcard
 * resource: a cloudfront-cookies path with renditions on two schemes,
 * hosts or ports has no such resource (the cookie builder once crashed on
 * it at the first master.m3u8).  Refused here, when paths.json is read,
 * whatever the auth type of the other paths.  The origins are compared as
 * parsed and as written, since the resource is built from the text. */
static int one_origin(const struct dlv_path *p, char *err, size_t errlen)
{
    if (p->auth != DLV_AUTH_CF_COOKIES)
        return 0;
    const struct dlv_rendition *a = &p->r[0];
    size_t n = origin_len(a->url);
    for (size_t k = 0; k < p->n; k++) {
        const struct dlv_rendition *b = &p->r[k];
        if (!b->place.ok || !n || origin_len(b->url) != n || strncmp(a->url, b->url, n) ||
            strcmp(a->place.scheme, b->place.scheme) || strcmp(a->place.host, b->place.host) ||
            a->place.port != b->place.port)
            return fail(err, errlen,
                        "paths.%s.renditions: a cloudfront-cookies path has every rendition on "
                        "one scheme, host and port, written alike (%s is on %.*s, %s on %.*s): "
                        "its cookies are set for one host and one wildcard",
                        p->id, a->name, (int)(n ? n : strlen(a->url)), a->url, b->name,
                        (int)(origin_len(b->url) ? origin_len(b->url) : strlen(b->url)), b->url);
    }
    return 0;
}

int dlv_paths_parse(const char *text, size_t len, const char *base_dir, struct dlv_paths *out,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    int rc = -1;
    static const char *const keys[] = {"paths", "steering_ttl_s", "playlist_cache_ms", NULL};
    if (!root) {
        fail(err, errlen, "not JSON (line %d, column %d): %s", je.line, je.column, je.text);
    } else if (!json_is_object(root)) {
        fail(err, errlen, "the top level must be an object with \"paths\"");
    } else if (only_keys(root, keys, "paths.json", err, errlen) == 0 &&
               int_member(root, "steering_ttl_s", 1, 3600, 10, &out->steering_ttl_s,
                          "paths.json", err, errlen) == 0 &&
               int_member(root, "playlist_cache_ms", 0, 10000, 1000, &out->playlist_cache_ms,
                          "paths.json", err, errlen) == 0) {
        const json_t *ps = json_object_get(root, "paths");
        const char *id;
        json_t *v;
        rc = 0;
        if (!json_is_object(ps) || json_object_size(ps) == 0 ||
            json_object_size(ps) > DLV_MAX_PATHS)
            rc = fail(err, errlen, "paths: an object of 1 to %d paths expected", DLV_MAX_PATHS);
        else
            json_object_foreach((json_t *)ps, id, v)
                if (rc == 0)
                    rc = path(id, v, &out->p[out->n++], base_dir, err, errlen);
        if (rc == 0)
            rc = dlv_paths_locate(out, err, errlen);
        for (size_t i = 0; rc == 0 && i < out->n; i++)
            rc = one_origin(&out->p[i], err, errlen);
        if (rc == 0)
            rc = dlv_paths_check_variants(out, err, errlen);
    }
    json_decref(root);
    return rc;
}

int dlv_paths_load_keys(struct dlv_paths *ps, char *err, size_t errlen)
{
    for (size_t i = 0; i < ps->n; i++) {
        struct dlv_path *p = &ps->p[i];
        if (p->auth != DLV_AUTH_CF_URL && p->auth != DLV_AUTH_CF_COOKIES)
            continue;
        bool unopenable = false;
        char why[512];
        p->key = cfsign_key_load(p->key_file, &unopenable, why, sizeof why);
        if (!p->key) {
            fail(err, errlen, "paths.%s.auth.key_file: %s", p->id, why);
            return unopenable ? 66 : 65;
        }
    }
    return 0;
}

void dlv_paths_free(struct dlv_paths *ps)
{
    for (size_t i = 0; ps && i < ps->n; i++) {
        cfsign_key_free(ps->p[i].key);
        ps->p[i].key = NULL;
    }
}

const struct dlv_path *dlv_paths_find(const struct dlv_paths *ps, const char *id)
{
    for (size_t i = 0; ps && i < ps->n; i++)
        if (!strcmp(ps->p[i].id, id))
            return &ps->p[i];
    return NULL;
}

const struct dlv_rendition *dlv_path_rendition(const struct dlv_path *p, const char *name)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (!strcmp(p->r[i].name, name))
            return &p->r[i];
    return NULL;
}
