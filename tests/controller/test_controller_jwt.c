/* `stepctl serve --client-auth` (issue 19, docs/serve.md#client-auth):
 * tokens signed here with real OpenSSL keys (an HMAC secret, an EC P-256
 * key pair), verified by jwt.c directly and by the service end to end on
 * loopback: 401, 403 cohort_not_allowed, 422 allocation_id_taken across
 * subjects, 200 for the same subject's retry, 429 subject_quota_exceeded,
 * and control.db's schema 5 (allocations.subject). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include "cauth.h"
#include "ctl_test.h"
#include "jwt.h"
#include "jwt_key.h"
#include "record.h"
#include "serve_rig.h"

/* ---- tokens --------------------------------------------------------------------- */

static void b64url(const unsigned char *in, size_t n, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[k++] = abc[v >> 18 & 63];
        out[k++] = abc[v >> 12 & 63];
        if (i + 1 < n)
            out[k++] = abc[v >> 6 & 63];
        if (i + 2 < n)
            out[k++] = abc[v & 63];
    }
    out[k] = '\0';
}

/* The signature over in: HMAC-SHA256 with secret, or ES256 (R || S) with
 * the EC private key. */
static size_t sign(const char *in, const unsigned char *secret, size_t slen, EVP_PKEY *ec,
                   unsigned char sig[64])
{
    if (!ec) {
        unsigned int n = 0;
        assert_non_null(HMAC(EVP_sha256(), secret, (int)slen, (const unsigned char *)in,
                             strlen(in), sig, &n));
        return n;
    }
    unsigned char der[128];
    size_t dlen = sizeof der;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    assert_int_equal(EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, ec), 1);
    assert_int_equal(EVP_DigestSign(ctx, der, &dlen, (const unsigned char *)in, strlen(in)), 1);
    EVP_MD_CTX_free(ctx);
    const unsigned char *p = der;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)dlen);
    assert_non_null(es);
    memset(sig, 0, 64);
    BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + 32, 32);
    ECDSA_SIG_free(es);
    return 64;
}

/* header.claims.signature (out: 4096 bytes). */
static void token(const char *header, const char *claims, const unsigned char *secret,
                  size_t slen, EVP_PKEY *ec, char *out)
{
    char in[3900]; /* + "." + the signature fit out */
    b64url((const unsigned char *)header, strlen(header), in);
    strcat(in, ".");
    b64url((const unsigned char *)claims, strlen(claims), in + strlen(in));
    unsigned char sig[64];
    size_t n = sign(in, secret, slen, ec, sig);
    snprintf(out, 4096, "%s.", in);
    b64url(sig, n, out + strlen(out));
}

#define HS "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
#define ES "{\"alg\":\"ES256\",\"typ\":\"JWT\"}"
#define COHORT "news-1/eu-west/isp-x/web-hlsjs/2026.11.3/720p"

/* Claims for sub, valid from nbf to exp (seconds from now; nbf 0: none). */
static void claims(char *out, size_t n, const char *sub, const char *aud, long nbf, long exp,
                   const char *cohort)
{
    long now = (long)time(NULL);
    int k = snprintf(out, n, "{\"sub\":\"%s\",\"aud\":%s,\"exp\":%ld,\"cohorts\":[\"%s\"]", sub,
                     aud, now + exp, cohort);
    if (nbf)
        k += snprintf(out + k, n - (size_t)k, ",\"nbf\":%ld", now + nbf);
    snprintf(out + k, n - (size_t)k, "}");
}

struct keys {
    unsigned char secret[32];
    EVP_PKEY *ec;
    struct jwt_key hs, es;
};

static void keys_make(struct keys *k)
{
    assert_int_equal(RAND_bytes(k->secret, sizeof k->secret), 1);
    k->ec = EVP_EC_gen("P-256");
    assert_non_null(k->ec);
    k->hs = (struct jwt_key){JWT_HS256, k->secret, sizeof k->secret, NULL};
    k->es = (struct jwt_key){JWT_ES256, NULL, 0, k->ec};
}

/* Writes the secret (mode) and the public key to dir; their paths. */
static void keys_write(const struct keys *k, const struct ctl_tmp *t, mode_t mode, char *sec,
                       char *pub)
{
    ctl_tmp_path(t, "secret.bin", sec, 256);
    ctl_tmp_path(t, "pub.pem", pub, 256);
    FILE *f = fopen(sec, "wb");
    assert_non_null(f);
    fwrite(k->secret, 1, sizeof k->secret, f);
    fclose(f);
    assert_int_equal(chmod(sec, mode), 0);
    f = fopen(pub, "wb");
    assert_non_null(f);
    assert_int_equal(PEM_write_PUBKEY(f, k->ec), 1);
    fclose(f);
}

static int verify(const struct jwt_key *key, const char *tok, struct jwt_claims *cl)
{
    char err[256];
    return jwt_verify(tok, strlen(tok), key, "stepctl", (int64_t)time(NULL), 30, cl, err,
                      sizeof err);
}

/* ---- the client ------------------------------------------------------------------ */

struct answer {
    long status;
    char body[4096], www_auth[64], retry_after[16];
    size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct answer *a = arg;
    size_t len = size * n;
    if (a->len + len < sizeof a->body) {
        memcpy(a->body + a->len, p, len);
        a->len += len;
        a->body[a->len] = '\0';
    }
    return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct answer *a = arg;
    size_t len = size * n;
    if (len > 18 && !strncasecmp(p, "WWW-Authenticate: ", 18))
        sscanf(p + 18, "%63[^\r\n]", a->www_auth);
    if (len > 13 && !strncasecmp(p, "Retry-After: ", 13))
        sscanf(p + 13, "%15s", a->retry_after);
    return len;
}

/* POST /v1/allocations for id in isp's cohort with tok (NULL: none). */
static long post(int port, const char *id, const char *isp, const char *tok, struct answer *a)
{
    char url[128], body[512], auth[4200];
    memset(a, 0, sizeof *a);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/allocations", port);
    snprintf(body, sizeof body,
             "{\"allocation_id\":\"%s\",\"cohort\":{\"channel\":\"news-1\",\"region\":\"eu-west\","
             "\"isp\":\"%s\",\"client\":\"web-hlsjs\",\"build\":\"2026.11.3\",\"rendition\":"
             "\"720p\"}}",
             id, isp);
    CURL *h = curl_easy_init();
    struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
    if (tok) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
        hd = curl_slist_append(hd, auth);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return a->status;
}

/* The service with --client-auth: a config of alg over the keys in the
 * world's folder, cap per subject. */
static void start(struct ctl_world *w, struct server *s, const struct keys *k, const char *alg,
                  int cap)
{
    char sec[256], pub[256], cfg[256], text[1024];
    keys_write(k, &w->t, 0600, sec, pub);
    ctl_tmp_path(&w->t, "client-auth.json", cfg, sizeof cfg);
    snprintf(text, sizeof text,
             "{\"alg\":\"%s\",\"key_file\":\"%s\",\"audience\":\"stepctl\",\"max_skew_s\":30,"
             "\"per_subject_cap\":%d}",
             alg, !strcmp(alg, "HS256") ? "secret.bin" : "pub.pem", cap);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    const char *extra[] = {"--client-auth", cfg, NULL};
    server_start_with(w, s, extra);
}

/* A valid token of the fixtures' cohort for sub. */
static void good(const struct keys *k, bool es, const char *sub, char *tok)
{
    char c[1024];
    claims(c, sizeof c, sub, "\"stepctl\"", 0, 300, COHORT);
    token(es ? ES : HS, c, k->secret, sizeof k->secret, es ? k->ec : NULL, tok);
}

/* ---- tests ----------------------------------------------------------------------- */

static void ctl_170_jwt_hs256_and_es256_tokens_verify_with_their_claims(void **state)
{
    (void)state;
    struct keys k;
    keys_make(&k);
    char tok[4096], c[1024];
    struct jwt_claims cl;
    good(&k, false, "app-1", tok);
    assert_int_equal(verify(&k.hs, tok, &cl), 0);
    assert_string_equal(cl.sub, "app-1");
    assert_int_equal(cl.n_cohorts, 1);
    assert_string_equal(cl.cohorts[0].f[2], "isp-x");
    good(&k, true, "app-2", tok);
    assert_int_equal(verify(&k.es, tok, &cl), 0);
    assert_string_equal(cl.sub, "app-2");
    /* aud as an array, nbf just passed, wildcards */
    claims(c, sizeof c, "app-3", "[\"other\",\"stepctl\"]", -5, 60, "news-1/*/*/*/*/*");
    token(ES, c, NULL, 0, k.ec, tok);
    assert_int_equal(verify(&k.es, tok, &cl), 0);
    struct sit_cohort want = {"news-1", "eu-west", "isp-y", "web-hlsjs", "2026.11.3", "720p"};
    assert_true(cauth_covers(&cl, &want));
    strcpy(want.channel, "news-2");
    assert_false(cauth_covers(&cl, &want));
    /* skew: expired 10 s ago is still inside 30 s, not 60 s ago */
    claims(c, sizeof c, "app-4", "\"stepctl\"", 0, -10, COHORT);
    token(HS, c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), 0);
    EVP_PKEY_free(k.ec);
}

static void ctl_171_jwt_forged_expired_early_wrong_aud_and_alg_none_are_refused(void **state)
{
    (void)state;
    struct keys k, other;
    keys_make(&k);
    keys_make(&other);
    char tok[4096], c[1024];
    struct jwt_claims cl;
    /* forged: signed with another secret / another EC key, or one bit flipped */
    good(&other, false, "app-1", tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    good(&other, true, "app-1", tok);
    assert_int_equal(verify(&k.es, tok, &cl), -1);
    good(&k, false, "app-1", tok);
    tok[strlen(tok) - 2] = tok[strlen(tok) - 2] == 'A' ? 'B' : 'A';
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    /* the key decides the alg: an HS256 token signed with the PEM's bytes
     * is refused by the ES256 key; an ES256 token by the HS256 key */
    good(&k, false, "app-1", tok);
    assert_int_equal(verify(&k.es, tok, &cl), -1);
    good(&k, true, "app-1", tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    /* expired beyond the skew; nbf in the future beyond the skew */
    claims(c, sizeof c, "app-1", "\"stepctl\"", 0, -60, COHORT);
    token(HS, c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    claims(c, sizeof c, "app-1", "\"stepctl\"", 120, 300, COHORT);
    token(HS, c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    /* another audience */
    claims(c, sizeof c, "app-1", "[\"billing\"]", 0, 300, COHORT);
    token(HS, c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    /* alg none with an empty signature, and with the HMAC kept */
    char h[128], p[1024];
    claims(c, sizeof c, "app-1", "\"stepctl\"", 0, 300, COHORT);
    b64url((const unsigned char *)"{\"alg\":\"none\"}", 14, h);
    b64url((const unsigned char *)c, strlen(c), p);
    snprintf(tok, sizeof tok, "%s.%s.", h, p);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    token("{\"alg\":\"none\"}", c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    /* no sub, no exp, a sub too long, a malformed cohort */
    token(HS, "{\"aud\":\"stepctl\",\"exp\":9999999999,\"cohorts\":[\"" COHORT "\"]}", k.secret,
          sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    token(HS, "{\"sub\":\"a\",\"aud\":\"stepctl\",\"cohorts\":[\"" COHORT "\"]}", k.secret,
          sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    char longsub[200];
    memset(longsub, 'x', 129);
    longsub[129] = '\0';
    claims(c, sizeof c, longsub, "\"stepctl\"", 0, 300, COHORT);
    token(HS, c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    claims(c, sizeof c, "app-1", "\"stepctl\"", 0, 300, "news-1/eu-west/isp-x");
    token(HS, c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    claims(c, sizeof c, "app-1", "\"stepctl\"", 0, 300, COHORT "/extra"); /* found by fuzz_jwt */
    token(HS, c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(verify(&k.hs, tok, &cl), -1);
    EVP_PKEY_free(k.ec);
    EVP_PKEY_free(other.ec);
}

static void ctl_172_client_auth_config_refuses_open_secrets_and_unknown_members(void **state)
{
    (void)state;
    struct ctl_tmp t;
    ctl_tmp_make(&t);
    struct keys k;
    keys_make(&k);
    char sec[256], pub[256], dir[256], err[1024];
    ctl_tmp_path(&t, "", dir, sizeof dir);
    keys_write(&k, &t, 0640, sec, pub);
    struct cauth c;
    const char *hs = "{\"alg\":\"HS256\",\"key_file\":\"secret.bin\",\"audience\":\"stepctl\","
                     "\"per_subject_cap\":3}";
    assert_int_equal(cauth_parse(hs, strlen(hs), dir, &c, err, sizeof err), 65);
    assert_non_null(strstr(err, "accessible by group or others"));
    assert_int_equal(chmod(sec, 0600), 0);
    assert_int_equal(cauth_parse(hs, strlen(hs), dir, &c, err, sizeof err), 0);
    assert_int_equal(c.max_skew_s, 30);
    assert_int_equal(c.per_subject_cap, 3);
    jwt_key_free(&c.key);
    const char *es = "{\"alg\":\"ES256\",\"key_file\":\"pub.pem\",\"audience\":\"stepctl\","
                     "\"max_skew_s\":5,\"per_subject_cap\":1}";
    assert_int_equal(cauth_parse(es, strlen(es), dir, &c, err, sizeof err), 0);
    jwt_key_free(&c.key);
    /* refused: an unknown member, no cap, a skew too large, alg none, a
     * missing key file (66), a secret given as the ES256 key */
    const char *bad[] = {
        "{\"alg\":\"HS256\",\"key_file\":\"secret.bin\",\"audience\":\"a\",\"per_subject_cap\":1,"
        "\"admin\":true}",
        "{\"alg\":\"HS256\",\"key_file\":\"secret.bin\",\"audience\":\"a\"}",
        "{\"alg\":\"HS256\",\"key_file\":\"secret.bin\",\"audience\":\"a\",\"per_subject_cap\":1,"
        "\"max_skew_s\":301}",
        "{\"alg\":\"none\",\"key_file\":\"secret.bin\",\"audience\":\"a\",\"per_subject_cap\":1}",
        "{\"alg\":\"ES256\",\"key_file\":\"secret.bin\",\"audience\":\"a\",\"per_subject_cap\":1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cauth_parse(bad[i], strlen(bad[i]), dir, &c, err, sizeof err), 65);
    const char *missing = "{\"alg\":\"HS256\",\"key_file\":\"nope.bin\",\"audience\":\"a\","
                          "\"per_subject_cap\":1}";
    assert_int_equal(cauth_parse(missing, strlen(missing), dir, &c, err, sizeof err), 66);
    EVP_PKEY_free(k.ec);
    ctl_tmp_remove(&t);
}

static void ctl_173_serve_client_auth_401_without_a_valid_token_403_outside_its_cohorts(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], tok[4096], c[1024];
    serve_world_granted(&w, g);
    struct keys k;
    keys_make(&k);
    struct server s;
    start(&w, &s, &k, "HS256", 10);
    struct answer a;
    assert_int_equal(post(s.port, "j-1", "isp-x", NULL, &a), 401);
    assert_string_equal(a.body, "{\"error\":\"unauthorized\"}");
    assert_string_equal(a.www_auth, "Bearer");
    assert_int_equal(post(s.port, "j-1", "isp-x", "not.a.token", &a), 401);
    claims(c, sizeof c, "app-1", "\"stepctl\"", 0, -120, COHORT);
    token(HS, c, k.secret, sizeof k.secret, NULL, tok);
    assert_int_equal(post(s.port, "j-1", "isp-x", tok, &a), 401); /* expired */
    good(&k, true, "app-1", tok);
    assert_int_equal(post(s.port, "j-1", "isp-x", tok, &a), 401); /* ES256 on an HS256 service */
    /* a token for isp-x asking for isp-y */
    good(&k, false, "app-1", tok);
    assert_int_equal(post(s.port, "j-1", "isp-y", tok, &a), 403);
    assert_non_null(strstr(a.body, "\"error\":\"cohort_not_allowed\""));
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations"), 0);
    assert_int_equal(post(s.port, "j-1", "isp-x", tok, &a), 201);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations WHERE id = 'j-1' AND "
                                         "subject = 'app-1'"),
                     1);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    EVP_PKEY_free(k.ec);
    ctl_world_end(&w);
}

static void ctl_174_serve_client_auth_es256_end_to_end(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], tok[4096];
    serve_world_granted(&w, g);
    struct keys k, other;
    keys_make(&k);
    keys_make(&other);
    struct server s;
    start(&w, &s, &k, "ES256", 10);
    struct answer a;
    good(&other, true, "app-1", tok); /* another key pair: forged */
    assert_int_equal(post(s.port, "e-1", "isp-x", tok, &a), 401);
    good(&k, true, "app-1", tok);
    assert_int_equal(post(s.port, "e-1", "isp-x", tok, &a), 201);
    assert_non_null(strstr(a.body, "\"allocation_id\":\"e-1\""));
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    EVP_PKEY_free(k.ec);
    EVP_PKEY_free(other.ec);
    ctl_world_end(&w);
}

static void ctl_175_serve_client_auth_another_subject_reusing_an_id_gets_422_and_nothing(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], t1[4096], t2[4096];
    serve_world_granted(&w, g);
    struct keys k;
    keys_make(&k);
    struct server s;
    start(&w, &s, &k, "HS256", 10);
    good(&k, false, "app-1", t1);
    good(&k, false, "app-2", t2);
    struct answer a, b;
    assert_int_equal(post(s.port, "shared", "isp-x", t1, &a), 201);
    /* the same subject again: the stored body, byte for byte */
    assert_int_equal(post(s.port, "shared", "isp-x", t1, &b), 200);
    assert_string_equal(a.body, b.body);
    /* another subject: 422, and nothing of the first answer */
    assert_int_equal(post(s.port, "shared", "isp-x", t2, &b), 422);
    assert_non_null(strstr(b.body, "\"error\":\"allocation_id_taken\""));
    assert_null(strstr(b.body, g));
    assert_null(strstr(b.body, "shared"));
    assert_null(strstr(b.body, "path_id"));
    /* the same subject with another request under the id: the usual 422 */
    assert_int_equal(post(s.port, "shared", "isp-y", t1, &b), 403); /* not its cohort */
    char c[1024];
    claims(c, sizeof c, "app-1", "\"stepctl\"", 0, 300, "news-1/eu-west/*/web-hlsjs/2026.11.3/720p");
    token(HS, c, k.secret, sizeof k.secret, NULL, t1);
    assert_int_equal(post(s.port, "shared", "isp-y", t1, &b), 422);
    assert_non_null(strstr(b.body, "\"error\":\"idempotency_key_reused\""));
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations"), 1);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    EVP_PKEY_free(k.ec);
    ctl_world_end(&w);
}

static void ctl_176_serve_client_auth_subject_cap_429_while_others_allocate(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], t1[4096], t2[4096];
    serve_world_granted(&w, g);
    struct keys k;
    keys_make(&k);
    struct server s;
    start(&w, &s, &k, "HS256", 2);
    good(&k, false, "app-1", t1);
    good(&k, false, "app-2", t2);
    struct answer a;
    assert_int_equal(post(s.port, "c-1", "isp-x", t1, &a), 201);
    assert_int_equal(post(s.port, "c-2", "isp-x", t1, &a), 201);
    assert_int_equal(post(s.port, "c-3", "isp-x", t1, &a), 429);
    assert_non_null(strstr(a.body, "\"error\":\"subject_quota_exceeded\""));
    assert_true(atoi(a.retry_after) >= 1);
    /* its own retry is still answered; another subject still allocates */
    assert_int_equal(post(s.port, "c-1", "isp-x", t1, &a), 200);
    assert_int_equal(post(s.port, "c-3", "isp-x", t2, &a), 201);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations WHERE subject = "
                                         "'app-1'"),
                     2);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    EVP_PKEY_free(k.ec);
    ctl_world_end(&w);
}

static void ctl_177_serve_without_client_auth_keeps_idempotency_and_no_subject(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33];
    serve_world_granted(&w, g);
    struct server s;
    server_start(&w, &s);
    struct answer a, b;
    assert_int_equal(post(s.port, "n-1", "isp-x", NULL, &a), 201);
    assert_int_equal(post(s.port, "n-1", "isp-x", "ignored.without.auth", &b), 200);
    assert_string_equal(a.body, b.body);
    assert_int_equal(post(s.port, "n-1", "isp-y", NULL, &b), 422);
    assert_non_null(strstr(b.body, "\"error\":\"idempotency_key_reused\""));
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM allocations WHERE subject IS NULL"),
                     1);
    assert_int_equal(server_stop(&s, SIGTERM), 0);
    ctl_world_end(&w);
}

static void ctl_178_schema_v6_adds_the_subject_to_a_v5_control_db(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], err[256];
    serve_world_granted(&w, g);
    assert_int_equal(ctl_sql(w.db, CTL_V9_UNDONE CTL_V8_UNDONE "DROP INDEX allocations_subject; ALTER TABLE "
                                   "allocations DROP COLUMN subject; PRAGMA user_version = 5;"),
                     0);
    sqlite3 *db = NULL;
    assert_int_equal(rec_open(w.db, REC_WRITE, &db, err, sizeof err), REC_OK);
    sqlite3_close(db);
    assert_int_equal(ctl_query_int(w.db, "PRAGMA user_version"), REC_SCHEMA_VERSION);
    assert_true(REC_SCHEMA_VERSION >= 6); /* later migrations (7: store_keying) run too */
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM pragma_table_info('allocations') "
                                         "WHERE name = 'subject'"),
                     1);
    assert_int_equal(ctl_query_int(w.db, "SELECT count(*) FROM sqlite_master WHERE name = "
                                         "'allocations_subject'"),
                     1);
    ctl_world_end(&w);
}

/* The service refuses to start on a configuration it could not enforce:
 * 65 with the member or the key's problem named, 66 a file it cannot read;
 * nothing listens. */
static void ctl_179_serve_client_auth_refuses_to_start_on_an_open_secret_or_bad_file(void **state)
{
    (void)state;
    struct ctl_world w;
    char g[33], sec[256], pub[256], cfg[256];
    serve_world_granted(&w, g);
    struct keys k;
    keys_make(&k);
    keys_write(&k, &w.t, 0644, sec, pub);
    ctl_tmp_path(&w.t, "client-auth.json", cfg, sizeof cfg);
    const char *cases[][2] = {
        {"{\"alg\":\"HS256\",\"key_file\":\"secret.bin\",\"audience\":\"a\",\"per_subject_cap\":1}",
         "accessible by group or others"},
        {"{\"alg\":\"ES256\",\"key_file\":\"pub.pem\",\"audience\":\"a\",\"per_subject_cap\":0}",
         "per_subject_cap: an integer from 1"},
        {"{\"alg\":\"ES256\",\"key_file\":\"pub.pem\",\"audience\":\"a\",\"per_subject_cap\":1,"
         "\"allow_anonymous\":true}",
         "allow_anonymous: unknown member"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(cfg, "w");
        assert_non_null(f);
        fputs(cases[i][0], f);
        fclose(f);
        int rc = ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --client-auth '%s'", w.db,
                         cfg);
        char *err = ctl_out(&w.t, "err");
        if (rc != 65 || !strstr(err, cases[i][1]))
            printf("case %zu: exit %d, stderr: %s\n", i, rc, err);
        assert_int_equal(rc, 65);
        assert_non_null(strstr(err, cases[i][1]));
        free(err);
    }
    assert_int_equal(ctl_run(&w.t, "serve --db '%s' --listen 127.0.0.1:0 --client-auth '%s.none'",
                             w.db, cfg),
                     66);
    EVP_PKEY_free(k.ec);
    ctl_world_end(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctl_170_jwt_hs256_and_es256_tokens_verify_with_their_claims),
        cmocka_unit_test(ctl_171_jwt_forged_expired_early_wrong_aud_and_alg_none_are_refused),
        cmocka_unit_test(ctl_172_client_auth_config_refuses_open_secrets_and_unknown_members),
        cmocka_unit_test_teardown(ctl_173_serve_client_auth_401_without_a_valid_token_403_outside_its_cohorts, kill_leftovers),
        cmocka_unit_test_teardown(ctl_174_serve_client_auth_es256_end_to_end, kill_leftovers),
        cmocka_unit_test_teardown(ctl_175_serve_client_auth_another_subject_reusing_an_id_gets_422_and_nothing, kill_leftovers),
        cmocka_unit_test_teardown(ctl_176_serve_client_auth_subject_cap_429_while_others_allocate, kill_leftovers),
        cmocka_unit_test_teardown(ctl_177_serve_without_client_auth_keeps_idempotency_and_no_subject, kill_leftovers),
        cmocka_unit_test_teardown(ctl_178_schema_v6_adds_the_subject_to_a_v5_control_db, kill_leftovers),
        cmocka_unit_test_teardown(ctl_179_serve_client_auth_refuses_to_start_on_an_open_secret_or_bad_file, kill_leftovers),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
