/* redact: see redact.h.  A small hand-written splitter rather than CURLU:
 * CURLU normalises (case of %XX, default ports, dot segments), and the
 * contract here is "everything except the secrets stays byte for byte". */
#include "redact.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* CloudFront's signing parameters (signed URLs and the Hash-Algorithm
 * extension).  Their values are credentials or tie a URL to one grant. */
static const char *const builtin_names[] = {"Policy", "Signature", "Key-Pair-Id", "Expires",
                                            "Hash-Algorithm"};

/* Bounded output: once something does not fit, nothing more is written and
 * the whole result is replaced by the placeholder. */
struct rbuf {
    char *p;
    size_t cap;
    size_t len;
    int overflow;
};

static void put(struct rbuf *b, const char *s, size_t n)
{
    if (b->overflow)
        return;
    if (n >= b->cap - b->len) {
        b->overflow = 1;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(struct rbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = lower(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Compares a raw (percent-encoded) name with a plain target, decoding %XX on
 * the fly, ASCII case-insensitively.  Malformed escapes compare literally. */
static int name_equals(const char *raw, size_t raw_len, const char *target)
{
    size_t i = 0, j = 0, tlen = strlen(target);
    while (i < raw_len) {
        int c = (unsigned char)raw[i];
        if (c == '%' && i + 2 < raw_len && hexval(raw[i + 1]) >= 0 && hexval(raw[i + 2]) >= 0) {
            c = hexval(raw[i + 1]) * 16 + hexval(raw[i + 2]);
            i += 3;
        } else {
            i += 1;
        }
        if (j >= tlen || lower(c) != lower((unsigned char)target[j]))
            return 0;
        j++;
    }
    return j == tlen;
}

int redact_is_secret_name(const char *name, size_t name_len, const char *const extra_names[],
                          size_t n_extra)
{
    for (size_t k = 0; k < sizeof builtin_names / sizeof builtin_names[0]; k++)
        if (name_equals(name, name_len, builtin_names[k]))
            return 1;
    for (size_t k = 0; extra_names && k < n_extra; k++)
        if (extra_names[k] && extra_names[k][0] && name_equals(name, name_len, extra_names[k]))
            return 1;
    return 0;
}

/* A URL we are willing to echo: printable ASCII without spaces, bounded. */
static int url_is_printable(const char *url, size_t *len_out)
{
    size_t n = 0;
    for (; url[n]; n++) {
        unsigned char c = (unsigned char)url[n];
        if (n >= REDACT_MAX_URL || c <= 0x20 || c >= 0x7f)
            return 0;
    }
    *len_out = n;
    return n > 0;
}

/* Length of "scheme:" at the start of s (0 for a relative reference). */
static size_t scheme_len(const char *s, size_t n)
{
    static const char alpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if (n == 0 || !strchr(alpha, s[0]))
        return 0;
    for (size_t i = 1; i < n; i++) {
        if (s[i] == ':')
            return i + 1;
        if (!strchr(alpha, s[i]) && !strchr("0123456789+-.", s[i]))
            return 0;
    }
    return 0;
}

/* Copies "//authority" replacing any userinfo; returns bytes consumed. */
static size_t put_authority(struct rbuf *b, const char *s, size_t n)
{
    if (n < 2 || s[0] != '/' || s[1] != '/')
        return 0;
    size_t end = 2;
    while (end < n && s[end] != '/' && s[end] != '?' && s[end] != '#')
        end++;
    size_t at = 0; /* the last '@' of the authority separates the userinfo */
    for (size_t i = 2; i < end; i++)
        if (s[i] == '@')
            at = i;
    put(b, "//", 2);
    if (at) {
        puts_(b, REDACT_VALUE);
        put(b, s + at, end - at);
    } else {
        put(b, s + 2, end - 2);
    }
    return end;
}

/* Copies one query parameter, replacing the value when the name is secret. */
static void put_param(struct rbuf *b, const char *p, size_t n, const char *const extra[],
                      size_t n_extra)
{
    const char *eq = memchr(p, '=', n);
    if (eq && redact_is_secret_name(p, (size_t)(eq - p), extra, n_extra)) {
        put(b, p, (size_t)(eq - p) + 1);
        puts_(b, REDACT_VALUE);
    } else {
        put(b, p, n);
    }
}

/* Copies the query (without '?'), parameter by parameter.  '&' and ';' both
 * separate parameters: splitting on more separators can only redact more. */
static void put_query(struct rbuf *b, const char *q, size_t n, const char *const extra[],
                      size_t n_extra)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || q[i] == '&' || q[i] == ';') {
            put_param(b, q + start, i - start, extra, n_extra);
            if (i < n)
                put(b, q + i, 1);
            start = i + 1;
        }
    }
}

static void put_placeholder(char *out, size_t out_size)
{
    if (out_size == 0)
        return;
    if (out_size > strlen(REDACT_PLACEHOLDER_URL))
        memcpy(out, REDACT_PLACEHOLDER_URL, strlen(REDACT_PLACEHOLDER_URL) + 1);
    else
        out[0] = '\0';
}

enum redact_status redact_url(const char *url, const char *const extra_names[], size_t n_extra,
                              char *out, size_t out_size)
{
    size_t n = 0;
    if (!out || out_size == 0)
        return REDACT_UNPARSEABLE;
    if (!url || !url_is_printable(url, &n)) {
        put_placeholder(out, out_size);
        return REDACT_UNPARSEABLE;
    }
    struct rbuf b = {out, out_size, 0, 0};
    out[0] = '\0';
    size_t pos = scheme_len(url, n);
    put(&b, url, pos);
    pos += put_authority(&b, url + pos, n - pos);
    size_t path_end = pos;
    while (path_end < n && url[path_end] != '?' && url[path_end] != '#')
        path_end++;
    put(&b, url + pos, path_end - pos);
    pos = path_end;
    if (pos < n && url[pos] == '?') {
        size_t q_end = pos + 1;
        while (q_end < n && url[q_end] != '#')
            q_end++;
        put(&b, "?", 1);
        put_query(&b, url + pos + 1, q_end - pos - 1, extra_names, n_extra);
        pos = q_end;
    }
    put(&b, url + pos, n - pos); /* the fragment, verbatim */
    if (b.overflow) {
        put_placeholder(out, out_size);
        return REDACT_UNPARSEABLE;
    }
    assert(b.len < out_size);
    return REDACT_OK;
}

char *redact_url_dup(const char *url, const char *const extra_names[], size_t n_extra)
{
    size_t n = url ? strnlen(url, REDACT_MAX_URL + 1) : 0;
    size_t seps = 0;
    for (size_t i = 0; i < n; i++)
        seps += (url[i] == '&' || url[i] == ';' || url[i] == '?');
    /* Each parameter or the userinfo grows by at most strlen(REDACT_VALUE). */
    size_t cap = n + (seps + 2) * sizeof REDACT_VALUE + sizeof REDACT_PLACEHOLDER_URL;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    (void)redact_url(url, extra_names, n_extra, out, cap);
    return out;
}
