/* The loopback CDN (exactav-cdnd, docs/delivery.md): its live window, its
 * CloudFront-style checks (403 on a missing, wrong or expired signature, an
 * IP or resource mismatch; signed cookies), CORS, the 503 switch, reports.
 * Signatures come from controller/sign/cfsign.h with keys the openssl CLI makes
 * here; requests go through libcurl to real cdnd processes on 127.0.0.1.
 * Each test is its own ctest entry (cdn_NN_...); tests that read the corpus
 * exit 77 (skipped) without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "cdn_auth.h"
#include "cdn_live.h"
#include "cdn_rig.h"
#include "test_skip.h"
#include "cfsign.h"

#define ROLLOVER CORPUS_DIR "/media/hls-ts-rollover"

struct fx {
    char dir[64];
    struct cfsign_key *rsa, *ec, *other;
    struct cdn_proc cdn;
};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}


static struct cfsign_key *load(const char *dir, const char *name)
{
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct cfsign_key *k = cfsign_key_load(path, NULL, err, sizeof err);
    if (!k)
        fail_msg("%s", err);
    return k;
}

/* Keys (rsa.pem/ec.pem signed by ids KRSA/KEC; other.pem is nobody's), a
 * root with a file, and a cdnd with the two public keys plus extra args. */
static void setup(struct fx *f, const char *const *extra)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/cdntest.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(
        sh("cd %s && mkdir root && printf 'hello\\n' >root/a.txt && "
           "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem 2>/dev/null && "
           "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out other.pem 2>/dev/null && "
           "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.pem && "
           "openssl pkey -in rsa.pem -pubout -out rsa.pub && openssl pkey -in ec.pem -pubout -out ec.pub",
           f->dir),
        0);
    f->rsa = load(f->dir, "rsa.pem");
    f->ec = load(f->dir, "ec.pem");
    f->other = load(f->dir, "other.pem");
    char root[128], krsa[128], kec[128];
    snprintf(root, sizeof root, "%s/root", f->dir);
    snprintf(krsa, sizeof krsa, "KRSA=%s/rsa.pub", f->dir);
    snprintf(kec, sizeof kec, "KEC=%s/ec.pub", f->dir);
    const char *args[32] = {"--root", root, "--public-key", krsa, "--public-key", kec};
    size_t n = 6;
    for (size_t i = 0; extra && extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    assert_int_equal(cdn_start(&f->cdn, CDND_BIN, f->dir, "cdn", args), 0);
}

static void teardown(struct fx *f)
{
    cdn_stop(&f->cdn);
    cfsign_key_free(f->rsa);
    cfsign_key_free(f->ec);
    cfsign_key_free(f->other);
    sh("rm -rf '%s'", f->dir);
}

/* The signing query for a policy (static buffer). */
static const char *sign(const struct cfsign_key *k, const char *kid, enum cfsign_hash h,
                        const struct cfsign_policy *p, bool canned)
{
    static struct cfsign_values v;
    static char q[CFSIGN_POLICY_B64_MAX + CFSIGN_SIG_B64_MAX + 256];
    char err[256];
    if (!cfsign_make(k, kid, h, p, canned, &v, err, sizeof err))
        fail_msg("%s", err);
    assert_int_not_equal(cfsign_query(&v, q, sizeof q), 0);
    return q;
}

static const char *cookies(const struct cfsign_key *k, const char *kid, const struct cfsign_policy *p)
{
    static struct cfsign_values v;
    static char c[CFSIGN_POLICY_B64_MAX + CFSIGN_SIG_B64_MAX + 256];
    char err[256];
    if (!cfsign_make(k, kid, CFSIGN_SHA1, p, false, &v, err, sizeof err))
        fail_msg("%s", err);
    struct cfsign_cookie ck[4];
    size_t n = cfsign_cookies(&v, ck), w = 0;
    for (size_t i = 0; i < n; i++)
        w += (size_t)snprintf(c + w, sizeof c - w, "%s%s=%s", i ? "; " : "", ck[i].name,
                              ck[i].value);
    return c;
}

/* GET url (+ '?' or '&' + query), returns the status; *reason gets the body's first line. */
static long get(const char *url, const char *query, const char *cookie, char *reason, size_t cap)
{
    char full[16384];
    if (query)
        assert_int_not_equal(cfsign_append_query(url, query, full, sizeof full), 0);
    else
        snprintf(full, sizeof full, "%s", url);
    struct cdn_http h;
    assert_int_equal(cdn_http(NULL, full, cookie, NULL, &h), 0);
    if (reason)
        snprintf(reason, cap, "%.*s", (int)strcspn(h.body, "\n"), h.body);
    long st = h.status;
    cdn_http_free(&h);
    return st;
}

static int64_t now_s(void)
{
    return (int64_t)time(NULL);
}

/* ---- tests --------------------------------------------------------------------- */

static void cdn_01_live_window_slides_with_the_clock(void **state)
{
    (void)state;
    char dir[] = "/tmp/cdnlive.XXXXXX", err[256];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(sh("cd %s && printf '#EXTM3U\\n#EXT-X-TARGETDURATION:3\\n#EXTINF:2.0,\\na.ts\\n"
                        "#EXTINF:2.5,\\nb.ts\\n#EXTINF:1.5,\\nc.ts\\n#EXT-X-ENDLIST\\n' >playlist.m3u8",
                        dir),
                     0);
    struct cdn_live *l = calloc(1, sizeof *l);
    const int64_t T0 = 1700000000000LL;
    assert_int_equal(cdn_live_load(l, dir, 4, T0, err, sizeof err), 0);
    assert_int_equal(l->n, 3);
    assert_int_equal(l->target_s, 3);
    /* Cycle 6 s: sequence 0 ends at 2 s, 1 at 4.5 s, 2 at 6 s, 3 at 8 s ... */
    assert_int_equal(cdn_live_last(l, T0 + 1999), -1);
    assert_int_equal(cdn_live_last(l, T0 + 2000), 0);
    assert_int_equal(cdn_live_last(l, T0 + 4499), 0);
    assert_int_equal(cdn_live_last(l, T0 + 4500), 1);
    assert_int_equal(cdn_live_last(l, T0 + 6000), 2);
    assert_int_equal(cdn_live_last(l, T0 + 7999), 2);
    assert_int_equal(cdn_live_last(l, T0 + 8000), 3);
    assert_int_equal(cdn_live_last(l, T0 + 60000), 29);
    char pl[4096];
    assert_int_equal(cdn_live_playlist(l, T0 + 1000, pl, sizeof pl), 0);
    /* At 13 s the newest finished segment is 5 (6 runs from 12 s to 14 s). */
    assert_int_not_equal(cdn_live_playlist(l, T0 + 13000, pl, sizeof pl), 0);
    assert_string_equal(pl, "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3\n"
                            "#EXT-X-MEDIA-SEQUENCE:2\n#EXT-X-DISCONTINUITY-SEQUENCE:0\n"
                            "#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:24.500Z\n#EXTINF:1.500,\n2.ts\n"
                            "#EXT-X-DISCONTINUITY\n"
                            "#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:26.000Z\n#EXTINF:2.000,\n3.ts\n"
                            "#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:28.000Z\n#EXTINF:2.500,\n4.ts\n"
                            "#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:30.500Z\n#EXTINF:1.500,\n5.ts\n");
    /* A window starting on a wrap keeps no leading DISCONTINUITY tag: the
     * discontinuity sequence counts it instead. */
    assert_int_not_equal(cdn_live_playlist(l, T0 + 20000, pl, sizeof pl), 0);
    assert_non_null(strstr(pl, "#EXT-X-MEDIA-SEQUENCE:6\n#EXT-X-DISCONTINUITY-SEQUENCE:2\n"
                               "#EXT-X-PROGRAM-DATE-TIME"));
    const char *disc = strstr(pl, "#EXT-X-DISCONTINUITY\n");
    assert_non_null(disc); /* only before 9, the next wrap */
    assert_true(!strncmp(disc + 21, "#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:38.000Z", 49));
    assert_null(strstr(disc + 1, "#EXT-X-DISCONTINUITY\n"));
    assert_int_equal(cdn_live_playlist(l, T0 + 13000, pl, 64), 0); /* too small */
    /* Segments: the file of s mod n, from one window back up to the newest. */
    assert_non_null(strstr(cdn_live_segment(l, 4, T0 + 13000), "/b.ts"));
    assert_null(cdn_live_segment(l, 6, T0 + 13000));
    assert_non_null(cdn_live_segment(l, 0, T0 + 13000));
    assert_null(cdn_live_segment(l, 0, T0 + 30000));
    assert_null(cdn_live_segment(l, -1, T0 + 13000));
    /* Refused recordings. */
    assert_int_equal(sh("cd %s && printf '#EXTM3U\\n#EXTINF:2,\\n../x.ts\\n' >playlist.m3u8", dir), 0);
    assert_int_equal(cdn_live_load(l, dir, 4, T0, err, sizeof err), -1);
    assert_int_equal(sh("cd %s && printf '#EXTM3U\\n' >playlist.m3u8", dir), 0);
    assert_int_equal(cdn_live_load(l, dir, 4, T0, err, sizeof err), -1);
    free(l);
    sh("rm -rf '%s'", dir);
}

static void cdn_02_wildcards_and_log_redaction(void **state)
{
    (void)state;
    assert_true(cdn_auth_glob("http://h/ch1/*", "http://h/ch1/r360/3.ts"));
    assert_true(cdn_auth_glob("http://h/ch1/*", "http://h/ch1/"));
    assert_false(cdn_auth_glob("http://h/ch1/*", "http://h/ch2/3.ts"));
    assert_true(cdn_auth_glob("http://h/?.ts", "http://h/3.ts"));
    assert_false(cdn_auth_glob("http://h/?.ts", "http://h/13.ts"));
    assert_true(cdn_auth_glob("*", ""));
    assert_true(cdn_auth_glob("http*://h/*.ts", "https://h/a/b.ts"));
    assert_false(cdn_auth_glob("http://h/a", "http://h/a?x=1"));
    char out[256];
    cdn_auth_redact_query("a=1&Policy=eyJ&Signature=abc~&Key-Pair-Id=K1&Expires=9&Hash-Algorithm="
                          "SHA256&_HLS_pathway=A",
                          out, sizeof out);
    assert_string_equal(out, "a=1&Policy=REDACTED&Signature=REDACTED&Key-Pair-Id=REDACTED&"
                             "Expires=REDACTED&Hash-Algorithm=SHA256&_HLS_pathway=A");
    cdn_auth_redact_query(NULL, out, sizeof out);
    assert_string_equal(out, "");
}

static void cdn_03_signed_urls_allowed_and_every_failure_is_403(void **state)
{
    (void)state;
    struct fx f;
    setup(&f, NULL);
    char url[256], res[256], why[128];
    snprintf(url, sizeof url, "%s/a.txt", f.cdn.base);
    int64_t t = now_s();
    struct cfsign_policy ok = {url, t + 600, 0, NULL};
    static const struct {
        const char *name;
        long status;
        const char *reason;
    } expect[] = {
        {"unsigned", 403, "signature_missing"},    {"rsa", 200, "hello"},
        {"rsa-sha256", 200, "hello"},              {"ec", 200, "hello"},
        {"ec-sha256", 200, "hello"},               {"canned", 200, "hello"},
        {"wrong-key", 403, "signature_invalid"},   {"unknown-id", 403, "key_unknown"},
        {"sha256-unsaid", 403, "signature_invalid"}, {"expired", 403, "expired"},
        {"not-yet", 403, "not_yet_valid"},         {"ip-other", 403, "ip_mismatch"},
        {"ip-loopback", 200, "hello"},             {"other-resource", 403, "resource_mismatch"},
        {"wildcard", 200, "hello"},                {"canned-other-url", 403, "signature_invalid"},
        {"half", 403, "signature_missing"},        {"policy-swapped", 403, "signature_invalid"},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        const char *n = expect[i].name, *q = NULL;
        struct cfsign_policy p = ok;
        if (!strcmp(n, "rsa"))
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
        else if (!strcmp(n, "rsa-sha256"))
            q = sign(f.rsa, "KRSA", CFSIGN_SHA256, &p, false);
        else if (!strcmp(n, "ec"))
            q = sign(f.ec, "KEC", CFSIGN_SHA1, &p, false);
        else if (!strcmp(n, "ec-sha256"))
            q = sign(f.ec, "KEC", CFSIGN_SHA256, &p, false);
        else if (!strcmp(n, "canned"))
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, true);
        else if (!strcmp(n, "wrong-key"))
            q = sign(f.other, "KRSA", CFSIGN_SHA1, &p, false);
        else if (!strcmp(n, "unknown-id"))
            q = sign(f.rsa, "KNOBODY", CFSIGN_SHA1, &p, false);
        else if (!strcmp(n, "sha256-unsaid")) { /* SHA-256 signature, Hash-Algorithm dropped */
            q = sign(f.rsa, "KRSA", CFSIGN_SHA256, &p, false);
            *strstr(q, "&Hash-Algorithm") = '\0';
        } else if (!strcmp(n, "expired")) {
            p.date_less_than = t - 5;
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
        } else if (!strcmp(n, "not-yet")) {
            p.date_greater_than = t + 300;
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
        } else if (!strcmp(n, "ip-other")) {
            p.source_ip = "10.0.0.0/8";
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
        } else if (!strcmp(n, "ip-loopback")) {
            p.source_ip = "127.0.0.0/8";
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
        } else if (!strcmp(n, "other-resource")) {
            snprintf(res, sizeof res, "%s/b.txt", f.cdn.base);
            p.resource = res;
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
        } else if (!strcmp(n, "wildcard")) {
            snprintf(res, sizeof res, "%s/*", f.cdn.base);
            p.resource = res;
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
        } else if (!strcmp(n, "canned-other-url")) {
            snprintf(res, sizeof res, "%s/b.txt", f.cdn.base);
            p.resource = res;
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, true);
        } else if (!strcmp(n, "half")) {
            q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
            *strstr(q, "&Key-Pair-Id") = '\0';
        } else if (!strcmp(n, "policy-swapped")) { /* a valid signature over another policy */
            static char mix[16384];
            snprintf(res, sizeof res, "%s/*", f.cdn.base);
            struct cfsign_policy wide = {res, t + 600, 0, NULL};
            snprintf(mix, sizeof mix, "%s", sign(f.rsa, "KRSA", CFSIGN_SHA1, &wide, false));
            const char *narrow = sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false);
            char *sig_at = strstr(mix, "&Signature="), *sig2 = strstr(narrow, "&Signature=");
            snprintf(sig_at, sizeof mix - (size_t)(sig_at - mix), "%s", sig2);
            q = mix;
        }
        long st = get(url, q, NULL, why, sizeof why);
        if (st != expect[i].status || strcmp(why, expect[i].reason))
            fail_msg("%s: %ld %s", n, st, why);
    }
    /* The resource is the URL with its own query: another value is another URL. */
    char qurl[300];
    snprintf(qurl, sizeof qurl, "%s?v=1", url);
    struct cfsign_policy pq = {qurl, t + 600, 0, NULL};
    const char *q = sign(f.rsa, "KRSA", CFSIGN_SHA1, &pq, false);
    assert_int_equal(get(qurl, q, NULL, why, sizeof why), 200);
    snprintf(qurl, sizeof qurl, "%s?v=2", url);
    assert_int_equal(get(qurl, q, NULL, why, sizeof why), 403);
    assert_string_equal(why, "resource_mismatch");
    /* The log names each outcome and holds no signing value. */
    json_t *log = cdn_jsonl(f.cdn.log);
    assert_true(json_array_size(log) >= sizeof expect / sizeof expect[0] + 2);
    char *dump = json_dumps(log, 0);
    for (const char *s = dump; (s = strstr(s, "Signature=")); s++)
        assert_true(!strncmp(s, "Signature=REDACTED", 18));
    assert_null(strstr(dump, "eyJ")); /* no base64 policy */
    json_t *first = json_array_get(log, 0);
    assert_string_equal(json_string_value(json_object_get(first, "reason")), "signature_missing");
    assert_string_equal(json_string_value(json_object_get(first, "auth")), "none");
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 1), "auth")), "url");
    free(dump);
    json_decref(log);
    teardown(&f);
}

static void cdn_04_signed_cookies(void **state)
{
    (void)state;
    struct fx f;
    setup(&f, NULL);
    char url[256], res[256], why[128];
    snprintf(url, sizeof url, "%s/a.txt", f.cdn.base);
    snprintf(res, sizeof res, "%s/*", f.cdn.base);
    int64_t t = now_s();
    struct cfsign_policy p = {res, t + 600, 0, NULL};
    assert_int_equal(get(url, NULL, cookies(f.rsa, "KRSA", &p), why, sizeof why), 200);
    p.date_less_than = t - 1;
    assert_int_equal(get(url, NULL, cookies(f.rsa, "KRSA", &p), why, sizeof why), 403);
    assert_string_equal(why, "expired");
    p = (struct cfsign_policy){res, t + 600, 0, "192.0.2.0/24"};
    assert_int_equal(get(url, NULL, cookies(f.rsa, "KRSA", &p), why, sizeof why), 403);
    assert_string_equal(why, "ip_mismatch");
    p = (struct cfsign_policy){res, t + 600, 0, NULL};
    assert_int_equal(get(url, NULL, cookies(f.other, "KRSA", &p), why, sizeof why), 403);
    assert_string_equal(why, "signature_invalid");
    json_t *log = cdn_jsonl(f.cdn.log);
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "auth")),
                        "cookie");
    json_decref(log);
    teardown(&f);
}

static void cdn_05_live_rollover_behind_signatures(void **state)
{
    (void)state;
    test_skip_unless(ROLLOVER "/playlist.m3u8");
    struct fx f;
    const char *extra[] = {"--live", ROLLOVER, "--live-prefix", "/ch1/r360", NULL};
    setup(&f, extra);
    char url[256], res[256], why[128];
    snprintf(url, sizeof url, "%s/ch1/r360/live.m3u8", f.cdn.base);
    snprintf(res, sizeof res, "%s/ch1/r360/*", f.cdn.base);
    int64_t t = now_s();
    struct cfsign_policy p = {url, t + 600, 0, NULL};
    char signed_url[16384];
    assert_int_not_equal(cfsign_append_query(url, sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false),
                                             signed_url, sizeof signed_url),
                         0);
    struct cdn_http h;
    assert_int_equal(cdn_http(NULL, signed_url, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    /* A full window of 6 segments, sliding over the 10 recorded ones. */
    assert_non_null(strstr(h.body, "#EXT-X-TARGETDURATION:2\n"));
    long first = -1;
    const char *ms = strstr(h.body, "#EXT-X-MEDIA-SEQUENCE:");
    assert_non_null(ms);
    first = strtol(ms + 22, NULL, 10);
    int segs = 0;
    for (const char *x = h.body; (x = strstr(x, "#EXTINF:")); x++)
        segs++;
    assert_int_equal(segs, 6);
    char seg[64];
    snprintf(seg, sizeof seg, "\n%ld.ts\n", first);
    assert_non_null(strstr(h.body, seg));
    cdn_http_free(&h);
    /* The relative segment URI does not inherit the playlist's query
     * (RFC 3986 5.2.2): unsigned, it is refused. */
    char segurl[256];
    snprintf(segurl, sizeof segurl, "%s/ch1/r360/%ld.ts", f.cdn.base, first);
    assert_int_equal(get(segurl, NULL, NULL, why, sizeof why), 403);
    assert_string_equal(why, "signature_missing");
    /* One wildcard policy over the rendition signs every segment. */
    struct cfsign_policy w = {res, t + 600, 0, NULL};
    char signed_seg[16384];
    assert_int_not_equal(cfsign_append_query(segurl, sign(f.rsa, "KRSA", CFSIGN_SHA1, &w, false),
                                             signed_seg, sizeof signed_seg),
                         0);
    assert_int_equal(cdn_http(NULL, signed_seg, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    char cmp[512];
    snprintf(cmp, sizeof cmp, "%s/360p30_h264_48k_160_aac_ts-00000000%02ld.ts", ROLLOVER,
             24 + first % 10);
    FILE *src = fopen(cmp, "rb");
    assert_non_null(src);
    char *want = malloc(h.len + 1);
    assert_int_equal(fread(want, 1, h.len + 1, src), h.len);
    fclose(src);
    assert_memory_equal(want, h.body, h.len);
    free(want);
    char *ct = cdn_http_header(&h, "Content-Type");
    assert_string_equal(ct, "video/mp2t");
    free(ct);
    cdn_http_free(&h);
    /* Cookies carry the same wildcard policy. */
    assert_int_equal(get(segurl, NULL, cookies(f.ec, "KEC", &w), why, sizeof why), 200);
    /* A segment beyond the live edge does not exist yet. */
    snprintf(segurl, sizeof segurl, "%s/ch1/r360/%ld.ts", f.cdn.base, first + 100);
    assert_int_equal(get(segurl, sign(f.rsa, "KRSA", CFSIGN_SHA1, &w, false), NULL, why, sizeof why),
                     404);
    teardown(&f);
}

static void cdn_06_cors_everywhere_and_503_on_command(void **state)
{
    (void)state;
    struct fx f;
    const char *extra[] = {"--cors-origin", "http://127.0.0.1:9", NULL};
    setup(&f, extra);
    char url[256], res[256];
    snprintf(url, sizeof url, "%s/a.txt", f.cdn.base);
    snprintf(res, sizeof res, "%s/*", f.cdn.base);
    struct cfsign_policy p = {res, now_s() + 600, 0, NULL};
    char full[16384];
    assert_int_not_equal(
        cfsign_append_query(url, sign(f.rsa, "KRSA", CFSIGN_SHA1, &p, false), full, sizeof full), 0);
    char missing[16384];
    snprintf(missing, sizeof missing, "%s/none.txt?%s", f.cdn.base, strchr(full, '?') + 1);
    const struct {
        const char *method, *url;
        long status;
    } cases[] = {{NULL, full, 200},    {NULL, url, 403},        {"HEAD", full, 200},
                 {NULL, missing, 404}, {"OPTIONS", url, 204},   {"DELETE", url, 405}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct cdn_http h;
        assert_int_equal(cdn_http(cases[i].method, cases[i].url, NULL, NULL, &h), 0);
        assert_int_equal(h.status, cases[i].status);
        char *acao = cdn_http_header(&h, "Access-Control-Allow-Origin");
        assert_string_equal(acao, "http://127.0.0.1:9");
        free(acao);
        if (cases[i].status == 204) {
            char *m = cdn_http_header(&h, "Access-Control-Allow-Methods");
            assert_non_null(strstr(m, "GET"));
            free(m);
        }
        cdn_http_free(&h);
    }
    /* 503 on command, for everything but the control route; then back. */
    assert_int_equal(cdn_set_answer(&f.cdn, 503), 0);
    struct cdn_http h;
    assert_int_equal(cdn_http(NULL, full, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 503);
    char *acao = cdn_http_header(&h, "Access-Control-Allow-Origin");
    assert_non_null(acao);
    free(acao);
    cdn_http_free(&h);
    assert_int_equal(get(url, NULL, NULL, NULL, 0), 503);
    assert_int_equal(cdn_set_answer(&f.cdn, 0), 0);
    assert_int_equal(get(full, NULL, NULL, NULL, 0), 200);
    char bad[300];
    snprintf(bad, sizeof bad, "%s/_cdn/answer?status=99", f.cdn.base);
    assert_int_equal(get(bad, NULL, NULL, NULL, 0), 400);
    json_t *log = cdn_jsonl(f.cdn.log);
    size_t control = 0, forced = 0, i;
    json_t *e;
    json_array_foreach(log, i, e) {
        control += json_is_true(json_object_get(e, "control"));
        forced += !strcmp(json_string_value(json_object_get(e, "reason")), "forced");
    }
    assert_int_equal(control, 3);
    assert_int_equal(forced, 2);
    json_decref(log);
    teardown(&f);
}

static void cdn_07_reports_are_json_lines(void **state)
{
    (void)state;
    struct fx f;
    setup(&f, NULL);
    char url[256];
    snprintf(url, sizeof url, "%s/report", f.cdn.base);
    struct cdn_http h;
    assert_int_equal(cdn_http("POST", url, NULL, "{\"currentTime\":1.5,\"errors\":[]}", &h), 0);
    assert_int_equal(h.status, 204);
    cdn_http_free(&h);
    assert_int_equal(cdn_http("POST", url, NULL, "[1,2]", &h), 0);
    assert_int_equal(h.status, 400);
    cdn_http_free(&h);
    char *big = malloc(300 * 1024);
    memset(big, ' ', 300 * 1024 - 3);
    big[0] = '{';
    big[300 * 1024 - 3] = '}';
    big[300 * 1024 - 2] = '\0';
    assert_int_equal(cdn_http("POST", url, NULL, big, &h), 0);
    assert_int_equal(h.status, 400);
    cdn_http_free(&h);
    free(big);
    json_t *r = cdn_jsonl(f.cdn.report);
    assert_int_equal(json_array_size(r), 1);
    assert_true(json_real_value(json_object_get(json_array_get(r, 0), "currentTime")) == 1.5);
    json_decref(r);
    teardown(&f);
}

/* Bytes of a GET that gives up after timeout_ms (a held body): the HTTP
 * status into status, the bytes received returned. */
static size_t get_within(const char *url, long timeout_ms, long *status)
{
    CURL *c = curl_easy_init();
    assert_non_null(c);
    FILE *sink = fopen("/dev/null", "w");
    curl_off_t got = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &got);
    curl_easy_cleanup(c);
    fclose(sink);
    assert_int_equal(rc, CURLE_OPERATION_TIMEDOUT);
    return (size_t)got;
}

/* The reason logged for the n-th request (0-based) of the log whose path is path. */
static const char *reason_of(const json_t *log, const char *path, size_t n)
{
    size_t i, k = 0;
    json_t *e;
    json_array_foreach(log, i, e)
        if (!strcmp(json_string_value(json_object_get(e, "path")), path) && k++ == n)
            return json_string_value(json_object_get(e, "reason"));
    return NULL;
}

static void cdn_08_faults_touch_their_prefix_only(void **state)
{
    (void)state;
    test_skip_unless(ROLLOVER "/playlist.m3u8");
    char dir[] = "/tmp/cdntest.XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* a malformed fault is refused at start (usage, exit 2) */
    assert_int_equal(sh("'%s' --fault /a/b=404 2>/dev/null", CDND_BIN), 2);
    assert_int_equal(sh("'%s' --fault /a=stall:0:10 2>/dev/null", CDND_BIN), 2);
    assert_int_equal(sh("'%s' --fault /a=slow 2>/dev/null", CDND_BIN), 2);
    const char *args[] = {"--live", ROLLOVER, "--live-prefix", "/ch1/r360", "--fault", "/nf=404",
                          "--fault", "/hold=hold", "--fault", "/st=stall:2:1500", NULL};
    struct cdn_proc cdn;
    assert_int_equal(cdn_start(&cdn, CDND_BIN, dir, "cdn", args), 0);
    char url[256], seg[64];
    snprintf(url, sizeof url, "%s/ch1/r360/live.m3u8", cdn.base);
    struct cdn_http h;
    assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    const char *last = strrchr(h.body, '\n');
    while (last > h.body && last[-1] != '\n')
        last--;
    snprintf(seg, sizeof seg, "%.*s", (int)strcspn(last, "\n"), last);
    cdn_http_free(&h);
    assert_non_null(strstr(seg, ".ts"));
    static const char *const prefixes[] = {"", "/nf", "/hold", "/st"};
    /* every prefix serves the live playlist itself */
    for (size_t i = 0; i < 4; i++) {
        snprintf(url, sizeof url, "%s%s/ch1/r360/live.m3u8", cdn.base, prefixes[i]);
        assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
        assert_int_equal(h.status, 200);
        assert_non_null(strstr(h.body, seg));
        cdn_http_free(&h);
    }
    /* the channel itself: the segment; /nf: 404 */
    size_t full;
    snprintf(url, sizeof url, "%s/ch1/r360/%s", cdn.base, seg);
    assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 200);
    full = h.len;
    cdn_http_free(&h);
    assert_true(full > 1024);
    snprintf(url, sizeof url, "%s/nf/ch1/r360/%s", cdn.base, seg);
    assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
    assert_int_equal(h.status, 404);
    cdn_http_free(&h);
    /* /hold: the headers (200) and the first KiB, then nothing */
    long status = 0;
    snprintf(url, sizeof url, "%s/hold/ch1/r360/%s", cdn.base, seg);
    assert_int_equal(get_within(url, 1500, &status), 1024);
    assert_int_equal(status, 200);
    /* /st: the second segment request is held, then completed; the others not */
    char path[128];
    snprintf(url, sizeof url, "%s/st/ch1/r360/%s", cdn.base, seg);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(cdn_http(NULL, url, NULL, NULL, &h), 0);
        assert_int_equal(h.status, 200);
        assert_int_equal(h.len, full);
        cdn_http_free(&h);
    }
    json_t *log = cdn_jsonl(cdn.log);
    snprintf(path, sizeof path, "/nf/ch1/r360/%s", seg);
    assert_string_equal(reason_of(log, path, 0), "fault_404");
    snprintf(path, sizeof path, "/hold/ch1/r360/%s", seg);
    assert_string_equal(reason_of(log, path, 0), "held");
    snprintf(path, sizeof path, "/st/ch1/r360/%s", seg);
    assert_string_equal(reason_of(log, path, 0), "ok");
    assert_string_equal(reason_of(log, path, 1), "held_ms_1500");
    assert_string_equal(reason_of(log, path, 2), "ok");
    json_decref(log);
    cdn_stop(&cdn); /* a held body does not keep it from stopping */
    assert_int_equal(sh("rm -rf '%s'", dir), 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cdn_01_live_window_slides_with_the_clock),
        cmocka_unit_test(cdn_02_wildcards_and_log_redaction),
        cmocka_unit_test(cdn_03_signed_urls_allowed_and_every_failure_is_403),
        cmocka_unit_test(cdn_04_signed_cookies),
        cmocka_unit_test(cdn_05_live_rollover_behind_signatures),
        cmocka_unit_test(cdn_06_cors_everywhere_and_503_on_command),
        cmocka_unit_test(cdn_07_reports_are_json_lines),
        cmocka_unit_test(cdn_08_faults_touch_their_prefix_only),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
