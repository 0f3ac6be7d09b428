/* http_01: redact_url on tricky URLs (no network). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "redact.h"

static void expect_redacted(const char *in, const char *want)
{
    char out[1024];
    enum redact_status st = redact_url(in, NULL, 0, out, sizeof out);
    assert_int_equal(st, REDACT_OK);
    assert_string_equal(out, want);
    char *dup = redact_url_dup(in, NULL, 0);
    assert_non_null(dup);
    assert_string_equal(dup, want);
    free(dup);
}

static void expect_placeholder(const char *in)
{
    char out[1024];
    assert_int_equal(redact_url(in, NULL, 0, out, sizeof out), REDACT_UNPARSEABLE);
    assert_string_equal(out, REDACT_PLACEHOLDER_URL);
}

static void redact_01_cloudfront_params(void **state)
{
    (void)state;
    expect_redacted("https://d1.cloudfront.net/live/index.m3u8?Policy=eyJTdGF0&Signature=abc~_-"
                    "&Key-Pair-Id=K2JCJMDEHXQW5F&Expires=1700000000&Hash-Algorithm=SHA256",
                    "https://d1.cloudfront.net/live/index.m3u8?Policy=REDACTED&Signature=REDACTED"
                    "&Key-Pair-Id=REDACTED&Expires=REDACTED&Hash-Algorithm=REDACTED");
}

static void redact_02_other_params_and_order_kept(void **state)
{
    (void)state;
    expect_redacted("http://h/a/b.ts?z=1&Signature=s&a=%41B&empty=&flag",
                    "http://h/a/b.ts?z=1&Signature=REDACTED&a=%41B&empty=&flag");
    expect_redacted("http://h/a/b.ts", "http://h/a/b.ts");
    expect_redacted("http://h/a/b.ts?", "http://h/a/b.ts?");
}

static void redact_03_repeated_params(void **state)
{
    (void)state;
    expect_redacted("http://h/x?Signature=1&Signature=2&x=Signature",
                    "http://h/x?Signature=REDACTED&Signature=REDACTED&x=Signature");
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
    expect_redacted("http://h/x?Signatur%65=a&%50olicy=b&key-pair-id=c&SIGNATURE=d&Sig%6eature=e",
                    "http://h/x?Signatur%65=REDACTED&%50olicy=REDACTED&key-pair-id=REDACTED"
                    "&SIGNATURE=REDACTED&Sig%6eature=REDACTED");
    /* Broken escapes compare literally and do not match. */
    expect_redacted("http://h/x?Signature%=a&Signature%4=b&%zzPolicy=c",
                    "http://h/x?Signature%=a&Signature%4=b&%zzPolicy=c");
    /* A name that only starts like a secret one is kept. */
    expect_redacted("http://h/x?Signatures=a&Policy2=b&XPolicy=c",
                    "http://h/x?Signatures=a&Policy2=b&XPolicy=c");
}

static void redact_06_fragment_kept(void **state)
{
    (void)state;
    expect_redacted("http://h/x?Signature=a#frag?Signature=b",
                    "http://h/x?Signature=REDACTED#frag?Signature=b");
    expect_redacted("http://h/x#Signature=b", "http://h/x#Signature=b");
}

static void redact_07_userinfo(void **state)
{
    (void)state;
    expect_redacted("https://user:secret@h:8443/p?Policy=x",
                    "https://REDACTED@h:8443/p?Policy=REDACTED");
    expect_redacted("http://a@b@h/p", "http://REDACTED@h/p");
    expect_redacted("http://@h/p", "http://REDACTED@h/p");
    /* '@' after the authority is not a userinfo. */
    expect_redacted("http://h/p@q?x=a@b", "http://h/p@q?x=a@b");
    expect_redacted("//user:pw@h/p", "//REDACTED@h/p");
}

static void redact_08_relative_references(void **state)
{
    (void)state;
    expect_redacted("seg1.ts?Signature=a&b=c", "seg1.ts?Signature=REDACTED&b=c");
    expect_redacted("../x/seg.ts", "../x/seg.ts");
    expect_redacted("?Policy=p", "?Policy=REDACTED");
}

static void redact_09_semicolon_separator(void **state)
{
    (void)state;
    expect_redacted("http://h/x?a=1;Signature=s", "http://h/x?a=1;Signature=REDACTED");
}

static void redact_10_extra_names(void **state)
{
    (void)state;
    const char *extra[] = {"token", NULL, "", "hdnts"};
    char out[256];
    assert_int_equal(redact_url("http://h/x?token=t&hdnts=exp%3D1~acl&Token=T&other=o", extra, 4,
                                out, sizeof out),
                     REDACT_OK);
    assert_string_equal(out, "http://h/x?token=REDACTED&hdnts=REDACTED&Token=REDACTED&other=o");
    assert_int_equal(redact_is_secret_name("Policy", 6, NULL, 0), 1);
    assert_int_equal(redact_is_secret_name("token", 5, NULL, 0), 0);
    assert_int_equal(redact_is_secret_name("to%6Ben", 7, extra, 4), 1);
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
    char *dup = redact_url_dup(huge, NULL, 0);
    assert_string_equal(dup, REDACT_PLACEHOLDER_URL);
    free(dup);
    free(huge);
}

static void redact_12_small_buffer_never_truncates_to_a_secret(void **state)
{
    (void)state;
    const char *in = "http://h/x?Signature=abcdefghijklmnopqrstuvwxyz";
    char out[40];
    assert_int_equal(redact_url(in, NULL, 0, out, sizeof out), REDACT_OK);
    assert_string_equal(out, "http://h/x?Signature=REDACTED");
    char tiny[20];
    assert_int_equal(redact_url(in, NULL, 0, tiny, sizeof tiny), REDACT_UNPARSEABLE);
    assert_null(strstr(tiny, "abc"));
    char two[2] = {'x', 'x'};
    assert_int_equal(redact_url(in, NULL, 0, two, sizeof two), REDACT_UNPARSEABLE);
    assert_string_equal(two, "");
    assert_int_equal(redact_url(in, NULL, 0, NULL, 0), REDACT_UNPARSEABLE);
}

static void redact_13_growth_bound_of_dup(void **state)
{
    (void)state;
    /* Worst case: many empty secret values, each growing by "REDACTED". */
    char in[2048] = "http://u@h/x?";
    for (int i = 0; i < 100; i++)
        strcat(in, "Policy=&");
    char *dup = redact_url_dup(in, NULL, 0);
    assert_non_null(dup);
    assert_non_null(strstr(dup, "http://REDACTED@h/x?Policy=REDACTED&Policy=REDACTED&"));
    assert_null(strstr(dup, REDACT_PLACEHOLDER_URL));
    free(dup);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(redact_01_cloudfront_params),
        cmocka_unit_test(redact_02_other_params_and_order_kept),
        cmocka_unit_test(redact_03_repeated_params),
        cmocka_unit_test(redact_04_params_without_values),
        cmocka_unit_test(redact_05_encoded_and_case_variant_names),
        cmocka_unit_test(redact_06_fragment_kept),
        cmocka_unit_test(redact_07_userinfo),
        cmocka_unit_test(redact_08_relative_references),
        cmocka_unit_test(redact_09_semicolon_separator),
        cmocka_unit_test(redact_10_extra_names),
        cmocka_unit_test(redact_11_unparseable_is_placeholder),
        cmocka_unit_test(redact_12_small_buffer_never_truncates_to_a_secret),
        cmocka_unit_test(redact_13_growth_bound_of_dup),
    };
    return cmocka_run_group_tests_name("http_01_redact_url", tests, NULL, NULL);
}
