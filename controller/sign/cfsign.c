/* cfsign.c - CloudFront signed URLs and cookies: policy JSON, OpenSSL EVP
 * signatures, URL-safe base64, query and cookie assembly (cfsign.h). */
#include "cfsign.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "cliutil.h"
#include "evidence_text.h"

#define KEY_FILE_MAX (64 * 1024)
#define SIG_RAW_MAX 512 /* RSA 4096; ECDSA P-256 DER needs at most 72 */

struct cfsign_key {
    EVP_PKEY *pkey;
    EVP_MD *md[2]; /* indexed by enum cfsign_hash; fetched once, not per signature */
    int bits;
    bool ec;
    char desc[24];
};

static bool fail(char *err, size_t errsz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *err, size_t errsz, const char *fmt, ...)
{
    if (err && errsz) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsz, fmt, ap);
        va_end(ap);
    }
    ERR_clear_error(); /* leave no stale OpenSSL error behind on this thread */
    return false;
}

/* ---- keys ---------------------------------------------------------------- */

/* A passphrase is never asked for: encrypted keys are refused. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* Reads at most KEY_FILE_MAX bytes of path (a regular file: a FIFO would
 * hang the service's start) into a NUL-terminated buffer; *mode its
 * permissions. */
static char *read_key_file(const char *path, size_t *len, unsigned *mode, bool *unopenable,
                           char *err, size_t errsz)
{
    char why[128];
    FILE *f = cli_open_regular(path, mode, why, sizeof why);
    if (!f) {
        *unopenable = true;
        fail(err, errsz, "cannot open %s: %s", path, why);
        return NULL;
    }
    char *buf = malloc(KEY_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, KEY_FILE_MAX + 1, f) : 0;
    bool bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        *unopenable = true;
        free(buf);
        fail(err, errsz, "cannot read %s", path);
        return NULL;
    }
    if (n > KEY_FILE_MAX) {
        free(buf);
        fail(err, errsz, "%s is larger than %d bytes: not a PEM key", path, KEY_FILE_MAX);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Accepts RSA 1024..4096 and EC on P-256; fills bits, ec, desc. */
static bool key_kind_ok(struct cfsign_key *k, const char *path, char *err, size_t errsz)
{
    int id = EVP_PKEY_get_base_id(k->pkey);
    k->bits = EVP_PKEY_get_bits(k->pkey);
    if (id == EVP_PKEY_RSA) {
        if (k->bits < 1024 || k->bits > 4096)
            return fail(err, errsz, "%s: RSA key of %d bits (1024 to 4096 accepted)", path,
                        k->bits);
        snprintf(k->desc, sizeof k->desc, "RSA-%d", k->bits);
        return true;
    }
    if (id == EVP_PKEY_EC) {
        char group[64] = "";
        size_t glen = 0;
        if (EVP_PKEY_get_utf8_string_param(k->pkey, OSSL_PKEY_PARAM_GROUP_NAME, group,
                                           sizeof group, &glen) != 1 ||
            strcmp(group, "prime256v1") != 0)
            return fail(err, errsz, "%s: EC key on curve %s (only P-256 is accepted)", path,
                        group[0] ? group : "?");
        k->ec = true;
        snprintf(k->desc, sizeof k->desc, "ECDSA-P256");
        return true;
    }
    return fail(err, errsz, "%s: unsupported key type (RSA or ECDSA P-256 expected)", path);
}

struct cfsign_key *cfsign_key_load(const char *pem_path, bool *unopenable, char *err,
                                   size_t errsz)
{
    bool dummy = false;
    if (!unopenable)
        unopenable = &dummy;
    *unopenable = false;
    size_t len = 0;
    unsigned mode = 0;
    char *pem = read_key_file(pem_path, &len, &mode, unopenable, err, errsz);
    if (!pem)
        return NULL;
    struct cfsign_key *k = calloc(1, sizeof *k);
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (k && bio)
        k->pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    BIO_free(bio);
    bool encrypted = strstr(pem, "ENCRYPTED") != NULL;
    OPENSSL_cleanse(pem, len); /* the key's text does not outlive the load */
    free(pem);
    if (!k) {
        fail(err, errsz, "out of memory");
        return NULL;
    }
    if (!k->pkey) {
        fail(err, errsz, encrypted ? "%s: encrypted keys are not supported"
                                   : "%s: no PEM private key found",
             pem_path);
        cfsign_key_free(k);
        return NULL;
    }
    k->md[CFSIGN_SHA1] = EVP_MD_fetch(NULL, "SHA1", NULL);
    k->md[CFSIGN_SHA256] = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!k->md[CFSIGN_SHA1] || !k->md[CFSIGN_SHA256]) {
        fail(err, errsz, "OpenSSL has no SHA-1 or SHA-256");
        cfsign_key_free(k);
        return NULL;
    }
    if (!key_kind_ok(k, pem_path, err, errsz)) {
        cfsign_key_free(k);
        return NULL;
    }
    /* Like OpenSSH: a signing key that anyone but its owner can read or
     * change is refused, not used with a warning nobody reads (issue 19).
     * Checked once the file is known to hold a private key. */
    if (mode & 077) {
        fail(err, errsz, "%s: the private key is accessible by group or others (mode %04o): "
                         "chmod 600 it (owned by the user that signs)", pem_path, mode & 07777);
        cfsign_key_free(k);
        return NULL;
    }
    return k;
}

void cfsign_key_free(struct cfsign_key *k)
{
    if (!k)
        return;
    EVP_PKEY_free(k->pkey);
    EVP_MD_free(k->md[0]);
    EVP_MD_free(k->md[1]);
    free(k);
}

const char *cfsign_key_describe(const struct cfsign_key *k)
{
    return k->desc;
}

bool cfsign_key_cloudfront_ok(const struct cfsign_key *k)
{
    return k->ec || k->bits == 2048;
}

/* ---- URLs ------------------------------------------------------------------ */

/* True when the query of url already has a parameter that CloudFront reads
 * as part of a signature. */
static bool has_signing_param(const char *url)
{
    static const char *params[] = {"Expires", "Policy", "Signature", "Key-Pair-Id",
                                   "Hash-Algorithm"};
    const char *q = strchr(url, '?');
    while (q) {
        q++;
        size_t len = strcspn(q, "=&");
        for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
            if (len == strlen(params[i]) && !strncmp(q, params[i], len))
                return true;
        q = strchr(q, '&');
    }
    return false;
}

/* An absolute http(s) URL with a host, of printable ASCII, no fragment, no
 * signing parameter.  NULL or the problem. */
const char *cfsign_url_problem(const char *url)
{
    if (strlen(url) > CFSIGN_RESOURCE_MAX)
        return "longer than 4096 characters";
    for (const char *c = url; *c; c++)
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '"' || *c == '\\')
            return "not printable ASCII, or a space, quote or backslash (percent-encode it)";
    if (!strncasecmp(url, "rtmp://", 7))
        return "rtmp:// is not supported (CloudFront ended RTMP distributions in 2020)";
    size_t skip = !strncasecmp(url, "https://", 8) ? 8 : !strncasecmp(url, "http://", 7) ? 7 : 0;
    if (!skip)
        return "an absolute http:// or https:// URL expected";
    if (!url[skip] || strchr("/?#", url[skip]))
        return "the URL has no host";
    if (strchr(url, '#'))
        return "a fragment (#...) is never sent to a CDN: remove it";
    if (has_signing_param(url))
        return "the URL already has a signing parameter (Expires, Policy, Signature, "
               "Key-Pair-Id, Hash-Algorithm)";
    return NULL;
}

/* ---- policy ---------------------------------------------------------------- */

/* "a.b.c.d/n" or "v6::addr/n" with n inside the family's width. */
static bool cidr_ok(const char *s)
{
    const char *slash = strchr(s, '/');
    char addr[64];
    size_t alen = slash ? (size_t)(slash - s) : 0;
    if (!slash || alen == 0 || alen >= sizeof addr)
        return false;
    memcpy(addr, s, alen);
    addr[alen] = '\0';
    unsigned char bin[16];
    int width = inet_pton(AF_INET, addr, bin) == 1    ? 32
                : inet_pton(AF_INET6, addr, bin) == 1 ? 128
                                                      : 0;
    const char *p = slash + 1;
    if (!width || *p < '0' || *p > '9' || strlen(p) > 3)
        return false;
    unsigned n = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        n = n * 10 + (unsigned)(*p - '0');
    }
    return n <= (unsigned)width;
}

bool cfsign_policy_check(const struct cfsign_policy *p, char *err, size_t errsz)
{
    const char *r = p->resource;
    size_t rlen = r ? strlen(r) : 0;
    if (rlen == 0 || rlen > CFSIGN_RESOURCE_MAX)
        return fail(err, errsz, "resource: 1 to %d characters expected", CFSIGN_RESOURCE_MAX);
    for (size_t i = 0; i < rlen; i++) {
        unsigned char c = (unsigned char)r[i];
        if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\')
            return fail(err, errsz,
                        "resource: character %zu is not printable ASCII, or is a space, "
                        "quote or backslash (percent-encode it)",
                        i + 1);
    }
    if (p->date_less_than < 1 || p->date_less_than > CFSIGN_EPOCH_MAX)
        return fail(err, errsz, "expires: epoch seconds from 1 to %lld expected",
                    (long long)CFSIGN_EPOCH_MAX);
    if (p->date_greater_than < 0 || p->date_greater_than > CFSIGN_EPOCH_MAX)
        return fail(err, errsz, "not-before: epoch seconds from 1 to %lld expected",
                    (long long)CFSIGN_EPOCH_MAX);
    if (p->date_greater_than && p->date_greater_than >= p->date_less_than)
        return fail(err, errsz, "not-before must be earlier than expires");
    if (p->source_ip && !cidr_ok(p->source_ip))
        return fail(err, errsz, "ip: a CIDR such as 192.0.2.0/24 or 2001:db8::/32 expected");
    return true;
}

size_t cfsign_policy_json(const struct cfsign_policy *p, char *out, char *err, size_t errsz)
{
    if (!cfsign_policy_check(p, err, errsz))
        return 0;
    char after[64] = "", ip[96] = "";
    if (p->date_greater_than)
        snprintf(after, sizeof after, ",\"DateGreaterThan\":{\"AWS:EpochTime\":%" PRId64 "}",
                 p->date_greater_than);
    if (p->source_ip)
        snprintf(ip, sizeof ip, ",\"IpAddress\":{\"AWS:SourceIp\":\"%s\"}", p->source_ip);
    int n = snprintf(out, CFSIGN_POLICY_MAX + 1,
                     "{\"Statement\":[{\"Resource\":\"%s\",\"Condition\":{\"DateLessThan\":"
                     "{\"AWS:EpochTime\":%" PRId64 "}%s%s}}]}",
                     p->resource, p->date_less_than, after, ip);
    /* The checks above bound every part, so the JSON always fits. */
    assert(n > 0 && n <= CFSIGN_POLICY_MAX);
    return (size_t)n;
}

/* ---- signatures ------------------------------------------------------------ */

size_t cfsign_base64(const void *in, size_t n, char *out)
{
    int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
    for (int i = 0; i < len; i++)
        out[i] = out[i] == '+' ? '-' : out[i] == '=' ? '_' : out[i] == '/' ? '~' : out[i];
    return (size_t)len;
}

bool cfsign_sign(const struct cfsign_key *k, enum cfsign_hash h, const void *msg, size_t len,
                 char *sig, char *err, size_t errsz)
{
    if (h != CFSIGN_SHA1 && h != CFSIGN_SHA256)
        return fail(err, errsz, "unknown hash algorithm");
    unsigned char raw[SIG_RAW_MAX];
    size_t rawlen = sizeof raw;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestSignInit(ctx, NULL, k->md[h], NULL, k->pkey) == 1 &&
              EVP_DigestSign(ctx, raw, &rawlen, msg, len) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return fail(err, errsz, "OpenSSL could not sign with the %s key", k->desc);
    cfsign_base64(raw, rawlen, sig);
    return true;
}

/* ---- assembly -------------------------------------------------------------- */

bool cfsign_key_pair_id_ok(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > CFSIGN_KEY_PAIR_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

bool cfsign_make(const struct cfsign_key *k, const char *key_pair_id, enum cfsign_hash h,
                 const struct cfsign_policy *p, bool canned, struct cfsign_values *v,
                 char *err, size_t errsz)
{
    if (!cfsign_key_pair_id_ok(key_pair_id))
        return fail(err, errsz, "key-pair-id: 1 to %d of A-Z a-z 0-9 _ - expected",
                    CFSIGN_KEY_PAIR_ID_MAX);
    if (canned && (p->date_greater_than || p->source_ip))
        return fail(err, errsz, "a canned policy has no not-before or ip condition");
    char json[CFSIGN_POLICY_MAX + 1];
    size_t jlen = cfsign_policy_json(p, json, err, errsz);
    if (!jlen)
        return false;
    v->canned = canned;
    v->hash = h;
    v->expires[0] = v->policy[0] = '\0';
    if (canned)
        snprintf(v->expires, sizeof v->expires, "%" PRId64, p->date_less_than);
    else
        cfsign_base64(json, jlen, v->policy);
    snprintf(v->key_pair_id, sizeof v->key_pair_id, "%s", key_pair_id);
    return cfsign_sign(k, h, json, jlen, v->signature, err, errsz);
}

static size_t checked(int n, size_t cap)
{
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

size_t cfsign_query(const struct cfsign_values *v, char *out, size_t cap)
{
    return checked(snprintf(out, cap, "%s=%s&Signature=%s&Key-Pair-Id=%s%s",
                            v->canned ? "Expires" : "Policy", v->canned ? v->expires : v->policy,
                            v->signature, v->key_pair_id,
                            v->hash == CFSIGN_SHA256 ? "&Hash-Algorithm=SHA256" : ""),
                   cap);
}

size_t cfsign_append_query(const char *url, const char *query, char *out, size_t cap)
{
    size_t ulen = strlen(url);
    const char *sep = !strchr(url, '?') ? "?" : (url[ulen - 1] == '?' || url[ulen - 1] == '&') ? "" : "&";
    return checked(snprintf(out, cap, "%s%s%s", url, sep, query), cap);
}

size_t cfsign_cookies(const struct cfsign_values *v, struct cfsign_cookie out[4])
{
    size_t n = 0;
    out[n++] = v->canned ? (struct cfsign_cookie){"CloudFront-Expires", v->expires}
                         : (struct cfsign_cookie){"CloudFront-Policy", v->policy};
    out[n++] = (struct cfsign_cookie){"CloudFront-Signature", v->signature};
    out[n++] = (struct cfsign_cookie){"CloudFront-Key-Pair-Id", v->key_pair_id};
    if (v->hash == CFSIGN_SHA256)
        out[n++] = (struct cfsign_cookie){"CloudFront-Hash-Algorithm", "SHA256"};
    return n;
}
