/* jwt.h - a compact JWS (RFC 7515/7519) parsed and verified: the token of
 * `stepctl serve --client-auth` (cauth.h, docs/serve.md#client-auth).
 *
 * Only HS256 and ES256 exist here; the header's alg must equal the key's
 * (alg=none, any other alg, or a header naming another alg than configured
 * is refused: the key decides the algorithm, never the token).  Claims:
 * sub (required, 1..JWT_SUB_MAX bytes, no NUL), aud (a string or an array
 * of strings), exp (required), nbf (optional), cohorts (required, 1 to
 * JWT_MAX_COHORTS strings "channel/region/isp/client/build/rendition",
 * any field "*").  Pure: no I/O, no clock (now is an argument); fuzzed by
 * tests/fuzz/fuzz_jwt.c.
 */
#ifndef JWT_H
#define JWT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "situation.h"

#define JWT_MAX_TOKEN 4096
#define JWT_SUB_MAX 128
#define JWT_MAX_COHORTS 16

enum jwt_alg { JWT_HS256 = 1, JWT_ES256 };

/* The verification key: an HMAC secret (HS256) or an EC P-256 public key
 * (ES256).  Owned by whoever loaded it (jwt_key.h). */
struct jwt_key {
    enum jwt_alg alg;
    unsigned char *secret;
    size_t secret_len;
    EVP_PKEY *pub;
};

/* A cohort pattern: each field a value or "*" (any). */
struct jwt_cohort {
    char f[6][SIT_STR]; /* channel, region, isp, client, build, rendition */
};

struct jwt_claims {
    char sub[JWT_SUB_MAX + 1];
    int64_t exp, nbf; /* seconds since the epoch; nbf 0 when absent */
    size_t n_cohorts;
    struct jwt_cohort cohorts[JWT_MAX_COHORTS];
};

/* The token split and its header and claims parsed (nothing verified).
 * 0, or -1 with err saying why. */
struct jwt_token {
    enum jwt_alg alg;
    size_t signed_len; /* header.payload: the signing input, at the start of the token */
    unsigned char sig[256];
    size_t sig_len;
    struct jwt_claims claims;
    char aud[8][128]; /* the aud claim's values */
    size_t n_aud;
};
int jwt_decode(const char *token, size_t len, struct jwt_token *out, char *err, size_t errlen);

/* The signature of a decoded token under key (same token text).  0 valid. */
int jwt_verify_sig(const char *token, const struct jwt_token *t, const struct jwt_key *key);

/* exp, nbf (both within skew_s of now_s) and aud (audience among its
 * values).  0, or -1 with err. */
int jwt_check_claims(const struct jwt_token *t, const char *audience, int64_t now_s,
                     int64_t skew_s, char *err, size_t errlen);

/* decode + alg equals the key's + signature + claims: 0 and the claims
 * into *out, or -1 with err (the 401 of docs/serve.md). */
int jwt_verify(const char *token, size_t len, const struct jwt_key *key, const char *audience,
               int64_t now_s, int64_t skew_s, struct jwt_claims *out, char *err, size_t errlen);

#endif
