/* uri: RFC 3986 parsing and reference resolution (see uri.h). */
#include "uri.h"

#include <arpa/inet.h>
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- character classes (RFC 3986 2.2, 2.3, appendix A) ---- */

static bool is_alpha(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_hex(unsigned char c) { return is_digit(c) || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'); }

static bool is_unreserved(unsigned char c)
{
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static bool is_sub_delim(unsigned char c) { return c != '\0' && strchr("!$&'()*+,;=", c) != NULL; }

/* True when p[0..n) consists of unreserved, sub-delims, pct-encoded and the
 * characters in extra (the grammar of each component differs only there). */
static bool valid_run(const char *p, size_t n, const char *extra)
{
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c == '%') {
      if (i + 2 >= n) return false; /* needs two hex digits */
      if (!is_hex((unsigned char)p[i + 1]) || !is_hex((unsigned char)p[i + 2])) return false;
      i += 2;
      continue;
    }
    if (is_unreserved(c) || is_sub_delim(c)) continue;
    if (c != '\0' && strchr(extra, c) != NULL) continue;
    return false;
  }
  return true;
}

static bool valid_scheme(const char *p, size_t n)
{
  if (n == 0 || !is_alpha((unsigned char)p[0])) return false;
  for (size_t i = 1; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

/* IP-literal without its brackets: IPv6address (checked with inet_pton,
 * which implements the same grammar) or IPvFuture. */
static bool valid_ip_literal(const char *p, size_t n)
{
  if (n >= 2 && (p[0] == 'v' || p[0] == 'V')) {
    size_t i = 1;
    while (i < n && is_hex((unsigned char)p[i])) i++;
    if (i == 1 || i >= n || p[i] != '.' || i + 1 >= n) return false;
    for (i++; i < n; i++) {
      unsigned char c = (unsigned char)p[i];
      if (!is_unreserved(c) && !is_sub_delim(c) && c != ':') return false;
    }
    return true;
  }
  char tmp[64];
  unsigned char addr[16];
  if (n == 0 || n >= sizeof tmp) return false;
  memcpy(tmp, p, n);
  tmp[n] = '\0';
  return inet_pton(AF_INET6, tmp, addr) == 1;
}

static struct uri_slice slice(const char *p, size_t n)
{
  struct uri_slice s = {p, n, true};
  return s;
}

/* authority = [ userinfo "@" ] host [ ":" port ] */
static enum uri_status parse_authority(struct uri_parts *u)
{
  const char *a = u->authority.ptr;
  size_t n = u->authority.len;
  const char *at = memchr(a, '@', n);
  size_t h0 = 0;
  if (at) {
    h0 = (size_t)(at - a) + 1;
    u->userinfo = slice(a, h0 - 1);
    if (!valid_run(a, h0 - 1, ":")) return URI_E_SYNTAX;
  }
  const char *h = a + h0;
  size_t hn = n - h0, host_len;
  if (hn > 0 && h[0] == '[') {
    const char *close = memchr(h, ']', hn);
    if (!close || !valid_ip_literal(h + 1, (size_t)(close - h) - 1)) return URI_E_SYNTAX;
    host_len = (size_t)(close - h) + 1;
  } else {
    const char *colon = memchr(h, ':', hn);
    host_len = colon ? (size_t)(colon - h) : hn;
    if (!valid_run(h, host_len, "")) return URI_E_SYNTAX;
  }
  u->host = slice(h, host_len);
  if (host_len < hn) {
    if (h[host_len] != ':') return URI_E_SYNTAX;
    u->port = slice(h + host_len + 1, hn - host_len - 1);
    for (size_t i = 0; i < u->port.len; i++)
      if (!is_digit((unsigned char)u->port.ptr[i])) return URI_E_SYNTAX;
  }
  return URI_OK;
}

/* Splits per appendix B; the grammar is then checked per component. */
static void split(const char *s, size_t n, struct uri_parts *u)
{
  size_t i = 0, k = strcspn(s, ":/?#");
  if (s[k] == ':') {
    u->scheme = slice(s, k);
    i = k + 1;
  }
  if (n - i >= 2 && s[i] == '/' && s[i + 1] == '/') {
    size_t e = i + 2 + strcspn(s + i + 2, "/?#");
    u->authority = slice(s + i + 2, e - i - 2);
    i = e;
  }
  size_t e = i + strcspn(s + i, "?#");
  u->path = slice(s + i, e - i);
  i = e;
  if (s[i] == '?') {
    e = i + 1 + strcspn(s + i + 1, "#");
    u->query = slice(s + i + 1, e - i - 1);
    i = e;
  }
  if (s[i] == '#') u->fragment = slice(s + i + 1, n - i - 1);
}

enum uri_status uri_parse(const char *s, struct uri_parts *out)
{
  if (!s || !out) return URI_E_ARG;
  memset(out, 0, sizeof *out);
  size_t n = strnlen(s, URI_MAX_INPUT + 1);
  if (n > URI_MAX_INPUT) return URI_E_TOO_LONG;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f) return URI_E_CONTROL_CHAR;
  struct uri_parts u;
  memset(&u, 0, sizeof u);
  split(s, n, &u);
  /* A colon before any / ? # must end a valid scheme: a relative
   * reference's first segment may not contain ':' (path-noscheme). */
  if (u.scheme.defined && !valid_scheme(u.scheme.ptr, u.scheme.len)) return URI_E_SYNTAX;
  if (u.authority.defined) {
    enum uri_status st = parse_authority(&u);
    if (st != URI_OK) return st;
  }
  if (!valid_run(u.path.ptr, u.path.len, ":@/")) return URI_E_SYNTAX;
  if (u.query.defined && !valid_run(u.query.ptr, u.query.len, ":@/?")) return URI_E_SYNTAX;
  if (u.fragment.defined && !valid_run(u.fragment.ptr, u.fragment.len, ":@/?")) return URI_E_SYNTAX;
  *out = u;
  return URI_OK;
}

/* ---- 5.2.4 remove_dot_segments ---- */

static bool has_prefix(const char *in, size_t n, const char *pre)
{
  size_t k = strlen(pre);
  return n >= k && memcmp(in, pre, k) == 0;
}

/* Removes the last segment and its preceding "/" (if any) from out[0..o). */
static size_t pop_segment(const char *out, size_t o)
{
  while (o > 0 && out[o - 1] != '/') o--;
  return o > 0 ? o - 1 : 0;
}

/* in[0..n) is scratch (it is rewritten in place); out needs n bytes.
 * Returns the output length.  The letters are those of RFC 3986 5.2.4. */
static size_t remove_dot_segments(char *in, size_t n, char *out)
{
  size_t o = 0;
  while (n > 0) {
    if (has_prefix(in, n, "../")) { /* A */
      in += 3, n -= 3;
    } else if (has_prefix(in, n, "./")) { /* A */
      in += 2, n -= 2;
    } else if (has_prefix(in, n, "/./")) { /* B */
      in += 2, n -= 2;
    } else if (n == 2 && has_prefix(in, n, "/.")) { /* B: "/." becomes "/" */
      in += 1, n = 1, in[0] = '/';
    } else if (has_prefix(in, n, "/../")) { /* C */
      in += 3, n -= 3;
      o = pop_segment(out, o);
    } else if (n == 3 && has_prefix(in, n, "/..")) { /* C: "/.." becomes "/" */
      in += 2, n = 1, in[0] = '/';
      o = pop_segment(out, o);
    } else if ((n == 1 && in[0] == '.') || (n == 2 && in[0] == '.' && in[1] == '.')) { /* D */
      n = 0;
    } else { /* E: move the first segment, with its leading "/" if any */
      size_t k = in[0] == '/' ? 1 : 0;
      while (k < n && in[k] != '/') k++;
      memcpy(out + o, in, k);
      o += k, in += k, n -= k;
    }
  }
  return o;
}

/* ---- 5.2.2 transform references, 5.2.3 merge, 5.3 recomposition ---- */

struct target {
  struct uri_slice scheme, authority, query, fragment;
  const char *path; /* remove_dot_segments output */
  size_t path_len;
};

/* 5.2.3: the base path up to its last "/", then the reference path. */
static size_t merge_paths(const struct uri_parts *b, const struct uri_parts *r, char *dst)
{
  size_t o = 0;
  if (b->authority.defined && b->path.len == 0) {
    dst[o++] = '/';
  } else {
    size_t k = b->path.len;
    while (k > 0 && b->path.ptr[k - 1] != '/') k--;
    memcpy(dst, b->path.ptr, k);
    o = k;
  }
  memcpy(dst + o, r->path.ptr, r->path.len);
  return o + r->path.len;
}

/* Fills t (scheme, authority, query, fragment) and writes the path before
 * dot-segment removal into scratch; returns its length. */
static size_t transform(const struct uri_parts *b, const struct uri_parts *r, struct target *t, char *scratch)
{
  const struct uri_slice *src = &r->path;
  t->scheme = b->scheme;
  t->authority = b->authority;
  t->query = r->query;
  t->fragment = r->fragment;
  if (r->scheme.defined) { /* strict: a scheme makes the reference absolute */
    t->scheme = r->scheme;
    t->authority = r->authority;
  } else if (r->authority.defined) {
    t->authority = r->authority;
  } else if (r->path.len == 0) {
    src = &b->path;
    if (!r->query.defined) t->query = b->query;
  } else if (r->path.ptr[0] != '/') {
    return merge_paths(b, r, scratch);
  }
  memcpy(scratch, src->ptr, src->len);
  return src->len;
}

static size_t recomposed_len(const struct target *t)
{
  size_t n = t->scheme.len + 1 + t->path_len;
  if (t->authority.defined) n += 2 + t->authority.len;
  if (t->query.defined) n += 1 + t->query.len;
  if (t->fragment.defined) n += 1 + t->fragment.len;
  return n;
}

static char *put(char *d, const char *s, size_t n)
{
  memcpy(d, s, n);
  return d + n;
}

/* 5.3; d has room for recomposed_len(t) + 1 bytes. */
static void recompose(const struct target *t, char *d)
{
  d = put(d, t->scheme.ptr, t->scheme.len);
  *d++ = ':';
  if (t->authority.defined) {
    d = put(d, "//", 2);
    d = put(d, t->authority.ptr, t->authority.len);
  }
  d = put(d, t->path, t->path_len);
  if (t->query.defined) {
    *d++ = '?';
    d = put(d, t->query.ptr, t->query.len);
  }
  if (t->fragment.defined) {
    *d++ = '#';
    d = put(d, t->fragment.ptr, t->fragment.len);
  }
  *d = '\0';
}

enum uri_status uri_resolve_alloc(const char *base, const char *ref, char **out)
{
  if (!out) return URI_E_ARG;
  *out = NULL;
  if (!base || !ref) return URI_E_ARG;
  struct uri_parts b, r;
  enum uri_status st = uri_parse(base, &b);
  if (st != URI_OK) return st;
  if (!b.scheme.defined) return URI_E_NOT_ABSOLUTE;
  st = uri_parse(ref, &r);
  if (st != URI_OK) return st;

  /* Both inputs are bounded, so these sizes cannot overflow. */
  size_t cap = b.path.len + r.path.len + 2;
  char *scratch = malloc(cap), *path = malloc(cap), *res = NULL;
  st = URI_E_NOMEM;
  if (scratch && path) {
    struct target t;
    size_t raw = transform(&b, &r, &t, scratch);
    assert(raw < cap);
    t.path = path;
    t.path_len = remove_dot_segments(scratch, raw, path);
    /* Without an authority a path starting "//" would re-parse as one. */
    if (!t.authority.defined && t.path_len >= 2 && path[0] == '/' && path[1] == '/') {
      st = URI_E_AMBIGUOUS;
    } else if ((res = malloc(recomposed_len(&t) + 1)) != NULL) {
      recompose(&t, res);
      st = URI_OK;
    }
  }
  free(scratch);
  free(path);
  *out = res;
  return st;
}

enum uri_status uri_resolve(const char *base, const char *ref, char *out, size_t outlen)
{
  if (!out || outlen == 0) return URI_E_ARG;
  out[0] = '\0';
  char *res = NULL;
  enum uri_status st = uri_resolve_alloc(base, ref, &res);
  if (st == URI_OK) {
    size_t n = strlen(res);
    if (n >= outlen) {
      st = URI_E_BUFFER;
    } else {
      memcpy(out, res, n + 1);
    }
  }
  free(res);
  return st;
}

static bool slice_equals_nocase(struct uri_slice s, const char *lit)
{
  size_t n = strlen(lit);
  if (!s.defined || s.len != n) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s.ptr[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != lit[i]) return false;
  }
  return true;
}

bool uri_is_http(const char *url)
{
  struct uri_parts u;
  if (uri_parse(url, &u) != URI_OK) return false;
  if (!slice_equals_nocase(u.scheme, "http") && !slice_equals_nocase(u.scheme, "https")) return false;
  return u.authority.defined && u.host.len > 0;
}

const char *uri_status_code(enum uri_status st)
{
  switch (st) {
  case URI_E_UNSET: return "unset";
  case URI_OK: return "ok";
  case URI_E_ARG: return "arg";
  case URI_E_TOO_LONG: return "too_long";
  case URI_E_CONTROL_CHAR: return "control_char";
  case URI_E_SYNTAX: return "syntax";
  case URI_E_NOT_ABSOLUTE: return "not_absolute";
  case URI_E_AMBIGUOUS: return "ambiguous";
  case URI_E_BUFFER: return "buffer";
  case URI_E_NOMEM: return "nomem";
  }
  return "unknown";
}

const char *uri_status_message(enum uri_status st)
{
  switch (st) {
  case URI_E_UNSET: return "nothing was resolved";
  case URI_OK: return "resolved";
  case URI_E_ARG: return "missing argument";
  case URI_E_TOO_LONG: return "URI longer than 8192 bytes";
  case URI_E_CONTROL_CHAR: return "URI contains a control character";
  case URI_E_SYNTAX: return "not a URI reference (RFC 3986 appendix A)";
  case URI_E_NOT_ABSOLUTE: return "base URI has no scheme";
  case URI_E_AMBIGUOUS: return "result path starts with // but has no authority";
  case URI_E_BUFFER: return "output buffer too small";
  case URI_E_NOMEM: return "out of memory";
  }
  return "unknown status";
}
