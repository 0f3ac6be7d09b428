/* canary_cookies.h - the cookies a session's master playlist sets, sent on
 * as a player's browser sends them (RFC 6265, the subset a signed-cookie
 * CDN path needs: `stepctl serve` hands a cloudfront-cookies session its
 * CloudFront-Policy / -Signature / -Key-Pair-Id with the master playlist).
 *
 * Cookies are credentials: nothing here prints, logs or stores them.
 */
#ifndef CANARY_COOKIES_H
#define CANARY_COOKIES_H

#include <stddef.h>

/* The Cookie header value ("a=b; c=d") of the Set-Cookie values set (NULL-
 * terminated; as a response of from_url sent them) that a request of url
 * carries:
 *   - domain: with a Domain attribute (its leading dot dropped), url's host
 *     is that domain or ends in "." domain, and so must from_url's be (a
 *     browser refuses another); without one, url's host is from_url's
 *     (host-only; an IP address only ever matches itself);
 *   - path: url's path is the Path attribute's, or below it; without one,
 *     the directory of from_url's path;
 *   - Secure: only over https.
 * Expires / Max-Age are not read (the session's allocation bounds the
 * cookies' life); a value without '=' or with an empty name is skipped.
 * 0 (out "" when none matches), or -1 when a URL cannot be parsed or out
 * cannot hold the value. */
int canary_cookies_for(const char *const *set, const char *from_url, const char *url, char *out, size_t cap);

#endif
