/* jwt.c - a compact JWS parsed and verified (see jwt.h). */
#include "jwt.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/hmac.h>

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int b64url_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* Unpadded base64url (RFC 7515 2) into out; its length, or -1 on any other
 * character, a length of 1 mod 4, non-zero spare bits or no room. */
static long b64url_decode(const char *s, size_t n, unsigned char *out, size_t cap)
{
    if (n % 4 == 1)
        return -1;
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64url_value(s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (k == cap)
                return -1;
            out[k++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return acc == 0 ? (long)k : -1; /* one token, one encoding: no spare bits set */
}

/* A base64url part holding a JSON object (duplicates refused). */
static json_t *json_part(const char *s, size_t n)
{
    unsigned char buf[JWT_MAX_TOKEN];
    long k = b64url_decode(s, n, buf, sizeof buf);
    json_t *o = k > 0 ? json_loadb((const char *)buf, (size_t)k, JSON_REJECT_DUPLICATES, NULL)
                      : NULL;
    if (o && !json_is_object(o)) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

static int header(const json_t *h, enum jwt_alg *alg, char *err, size_t errlen)
{
    const char *a = json_string_value(json_object_get(h, "alg"));
    const json_t *typ = json_object_get(h, "typ");
    if (!a)
        return fail(err, errlen, "header: alg missing");
    if (strcmp(a, "HS256") && strcmp(a, "ES256"))
        return fail(err, errlen, "header: alg %.16s refused (HS256 or ES256 only)", a);
    if (typ && (!json_is_string(typ) || strcmp(json_string_value(typ), "JWT")))
        return fail(err, errlen, "header: typ must be JWT");
    /* an extension we do not understand must not be ignored (RFC 7515 4.1.11) */
    if (json_object_get(h, "crit"))
        return fail(err, errlen, "header: crit refused");
    *alg = !strcmp(a, "HS256") ? JWT_HS256 : JWT_ES256;
    return 0;
}

/* A NumericDate claim: an integer of seconds (fractions refused). */
static int date(const json_t *c, const char *key, bool required, int64_t *out, char *err,
                size_t errlen)
{
    const json_t *v = json_object_get(c, key);
    if (!v && !required)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) <= 0)
        return fail(err, errlen, "claims: %s must be a positive integer", key);
    *out = json_integer_value(v);
    return 0;
}

static int string_into(const json_t *v, char *dst, size_t cap)
{
    size_t n = json_is_string(v) ? json_string_length(v) : 0;
    if (n == 0 || n >= cap || n != strlen(json_string_value(v)))
        return -1;
    memcpy(dst, json_string_value(v), n + 1);
    return 0;
}

static int audience(const json_t *c, struct jwt_token *t, char *err, size_t errlen)
{
    const json_t *a = json_object_get(c, "aud"), *v;
    size_t i;
    if (json_is_string(a))
        return string_into(a, t->aud[t->n_aud++], sizeof t->aud[0]) == 0
                   ? 0
                   : fail(err, errlen, "claims: aud: 1 to 127 bytes");
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > 8)
        return fail(err, errlen, "claims: aud must be a string or 1 to 8 strings");
    json_array_foreach(a, i, v)
    {
        if (string_into(v, t->aud[t->n_aud++], sizeof t->aud[0]) != 0)
            return fail(err, errlen, "claims: aud[%zu]: 1 to 127 bytes", i);
    }
    return 0;
}

/* "channel/region/isp/client/build/rendition", each field 1..SIT_STR-1
 * bytes, or "*". */
static int cohort(const char *s, struct jwt_cohort *c)
{
    for (int i = 0; i < 6; i++) {
        /* the last field ends the string: a sixth '/' is a malformed cohort */
        const char *end = i < 5 ? strchr(s, '/') : strchr(s, '/') ? NULL : s + strlen(s);
        size_t n = end ? (size_t)(end - s) : 0;
        if (!end || n == 0 || n >= SIT_STR)
            return -1;
        memcpy(c->f[i], s, n);
        c->f[i][n] = '\0';
        s = end + (i < 5);
    }
    return 0;
}

static int cohorts(const json_t *c, struct jwt_claims *cl, char *err, size_t errlen)
{
    const json_t *a = json_object_get(c, "cohorts"), *v;
    size_t i;
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > JWT_MAX_COHORTS)
        return fail(err, errlen, "claims: cohorts must be 1 to %d strings", JWT_MAX_COHORTS);
    json_array_foreach(a, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || json_string_length(v) != strlen(s) || cohort(s, &cl->cohorts[i]) != 0)
            return fail(err, errlen, "claims: cohorts[%zu]: channel/region/isp/client/build/"
                                     "rendition expected", i);
    }
    cl->n_cohorts = json_array_size(a);
    return 0;
}

static int claims(const json_t *c, struct jwt_token *t, char *err, size_t errlen)
{
    struct jwt_claims *cl = &t->claims;
    if (string_into(json_object_get(c, "sub"), cl->sub, sizeof cl->sub) != 0)
        return fail(err, errlen, "claims: sub must be 1 to %d bytes without NUL", JWT_SUB_MAX);
    if (date(c, "exp", true, &cl->exp, err, errlen) || date(c, "nbf", false, &cl->nbf, err, errlen))
        return -1;
    return audience(c, t, err, errlen) || cohorts(c, cl, err, errlen) ? -1 : 0;
}

int jwt_decode(const char *token, size_t len, struct jwt_token *out, char *err, size_t errlen)
{
    assert(token || len == 0);
    memset(out, 0, sizeof *out);
    if (len == 0 || len > JWT_MAX_TOKEN || memchr(token, '\0', len))
        return fail(err, errlen, "token: 1 to %d bytes expected", JWT_MAX_TOKEN);
    const char *d1 = memchr(token, '.', len);
    const char *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token)) : NULL;
    if (!d2 || memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - token)))
        return fail(err, errlen, "token: header.payload.signature expected");
    long sl = b64url_decode(d2 + 1, len - (size_t)(d2 + 1 - token), out->sig, sizeof out->sig);
    json_t *h = json_part(token, (size_t)(d1 - token));
    json_t *c = json_part(d1 + 1, (size_t)(d2 - d1 - 1));
    int rc = sl <= 0   ? fail(err, errlen, "token: signature is not base64url")
             : !h || !c ? fail(err, errlen, "token: header or claims not a base64url JSON object")
                        : header(h, &out->alg, err, errlen) || claims(c, out, err, errlen);
    json_decref(h);
    json_decref(c);
    out->signed_len = (size_t)(d2 - token);
    out->sig_len = sl > 0 ? (size_t)sl : 0;
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc ? -1 : 0;
}

static int verify_hs256(const char *in, size_t n, const unsigned char *sig, size_t sig_len,
                        const struct jwt_key *k)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    if (!HMAC(EVP_sha256(), k->secret, (int)k->secret_len, (const unsigned char *)in, n, md,
              &md_len))
        return -1;
    return md_len == 32 && sig_len == 32 && CRYPTO_memcmp(md, sig, 32) == 0 ? 0 : -1;
}

/* JWS ES256 signs with R || S (32 bytes each, RFC 7518 3.4); OpenSSL
 * verifies DER. */
static int verify_es256(const char *in, size_t n, const unsigned char *sig, size_t sig_len,
                        const struct jwt_key *k)
{
    if (sig_len != 64 || !k->pub)
        return -1;
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
    unsigned char *der = NULL;
    int der_len = -1, ok = 0;
    if (es && r && s && ECDSA_SIG_set0(es, r, s) == 1) {
        r = s = NULL; /* owned by es now */
        der_len = i2d_ECDSA_SIG(es, &der);
    }
    EVP_MD_CTX *ctx = der_len > 0 ? EVP_MD_CTX_new() : NULL;
    if (ctx && EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k->pub) == 1)
        ok = EVP_DigestVerify(ctx, der, (size_t)der_len, (const unsigned char *)in, n) == 1;
    EVP_MD_CTX_free(ctx);
    OPENSSL_free(der);
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(es);
    return ok ? 0 : -1;
}

int jwt_verify_sig(const char *token, const struct jwt_token *t, const struct jwt_key *key)
{
    assert(token && t && key);
    if (t->alg != key->alg) /* the key decides the algorithm, never the token */
        return -1;
    return key->alg == JWT_HS256
               ? verify_hs256(token, t->signed_len, t->sig, t->sig_len, key)
               : verify_es256(token, t->signed_len, t->sig, t->sig_len, key);
}

int jwt_check_claims(const struct jwt_token *t, const char *audience, int64_t now_s,
                     int64_t skew_s, char *err, size_t errlen)
{
    assert(skew_s >= 0);
    if (now_s - skew_s >= t->claims.exp)
        return fail(err, errlen, "claims: expired");
    if (t->claims.nbf && now_s + skew_s < t->claims.nbf)
        return fail(err, errlen, "claims: not valid yet (nbf)");
    for (size_t i = 0; i < t->n_aud; i++)
        if (audience && !strcmp(t->aud[i], audience))
            return 0;
    return fail(err, errlen, "claims: aud does not name this service");
}

int jwt_verify(const char *token, size_t len, const struct jwt_key *key, const char *audience,
               int64_t now_s, int64_t skew_s, struct jwt_claims *out, char *err, size_t errlen)
{
    struct jwt_token *t = malloc(sizeof *t);
    int rc = !t ? fail(err, errlen, "out of memory") : jwt_decode(token, len, t, err, errlen);
    if (rc == 0 && jwt_verify_sig(token, t, key) != 0)
        rc = fail(err, errlen, "token: bad signature or alg other than %s",
                  key->alg == JWT_HS256 ? "HS256" : "ES256");
    if (rc == 0)
        rc = jwt_check_claims(t, audience, now_s, skew_s, err, errlen);
    if (rc == 0)
        *out = t->claims;
    free(t);
    return rc;
}
