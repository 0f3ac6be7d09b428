/* serve_auth.h - who may call what on `stepctl serve` (docs/security.md).
 *
 * Operators' endpoints (GET /v1/grants/{id}, GET /metrics, and any route
 * marked operator) need "Authorization: Bearer TOKEN" with the token of
 * --admin-token-file; without that option they answer 401 to everyone
 * (fail closed).  Only the SHA-256 of the token is kept: both sides are
 * hashed, then compared with CRYPTO_memcmp, so neither the time nor the
 * length of the comparison depends on the token.
 */
#ifndef SERVE_AUTH_H
#define SERVE_AUTH_H

#include <stdbool.h>
#include <stddef.h>

struct srv_config;
struct sockaddr_storage;

#define SAUTH_MIN_TOKEN 16 /* bytes: a shorter token is refused (65) */

/* The token of file (one line; a final newline is not part of it), hashed
 * into sha256.  The file must be a regular file readable by its owner only
 * (like a private key).  0, 65 (group/other may read it, or too short),
 * 66 (cannot read it), after printing why. */
int sauth_load_token(const char *file, unsigned char sha256[32]);

/* Does the Authorization header value carry the operator token?  False
 * when none is configured. */
bool sauth_operator_ok(const struct srv_config *c, const char *authorization);

/* Does the Authorization header value carry the verification token of
 * --verification-token-file (issue 17: the canary's verification
 * sessions)?  Hashed and compared as the operator token; false when none
 * is configured. */
bool sauth_verification_ok(const struct srv_config *c, const char *authorization);

/* Is addr a loopback address (127.0.0.0/8, ::1)? */
bool sauth_is_loopback(const struct sockaddr_storage *addr);

/* CORS (docs/security.md#cors): the Access-Control-Allow-Origin value for
 * a request whose Origin header is origin (NULL: none): "*" when
 * --cors-origin '*' was given, the configured origin when origin is one
 * of them (compared case-blind: browsers send scheme and host in lower
 * case), else NULL: no CORS header, and the browser keeps the answer from
 * the page. */
const char *sauth_cors_allow(const struct srv_config *c, const char *origin);

/* Must the operator say --allow-anonymous to listen on a non-loopback
 * address?  True without --client-auth: anyone who reaches it allocates. */
bool srv_needs_anonymous_ok(const struct srv_config *c);

#endif
