/* cdn_auth.h - the loopback CDN's CloudFront-style access check.
 *
 * Written apart from controller/sign/cfsign.c on purpose: the test CDN must not
 * share the signer's code, or a bug in both would pass.  It reads what
 * CloudFront reads (query parameters, else CloudFront-* cookies), verifies the
 * signature over the policy bytes with the public key (OpenSSL EVP), then the
 * policy's conditions against the request.  The zero value is a denial.
 */
#ifndef CDN_AUTH_H
#define CDN_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define CDN_AUTH_MAX_KEYS 8

enum cdn_auth_result {
    CDN_AUTH_DENIED = 0, /* see reason */
    CDN_AUTH_ALLOWED,
};

/* Where the signature was found. */
enum cdn_auth_via { CDN_VIA_NONE = 0, CDN_VIA_URL, CDN_VIA_COOKIE };

struct cdn_auth_keys {
    size_t n;
    char id[CDN_AUTH_MAX_KEYS][129];
    void *pkey[CDN_AUTH_MAX_KEYS]; /* EVP_PKEY * */
};

/* Loads "ID=PUB.pem" (a PEM public key) into keys. 0 or -1 with err. */
int cdn_auth_add_key(struct cdn_auth_keys *keys, const char *spec, char *err, size_t errsz);
void cdn_auth_free(struct cdn_auth_keys *keys);

/* One request as the edge sees it.  raw_query is the undecoded query (no
 * '?'), NULL when absent; cookie(name) returns a cookie's value or NULL. */
struct cdn_request {
    const char *host, *path, *raw_query;
    const struct sockaddr *client;
    int64_t now_s;
    const char *(*cookie)(void *ctx, const char *name);
    void *cookie_ctx;
};

struct cdn_auth_outcome {
    enum cdn_auth_result result;
    enum cdn_auth_via via;
    const char *reason; /* "ok", "signature_missing", "key_unknown", "signature_invalid",
                           "policy_invalid", "expired", "not_yet_valid", "ip_mismatch",
                           "resource_mismatch" */
};

struct cdn_auth_outcome cdn_auth_check(const struct cdn_auth_keys *keys,
                                       const struct cdn_request *rq);

/* CloudFront's wildcard match: '*' any run (also empty), '?' one character. */
bool cdn_auth_glob(const char *pattern, const char *s);

/* Copies raw_query into out with the values of the signing parameters
 * (Policy, Signature, Key-Pair-Id, Expires) replaced by REDACTED. */
void cdn_auth_redact_query(const char *raw_query, char *out, size_t cap);

#endif
