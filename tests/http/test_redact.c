/* http_01, http_23..26: redact_url and friends on tricky inputs (no network).
 *
 * usage: test_http_redact [GROUP]   (GROUP: 01, 23, 24, 25, 26; none: all)
 * Each ctest test runs one group: http_01_redact_url, the behaviour before
 * issue 9 with its expectations moved to "every value is redacted", then one
 * group per behaviour issue 9 added. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"

static void expect_policy(const char *in, const struct redact_policy *pol, const char *want)
{
    char out[1024];
    enum redact_status st = redact_url(in, pol, out, sizeof out);
    assert_int_equal(st, REDACT_OK);
    assert_string_equal(out, want);
    char *dup = redact_url_dup(in, pol);
    assert_non_null(dup);
    assert_string_equal(dup, want);
    /* idempotent */
    char again[1024];
    assert_int_equal(redact_url(out, pol, again, sizeof again), REDACT_OK);
    assert_string_equal(again, want);
    free(dup);
}

static void expect_redacted(const char *in, const char *want)
{
    expect_policy(in, NULL, want);
}

static void expect_placeholder(const char *in)
{
    char out[1024];
    assert_int_equal(redact_url(in, NULL, out, sizeof out), REDACT_UNPARSEABLE);
    assert_string_equal(out, REDACT_PLACEHOLDER_URL);
}

/* ---- http_01: the original cases, under the redact-everything default ---- */

static void redact_01_cloudfront_params(void **state)
{
    (void)state;
    expect_redacted("https://d1.cloudfront.net/live/index.m3u8?Policy=eyJTdGF0&Signature=abc~_-"
                    "&Key-Pair-Id=K2JCJMDEHXQW5F&Expires=1700000000&Hash-Algorithm=SHA256",
                    "https://d1.cloudfront.net/live/index.m3u8?Policy=REDACTED&Signature=REDACTED"
                    "&Key-Pair-Id=REDACTED&Expires=REDACTED&Hash-Algorithm=REDACTED");
}

static void redact_02_names_and_order_kept(void **state)
{
    (void)state;
    expect_redacted("http://h/a/b.ts?z=1&Signature=s&a=%41B&empty=&flag",
                    "http://h/a/b.ts?z=REDACTED&Signature=REDACTED&a=REDACTED&empty=REDACTED&flag");
    expect_redacted("http://h/a/b.ts", "http://h/a/b.ts");
    expect_redacted("http://h/a/b.ts?", "http://h/a/b.ts?");
}

static void redact_03_repeated_params(void **state)
{
    (void)state;
    expect_redacted("http://h/x?Signature=1&Signature=2&x=Signature",
                    "http://h/x?Signature=REDACTED&Signature=REDACTED&x=REDACTED");
}

static void redact_04_params_without_values(void **state)
{
    (void)state;
    /* No '=': nothing to hide; an empty value is still replaced. */
    expect_redacted("http://h/x?Signature&Policy=&Expires==3",
                    "http://h/x?Signature&Policy=REDACTED&Expires=REDACTED");
    expect_redacted("http://h/x?&&Signature=a&&", "http://h/x?&&Signature=REDACTED&&");
}

static void redact_05_encoded_and_case_variant_names(void **state)
{
    (void)state;
    /* A kept name is matched decoded and case-insensitively ... */
    const char *keep[] = {"channel"};
    struct redact_policy pol = {.keep = keep, .n_keep = 1};
    expect_policy("http://h/x?Chann%65l=1&CHANNEL=2&channels=3&Signatur%65=a",
                  &pol, "http://h/x?Chann%65l=1&CHANNEL=2&channels=REDACTED&Signatur%65=REDACTED");
    /* ... and so is a credential, which no keep can show. */
    const char *keep_sig[] = {"Signature", "key-pair-id"};
    struct redact_policy bad = {.keep = keep_sig, .n_keep = 2};
    expect_policy("http://h/x?SIGNATURE=a&%4Bey-Pair-Id=b", &bad,
                  "http://h/x?SIGNATURE=REDACTED&%4Bey-Pair-Id=REDACTED");
    /* Broken escapes compare literally. */
    const char *keep_lit[] = {"Signature%"};
    struct redact_policy lit = {.keep = keep_lit, .n_keep = 1};
    expect_policy("http://h/x?Signature%=a&Signature%4=b", &lit,
                  "http://h/x?Signature%=a&Signature%4=REDACTED");
}

static void redact_06_fragment_like_query(void **state)
{
    (void)state;
    expect_redacted("http://h/x?Signature=a#frag?Signature=b",
                    "http://h/x?Signature=REDACTED#frag?Signature=REDACTED");
    expect_redacted("http://h/x#Signature=b&c", "http://h/x#Signature=REDACTED&c");
    expect_redacted("http://h/x#top", "http://h/x#top");
}

static void redact_07_userinfo(void **state)
{
    (void)state;
    expect_redacted("https://user:secret@h:8443/p?Policy=x",
                    "https://REDACTED@h:8443/p?Policy=REDACTED");
    expect_redacted("http://a@b@h/p", "http://REDACTED@h/p");
    expect_redacted("http://@h/p", "http://REDACTED@h/p");
    /* '@' after the authority is not a userinfo. */
    expect_redacted("http://h/p@q?x=a@b", "http://h/p@q?x=REDACTED");
    expect_redacted("//user:pw@h/p", "//REDACTED@h/p");
}

static void redact_08_relative_references(void **state)
{
    (void)state;
    expect_redacted("seg1.ts?Signature=a&b=c", "seg1.ts?Signature=REDACTED&b=REDACTED");
    expect_redacted("../x/seg.ts", "../x/seg.ts");
    expect_redacted("?Policy=p", "?Policy=REDACTED");
}

static void redact_09_semicolon_separator(void **state)
{
    (void)state;
    expect_redacted("http://h/x?a=1;Signature=s", "http://h/x?a=REDACTED;Signature=REDACTED");
}

static void redact_10_keep_and_redact_names(void **state)
{
    (void)state;
    const char *keep[] = {"quality", NULL, "", "lang"};
    const char *redact[] = {"lang"};
    struct redact_policy pol = {.keep = keep, .n_keep = 4, .redact = redact, .n_redact = 1};
    expect_policy("http://h/x?quality=hd&lang=en&token=t&hdnts=exp%3D1~acl&other=o", &pol,
                  "http://h/x?quality=hd&lang=REDACTED&token=REDACTED&hdnts=REDACTED&other=REDACTED");
    assert_int_equal(redact_keeps_value("Quality", 7, &pol), 1);
    assert_int_equal(redact_keeps_value("lang", 4, &pol), 0);
    assert_int_equal(redact_keeps_value("qu%61lity", 9, &pol), 1);
    assert_int_equal(redact_keeps_value("quality", 7, NULL), 0);
    assert_int_equal(redact_is_credential_name("X-Amz-Signature"), 1);
    assert_int_equal(redact_is_credential_name("quality"), 0);
}

static void redact_11_unparseable_is_placeholder(void **state)
{
    (void)state;
    expect_placeholder(NULL);
    expect_placeholder("");
    expect_placeholder("http://h/x?Signature=a b");
    expect_placeholder("http://h/x?Signature=a\tb");
    expect_placeholder("http://h/x?Signature=\xc3\xa9");
    expect_placeholder("http://h/x\x7f");
    char *huge = malloc(REDACT_MAX_URL + 2);
    assert_non_null(huge);
    memset(huge, 'a', REDACT_MAX_URL + 1);
    huge[REDACT_MAX_URL + 1] = '\0';
    expect_placeholder(huge);
    char *dup = redact_url_dup(huge, NULL);
    assert_string_equal(dup, REDACT_PLACEHOLDER_URL);
    free(dup);
    free(huge);
}

static void redact_12_small_buffer_never_truncates_to_a_secret(void **state)
{
    (void)state;
    const char *in = "http://h/x?Signature=abcdefghijklmnopqrstuvwxyz";
    char out[40];
    assert_int_equal(redact_url(in, NULL, out, sizeof out), REDACT_OK);
    assert_string_equal(out, "http://h/x?Signature=REDACTED");
    char tiny[20];
    assert_int_equal(redact_url(in, NULL, tiny, sizeof tiny), REDACT_UNPARSEABLE);
    assert_null(strstr(tiny, "abc"));
    char two[2] = {'x', 'x'};
    assert_int_equal(redact_url(in, NULL, two, sizeof two), REDACT_UNPARSEABLE);
    assert_string_equal(two, "");
    assert_int_equal(redact_url(in, NULL, NULL, 0), REDACT_UNPARSEABLE);
}

static void redact_13_growth_bound_of_dup(void **state)
{
    (void)state;
    /* Worst case: many empty values and path tokens, each growing by "REDACTED". */
    char in[4096] = "http://u@h/";
    for (int i = 0; i < 100; i++)
        strcat(in, "a=/");
    strcat(in, "x?");
    for (int i = 0; i < 100; i++)
        strcat(in, "Policy=&");
    strcat(in, "#=;=;=");
    char *dup = redact_url_dup(in, NULL);
    assert_non_null(dup);
    assert_non_null(strstr(dup, "http://REDACTED@h/a=REDACTED/a=REDACTED/"));
    assert_non_null(strstr(dup, "x?Policy=REDACTED&Policy=REDACTED&"));
    assert_null(strstr(dup, REDACT_PLACEHOLDER_URL));
    free(dup);
}

/* ---- http_23: every query value is redacted unless kept ------------------------ */

static void redact_23_every_query_value_by_default(void **state)
{
    (void)state;
    /* The tokens issue 9 found stored raw. */
    expect_redacted("https://b.s3.amazonaws.com/seg.ts?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                    "&X-Amz-Credential=AKIA%2F20261129&X-Amz-Signature=deadbeef&token=t0k&sig=s1g",
                    "https://b.s3.amazonaws.com/seg.ts?X-Amz-Algorithm=REDACTED"
                    "&X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&token=REDACTED&sig=REDACTED");
    /* A kept name shows its value, nothing else does. */
    const char *keep[] = {"X-Amz-Algorithm", "bitrate"};
    struct redact_policy pol = {.keep = keep, .n_keep = 2};
    expect_policy("http://h/s.ts?bitrate=800k&X-Amz-Algorithm=AWS4&unknown=u", &pol,
                  "http://h/s.ts?bitrate=800k&X-Amz-Algorithm=AWS4&unknown=REDACTED");
}

/* ---- http_24: path tokens ------------------------------------------------------------ */

static void redact_24_path_tokens(void **state)
{
    (void)state;
    expect_redacted("https://cdn.example/Policy=eyJ1/Signature=abc~d/Key-Pair-Id=K1/live/seg.ts",
                    "https://cdn.example/Policy=REDACTED/Signature=REDACTED/Key-Pair-Id=REDACTED/live/seg.ts");
    expect_redacted("https://a.akamaized.net/hdnts=exp=1700000000~acl=/*~hmac=0123abcd/live/i.m3u8",
                    "https://a.akamaized.net/hdnts=REDACTED/*~hmac=REDACTED/live/i.m3u8");
    expect_redacted("https://m.example/edge-cache-token=Expires=1~KeyName=k~Signature=s/ch/i.m3u8",
                    "https://m.example/edge-cache-token=REDACTED/ch/i.m3u8");
    /* ';' pieces and an encoded '=' are tokens too; a kept query name does
     * not keep a path token. */
    const char *keep[] = {"sid"};
    struct redact_policy pol = {.keep = keep, .n_keep = 1};
    expect_policy("http://h/seg;sid=abc/tok%3Dxyz/seg.ts?sid=1", &pol,
                  "http://h/seg;sid=REDACTED/tok%3DREDACTED/seg.ts?sid=1");
    expect_redacted("http://h/plain/path/seg.ts", "http://h/plain/path/seg.ts");
    /* a stepctl session id is a capability (issue 17: the canary's
     * allocation targets store the URLs of their sessions) */
    expect_redacted("http://127.0.0.1:8080/v1/sessions/9c1f0e7a53b24d61a0e8c4f2b7d93e15/cdn-c/360p.m3u8?Policy=p",
                    "http://127.0.0.1:8080/v1/sessions/REDACTED/cdn-c/360p.m3u8?Policy=REDACTED");
    expect_redacted("/v1/sessions/9C1F0E7A53B24D61/steering", "/v1/sessions/REDACTED/steering");
    expect_redacted("http://h/sessions/latest/seg.ts", "http://h/sessions/latest/seg.ts");
    expect_redacted("http://h/v1/sessions/REDACTED/x", "http://h/v1/sessions/REDACTED/x");
}

/* ---- http_25: header values ------------------------------------------------------------ */

static void redact_25_header_values(void **state)
{
    (void)state;
    struct {
        const char *in, *want;
    } cases[] = {
        {"Hit from cloudfront", "Hit from cloudfront"},
        {"1.1 abc.cloudfront.net (CloudFront)", "1.1 abc.cloudfront.net (CloudFront)"},
        {"\"5e8-1f\"", "\"5e8-1f\""},
        {"video/mp2t", "video/mp2t"},
        {"miss; token=abc, hit;sig=d", "miss; token=REDACTED, hit;sig=REDACTED"},
        {"see https://u:pw@h/x?Signature=s&k=v now", "see https://REDACTED@h/x?Signature=REDACTED&k=REDACTED now"},
        {"a\x1b[31mb\x01", "a?[31mb?"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *r = redact_text_dup(cases[i].in, NULL);
        assert_non_null(r);
        assert_string_equal(r, cases[i].want);
        free(r);
    }
    const char *keep[] = {"charset"};
    struct redact_policy pol = {.keep = keep, .n_keep = 1};
    char *r = redact_text_dup("text/plain; charset=utf-8; key=k", &pol);
    assert_string_equal(r, "text/plain; charset=utf-8; key=REDACTED");
    free(r);
    assert_null(redact_text_dup(NULL, NULL));
}

/* ---- http_26: an unusable URL gives scheme and host at most ---------------------------- */

static void redact_26_origin_only(void **state)
{
    (void)state;
    struct {
        const char *in, *want;
    } cases[] = {
        {"https://cdn.example/x?Signature=a b", "https://cdn.example"},
        {"https://user:pw@cdn.example:8443/x\x01", "https://cdn.example"},
        {"http://h\xc3\xa9/x", "http://"},
        {"ftp://files.example/a", "ftp://files.example"},
        {"not a url", ""},
        {"mailto:someone", "mailto:"},
        {"https://[::1]:99/x", "https://"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        redact_url_origin(cases[i].in, out, sizeof out);
        assert_string_equal(out, cases[i].want);
    }
    char small[4];
    redact_url_origin("https://h/", small, sizeof small);
    assert_string_equal(small, "");
}

struct group {
    const char *id, *name;
    struct CMUnitTest tests[13];
    size_t n;
};

int main(int argc, char **argv)
{
    static const struct group groups[] = {
        {"01", "http_01_redact_url",
         {cmocka_unit_test(redact_01_cloudfront_params), cmocka_unit_test(redact_02_names_and_order_kept),
          cmocka_unit_test(redact_03_repeated_params), cmocka_unit_test(redact_04_params_without_values),
          cmocka_unit_test(redact_05_encoded_and_case_variant_names),
          cmocka_unit_test(redact_06_fragment_like_query), cmocka_unit_test(redact_07_userinfo),
          cmocka_unit_test(redact_08_relative_references), cmocka_unit_test(redact_09_semicolon_separator),
          cmocka_unit_test(redact_10_keep_and_redact_names),
          cmocka_unit_test(redact_11_unparseable_is_placeholder),
          cmocka_unit_test(redact_12_small_buffer_never_truncates_to_a_secret),
          cmocka_unit_test(redact_13_growth_bound_of_dup)},
         13},
        {"23", "http_23_redact_every_query_value", {cmocka_unit_test(redact_23_every_query_value_by_default)}, 1},
        {"24", "http_24_redact_path_tokens", {cmocka_unit_test(redact_24_path_tokens)}, 1},
        {"25", "http_25_redact_header_values", {cmocka_unit_test(redact_25_header_values)}, 1},
        {"26", "http_26_redact_origin_only", {cmocka_unit_test(redact_26_origin_only)}, 1},
    };
    int failed = 0, ran = 0;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        if (argc > 1 && strcmp(argv[1], groups[i].id))
            continue;
        failed |= _cmocka_run_group_tests(groups[i].name, groups[i].tests, groups[i].n, NULL, NULL);
        ran++;
    }
    if (!ran)
        fprintf(stderr, "no group %s\n", argv[1]);
    return ran ? failed : 2;
}
