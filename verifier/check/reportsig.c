/* reportsig.c - Ed25519 report signatures with OpenSSL EVP (reportsig.h). */
#include "reportsig.h"

#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "exitcodes.h"
#include "util.h"

#define KEY_FILE_MAX (64 * 1024)
#define ED25519_RAW 32
#define ED25519_SIG 64
#define SIG_B64_LEN 88 /* 4 * ceil(64 / 3) */
#define TRUST_MAX 64

struct reportsig_key {
    EVP_PKEY *pkey;
    char id[REPORTSIG_KEY_ID_LEN + 1];
};

struct reportsig_trust {
    EVP_PKEY *pkey[TRUST_MAX];
    char id[TRUST_MAX][REPORTSIG_KEY_ID_LEN + 1];
    size_t n;
};

static int fail(int code, char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    ERR_clear_error(); /* no stale OpenSSL error left on this thread */
    return code;
}

/* A passphrase is never asked for: an encrypted key is refused. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

/* The whole file, checked and read through one descriptor
 * (util_open_regular): what is checked is what is read.  0 or exit code;
 * on 0 *buf (KEY_FILE_MAX + 1 bytes, for drop_pem) holds *len bytes. */
static int read_pem(const char *path, char **buf, size_t *len, unsigned *mode, char *err, size_t errlen)
{
    FILE *f = util_open_regular(path, mode, err, errlen);
    if (!f)
        return EXACTAV_EXIT_NOINPUT;
    *buf = malloc(KEY_FILE_MAX + 1);
    *len = *buf ? fread(*buf, 1, KEY_FILE_MAX + 1, f) : 0;
    bool bad = !*buf || ferror(f);
    fclose(f);
    int rc = bad ? fail(*buf ? EXACTAV_EXIT_NOINPUT : EXACTAV_EXIT_INTERNAL, err, errlen, "cannot read %s", path)
           : *len > KEY_FILE_MAX ? fail(EXACTAV_EXIT_UNUSABLE, err, errlen, "%s is larger than %d bytes: not a PEM "
                                        "key", path, KEY_FILE_MAX)
                                 : 0;
    if (rc) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

/* A private key's text does not outlive its parse. */
static void drop_pem(char *buf)
{
    if (buf)
        OPENSSL_cleanse(buf, KEY_FILE_MAX + 1);
    free(buf);
}

/* The first 16 hex digits of SHA-256 of the raw public key.  0 or -1. */
static int key_id(EVP_PKEY *pkey, char out[REPORTSIG_KEY_ID_LEN + 1])
{
    unsigned char raw[ED25519_RAW];
    size_t len = sizeof raw;
    char hex[65];
    if (EVP_PKEY_get_raw_public_key(pkey, raw, &len) != 1 || len != ED25519_RAW)
        return -1;
    util_sha256_hex(raw, len, hex);
    memcpy(out, hex, REPORTSIG_KEY_ID_LEN);
    out[REPORTSIG_KEY_ID_LEN] = '\0';
    return 0;
}

int reportsig_key_load(const char *path, struct reportsig_key **out, char *err, size_t errlen)
{
    char *pem = NULL;
    size_t len = 0;
    unsigned mode = 0;
    *out = NULL;
    int rc = read_pem(path, &pem, &len, &mode, err, errlen);
    if (rc)
        return rc;
    BIO *bio = BIO_new_mem_buf(pem, (int)len); /* read-only: no copy of the key */
    EVP_PKEY *pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    BIO_free(bio);
    drop_pem(pem);
    if (!pkey)
        return fail(EXACTAV_EXIT_UNUSABLE, err, errlen, "%s: no unencrypted PEM private key found", path);
    struct reportsig_key *k = calloc(1, sizeof *k);
    if (!k) {
        EVP_PKEY_free(pkey);
        return fail(EXACTAV_EXIT_INTERNAL, err, errlen, "out of memory");
    }
    k->pkey = pkey;
    if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_ED25519)
        rc = fail(EXACTAV_EXIT_UNUSABLE, err, errlen, "%s: not an Ed25519 key (openssl genpkey -algorithm ed25519)",
                  path);
    /* Like the CloudFront key (issue 19): a signing key anyone but its
     * owner can read or change is refused, not used with a warning. */
    else if (mode & 077)
        rc = fail(EXACTAV_EXIT_UNUSABLE, err, errlen,
                  "%s: the private key is accessible by group or others (mode %04o): chmod 600 it (owned by the "
                  "user that signs)", path, mode & 07777);
    else if (key_id(pkey, k->id))
        rc = fail(EXACTAV_EXIT_INTERNAL, err, errlen, "%s: cannot read the public key", path);
    if (rc) {
        reportsig_key_free(k);
        return rc;
    }
    *out = k;
    return 0;
}

void reportsig_key_free(struct reportsig_key *k)
{
    if (!k)
        return;
    EVP_PKEY_free(k->pkey);
    free(k);
}

char *reportsig_canonical(const json_t *report)
{
    /* a shallow copy keeps the members' order; only "signature" goes */
    json_t *copy = json_copy((json_t *)report);
    if (!copy)
        return NULL;
    json_object_del(copy, REPORTSIG_MEMBER);
    char *text = json_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(copy);
    return text;
}

int reportsig_sign(const struct reportsig_key *k, json_t *report, char *err, size_t errlen)
{
    assert(k && json_is_object(report) && !json_object_get(report, REPORTSIG_MEMBER));
    char *text = reportsig_canonical(report);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char sig[ED25519_SIG];
    size_t siglen = sizeof sig;
    /* Ed25519 is one-shot: no digest, DigestSign over the whole message */
    bool ok = text && ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, k->pkey) == 1 &&
              EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)text, strlen(text)) == 1 &&
              siglen == ED25519_SIG;
    EVP_MD_CTX_free(ctx);
    free(text);
    if (!ok)
        return fail(-1, err, errlen, "cannot sign the report (OpenSSL)");
    char b64[SIG_B64_LEN + 1];
    EVP_EncodeBlock((unsigned char *)b64, sig, (int)siglen);
    json_t *member = json_pack("{s:s, s:s, s:s}", "alg", "ed25519", "key_id", k->id, "value", b64);
    if (!member || json_object_set_new(report, REPORTSIG_MEMBER, member))
        return fail(-1, err, errlen, "out of memory");
    return 0;
}

void reportsig_trust_free(struct reportsig_trust *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        EVP_PKEY_free(t->pkey[i]);
    free(t);
}

/* Every PEM public key of bio into t.  0 or exit code. */
static int read_pubkeys(BIO *bio, struct reportsig_trust *t, const char *path, char *err, size_t errlen)
{
    EVP_PKEY *pkey;
    while ((pkey = PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL))) {
        if (t->n == TRUST_MAX) {
            EVP_PKEY_free(pkey);
            return fail(EXACTAV_EXIT_UNUSABLE, err, errlen, "%s: more than %d keys", path, TRUST_MAX);
        }
        t->pkey[t->n++] = pkey; /* owned by t from here, freed with it */
        if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_ED25519)
            return fail(EXACTAV_EXIT_UNUSABLE, err, errlen, "%s: key %zu is not an Ed25519 public key", path, t->n);
        if (key_id(pkey, t->id[t->n - 1]))
            return fail(EXACTAV_EXIT_INTERNAL, err, errlen, "%s: cannot read a public key", path);
    }
    if (!t->n)
        return fail(EXACTAV_EXIT_UNUSABLE, err, errlen, "%s: no PEM public key found", path);
    ERR_clear_error(); /* the end of the file is the last read's "error" */
    return 0;
}

int reportsig_trust_load(const char *path, struct reportsig_trust **out, char *err, size_t errlen)
{
    char *pem = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = read_pem(path, &pem, &len, NULL, err, errlen);
    if (rc)
        return rc;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    struct reportsig_trust *t = calloc(1, sizeof *t);
    rc = t && bio ? read_pubkeys(bio, t, path, err, errlen) : fail(EXACTAV_EXIT_INTERNAL, err, errlen, "out of memory");
    BIO_free(bio);
    drop_pem(pem);
    if (rc) {
        reportsig_trust_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* The 64 signature bytes of a canonical (padded, standard) base64 value:
 * re-encoding must give the same text, so there is one spelling.  0 or -1. */
static int decode_sig(const char *b64, unsigned char sig[ED25519_SIG])
{
    unsigned char raw[SIG_B64_LEN];
    char again[SIG_B64_LEN + 1];
    if (!b64 || strlen(b64) != SIG_B64_LEN || EVP_DecodeBlock(raw, (const unsigned char *)b64, SIG_B64_LEN) < 0)
        return -1;
    memcpy(sig, raw, ED25519_SIG);
    EVP_EncodeBlock((unsigned char *)again, sig, ED25519_SIG);
    return strcmp(again, b64) ? -1 : 0;
}

/* 16 lowercase hex digits, as key_id writes them (and so safe to print). */
static bool is_key_id(const char *id)
{
    if (!id || strlen(id) != REPORTSIG_KEY_ID_LEN)
        return false;
    for (size_t i = 0; i < REPORTSIG_KEY_ID_LEN; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
            return false;
    return true;
}

static bool verifies(EVP_PKEY *pkey, const unsigned char sig[ED25519_SIG], const char *text)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
              EVP_DigestVerify(ctx, sig, ED25519_SIG, (const unsigned char *)text, strlen(text)) == 1;
    EVP_MD_CTX_free(ctx);
    ERR_clear_error();
    return ok;
}

/* The key id of a well-formed signature member s, its signature in sig;
 * NULL when s is not one. */
static const char *parse_member(const json_t *s, unsigned char sig[ED25519_SIG])
{
    const char *alg = json_string_value(json_object_get(s, "alg"));
    const char *id = json_string_value(json_object_get(s, "key_id"));
    bool ok = json_is_object(s) && alg && !strcmp(alg, "ed25519") && is_key_id(id) &&
              !decode_sig(json_string_value(json_object_get(s, "value")), sig);
    return ok ? id : NULL;
}

const char *reportsig_check(const struct reportsig_trust *t, const json_t *report, char *why, size_t whylen)
{
    const json_t *s = json_object_get(report, REPORTSIG_MEMBER);
    unsigned char sig[ED25519_SIG];
    if (!s) {
        snprintf(why, whylen, "the report is not signed");
        return REPORTSIG_MISSING;
    }
    const char *id = parse_member(s, sig);
    if (!id) {
        snprintf(why, whylen, "the signature member is not {\"alg\": \"ed25519\", \"key_id\": 16 hex digits, "
                                "\"value\": base64 of 64 bytes}");
        return REPORTSIG_INVALID;
    }
    bool known = false;
    char *text = reportsig_canonical(report);
    if (!text) {
        snprintf(why, whylen, "out of memory");
        return REPORTSIG_INVALID; /* never accepted for want of memory */
    }
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->id[i], id))
            continue;
        known = true;
        if (verifies(t->pkey[i], sig, text)) {
            free(text);
            return NULL;
        }
    }
    free(text);
    snprintf(why, whylen, known ? "the signature by key %.16s does not verify: the report was changed after it was "
                                  "signed" : "key %.16s is not among the trusted keys", id);
    return known ? REPORTSIG_INVALID : REPORTSIG_UNKNOWN_KEY;
}
