/* redact: see redact.h.  A small hand-written splitter rather than CURLU:
 * CURLU normalises (case of %XX, default ports, dot segments), and the
 * contract here is "everything except the secrets stays byte for byte". */
#include "redact.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names whose values are credentials or tie a URL to one grant: no policy
 * keeps them.  CloudFront (signed URLs, Hash-Algorithm), AWS SigV4, Akamai
 * (hdnts/hdntl), Google Media CDN, nginx secure_link, Wowza, and the usual
 * generic spellings. */
static const char *const credential_names[] = {
    "Policy", "Signature", "Key-Pair-Id", "Expires", "Hash-Algorithm",
    "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "X-Amz-Date",
    "hdnts", "hdntl", "__token__", "edge-cache-token", "token", "sig", "hmac", "md5",
    "wmsAuthSign", "access_token", "auth", "key", "password", "secret", "session",
};

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
    if (raw_len > REDACT_MAX_NAME)
        return 0;
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

static int in_list(const char *name, size_t len, const char *const *list, size_t n)
{
    for (size_t k = 0; list && k < n; k++)
        if (list[k] && list[k][0] && name_equals(name, len, list[k]))
            return 1;
    return 0;
}

int redact_is_credential_name(const char *name)
{
    return name && in_list(name, strlen(name), credential_names,
                           sizeof credential_names / sizeof credential_names[0]);
}

int redact_keeps_value(const char *name, size_t name_len, const struct redact_policy *pol)
{
    if (!pol || in_list(name, name_len, pol->redact, pol->n_redact))
        return 0;
    if (in_list(name, name_len, credential_names,
                sizeof credential_names / sizeof credential_names[0]))
        return 0;
    return pol->keep_others || in_list(name, name_len, pol->keep, pol->n_keep);
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
    if (n == 0 || !s[0] || !strchr(alpha, s[0]))
        return 0;
    for (size_t i = 1; i < n && s[i]; i++) {
        if (s[i] == ':')
            return i + 1;
        if (!strchr(alpha, s[i]) && !strchr("0123456789+-.", s[i]))
            return 0;
    }
    return 0;
}

/* End of "//authority" at the start of s (0 when there is none). */
static size_t authority_end(const char *s, size_t n)
{
    if (n < 2 || s[0] != '/' || s[1] != '/')
        return 0;
    size_t end = 2;
    while (end < n && s[end] && s[end] != '/' && s[end] != '?' && s[end] != '#')
        end++;
    return end;
}

/* Copies "//authority" replacing any userinfo; returns bytes consumed. */
static size_t put_authority(struct rbuf *b, const char *s, size_t n)
{
    size_t end = authority_end(s, n);
    if (!end)
        return 0;
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

/* Where the value of piece p[0..n) starts: after its first '=' (or, in a
 * path, "%3D"); *name_len receives the name's length.  0 when no value. */
static size_t value_start(const char *p, size_t n, bool path, size_t *name_len)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '=') {
            *name_len = i;
            return i + 1;
        }
        if (path && p[i] == '%' && i + 2 < n && p[i + 1] == '3' && lower(p[i + 2]) == 'd') {
            *name_len = i;
            return i + 3;
        }
    }
    return 0;
}

/* Copies one piece (a query parameter or a path segment piece), replacing
 * its value unless the policy keeps it (path tokens are never kept). */
static void put_piece(struct rbuf *b, const char *p, size_t n, bool path,
                      const struct redact_policy *pol)
{
    size_t name_len = 0, v = value_start(p, n, path, &name_len);
    if (!v || (!path && redact_keeps_value(p, name_len, pol))) {
        put(b, p, n);
        return;
    }
    put(b, p, v);
    puts_(b, REDACT_VALUE);
}

/* A stepctl session id (docs/delivery.md): the path piece after a
 * "sessions" piece, 16 or more hex digits, is the session's capability
 * (/v1/sessions/SID/master.m3u8 and what hangs off it), redacted whatever
 * the policy. */
static bool session_capability(const char *prev, size_t prev_n, const char *p, size_t n)
{
    if (prev_n != 8 || memcmp(prev, "sessions", 8) || n < 16)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdefABCDEF", p[i]))
            return false;
    return true;
}

/* Copies s[0..n) piece by piece; any byte of seps separates pieces (more
 * separators can only redact more). */
static void put_pieces(struct rbuf *b, const char *s, size_t n, const char *seps, bool path,
                       const struct redact_policy *pol)
{
    size_t start = 0, prev = 0, prev_n = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || strchr(seps, s[i])) {
            if (path && session_capability(s + prev, prev_n, s + start, i - start))
                puts_(b, REDACT_VALUE);
            else
                put_piece(b, s + start, i - start, path, pol);
            prev = start;
            prev_n = i - start;
            if (i < n)
                put(b, s + i, 1);
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

enum redact_status redact_url(const char *url, const struct redact_policy *pol, char *out,
                              size_t out_size)
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
    size_t path_end = pos + strcspn(url + pos, "?#");
    put_pieces(&b, url + pos, path_end - pos, "/;", true, pol);
    pos = path_end;
    if (pos < n && url[pos] == '?') {
        size_t q_end = pos + 1 + strcspn(url + pos + 1, "#");
        put(&b, "?", 1);
        put_pieces(&b, url + pos + 1, q_end - pos - 1, "&;", false, pol);
        pos = q_end;
    }
    if (pos < n) { /* the fragment: never sent, but printed like the query */
        put(&b, "#", 1);
        put_pieces(&b, url + pos + 1, n - pos - 1, "&;", false, pol);
    }
    if (b.overflow) {
        put_placeholder(out, out_size);
        return REDACT_UNPARSEABLE;
    }
    assert(b.len < out_size);
    return REDACT_OK;
}

char *redact_url_dup(const char *url, const struct redact_policy *pol)
{
    size_t n = url ? strnlen(url, REDACT_MAX_URL + 1) : 0;
    size_t seps = 0;
    for (size_t i = 0; i < n; i++)
        seps += strchr("&;?#/@", url[i]) != NULL;
    /* Each piece or the userinfo grows by at most strlen(REDACT_VALUE). */
    size_t cap = n + (seps + 2) * sizeof REDACT_VALUE + sizeof REDACT_PLACEHOLDER_URL;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    (void)redact_url(url, pol, out, cap);
    return out;
}

/* ---- header values ---------------------------------------------------------- */

/* One word of a header value: an embedded URL, or NAME=VALUE pieces. */
static void put_word(struct rbuf *b, const char *w, size_t n, const struct redact_policy *pol)
{
    char url[REDACT_MAX_URL + 1];
    const char *sep = memchr(w, ':', n);
    if (sep && (size_t)(sep - w) + 2 < n && sep[1] == '/' && sep[2] == '/' && n <= REDACT_MAX_URL) {
        memcpy(url, w, n);
        url[n] = '\0';
        char *r = redact_url_dup(url, pol);
        if (!r) {
            b->overflow = 1;
            return;
        }
        puts_(b, r);
        free(r);
        return;
    }
    put_pieces(b, w, n, "&;?", false, pol);
}

static bool printable(char c)
{
    return c >= 0x20 && c < 0x7f;
}

char *redact_text_dup(const char *text, const struct redact_policy *pol)
{
    if (!text)
        return NULL;
    size_t n = strnlen(text, REDACT_MAX_URL);
    char *clean = malloc(n + 1);
    size_t cap = 32 * (n + 2) + sizeof REDACT_PLACEHOLDER_URL;
    char *out = malloc(cap);
    if (!clean || !out) {
        free(clean);
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        clean[i] = printable(text[i]) ? text[i] : '?';
    clean[n] = '\0';
    struct rbuf b = {out, cap, 0, 0};
    out[0] = '\0';
    static const char word_seps[] = " ,\"'()<>[]{}\t";
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || strchr(word_seps, clean[i])) {
            put_word(&b, clean + start, i - start, pol);
            if (i < n)
                put(&b, clean + i, 1);
            start = i + 1;
        }
    }
    free(clean);
    if (b.overflow) /* cannot happen with this capacity; never fail open */
        snprintf(out, cap, "%s", REDACT_VALUE);
    return out;
}

int redact_text_is_clean(const char *text)
{
    static const struct redact_policy keep_others = {.keep_others = 1};
    if (!text)
        return 1;
    size_t len = 0;
    if (scheme_len(text, strlen(text)) && url_is_printable(text, &len)) {
        /* a URL as a whole, as exactav records them ("[::1]" is no word break) */
        char *r = redact_url_dup(text, &keep_others);
        int clean = r && strcmp(r, text) == 0;
        free(r);
        return clean;
    }
    char *r = redact_text_dup(text, &keep_others);
    size_t n = strlen(text);
    int clean = r && strlen(r) == n;
    for (size_t i = 0; clean && i < n; i++)
        clean = r[i] == text[i] || (!printable(text[i]) && r[i] == '?');
    free(r);
    return clean;
}

/* ---- origin ------------------------------------------------------------------- */

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-';
}

void redact_url_origin(const char *url, char *out, size_t n)
{
    if (!out || n == 0)
        return;
    out[0] = '\0';
    size_t len = url ? strnlen(url, REDACT_MAX_URL) : 0;
    size_t s = url ? scheme_len(url, len) : 0;
    if (!s || s > 16 || s + 1 >= n)
        return;
    memcpy(out, url, s);
    out[s] = '\0';
    size_t end = authority_end(url + s, len - s);
    if (!end)
        return;
    const char *a = url + s + 2, *stop = url + s + end;
    for (const char *p = a; p < stop; p++)
        if (*p == '@')
            a = p + 1;
    const char *h = a;
    while (h < stop && host_char(*h))
        h++;
    size_t hl = (size_t)(h - a);
    bool plain = hl > 0 && hl <= 253 && (h == stop || *h == ':');
    snprintf(out + s, n - s, "//%.*s", plain ? (int)hl : 0, a);
}
