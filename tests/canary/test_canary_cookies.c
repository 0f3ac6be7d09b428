/* The cookies a session's master playlist sets, sent on as a browser does
 * (verifier/canary/canary_cookies.h, RFC 6265 5.1.3, 5.1.4): which
 * Set-Cookie values reach which URL, without the network. */
#include "canary_test.h"

#include <string.h>

#include "canary_cookies.h"

#define MASTER "https://api.example.com/v1/sessions/s1/master.m3u8"

static const char *for_url(const char *const *set, const char *url)
{
    static char out[512];
    assert_int_equal(canary_cookies_for(set, MASTER, url, out, sizeof out), 0);
    return out;
}

static void canary_cookies_56_domain_path_and_secure(void **state)
{
    (void)state;
    const char *const set[] = {
        "CloudFront-Policy=p1; Path=/ch1/; Domain=.example.com; HttpOnly; Secure; SameSite=None",
        "CloudFront-Signature=s1; Path=/ch1/; Domain=example.com; Secure",
        "host_only=h; Path=/",           /* no Domain: api.example.com alone */
        "no_path=n",                     /* default path: /v1/sessions/s1 */
        "other=o; Domain=example.org",   /* not the setter's domain: refused */
        "=nameless; Path=/",
        "novalue",
        NULL};
    assert_string_equal(for_url(set, "https://cdn.example.com/ch1/r720/live.m3u8"),
                        "CloudFront-Policy=p1; CloudFront-Signature=s1");
    /* the path must be the cookie's or below it, at a '/' */
    assert_string_equal(for_url(set, "https://cdn.example.com/ch10/live.m3u8"), "");
    /* Secure: never over http */
    assert_string_equal(for_url(set, "http://cdn.example.com/ch1/live.m3u8"), "");
    /* a host that only ends like the domain */
    assert_string_equal(for_url(set, "https://badexample.com/ch1/live.m3u8"), "");
    /* host-only and default-path cookies go back to the setter alone */
    assert_string_equal(for_url(set, "https://api.example.com/v1/sessions/s1/steering"), "host_only=h; no_path=n");
    assert_string_equal(for_url(set, "https://api.example.com/v1/other"), "host_only=h");
    assert_string_equal(for_url(set, "https://cdn.example.com/"), "");
    /* none set, a URL that does not parse, no room */
    const char *const none[] = {NULL};
    assert_string_equal(for_url(none, "https://cdn.example.com/ch1/x"), "");
    char small[8];
    assert_int_equal(canary_cookies_for(set, MASTER, "https://cdn.example.com/ch1/x", small, sizeof small), -1);
    assert_string_equal(small, "");
    assert_int_equal(canary_cookies_for(set, MASTER, "not a url", small, sizeof small), -1);
}

/* An IP address matches only itself (a loopback service and CDN on other
 * ports share host-only cookies: ports are not part of a cookie's scope). */
static void canary_cookies_57_ip_hosts(void **state)
{
    (void)state;
    const char *const set[] = {"a=1; Path=/ch1/", "b=2; Domain=0.0.1; Path=/", NULL};
    char out[64];
    assert_int_equal(canary_cookies_for(set, "http://127.0.0.1:8080/v1/m.m3u8", "http://127.0.0.1:9090/ch1/x.m3u8",
                                        out, sizeof out), 0);
    assert_string_equal(out, "a=1");
    assert_int_equal(canary_cookies_for(set, "http://127.0.0.1:8080/v1/m.m3u8", "http://127.0.0.2/ch1/x.m3u8", out,
                                        sizeof out), 0);
    assert_string_equal(out, "");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canary_cookies_56_domain_path_and_secure),
        cmocka_unit_test(canary_cookies_57_ip_hosts),
    };
    return canary_test_main("canary_cookies", tests, sizeof tests / sizeof tests[0], argc, argv);
}
