/* credential.h - the request headers and cookies a user gives for a CDN
 * (exactav verify --header/--cookie, a canary target's headers/cookies).
 *
 * Their values are credentials (tokens, signed cookies): a message about
 * one names at most its NAME, never its value.
 */
#ifndef CREDENTIAL_H
#define CREDENTIAL_H

#include <stdbool.h>
#include <stddef.h>

/* Checks "Name: value" (cookie false) or "name=value" (cookie true): a
 * token name (RFC 9110 5.6.2), a value a header or cookie (RFC 6265
 * cookie-octets) can carry, and no header exactav sets itself (Host,
 * Content-Length, Transfer-Encoding, Cookie, Range, Connection).  0 when
 * usable; -1 with why set to a message that quotes at most the name. */
int credential_check(bool cookie, const char *arg, char *why, size_t n);

#endif
