/* jwt_key.h - the verification key of --client-auth loaded with OpenSSL.
 *
 * HS256: the file's bytes are the secret (32 to 1024 bytes); refused when
 * group or others can access it (like a signing key, cfsign.c).  ES256: a
 * PEM public key on P-256 (a public key may be readable by anyone).
 * Regular files only (a FIFO would hang the start).
 */
#ifndef JWT_KEY_H
#define JWT_KEY_H

#include <stddef.h>

#include "jwt.h"

/* 0, 65 the key is not usable (err says why), 66 the file cannot be read. */
int jwt_key_load(enum jwt_alg alg, const char *path, struct jwt_key *out, char *err,
                 size_t errlen);
void jwt_key_free(struct jwt_key *k);

#endif
