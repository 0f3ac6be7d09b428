/* uri: RFC 3986 URI references: strict parsing and resolution (section 5).
 *
 * Segment URIs in an HLS playlist are resolved against the playlist's
 * effective URL (after redirects).  We do not use libcurl's CURLU for this:
 * Debian's libcurl 7.88 gets 5 of the 42 examples of RFC 3986 section 5.4
 * wrong or refuses them (docs/hls.md has the table).  This unit implements
 * section 5.2 literally: 5.2.2 transform references (strict: a reference
 * with a scheme is always absolute, so "http:g" stays "http:g"), 5.2.3
 * merge, 5.2.4 remove_dot_segments and 5.3 recomposition.  A relative
 * reference with a path never inherits the base's query, which matters for
 * signed playlist URLs: "seg1.ts" against ".../index.m3u8?Signature=y" is
 * ".../seg1.ts".
 *
 * Every function is pure (no I/O, no global state).  Inputs are bounded
 * (URI_MAX_INPUT bytes), control characters and characters outside the
 * RFC 3986 grammar are refused, never repaired.
 */
#ifndef EXACTAV_URI_H
#define EXACTAV_URI_H

#include <stdbool.h>
#include <stddef.h>

/* Longest accepted input (base or reference), in bytes, without the NUL. */
#define URI_MAX_INPUT 8192u
/* A resolved URI never exceeds this (including the NUL). */
#define URI_MAX_OUTPUT (2u * URI_MAX_INPUT + 2u)

/* Outcome.  The zero value is a failure ("nothing resolved"), never OK. */
enum uri_status {
  URI_E_UNSET = 0,       /* nothing was done */
  URI_OK,
  URI_E_ARG,             /* NULL argument */
  URI_E_TOO_LONG,        /* input longer than URI_MAX_INPUT */
  URI_E_CONTROL_CHAR,    /* a byte < 0x20 or 0x7f */
  URI_E_SYNTAX,          /* not a URI-reference per RFC 3986 appendix A */
  URI_E_NOT_ABSOLUTE,    /* the base has no scheme (RFC 3986 5.1) */
  URI_E_AMBIGUOUS,       /* the result would re-parse differently (path "//x" without authority) */
  URI_E_BUFFER,          /* the caller's output buffer is too small */
  URI_E_NOMEM            /* out of memory */
};

/* A piece of the parsed string: not NUL-terminated; defined=false means the
 * component is absent (different from present and empty, e.g. "?"). */
struct uri_slice {
  const char *ptr;
  size_t len;
  bool defined;
};

/* Components of a URI reference (RFC 3986 3 and appendix B).  path is
 * always defined (maybe empty).  userinfo/host/port are the parts of a
 * defined authority. */
struct uri_parts {
  struct uri_slice scheme;
  struct uri_slice authority;
  struct uri_slice userinfo;
  struct uri_slice host;
  struct uri_slice port;
  struct uri_slice path;
  struct uri_slice query;
  struct uri_slice fragment;
};

/* Parses and validates s (NUL-terminated) into slices of s. */
enum uri_status uri_parse(const char *s, struct uri_parts *out);

/* Resolves ref against base (which must have a scheme; its fragment is
 * ignored, its path's dot segments are removed) into out[outlen].  On any
 * failure out is set to "" (when outlen > 0). */
enum uri_status uri_resolve(const char *base, const char *ref, char *out, size_t outlen);

/* Same, into a new malloc'd string (*out is NULL on failure). */
enum uri_status uri_resolve_alloc(const char *base, const char *ref, char **out);

/* True when url parses, its scheme is http or https (any case) and it has a
 * non-empty host. */
bool uri_is_http(const char *url);

/* Stable short code ("ok", "syntax", ...) and a human sentence. */
const char *uri_status_code(enum uri_status st);
const char *uri_status_message(enum uri_status st);

#endif
