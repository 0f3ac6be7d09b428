/* redact: remove credentials from URLs and header values before they are
 * stored or printed.
 *
 * Everything exactav stores or prints about a URL goes through redact_url().
 * Redaction is the default, not a list of known names:
 *   - the value of EVERY query parameter becomes "REDACTED" (names kept),
 *     unless the policy keeps that name (--keep-param NAME); a credential
 *     name (Signature, Policy, token, X-Amz-Signature, hdnts, ...) is never
 *     kept, and a name the policy redacts (--redact-param) wins over a keep;
 *   - the userinfo (user:password@) always becomes "REDACTED@";
 *   - path tokens: every path segment piece of the form NAME=VALUE (pieces
 *     are separated by '/' and ';', '=' may be written %3D) has its value
 *     replaced, whatever the policy: /Policy=.../Signature=.../,
 *     /hdnts=exp=...~hmac=.../ (Akamai), /edge-cache-token=.../ (Google);
 *   - the fragment is treated like the query.
 * Scheme, host, port, the rest of the path and every separator are kept
 * byte for byte.
 *
 * Never fails open: a URL that cannot be parsed (too long, control bytes,
 * spaces, non-ASCII) is replaced as a whole by REDACT_PLACEHOLDER_URL, never
 * copied through; redact_url_origin() gives at most its scheme and host for
 * messages.  See docs/fetch.md for the exact rules.
 */
#ifndef EXACTAV_REDACT_H
#define EXACTAV_REDACT_H

#include <stddef.h>

/* The replacement for a parameter value or a userinfo. */
#define REDACT_VALUE "REDACTED"
/* What an unparseable URL becomes (it is never stored as given). */
#define REDACT_PLACEHOLDER_URL "REDACTED-UNPARSEABLE-URL"
/* Longest URL accepted (bytes, without the terminating NUL). */
#define REDACT_MAX_URL 16384
/* Longest parameter name compared (longer names never match: redacted). */
#define REDACT_MAX_NAME 256

/* Which query values are shown.  The zero value (or a NULL pointer)
 * redacts every value.  Names are matched ASCII case-insensitively on the
 * percent-decoded name; NULL or empty entries are ignored. */
struct redact_policy {
    const char *const *keep; /* values of these query names are kept (--keep-param) */
    size_t n_keep;
    const char *const *redact; /* always redacted, even when kept (--redact-param) */
    size_t n_redact;
    int keep_others; /* 1: every value is kept but a credential's and those in redact */
};

/* The zero value is the failing one: callers that forget to check still
 * hold the placeholder, never the raw URL. */
enum redact_status {
    REDACT_UNPARSEABLE = 0, /* out holds REDACT_PLACEHOLDER_URL (or "" if it does not fit) */
    REDACT_OK = 1           /* out holds the redacted URL */
};

/* Redacts url into out (out_size bytes, always NUL-terminated when
 * out_size > 0).  If the redacted URL does not fit in out, the placeholder
 * is written and REDACT_UNPARSEABLE returned. */
enum redact_status redact_url(const char *url, const struct redact_policy *pol, char *out,
                              size_t out_size);

/* Same, into a fresh malloc'd string (free() it).  Returns NULL only when
 * memory is exhausted; an unparseable URL yields a copy of the placeholder. */
char *redact_url_dup(const char *url, const struct redact_policy *pol);

/* 1 if the value of query parameter name (raw, possibly percent-encoded,
 * name_len bytes) is shown under pol, else 0. */
int redact_keeps_value(const char *name, size_t name_len, const struct redact_policy *pol);

/* 1 if name (NUL-terminated, plain) is a credential name that no policy
 * can keep (Signature, Policy, token, ...): --keep-param refuses it. */
int redact_is_credential_name(const char *name);

/* A recorded response header value, redacted the same way: every embedded
 * URL as by redact_url, every other NAME=VALUE piece (pieces separated by
 * spaces, ',', ';', '&', '?' and quotes) with its value replaced unless pol
 * keeps NAME, bytes outside printable ASCII replaced by '?'.  malloc'd;
 * NULL for NULL input or out of memory. */
char *redact_text_dup(const char *text, const struct redact_policy *pol);

/* 1 if text holds no credential: redacting it under the policy that keeps
 * every value but a credential's changes nothing (bytes outside printable
 * ASCII aside).  What exactav itself recorded always passes; a hand-made
 * report with ?Signature=abc, /Policy=.../ or user:password@ does not.
 * NULL passes; 0 also when memory is exhausted (never fail open). */
int redact_text_is_clean(const char *text);

/* At most "scheme://host" of url (no userinfo, port, path or query), for
 * messages about a URL that cannot be used: "https://cdn.example", or
 * "https://" when the host is not a plain host name, or "" without a
 * scheme.  Always NUL-terminated in out (n > 0). */
void redact_url_origin(const char *url, char *out, size_t n);

#endif
