/* cfsign.h - CloudFront signed URLs and signed cookies (OpenSSL EVP only).
 *
 * A custom policy is the whitespace-free JSON that CloudFront defines, with
 * the conditions in CloudFront's documented order:
 *
 *   {"Statement":[{"Resource":"R","Condition":{"DateLessThan":{"AWS:EpochTime":N}
 *     [,"DateGreaterThan":{"AWS:EpochTime":M}][,"IpAddress":{"AWS:SourceIp":"CIDR"}]}}]}
 *
 * It is signed over exactly those bytes with the private key behind a
 * CloudFront public key: RSA (PKCS#1 v1.5) or ECDSA P-256 (DER), SHA-1 by
 * default or SHA-256 (then `Hash-Algorithm=SHA256` travels with the
 * signature).  Policy and signature are sent in CloudFront's URL-safe base64
 * ('+' '=' '/' become '-' '_' '~').  A canned policy is the same JSON with
 * only DateLessThan and Resource = the URL; it travels as `Expires=N`.
 *
 * Cost: a key is loaded and checked once (cfsign_key_load); each
 * cfsign_make is then one private-key operation and no allocation besides
 * OpenSSL's own.  A signed live playlist signs one wildcard policy (a
 * Resource that ends in "/ch1/r360/" and a '*') once and appends the same
 * query to every segment URL (cfsign_append_query).  A loaded key is read-only and may
 * be used by several threads at once.
 *
 * Every function that can fail returns false and writes a one-line reason
 * into err (never any key material).
 */
#ifndef CFSIGN_H
#define CFSIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest Resource accepted (CloudFront's own limit on a URL is 8 KiB). */
#define CFSIGN_RESOURCE_MAX 4096
/* Largest policy JSON: the resource plus every fixed member and condition. */
#define CFSIGN_POLICY_MAX (CFSIGN_RESOURCE_MAX + 256)
/* URL-safe base64 of a policy / of a signature (RSA 4096 at most), NUL included. */
#define CFSIGN_POLICY_B64_MAX (4 * ((CFSIGN_POLICY_MAX + 2) / 3) + 1)
#define CFSIGN_SIG_B64_MAX (4 * ((512 + 2) / 3) + 1)
#define CFSIGN_KEY_PAIR_ID_MAX 128
/* Latest DateLessThan accepted: 9999-12-31T23:59:59Z. */
#define CFSIGN_EPOCH_MAX 253402300799LL

enum cfsign_hash { CFSIGN_SHA1 = 0, CFSIGN_SHA256 };

struct cfsign_key;

/* Loads a PEM private key (PKCS#1 "RSA PRIVATE KEY", SEC1 "EC PRIVATE KEY"
 * or PKCS#8 "PRIVATE KEY"; never an encrypted one).  Accepted: RSA of 1024 to
 * 4096 bits (CloudFront itself takes only 2048: see cfsign_key_cloudfront_ok)
 * and ECDSA on P-256.  *unopenable is set when the file cannot be read at
 * all (as opposed to holding no usable key).  NULL on failure. */
struct cfsign_key *cfsign_key_load(const char *pem_path, bool *unopenable, char *err,
                                   size_t errsz);
void cfsign_key_free(struct cfsign_key *k);
/* "RSA-2048", "ECDSA-P256", ... */
const char *cfsign_key_describe(const struct cfsign_key *k);
/* True for the two kinds CloudFront accepts (RSA 2048, ECDSA P-256). */
bool cfsign_key_cloudfront_ok(const struct cfsign_key *k);

/* NULL when url can be signed: an absolute http(s) URL with a host, of
 * printable ASCII without spaces, quotes or backslashes, at most
 * CFSIGN_RESOURCE_MAX, no fragment, no signing parameter (Expires, Policy,
 * Signature, Key-Pair-Id, Hash-Algorithm) in its query; else the problem. */
const char *cfsign_url_problem(const char *url);

/* What a policy allows.  date_greater_than 0 and source_ip NULL mean absent. */
struct cfsign_policy {
    const char *resource;      /* the URL, query included, or a pattern with '*' / '?' */
    int64_t date_less_than;    /* epoch seconds: the URL stops working at this second */
    int64_t date_greater_than; /* epoch seconds: not before */
    const char *source_ip;     /* CIDR, IPv4 or IPv6: "192.0.2.0/24" */
};

/* Checks p (resource printable ASCII without spaces, quotes or backslashes;
 * times in 1..CFSIGN_EPOCH_MAX with not-before earlier; CIDR well formed). */
bool cfsign_policy_check(const struct cfsign_policy *p, char *err, size_t errsz);
/* Writes the policy JSON (NUL-terminated) into out[CFSIGN_POLICY_MAX + 1]
 * and returns its length; 0 when p does not pass cfsign_policy_check. */
size_t cfsign_policy_json(const struct cfsign_policy *p, char *out, char *err, size_t errsz);

/* Signs len bytes of msg; the URL-safe base64 signature goes into
 * sig[CFSIGN_SIG_B64_MAX]. */
bool cfsign_sign(const struct cfsign_key *k, enum cfsign_hash h, const void *msg, size_t len,
                 char *sig, char *err, size_t errsz);

/* CloudFront's URL-safe base64 of n bytes into out[4 * ((n + 2) / 3) + 1];
 * returns the length written. */
size_t cfsign_base64(const void *in, size_t n, char *out);

/* The values of one signature, ready for a query or for cookies. */
struct cfsign_values {
    bool canned;                                /* Expires instead of Policy */
    enum cfsign_hash hash;
    char expires[24];                           /* canned: DateLessThan, decimal */
    char policy[CFSIGN_POLICY_B64_MAX];         /* custom: base64 of the policy JSON */
    char signature[CFSIGN_SIG_B64_MAX];
    char key_pair_id[CFSIGN_KEY_PAIR_ID_MAX + 1];
};

/* True when id is 1..CFSIGN_KEY_PAIR_ID_MAX of [A-Za-z0-9_-]. */
bool cfsign_key_pair_id_ok(const char *id);

/* Builds and signs the policy.  canned: only p->resource and
 * p->date_less_than may be set (a canned policy has no other condition). */
bool cfsign_make(const struct cfsign_key *k, const char *key_pair_id, enum cfsign_hash h,
                 const struct cfsign_policy *p, bool canned, struct cfsign_values *v,
                 char *err, size_t errsz);

/* "Policy=P&Signature=S&Key-Pair-Id=K" (canned: "Expires=N&Signature=S&Key-Pair-Id=K"),
 * then "&Hash-Algorithm=SHA256" for SHA-256.  Returns the length, or 0 when
 * cap is too small. */
size_t cfsign_query(const struct cfsign_values *v, char *out, size_t cap);

/* url + ('?' when url has no query, else '&') + query.  Returns the length,
 * or 0 when cap is too small. */
size_t cfsign_append_query(const char *url, const char *query, char *out, size_t cap);

/* The cookies CloudFront reads instead of the query: CloudFront-Policy (or
 * CloudFront-Expires), CloudFront-Signature, CloudFront-Key-Pair-Id and, for
 * SHA-256, CloudFront-Hash-Algorithm.  Returns how many were filled (3 or 4);
 * the values point into v. */
struct cfsign_cookie {
    const char *name, *value;
};
size_t cfsign_cookies(const struct cfsign_values *v, struct cfsign_cookie out[4]);

#endif
