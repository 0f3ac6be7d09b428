/* canary_cookies.c - the cookies of a session (see the header). */
#include "canary_cookies.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

struct url_parts {
    char host[256];
    char path[2048];
    bool https;
};

static int parts_of(const char *url, struct url_parts *p)
{
    CURLU *u = curl_url();
    char *host = NULL, *path = NULL, *scheme = NULL;
    int rc = -1;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK && strlen(host) < sizeof p->host &&
        strlen(path) < sizeof p->path) {
        size_t i = 0;
        for (; host[i]; i++)
            p->host[i] = (char)tolower((unsigned char)host[i]);
        p->host[i] = '\0';
        snprintf(p->path, sizeof p->path, "%s", path);
        p->https = !strcasecmp(scheme, "https");
        rc = 0;
    }
    curl_free(host);
    curl_free(path);
    curl_free(scheme);
    curl_url_cleanup(u);
    return rc;
}

/* An IPv4 or IPv6 literal (curl gives IPv6 hosts in brackets). */
static bool is_ip(const char *host)
{
    if (host[0] == '[')
        return true;
    for (const char *c = host; *c; c++)
        if (!isdigit((unsigned char)*c) && *c != '.')
            return false;
    return true;
}

/* RFC 6265 5.1.3. */
static bool domain_match(const char *host, const char *domain)
{
    size_t h = strlen(host), d = strlen(domain);
    if (!strcasecmp(host, domain))
        return true;
    return !is_ip(host) && d > 0 && h > d && host[h - d - 1] == '.' && !strcasecmp(host + h - d, domain);
}

/* RFC 6265 5.1.4. */
static bool path_match(const char *path, const char *cookie_path)
{
    size_t n = strlen(cookie_path);
    if (strncmp(path, cookie_path, n))
        return false;
    return path[n] == '\0' || (n > 0 && cookie_path[n - 1] == '/') || path[n] == '/';
}

/* s[0..n) without the spaces around it. */
static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

struct cookie {
    const char *pair; /* name=value, pair_len bytes */
    size_t pair_len;
    char domain[256], path[2048];
    bool secure, has_domain, has_path;
};

static void attribute(struct cookie *c, const char *a, size_t n)
{
    const char *eq = memchr(a, '=', n);
    size_t kn = eq ? (size_t)(eq - a) : n, vn = eq ? n - kn - 1 : 0;
    const char *k = a, *v = eq ? eq + 1 : "";
    trim(&k, &kn);
    trim(&v, &vn);
    if (kn == 6 && !strncasecmp(k, "Secure", 6)) {
        c->secure = true;
    } else if (kn == 6 && !strncasecmp(k, "Domain", 6) && vn && vn < sizeof c->domain) {
        if (*v == '.') {
            v++;
            vn--;
        }
        snprintf(c->domain, sizeof c->domain, "%.*s", (int)vn, v);
        c->has_domain = vn > 0;
    } else if (kn == 4 && !strncasecmp(k, "Path", 4) && vn && *v == '/' && vn < sizeof c->path) {
        snprintf(c->path, sizeof c->path, "%.*s", (int)vn, v);
        c->has_path = true;
    }
}

/* One Set-Cookie value; false when it holds no usable name=value. */
static bool parse(const char *set, struct cookie *c)
{
    memset(c, 0, sizeof *c);
    size_t n = strcspn(set, ";");
    const char *p = set;
    trim(&p, &n);
    const char *eq = memchr(p, '=', n);
    if (!eq || eq == p)
        return false;
    c->pair = p;
    c->pair_len = n;
    for (const char *a = set + strcspn(set, ";"); *a == ';';) {
        a++;
        size_t an = strcspn(a, ";");
        attribute(c, a, an);
        a += an;
    }
    return true;
}

/* The directory of a path: up to its last '/', "/" at least (5.1.4). */
static void default_path(const char *path, char *out, size_t cap)
{
    const char *last = strrchr(path, '/');
    size_t n = last && last != path ? (size_t)(last - path) : 1;
    snprintf(out, cap, "%.*s", (int)n, path[0] == '/' ? path : "/");
}

static bool sent_to(const struct cookie *c, const struct url_parts *from, const struct url_parts *to)
{
    if (c->secure && !to->https)
        return false;
    if (c->has_domain ? !domain_match(from->host, c->domain) || !domain_match(to->host, c->domain)
                      : strcmp(from->host, to->host))
        return false;
    char dir[sizeof c->path];
    if (!c->has_path)
        default_path(from->path, dir, sizeof dir);
    return path_match(to->path, c->has_path ? c->path : dir);
}

int canary_cookies_for(const char *const *set, const char *from_url, const char *url, char *out, size_t cap)
{
    if (!cap)
        return -1;
    out[0] = '\0';
    struct url_parts from, to;
    if (!set || !set[0])
        return 0;
    if (parts_of(from_url, &from) != 0 || parts_of(url, &to) != 0)
        return -1;
    size_t used = 0;
    for (size_t i = 0; set[i]; i++) {
        struct cookie c;
        if (!parse(set[i], &c) || !sent_to(&c, &from, &to))
            continue;
        int k = snprintf(out + used, cap - used, "%s%.*s", used ? "; " : "", (int)c.pair_len, c.pair);
        if (k < 0 || (size_t)k >= cap - used) {
            out[0] = '\0';
            return -1;
        }
        used += (size_t)k;
    }
    return 0;
}
