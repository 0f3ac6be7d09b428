/* CloudFront signing (controller/sign/cfsign.h, `stepctl sign-url`, `sign-cookies`):
 * the published aws-sdk-ruby vectors of ../shared/corpus/cloudfront/, and
 * fresh RSA 2048 / ECDSA P-256 keys made here by the openssl CLI, whose
 * `openssl dgst -verify` checks every signature we produce.
 *
 * Each test is its own ctest entry (sign_NN_...); corpus tests exit 77
 * (skipped) when the corpus is absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "cfsign.h"
#include "ctl_test.h"

#define VECTORS "cloudfront/aws-sdk-ruby_vectors.tsv"
#define VECTOR_KEY CORPUS_DIR "/cloudfront/aws-sdk-ruby_unit_test_dummy_key.pem"
#define FAR_FUTURE "4102444800" /* 2100-01-01 */

/* ---- helpers -------------------------------------------------------------------- */

/* Runs a shell command in dir t; returns its exit status. */
static int sh(const struct ctl_tmp *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(const struct ctl_tmp *t, const char *fmt, ...)
{
    char body[4096], cmd[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && { %s ; } >sh.out 2>sh.err", t->dir, body);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void need_corpus(void)
{
    FILE *f = fopen(CORPUS_DIR "/" VECTORS, "r");
    if (!f) {
        printf("SKIPPED: %s/%s is absent (the shared corpus is not beside this checkout)\n",
               CORPUS_DIR, VECTORS);
        exit(77);
    }
    fclose(f);
}

struct vector {
    char name[64], key_pair_id[64], url[512], expires[32], policy_json[1024], policy_b64[1536],
        signature[512], signed_url[2600];
};

static void copy_field(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    assert_true(n < cap);
    memcpy(dst, src, n + 1);
}

/* Reads the vectors file (header line first, tab-separated). */
static size_t read_vectors(struct vector *v, size_t max)
{
    FILE *f = fopen(CORPUS_DIR "/" VECTORS, "r");
    assert_non_null(f);
    static char line[8192];
    size_t n = 0;
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (n < max && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *fields[9] = {0};
        char *p = line;
        for (int i = 0; i < 9; i++) {
            fields[i] = p;
            p = strchr(p, '\t');
            if (!p)
                break;
            *p++ = '\0';
        }
        assert_non_null(fields[8]);
        struct vector *x = &v[n++];
        copy_field(x->name, sizeof x->name, fields[0]);
        copy_field(x->key_pair_id, sizeof x->key_pair_id, fields[1]);
        copy_field(x->url, sizeof x->url, fields[2]);
        copy_field(x->expires, sizeof x->expires, fields[3]);
        copy_field(x->policy_json, sizeof x->policy_json, fields[4]);
        copy_field(x->policy_b64, sizeof x->policy_b64, fields[5]);
        copy_field(x->signature, sizeof x->signature, fields[6]);
        copy_field(x->signed_url, sizeof x->signed_url, fields[7]);
    }
    fclose(f);
    return n;
}

static struct vector *find_vector(struct vector *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    fail_msg("vector %s missing", name);
    return NULL;
}

static struct cfsign_key *load_key(const char *path)
{
    char err[256];
    struct cfsign_key *k = cfsign_key_load(path, NULL, err, sizeof err);
    if (!k)
        fail_msg("%s", err);
    return k;
}

/* The corpus's key copied to dir/vector.pem with mode 0600 (path into
 * out): the corpus is readable by everyone, and keys open to others are
 * refused (issue 19). */
static void vector_key_copy(const struct ctl_tmp *t, char *out, size_t n)
{
    snprintf(out, n, "%s/vector.pem", t->dir);
    assert_int_equal(sh(t, "install -m 600 '%s' '%s'", VECTOR_KEY, out), 0);
}

/* The corpus's key, loaded from a private copy. */
static struct cfsign_key *load_vector_key(void)
{
    struct ctl_tmp t;
    char path[256];
    assert_int_equal(ctl_tmp_make(&t), 0);
    vector_key_copy(&t, path, sizeof path);
    struct cfsign_key *k = load_key(path);
    ctl_tmp_remove(&t);
    return k;
}

/* The value of query parameter name in url (malloc'd), or NULL. */
static char *query_value(const char *url, const char *name)
{
    const char *q = strchr(url, '?');
    size_t nl = strlen(name);
    while (q) {
        q++;
        if (!strncmp(q, name, nl) && q[nl] == '=') {
            size_t len = strcspn(q + nl + 1, "&\n");
            return strndup(q + nl + 1, len);
        }
        q = strchr(q, '&');
    }
    return NULL;
}

/* Writes the URL-safe base64 text b64 decoded into dir/name. */
static void write_decoded(const struct ctl_tmp *t, const char *b64, const char *name)
{
    assert_int_equal(sh(t, "printf %%s '%s' | tr -- '-_~' '+=/' | openssl base64 -d -A >%s", b64,
                        name),
                     0);
}

/* A fresh key pair in dir: key.pem and pub.pem; kind "rsa" or "ec". */
static void make_key(const struct ctl_tmp *t, const char *kind)
{
    const char *gen = !strcmp(kind, "rsa")
                          ? "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out key.pem"
                          : "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out key.pem";
    assert_int_equal(sh(t, "%s && openssl pkey -in key.pem -pubout -out pub.pem", gen), 0);
}

/* Signs with stepctl sign-url and checks the result with openssl dgst -verify:
 * the URL keeps its query, the policy is exactly `policy`, the signature
 * verifies with the public key under the given digest. */
static void cli_sign_and_verify(const struct ctl_tmp *t, const char *hash, const char *extra,
                                const char *url, const char *policy)
{
    char keypath[128];
    ctl_tmp_path(t, "key.pem", keypath, sizeof keypath);
    assert_int_equal(ctl_run(t,
                             "sign-url --key '%s' --key-pair-id K2JCJMDEHXQW5F --url '%s' "
                             "--expires " FAR_FUTURE " --hash %s %s",
                             keypath, url, hash, extra),
                     0);
    char *out = ctl_out(t, "out");
    assert_true(!strncmp(out, url, strlen(url))); /* the URL itself, untouched, comes first */
    assert_int_equal(out[strlen(url)], strchr(url, '?') ? '&' : '?');
    assert_true(!strncmp(out + strlen(url) + 1, "Policy=", 7));
    char *p = query_value(out, "Policy"), *s = query_value(out, "Signature"),
         *k = query_value(out, "Key-Pair-Id"), *ha = query_value(out, "Hash-Algorithm");
    assert_non_null(p);
    assert_non_null(s);
    assert_string_equal(k, "K2JCJMDEHXQW5F");
    if (!strcmp(hash, "sha256")) {
        assert_string_equal(ha, "SHA256");
        assert_non_null(strstr(out, "&Key-Pair-Id=K2JCJMDEHXQW5F&Hash-Algorithm=SHA256\n"));
    } else {
        assert_null(ha);
    }
    write_decoded(t, p, "policy.json");
    write_decoded(t, s, "sig.bin");
    assert_int_equal(sh(t, "printf %%s '%s' | cmp - policy.json", policy), 0);
    assert_int_equal(sh(t, "openssl dgst -%s -verify pub.pem -signature sig.bin policy.json", hash),
                     0);
    /* A policy changed by one byte does not verify. */
    assert_int_equal(sh(t, "sed 's/K/X/; s/1/2/' policy.json >tampered.json && "
                           "openssl dgst -%s -verify pub.pem -signature sig.bin tampered.json",
                        hash),
                     1);
    free(out);
    free(p);
    free(s);
    free(k);
    free(ha);
}

/* ---- tests --------------------------------------------------------------------- */

static void sign_01_policy_json_is_cloudfronts_exact_bytes(void **state)
{
    (void)state;
    char out[CFSIGN_POLICY_MAX + 1], err[256];
    struct cfsign_policy p = {"https://d111.cloudfront.net/ch1/r360/live.m3u8?x=1", 1767290400, 0,
                              NULL};
    assert_int_not_equal(cfsign_policy_json(&p, out, err, sizeof err), 0);
    assert_string_equal(out, "{\"Statement\":[{\"Resource\":\"https://d111.cloudfront.net/ch1/r360/"
                             "live.m3u8?x=1\",\"Condition\":{\"DateLessThan\":{\"AWS:EpochTime\":"
                             "1767290400}}}]}");
    p = (struct cfsign_policy){"https://d111.cloudfront.net/ch1/*", 1767290400, 1767280000,
                               "192.0.2.0/24"};
    assert_int_not_equal(cfsign_policy_json(&p, out, err, sizeof err), 0);
    assert_string_equal(out, "{\"Statement\":[{\"Resource\":\"https://d111.cloudfront.net/ch1/*\","
                             "\"Condition\":{\"DateLessThan\":{\"AWS:EpochTime\":1767290400},"
                             "\"DateGreaterThan\":{\"AWS:EpochTime\":1767280000},\"IpAddress\":"
                             "{\"AWS:SourceIp\":\"192.0.2.0/24\"}}}]}");
    p = (struct cfsign_policy){"http://a/b", 20, 0, "2001:db8::/32"};
    assert_int_not_equal(cfsign_policy_json(&p, out, err, sizeof err), 0);
    assert_non_null(strstr(out, "\"DateLessThan\":{\"AWS:EpochTime\":20},\"IpAddress\":{\"AWS:"
                                "SourceIp\":\"2001:db8::/32\"}}"));
    assert_null(strchr(out, ' '));
    /* Refused: characters that would need escaping, bad times, bad CIDRs. */
    static const struct cfsign_policy bad[] = {
        {"http://a/b c", 20, 0, NULL},      {"http://a/\"b", 20, 0, NULL},
        {"http://a/\\b", 20, 0, NULL},      {"http://a/\xc3\xa9", 20, 0, NULL},
        {"", 20, 0, NULL},                  {"http://a/b", 0, 0, NULL},
        {"http://a/b", 20, 20, NULL},       {"http://a/b", 20, 30, NULL},
        {"http://a/b", CFSIGN_EPOCH_MAX + 1, 0, NULL},
        {"http://a/b", 20, 0, "10.0.0.1"},  {"http://a/b", 20, 0, "10.0.0.0/33"},
        {"http://a/b", 20, 0, "10.0.0/8"},  {"http://a/b", 20, 0, "::/129"},
        {"http://a/b", 20, 0, "10.0.0.0/-1"}, {"http://a/b", 20, 0, "10.0.0.0/"},
        {"http://a/b", 20, 0, "\"/8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(cfsign_policy_json(&bad[i], out, err, sizeof err), 0);
        assert_true(err[0] != '\0');
    }
    static char longres[CFSIGN_RESOURCE_MAX + 2];
    memset(longres, 'a', sizeof longres - 1);
    p = (struct cfsign_policy){longres, 20, 0, NULL};
    assert_int_equal(cfsign_policy_json(&p, out, err, sizeof err), 0);
    longres[CFSIGN_RESOURCE_MAX] = '\0'; /* the longest accepted, with every condition */
    p = (struct cfsign_policy){longres, CFSIGN_EPOCH_MAX, CFSIGN_EPOCH_MAX - 1,
                               "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/128"};
    assert_int_not_equal(cfsign_policy_json(&p, out, err, sizeof err), 0);
}

static void sign_02_base64_is_url_safe_and_padded_with_underscore(void **state)
{
    (void)state;
    char out[16];
    /* 0xfb 0xff -> "+/8=" in standard base64. */
    assert_int_equal(cfsign_base64("\xfb\xff", 2, out), 4);
    assert_string_equal(out, "-~8_");
    assert_int_equal(cfsign_base64("a", 1, out), 4);
    assert_string_equal(out, "YQ__");
    assert_int_equal(cfsign_base64("", 0, out), 0);
    assert_string_equal(out, "");
}

static void sign_03_corpus_vectors_rederive(void **state)
{
    (void)state;
    need_corpus();
    struct vector v[8];
    size_t n = read_vectors(v, 8);
    assert_int_equal(n, 4);
    struct cfsign_key *k = load_vector_key();
    assert_string_equal(cfsign_key_describe(k), "RSA-1024");
    assert_false(cfsign_key_cloudfront_ok(k));
    char err[256], sig[CFSIGN_SIG_B64_MAX], b64[CFSIGN_POLICY_B64_MAX];
    char query[8192], url[8192], json[CFSIGN_POLICY_MAX + 1];
    for (size_t i = 0; i < n; i++) {
        /* Every vector: its policy bytes sign to its signature. */
        assert_true(cfsign_sign(k, CFSIGN_SHA1, v[i].policy_json, strlen(v[i].policy_json), sig,
                                err, sizeof err));
        assert_string_equal(sig, v[i].signature);
    }
    /* Canned vectors on http(s) URLs: our canned policy is theirs, byte for
     * byte, and so is the signed URL. */
    const char *canned[] = {"canned-with-query", "canned-url-like-path"};
    for (size_t i = 0; i < 2; i++) {
        struct vector *x = find_vector(v, n, canned[i]);
        struct cfsign_policy p = {x->url, strtoll(x->expires, NULL, 10), 0, NULL};
        assert_int_not_equal(cfsign_policy_json(&p, json, err, sizeof err), 0);
        assert_string_equal(json, x->policy_json);
        struct cfsign_values val;
        assert_true(cfsign_make(k, x->key_pair_id, CFSIGN_SHA1, &p, true, &val, err, sizeof err));
        assert_int_not_equal(cfsign_query(&val, query, sizeof query), 0);
        assert_int_not_equal(cfsign_append_query(x->url, query, url, sizeof url), 0);
        assert_string_equal(url, x->signed_url);
    }
    /* The custom vector: the policy's base64 and the signed URL re-derive from
     * its policy bytes.  Its JSON lists IpAddress before DateLessThan and has
     * a relative Resource; CloudFront's documented order (ours) differs in
     * bytes, not in meaning. */
    struct vector *c = find_vector(v, n, "custom-policy");
    cfsign_base64(c->policy_json, strlen(c->policy_json), b64);
    assert_string_equal(b64, c->policy_b64);
    snprintf(url, sizeof url, "%s?Policy=%s&Signature=%s&Key-Pair-Id=%s", c->url, b64,
             c->signature, c->key_pair_id);
    assert_string_equal(url, c->signed_url);
    struct cfsign_policy p = {"images/image.jpg", strtoll(c->expires, NULL, 10), 0,
                              "10.52.176.0/24"};
    assert_int_not_equal(cfsign_policy_json(&p, json, err, sizeof err), 0);
    json_t *ours = json_loads(json, 0, NULL), *theirs = json_loads(c->policy_json, 0, NULL);
    assert_non_null(ours);
    assert_non_null(theirs);
    assert_true(json_equal(ours, theirs));
    json_decref(ours);
    json_decref(theirs);
    cfsign_key_free(k);
}

static void sign_04_cli_reproduces_corpus_signed_urls(void **state)
{
    (void)state;
    need_corpus();
    struct vector v[8];
    size_t n = read_vectors(v, 8);
    struct ctl_tmp t;
    assert_int_equal(ctl_tmp_make(&t), 0);
    /* The corpus's key is readable by everyone (mode 0444): refused as it
     * is (issue 19), used from a private copy. */
    assert_int_equal(ctl_run(&t, "sign-url --key '%s' --key-pair-id K --url http://a/b --expires 9",
                             VECTOR_KEY),
                     65);
    char *said = ctl_out(&t, "err");
    assert_non_null(strstr(said, "accessible by group or others (mode 0444)"));
    free(said);
    char key[256];
    vector_key_copy(&t, key, sizeof key);
    const char *canned[] = {"canned-with-query", "canned-url-like-path"};
    for (size_t i = 0; i < 2; i++) {
        struct vector *x = find_vector(v, n, canned[i]);
        assert_int_equal(ctl_run(&t, "sign-url --canned --key '%s' --key-pair-id %s --url '%s' "
                                     "--expires %s",
                                 key, x->key_pair_id, x->url, x->expires),
                         0);
        char *out = ctl_out(&t, "out"), *err = ctl_out(&t, "err");
        assert_int_equal(out[strlen(out) - 1], '\n');
        out[strlen(out) - 1] = '\0';
        assert_string_equal(out, x->signed_url);
        /* Told, not hidden: the 1024-bit test key and the past expiry. */
        assert_non_null(strstr(err, "RSA-1024"));
        assert_non_null(strstr(err, "already expired"));
        free(out);
        free(err);
    }
    /* The custom policy of a canned vector's URL signs the same bytes, so it
     * carries the same signature, as Policy=. */
    struct vector *x = find_vector(v, n, "canned-with-query");
    assert_int_equal(ctl_run(&t, "sign-url --key '%s' --key-pair-id %s --url '%s' --expires %s",
                             key, x->key_pair_id, x->url, x->expires),
                     0);
    char *out = ctl_out(&t, "out");
    char *sig = query_value(out, "Signature");
    assert_string_equal(sig, x->signature);
    /* rtmp:// (the third vector) is refused: CloudFront has no RTMP any more. */
    x = find_vector(v, n, "canned-rtmp");
    assert_int_equal(ctl_run(&t, "sign-url --canned --key '%s' --key-pair-id %s --url '%s' "
                                 "--expires %s",
                             key, x->key_pair_id, x->url, x->expires),
                     64);
    free(out);
    free(sig);
    ctl_tmp_remove(&t);
}

static void sign_05_rsa2048_verifies_with_openssl(void **state)
{
    (void)state;
    struct ctl_tmp t;
    assert_int_equal(ctl_tmp_make(&t), 0);
    make_key(&t, "rsa");
    const char *url = "https://d111.cloudfront.net/ch1/r360/live.m3u8?session=a1&x=%20";
    char policy[1024];
    snprintf(policy, sizeof policy,
             "{\"Statement\":[{\"Resource\":\"%s\",\"Condition\":{\"DateLessThan\":{\"AWS:"
             "EpochTime\":" FAR_FUTURE "}}}]}",
             url);
    cli_sign_and_verify(&t, "sha1", "", url, policy);
    cli_sign_and_verify(&t, "sha256", "", url, policy);
    /* Every condition, the wildcard resource. */
    snprintf(policy, sizeof policy,
             "{\"Statement\":[{\"Resource\":\"https://d111.cloudfront.net/ch1/*\",\"Condition\":{"
             "\"DateLessThan\":{\"AWS:EpochTime\":" FAR_FUTURE "},\"DateGreaterThan\":{\"AWS:"
             "EpochTime\":1700000000},\"IpAddress\":{\"AWS:SourceIp\":\"198.51.100.0/24\"}}}]}");
    cli_sign_and_verify(&t, "sha1",
                        "--not-before 1700000000 --ip 198.51.100.0/24 "
                        "--resource 'https://d111.cloudfront.net/ch1/*'",
                        "https://d111.cloudfront.net/ch1/r360/live.m3u8", policy);
    cli_sign_and_verify(&t, "sha256",
                        "--not-before 1700000000 --ip 198.51.100.0/24 "
                        "--resource 'https://d111.cloudfront.net/ch1/*'",
                        "https://d111.cloudfront.net/ch1/r360/live.m3u8", policy);
    /* A 2048-bit key is what CloudFront takes: no warning. */
    char *err = ctl_out(&t, "err");
    assert_string_equal(err, "");
    free(err);
    ctl_tmp_remove(&t);
}

static void sign_06_ecdsa_p256_verifies_with_openssl(void **state)
{
    (void)state;
    struct ctl_tmp t;
    assert_int_equal(ctl_tmp_make(&t), 0);
    make_key(&t, "ec");
    const char *url = "http://127.0.0.1:8080/live/3.ts";
    char policy[1024];
    snprintf(policy, sizeof policy,
             "{\"Statement\":[{\"Resource\":\"%s\",\"Condition\":{\"DateLessThan\":{\"AWS:"
             "EpochTime\":" FAR_FUTURE "},\"IpAddress\":{\"AWS:SourceIp\":\"127.0.0.0/8\"}}}]}",
             url);
    cli_sign_and_verify(&t, "sha1", "--ip 127.0.0.0/8", url, policy);
    cli_sign_and_verify(&t, "sha256", "--ip 127.0.0.0/8", url, policy);
    /* The module directly: a DER ECDSA signature, shorter than RSA's. */
    char keypath[128], err[256];
    ctl_tmp_path(&t, "key.pem", keypath, sizeof keypath);
    struct cfsign_key *k = load_key(keypath);
    assert_string_equal(cfsign_key_describe(k), "ECDSA-P256");
    assert_true(cfsign_key_cloudfront_ok(k));
    char sig[CFSIGN_SIG_B64_MAX];
    assert_true(cfsign_sign(k, CFSIGN_SHA256, "x", 1, sig, err, sizeof err));
    assert_true(strlen(sig) <= 96 && strlen(sig) >= 88);
    cfsign_key_free(k);
    ctl_tmp_remove(&t);
}

static void sign_07_cookies_carry_the_urls_policy_and_signature(void **state)
{
    (void)state;
    struct ctl_tmp t;
    assert_int_equal(ctl_tmp_make(&t), 0);
    make_key(&t, "rsa");
    char keypath[128];
    ctl_tmp_path(&t, "key.pem", keypath, sizeof keypath);
    const char *common = "--key-pair-id K2JCJMDEHXQW5F --url https://d111.cloudfront.net/ch1/r360/"
                         "live.m3u8 --resource 'https://d111.cloudfront.net/ch1/r360/*' "
                         "--expires " FAR_FUTURE;
    assert_int_equal(ctl_run(&t, "sign-url --key '%s' %s", keypath, common), 0);
    char *url = ctl_out(&t, "out");
    assert_int_equal(ctl_run(&t, "sign-cookies --key '%s' %s", keypath, common), 0);
    char *cookies = ctl_out(&t, "out");
    /* RSA PKCS#1 v1.5 is deterministic: the cookies hold the URL's values. */
    char *p = query_value(url, "Policy"), *s = query_value(url, "Signature");
    char expect[4096];
    snprintf(expect, sizeof expect,
             "CloudFront-Policy=%s\nCloudFront-Signature=%s\nCloudFront-Key-Pair-Id=K2JCJMDEHXQW5F\n",
             p, s);
    assert_string_equal(cookies, expect);
    free(url);
    free(cookies);
    free(p);
    free(s);
    /* SHA-256 adds the fourth cookie; canned uses CloudFront-Expires. */
    assert_int_equal(ctl_run(&t, "sign-cookies --key '%s' %s --hash sha256", keypath, common), 0);
    cookies = ctl_out(&t, "out");
    assert_non_null(strstr(cookies, "\nCloudFront-Hash-Algorithm=SHA256\n"));
    free(cookies);
    assert_int_equal(ctl_run(&t, "sign-cookies --canned --key '%s' --key-pair-id K1 --url "
                                 "https://d111.cloudfront.net/a.ts --expires " FAR_FUTURE,
                             keypath),
                     0);
    cookies = ctl_out(&t, "out");
    const char *head = "CloudFront-Expires=" FAR_FUTURE "\nCloudFront-Signature=";
    assert_true(!strncmp(cookies, head, strlen(head)));
    free(cookies);
    ctl_tmp_remove(&t);
}

static void sign_08_usage_and_key_errors_name_the_problem(void **state)
{
    (void)state;
    struct ctl_tmp t;
    assert_int_equal(ctl_tmp_make(&t), 0);
    make_key(&t, "rsa");
    assert_int_equal(sh(&t, "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 "
                            "-out p384.pem && openssl genpkey -algorithm ED25519 -out ed.pem && "
                            "openssl pkey -in key.pem -aes128 -passout pass:x -out enc.pem && "
                            "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:512 "
                            "-out small.pem && echo junk >junk.pem"),
                     0);
    char d[80];
    snprintf(d, sizeof d, "%s", t.dir);
    static const struct {
        const char *args;
        int rc;
        const char *says;
    } cases[] = {
        {"--key-pair-id K --url http://a/b --expires 9", 64, "--key: is required"},
        {"--key key.pem --url http://a/b --expires 9", 64, "--key-pair-id: is required"},
        {"--key key.pem --key-pair-id K --expires 9", 64, "--url: is required"},
        {"--key key.pem --key-pair-id K --url http://a/b", 64, "--expires: is required"},
        {"--key key.pem --key-pair-id 'K K' --url http://a/b --expires 9", 64, "--key-pair-id:"},
        {"--key key.pem --key-pair-id K --url a/b --expires 9", 64, "--url: an absolute"},
        {"--key key.pem --key-pair-id K --url http:///b --expires 9", 64, "no host"},
        {"--key key.pem --key-pair-id K --url 'http://a/b#f' --expires 9", 64, "fragment"},
        {"--key key.pem --key-pair-id K --url 'http://a/b c' --expires 9", 64, "percent-encode"},
        {"--key key.pem --key-pair-id K --url 'http://a/b?x=1&Signature=2' --expires 9", 64,
         "signing parameter"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires 9x", 64, "--expires:"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires -9", 64, "--expires:"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires 9 --not-before 10", 64,
         "earlier"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires 9 --ip 10.0.0.1", 64, "ip:"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires 9 --hash md5", 64, "--hash:"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires 9 --canned --ip 10.0.0.0/8",
         64, "--canned:"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires 9 --bogus", 64, "'--bogus'"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires 9 --url http://c", 64,
         "given twice"},
        {"--key key.pem --key-pair-id K --url http://a/b --expires", 64, "needs a value"},
        {"--key nowhere.pem --key-pair-id K --url http://a/b --expires 9", 66, "cannot open"},
        {"--key junk.pem --key-pair-id K --url http://a/b --expires 9", 65, "no PEM private key"},
        {"--key pub.pem --key-pair-id K --url http://a/b --expires 9", 65, "no PEM private key"},
        {"--key enc.pem --key-pair-id K --url http://a/b --expires 9", 65, "encrypted"},
        {"--key p384.pem --key-pair-id K --url http://a/b --expires 9", 65, "only P-256"},
        {"--key ed.pem --key-pair-id K --url http://a/b --expires 9", 65, "unsupported key type"},
        {"--key small.pem --key-pair-id K --url http://a/b --expires 9", 65, "512 bits"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024];
        /* Relative key names are made absolute inside the temp dir. */
        snprintf(args, sizeof args, "%s", cases[i].args);
        char *kp = strstr(args, "--key ");
        if (kp) {
            char rest[1024];
            snprintf(rest, sizeof rest, "%s", kp + 6);
            snprintf(kp, sizeof args - (size_t)(kp - args), "--key %s/%s", d, rest);
        }
        for (int cookies = 0; cookies < 2; cookies++) {
            int rc = ctl_run(&t, "%s %s", cookies ? "sign-cookies" : "sign-url", args);
            char *err = ctl_out(&t, "err"), *out = ctl_out(&t, "out");
            if (rc != cases[i].rc || !strstr(err, cases[i].says))
                fail_msg("case %zu (%s): exit %d, stderr: %s", i, cases[i].args, rc, err);
            assert_string_equal(out, ""); /* nothing half-signed is printed */
            free(err);
            free(out);
        }
    }
    ctl_tmp_remove(&t);
}

static void sign_09_help_lists_every_option(void **state)
{
    (void)state;
    struct ctl_tmp t;
    assert_int_equal(ctl_tmp_make(&t), 0);
    const char *cmds[] = {"sign-url", "sign-cookies"};
    for (size_t c = 0; c < 2; c++) {
        assert_int_equal(ctl_run(&t, "%s --help", cmds[c]), 0);
        char *out = ctl_out(&t, "out");
        const char *opts[] = {"--key F", "--key-pair-id", "--url", "--expires", "--not-before",
                              "--ip", "--hash", "--resource", "--canned", "exit: 0"};
        for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
            assert_non_null(strstr(out, opts[i]));
        free(out);
    }
    assert_int_equal(ctl_run(&t, "--help"), 0);
    char *out = ctl_out(&t, "out");
    assert_non_null(strstr(out, "sign-url"));
    assert_non_null(strstr(out, "sign-cookies"));
    free(out);
    ctl_tmp_remove(&t);
}

static void sign_10_module_query_and_append_rules(void **state)
{
    (void)state;
    struct cfsign_values v = {.canned = false, .hash = CFSIGN_SHA256};
    snprintf(v.policy, sizeof v.policy, "UA__");
    snprintf(v.signature, sizeof v.signature, "c2~-");
    snprintf(v.key_pair_id, sizeof v.key_pair_id, "K1");
    char q[256], u[256];
    assert_int_not_equal(cfsign_query(&v, q, sizeof q), 0);
    assert_string_equal(q, "Policy=UA__&Signature=c2~-&Key-Pair-Id=K1&Hash-Algorithm=SHA256");
    assert_int_equal(cfsign_query(&v, q, 10), 0); /* too small: nothing claimed */
    assert_int_not_equal(cfsign_append_query("http://a/b", "Q=1", u, sizeof u), 0);
    assert_string_equal(u, "http://a/b?Q=1");
    assert_int_not_equal(cfsign_append_query("http://a/b?x=1", "Q=1", u, sizeof u), 0);
    assert_string_equal(u, "http://a/b?x=1&Q=1");
    assert_int_not_equal(cfsign_append_query("http://a/b?", "Q=1", u, sizeof u), 0);
    assert_string_equal(u, "http://a/b?Q=1");
    assert_int_equal(cfsign_append_query("http://a/b", "Q=1", u, 8), 0);
    struct cfsign_cookie c[4];
    assert_int_equal(cfsign_cookies(&v, c), 4);
    assert_string_equal(c[3].name, "CloudFront-Hash-Algorithm");
    v.hash = CFSIGN_SHA1;
    v.canned = true;
    snprintf(v.expires, sizeof v.expires, "99");
    assert_int_equal(cfsign_cookies(&v, c), 3);
    assert_string_equal(c[0].name, "CloudFront-Expires");
    assert_string_equal(c[0].value, "99");
    assert_int_not_equal(cfsign_query(&v, q, sizeof q), 0);
    assert_string_equal(q, "Expires=99&Signature=c2~-&Key-Pair-Id=K1");
    /* Invalid key pair ids and a canned policy with conditions are refused
     * before any signing. */
    assert_false(cfsign_key_pair_id_ok(""));
    assert_false(cfsign_key_pair_id_ok("K&Signature=x"));
    assert_true(cfsign_key_pair_id_ok("CF_KEYPAIR_ID"));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sign_01_policy_json_is_cloudfronts_exact_bytes),
        cmocka_unit_test(sign_02_base64_is_url_safe_and_padded_with_underscore),
        cmocka_unit_test(sign_03_corpus_vectors_rederive),
        cmocka_unit_test(sign_04_cli_reproduces_corpus_signed_urls),
        cmocka_unit_test(sign_05_rsa2048_verifies_with_openssl),
        cmocka_unit_test(sign_06_ecdsa_p256_verifies_with_openssl),
        cmocka_unit_test(sign_07_cookies_carry_the_urls_policy_and_signature),
        cmocka_unit_test(sign_08_usage_and_key_errors_name_the_problem),
        cmocka_unit_test(sign_09_help_lists_every_option),
        cmocka_unit_test(sign_10_module_query_and_append_rules),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
