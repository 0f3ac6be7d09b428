/* cauth.h - `stepctl serve --client-auth FILE`: who may allocate what.
 *
 * FILE is a JSON object (unknown members refused):
 *   alg              "HS256" or "ES256" (required)
 *   key_file         the HS256 secret or the ES256 PEM public key
 *                    (required; relative to FILE's folder; jwt_key.h)
 *   audience         the aud every token must name (required)
 *   max_skew_s       clock skew allowed on exp and nbf (0..300, default 30)
 *   per_subject_cap  allocations a subject may hold within their
 *                    commitment at once (1..1000000, required)
 * Every POST /v1/allocations then needs `Authorization: Bearer <JWT>`
 * (jwt.h) whose cohorts cover the request's cohort.  Contract:
 * docs/serve.md#client-auth.
 */
#ifndef CAUTH_H
#define CAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jwt.h"
#include "situation.h"

#define CAUTH_MAX_FILE 4096

struct cauth {
    struct jwt_key key;
    char audience[128];
    int64_t max_skew_s;
    int64_t per_subject_cap;
};

/* The configuration text (dir: FILE's folder, for key_file).  0, 64 never,
 * 65 refused (err names the member or the key's problem), 66 the key file
 * cannot be read. */
int cauth_parse(const char *text, size_t len, const char *dir, struct cauth *out, char *err,
                size_t errlen);
/* FILE read and parsed; the same codes, after printing why. */
int cauth_load(const char *file, struct cauth **out);
void cauth_free(struct cauth *c);

/* Does a pattern of the token's cohorts cover c ("*" matches any field)? */
bool cauth_covers(const struct jwt_claims *cl, const struct sit_cohort *c);

/* The Authorization header verified at now_ms: 0 and the claims, or -1
 * (401; err for the logs, never for the client). */
int cauth_check(const struct cauth *a, const char *authorization, int64_t now_ms,
                struct jwt_claims *out, char *err, size_t errlen);

#endif
