/* cdn_auth.c - CloudFront-style signature and policy checks of the loopback
 * CDN (cdn_auth.h). */
#include "cdn_auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#define URL_MAX 8192
#define POLICY_MAX 8192

static const char *const signing_params[] = {"Policy", "Signature", "Key-Pair-Id", "Expires",
                                             "Hash-Algorithm"};

int cdn_auth_add_key(struct cdn_auth_keys *keys, const char *spec, char *err, size_t errsz)
{
    const char *eq = strchr(spec, '=');
    size_t idlen = eq ? (size_t)(eq - spec) : 0;
    if (!eq || idlen == 0 || idlen > 128 || keys->n == CDN_AUTH_MAX_KEYS) {
        snprintf(err, errsz, "--public-key ID=PUB.pem expected (at most %d)", CDN_AUTH_MAX_KEYS);
        return -1;
    }
    FILE *f = fopen(eq + 1, "r");
    EVP_PKEY *pk = f ? PEM_read_PUBKEY(f, NULL, NULL, NULL) : NULL;
    if (f)
        fclose(f);
    if (!pk) {
        snprintf(err, errsz, "%s: no PEM public key", eq + 1);
        ERR_clear_error();
        return -1;
    }
    memcpy(keys->id[keys->n], spec, idlen);
    keys->id[keys->n][idlen] = '\0';
    keys->pkey[keys->n++] = pk;
    return 0;
}

void cdn_auth_free(struct cdn_auth_keys *keys)
{
    for (size_t i = 0; i < keys->n; i++)
        EVP_PKEY_free(keys->pkey[i]);
    keys->n = 0;
}

/* ---- query ------------------------------------------------------------------ */

static bool is_signing_param(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof signing_params / sizeof signing_params[0]; i++)
        if (strlen(signing_params[i]) == len && !strncmp(name, signing_params[i], len))
            return true;
    return false;
}

/* Value of name in raw query (copied into out), true when present. */
static bool query_param(const char *q, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = q; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        size_t len = strcspn(p, "&");
        if (len > nl && !strncmp(p, name, nl) && p[nl] == '=') {
            size_t vl = len - nl - 1;
            if (vl >= cap)
                return false;
            memcpy(out, p + nl + 1, vl);
            out[vl] = '\0';
            return true;
        }
    }
    return false;
}

/* The query without the signing parameters, in the order received. */
static void strip_query(const char *q, char *out, size_t cap)
{
    size_t w = 0;
    out[0] = '\0';
    for (const char *p = q; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        size_t len = strcspn(p, "&"), nlen = strcspn(p, "=&");
        if (len == 0 || is_signing_param(p, nlen))
            continue;
        if (w + len + 2 >= cap)
            break;
        if (w)
            out[w++] = '&';
        memcpy(out + w, p, len);
        w += len;
        out[w] = '\0';
    }
}

void cdn_auth_redact_query(const char *q, char *out, size_t cap)
{
    size_t w = 0;
    out[0] = '\0';
    for (const char *p = q; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        size_t len = strcspn(p, "&"), nlen = strcspn(p, "=&");
        bool secret = is_signing_param(p, nlen) && strncmp(p, "Hash-Algorithm", nlen) != 0;
        size_t keep = secret ? nlen : len;
        if (w + keep + 12 >= cap)
            break;
        if (w)
            out[w++] = '&';
        memcpy(out + w, p, keep);
        w += keep;
        if (secret)
            w += (size_t)snprintf(out + w, cap - w, "=REDACTED");
        out[w] = '\0';
    }
}

/* ---- pieces --------------------------------------------------------------------- */

/* Decodes CloudFront's URL-safe base64 into out; returns the length or -1. */
static long b64_decode(const char *in, unsigned char *out, size_t cap)
{
    size_t n = strlen(in);
    if (n == 0 || n % 4 || n / 4 * 3 > cap)
        return -1;
    char *std = malloc(n + 1);
    if (!std)
        return -1;
    size_t pad = 0;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        if (c == '+' || c == '/' || c == '=') { /* the standard alphabet is not CloudFront's */
            free(std);
            return -1;
        }
        std[i] = c == '-' ? '+' : c == '_' ? '=' : c == '~' ? '/' : c;
        pad = std[i] == '=' ? pad + 1 : 0;
    }
    std[n] = '\0';
    int len = EVP_DecodeBlock(out, (const unsigned char *)std, (int)n);
    free(std);
    return len < 0 || (size_t)len < pad ? -1 : (long)(len - (int)pad);
}

static bool verify(EVP_PKEY *pk, bool sha256, const void *msg, size_t len,
                   const unsigned char *sig, size_t siglen)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx &&
              EVP_DigestVerifyInit(ctx, NULL, sha256 ? EVP_sha256() : EVP_sha1(), NULL, pk) == 1 &&
              EVP_DigestVerify(ctx, sig, siglen, msg, len) == 1;
    EVP_MD_CTX_free(ctx);
    ERR_clear_error();
    return ok;
}

bool cdn_auth_glob(const char *pat, const char *s)
{
    const char *star = NULL, *mark = NULL;
    while (*s) {
        if (*pat == '*') {
            star = pat++;
            mark = s;
        } else if (*pat == '?' || *pat == *s) {
            pat++;
            s++;
        } else if (star) {
            pat = star + 1;
            s = ++mark;
        } else {
            return false;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}

/* client inside "addr/bits" (IPv4 or IPv6 of the same family). */
static bool ip_in(const struct sockaddr *client, const char *cidr)
{
    char addr[64];
    const char *slash = strchr(cidr, '/');
    size_t alen = slash ? (size_t)(slash - cidr) : 0;
    if (!slash || alen == 0 || alen >= sizeof addr || !client)
        return false;
    memcpy(addr, cidr, alen);
    addr[alen] = '\0';
    unsigned char net[16], me[16];
    size_t bytes;
    if (client->sa_family == AF_INET && inet_pton(AF_INET, addr, net) == 1) {
        memcpy(me, &((const struct sockaddr_in *)client)->sin_addr, 4);
        bytes = 4;
    } else if (client->sa_family == AF_INET6 && inet_pton(AF_INET6, addr, net) == 1) {
        memcpy(me, &((const struct sockaddr_in6 *)client)->sin6_addr, 16);
        bytes = 16;
    } else {
        return false;
    }
    char *end = NULL;
    long bits = strtol(slash + 1, &end, 10);
    if (*end || bits < 0 || bits > (long)(bytes * 8))
        return false;
    for (long i = 0; i < bits; i++) {
        unsigned m = 0x80u >> (i % 8);
        if ((net[i / 8] & m) != (me[i / 8] & m))
            return false;
    }
    return true;
}

static bool epoch_member(const json_t *cond, const char *name, json_int_t *v, bool *present)
{
    const json_t *o = json_object_get(cond, name);
    *present = o != NULL;
    if (!o)
        return true;
    const json_t *t = json_object_get(o, "AWS:EpochTime");
    if (!json_is_integer(t))
        return false;
    *v = json_integer_value(t);
    return true;
}

/* ---- the check ---------------------------------------------------------------- */

static struct cdn_auth_outcome deny(enum cdn_auth_via via, const char *reason)
{
    return (struct cdn_auth_outcome){CDN_AUTH_DENIED, via, reason};
}

struct sigvals {
    char policy[POLICY_MAX], expires[32], signature[1024], key_pair_id[129], hash[16];
    bool has_policy, has_expires, has_signature, has_key, has_hash;
};

static bool from_cookie(const struct cdn_request *rq, const char *name, char *out, size_t cap)
{
    const char *v = rq->cookie ? rq->cookie(rq->cookie_ctx, name) : NULL;
    if (!v || strlen(v) >= cap)
        return false;
    memcpy(out, v, strlen(v) + 1);
    return true;
}

/* Signing values from the query, else from the cookies. */
static enum cdn_auth_via gather(const struct cdn_request *rq, struct sigvals *sv)
{
    const char *q = rq->raw_query;
    sv->has_policy = query_param(q, "Policy", sv->policy, sizeof sv->policy);
    sv->has_expires = query_param(q, "Expires", sv->expires, sizeof sv->expires);
    sv->has_signature = query_param(q, "Signature", sv->signature, sizeof sv->signature);
    sv->has_key = query_param(q, "Key-Pair-Id", sv->key_pair_id, sizeof sv->key_pair_id);
    sv->has_hash = query_param(q, "Hash-Algorithm", sv->hash, sizeof sv->hash);
    if (sv->has_policy || sv->has_expires || sv->has_signature || sv->has_key)
        return CDN_VIA_URL;
    sv->has_policy = from_cookie(rq, "CloudFront-Policy", sv->policy, sizeof sv->policy);
    sv->has_expires = from_cookie(rq, "CloudFront-Expires", sv->expires, sizeof sv->expires);
    sv->has_signature = from_cookie(rq, "CloudFront-Signature", sv->signature, sizeof sv->signature);
    sv->has_key = from_cookie(rq, "CloudFront-Key-Pair-Id", sv->key_pair_id, sizeof sv->key_pair_id);
    sv->has_hash = from_cookie(rq, "CloudFront-Hash-Algorithm", sv->hash, sizeof sv->hash);
    return sv->has_policy || sv->has_expires || sv->has_signature || sv->has_key ? CDN_VIA_COOKIE
                                                                                 : CDN_VIA_NONE;
}

/* The policy's conditions against the request. */
static struct cdn_auth_outcome conditions(const json_t *policy, const struct cdn_request *rq,
                                          const char *url, enum cdn_auth_via via)
{
    const json_t *st = json_object_get(policy, "Statement");
    const json_t *s0 = json_array_get(st, 0);
    const json_t *cond = json_object_get(s0, "Condition");
    const json_t *res = json_object_get(s0, "Resource");
    if (!json_is_array(st) || json_array_size(st) != 1 || !json_is_object(cond) ||
        (res && !json_is_string(res)))
        return deny(via, "policy_invalid");
    json_int_t before = 0, after = 0;
    bool has_before = false, has_after = false;
    if (!epoch_member(cond, "DateLessThan", &before, &has_before) || !has_before ||
        !epoch_member(cond, "DateGreaterThan", &after, &has_after))
        return deny(via, "policy_invalid");
    if (rq->now_s >= before)
        return deny(via, "expired");
    if (has_after && rq->now_s < after)
        return deny(via, "not_yet_valid");
    const json_t *ip = json_object_get(cond, "IpAddress");
    if (ip) {
        const char *cidr = json_string_value(json_object_get(ip, "AWS:SourceIp"));
        if (!cidr)
            return deny(via, "policy_invalid");
        if (!ip_in(rq->client, cidr))
            return deny(via, "ip_mismatch");
    }
    /* No Resource: CloudFront applies the policy to every object. */
    if (res && !cdn_auth_glob(json_string_value(res), url))
        return deny(via, "resource_mismatch");
    return (struct cdn_auth_outcome){CDN_AUTH_ALLOWED, via, "ok"};
}

struct cdn_auth_outcome cdn_auth_check(const struct cdn_auth_keys *keys,
                                       const struct cdn_request *rq)
{
    static __thread struct sigvals sv;
    static __thread unsigned char policy[POLICY_MAX], sig[1024];
    static __thread char url[2 * URL_MAX], stripped[URL_MAX];
    memset(&sv, 0, sizeof sv);
    enum cdn_auth_via via = gather(rq, &sv);
    if (via == CDN_VIA_NONE || !sv.has_signature || !sv.has_key ||
        sv.has_policy == sv.has_expires)
        return deny(via, "signature_missing");
    EVP_PKEY *pk = NULL;
    for (size_t i = 0; i < keys->n && !pk; i++)
        if (!strcmp(keys->id[i], sv.key_pair_id))
            pk = keys->pkey[i];
    if (!pk)
        return deny(via, "key_unknown");
    if (sv.has_hash && strcmp(sv.hash, "SHA256") && strcmp(sv.hash, "SHA1"))
        return deny(via, "signature_invalid");
    strip_query(rq->raw_query, stripped, sizeof stripped);
    const char *host = rq->host ? rq->host : "";
    if (strlen(host) >= URL_MAX / 2 || strlen(rq->path) >= URL_MAX / 2) /* never a truncated URL */
        return deny(via, "resource_mismatch");
    snprintf(url, sizeof url, "http://%.*s%.*s%s%s", URL_MAX / 2, host, URL_MAX / 2, rq->path,
             stripped[0] ? "?" : "", stripped);
    long plen;
    if (sv.has_policy) {
        plen = b64_decode(sv.policy, policy, sizeof policy - 1);
    } else { /* canned: the policy is implied by the URL and Expires */
        char *end = NULL;
        long long exp = strtoll(sv.expires, &end, 10);
        if (*end || exp <= 0)
            return deny(via, "policy_invalid");
        plen = snprintf((char *)policy, sizeof policy,
                        "{\"Statement\":[{\"Resource\":\"%s\",\"Condition\":{\"DateLessThan\":"
                        "{\"AWS:EpochTime\":%lld}}}]}",
                        url, exp);
        if (plen < 0 || (size_t)plen >= sizeof policy)
            return deny(via, "policy_invalid");
    }
    long slen = b64_decode(sv.signature, sig, sizeof sig);
    if (plen <= 0 || slen <= 0 ||
        !verify(pk, sv.has_hash && !strcmp(sv.hash, "SHA256"), policy, (size_t)plen, sig,
                (size_t)slen))
        return deny(via, "signature_invalid");
    json_t *pj = json_loadb((const char *)policy, (size_t)plen, JSON_REJECT_DUPLICATES, NULL);
    if (!pj)
        return deny(via, "policy_invalid");
    struct cdn_auth_outcome o = conditions(pj, rq, url, via);
    json_decref(pj);
    return o;
}
