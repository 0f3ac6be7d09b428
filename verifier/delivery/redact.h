/* redact: remove credentials from URLs before they are stored or printed.
 *
 * Everything exactav stores or prints about a URL goes through redact_url():
 * the values of the CloudFront signing parameters (Policy, Signature,
 * Key-Pair-Id, Expires, Hash-Algorithm) and of any caller-given names become
 * "REDACTED", and so does the userinfo (user:password@).  Everything else is
 * kept byte for byte (order, other parameters, fragment).
 *
 * Never fails open: a URL that cannot be parsed (too long, control bytes,
 * spaces, non-ASCII) is replaced as a whole by REDACT_PLACEHOLDER_URL, never
 * copied through.  See docs/fetch.md for the exact rules.
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
/* Longest parameter name compared (longer names never match: kept). */
#define REDACT_MAX_NAME 256

/* The zero value is the failing one: callers that forget to check still
 * hold the placeholder, never the raw URL. */
enum redact_status {
    REDACT_UNPARSEABLE = 0, /* out holds REDACT_PLACEHOLDER_URL (or "" if it does not fit) */
    REDACT_OK = 1           /* out holds the redacted URL */
};

/* Redacts url into out (out_size bytes, always NUL-terminated when
 * out_size > 0).  extra_names (n_extra entries, NULL entries ignored) are
 * redacted in addition to the built-in names.  Name matching is ASCII
 * case-insensitive and done on the percent-decoded name.  If the redacted
 * URL does not fit in out, the placeholder is written and
 * REDACT_UNPARSEABLE returned. */
enum redact_status redact_url(const char *url, const char *const extra_names[], size_t n_extra,
                              char *out, size_t out_size);

/* Same, into a fresh malloc'd string (free() it).  Returns NULL only when
 * memory is exhausted; an unparseable URL yields a copy of the placeholder. */
char *redact_url_dup(const char *url, const char *const extra_names[], size_t n_extra);

/* 1 if name (a raw, possibly percent-encoded parameter name of name_len
 * bytes) is one whose value is redacted, else 0. */
int redact_is_secret_name(const char *name, size_t name_len, const char *const extra_names[],
                          size_t n_extra);

#endif
