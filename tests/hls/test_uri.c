/* uri: RFC 3986 reference resolution (verifier/uri.h).  All 42 examples of
 * RFC 3986 5.4, the cases a CDN playlist produces, and refused inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "rfc3986_examples.h"
#include "uri.h"

static void expect_resolves(const char *base, const char *ref, const char *expected)
{
  char out[URI_MAX_OUTPUT];
  enum uri_status st = uri_resolve(base, ref, out, sizeof out);
  if (st != URI_OK || strcmp(out, expected) != 0)
    print_error("base <%s> ref <%s>: got %s <%s>, want <%s>\n", base, ref, uri_status_code(st), out, expected);
  assert_int_equal(st, URI_OK);
  assert_string_equal(out, expected);
}

static void expect_refused(const char *base, const char *ref, enum uri_status want)
{
  char out[64] = "sentinel";
  enum uri_status st = uri_resolve(base, ref, out, sizeof out);
  if (st != want) print_error("base <%s> ref <%s>: got %s, want %s\n", base, ref, uri_status_code(st), uri_status_code(want));
  assert_int_equal(st, want);
  assert_string_equal(out, ""); /* never a partial result */
}

static void uri_01_rfc3986_normal_examples(void **state)
{
  (void)state;
  assert_int_equal(RFC3986_NORMAL_COUNT, 23);
  for (size_t i = 0; i < RFC3986_NORMAL_COUNT; i++)
    expect_resolves(RFC3986_BASE, RFC3986_NORMAL[i].ref, RFC3986_NORMAL[i].expected);
}

static void uri_02_rfc3986_abnormal_examples(void **state)
{
  (void)state;
  assert_int_equal(RFC3986_ABNORMAL_COUNT, 19);
  for (size_t i = 0; i < RFC3986_ABNORMAL_COUNT; i++)
    expect_resolves(RFC3986_BASE, RFC3986_ABNORMAL[i].ref, RFC3986_ABNORMAL[i].expected);
}

/* The signed playlist URL's query is not inherited by relative segments. */
static void uri_03_relative_segment_drops_signed_query(void **state)
{
  (void)state;
  const char *pl = "https://cdn.example/live/ch1/index.m3u8?Policy=x&Signature=y";
  expect_resolves(pl, "seg1.ts", "https://cdn.example/live/ch1/seg1.ts");
  expect_resolves(pl, "seg1.ts?Signature=z", "https://cdn.example/live/ch1/seg1.ts?Signature=z");
  expect_resolves(pl, "", "https://cdn.example/live/ch1/index.m3u8?Policy=x&Signature=y");
  expect_resolves(pl, "?Signature=z", "https://cdn.example/live/ch1/index.m3u8?Signature=z");
  expect_resolves(pl, "#t", "https://cdn.example/live/ch1/index.m3u8?Policy=x&Signature=y#t");
}

static void uri_04_absolute_and_network_path_references(void **state)
{
  (void)state;
  const char *pl = "https://cdn.example/live/ch1/index.m3u8?k=1";
  expect_resolves(pl, "http://other.example/a/b.ts", "http://other.example/a/b.ts");
  expect_resolves(pl, "HTTPS://Other.Example:8443/x/../b.ts?q", "HTTPS://Other.Example:8443/b.ts?q");
  expect_resolves(pl, "//cdn2.example/seg.ts", "https://cdn2.example/seg.ts");
  expect_resolves(pl, "//cdn2.example", "https://cdn2.example");
  expect_resolves(pl, "https://[2001:db8::1]:443/s.ts", "https://[2001:db8::1]:443/s.ts");
  expect_resolves("http://a", "g", "http://a/g"); /* 5.2.3: empty base path with authority */
}

static void uri_05_dot_segments_and_absolute_paths(void **state)
{
  (void)state;
  const char *pl = "http://example.com/path/to/index.m3u8?token=abc";
  /* the URIs of corpus/playlists/m3u8py_relative-playlist.m3u8 */
  expect_resolves(pl, "/entire1.ts", "http://example.com/entire1.ts");
  expect_resolves(pl, "../entire2.ts", "http://example.com/path/entire2.ts");
  expect_resolves(pl, "../../entire3.ts", "http://example.com/entire3.ts");
  expect_resolves(pl, "entire4.ts", "http://example.com/path/to/entire4.ts");
  expect_resolves(pl, "./entire5.ts", "http://example.com/path/to/entire5.ts");
  expect_resolves(pl, ".//entire6.ts", "http://example.com/path/to//entire6.ts");
  expect_resolves(pl, "../../../../../x.ts", "http://example.com/x.ts");
  expect_resolves(pl, "/abs/./b/../c.ts", "http://example.com/abs/c.ts");
  expect_resolves(pl, "a/b/..", "http://example.com/path/to/a/");
}

/* Queries keep "/", "*", "~" and dot segments verbatim (5.2.4 is for paths). */
static void uri_06_queries_with_slash_star_tilde(void **state)
{
  (void)state;
  const char *pl = "https://akamai.example/hls/live/index.m3u8?hdntl=exp=1~acl=/*~hmac=ab";
  expect_resolves(pl, "testvideo-1.ts?hdntl=exp=1596678764~acl=/*~data=hdntl~hmac=12345&",
                  "https://akamai.example/hls/live/testvideo-1.ts?hdntl=exp=1596678764~acl=/*~data=hdntl~hmac=12345&");
  expect_resolves(pl, "x.ts?a=/../b&c=./d", "https://akamai.example/hls/live/x.ts?a=/../b&c=./d");
  expect_resolves(pl, "media-b2000000_1.ts?wowzasessionid=2029972411",
                  "https://akamai.example/hls/live/media-b2000000_1.ts?wowzasessionid=2029972411");
  expect_resolves(pl, "s%20p.ts?x=%2F", "https://akamai.example/hls/live/s%20p.ts?x=%2F");
}

static void assert_slice(struct uri_slice s, const char *want)
{
  if (!want) {
    assert_false(s.defined);
    return;
  }
  assert_true(s.defined);
  assert_int_equal(s.len, strlen(want));
  assert_memory_equal(s.ptr, want, s.len);
}

static void uri_07_parse_components(void **state)
{
  (void)state;
  struct uri_parts u;
  assert_int_equal(uri_parse("https://user:pw@[::1]:8443/p;x/q?a=1?b#f/g", &u), URI_OK);
  assert_slice(u.scheme, "https");
  assert_slice(u.authority, "user:pw@[::1]:8443");
  assert_slice(u.userinfo, "user:pw");
  assert_slice(u.host, "[::1]");
  assert_slice(u.port, "8443");
  assert_slice(u.path, "/p;x/q");
  assert_slice(u.query, "a=1?b");
  assert_slice(u.fragment, "f/g");
  assert_int_equal(uri_parse("g;x?#", &u), URI_OK); /* empty but defined query and fragment */
  assert_slice(u.scheme, NULL);
  assert_slice(u.authority, NULL);
  assert_slice(u.path, "g;x");
  assert_slice(u.query, "");
  assert_slice(u.fragment, "");
  assert_int_equal(uri_parse("file:///etc/x", &u), URI_OK);
  assert_slice(u.host, "");
  assert_slice(u.path, "/etc/x");
  assert_int_equal(uri_parse("", &u), URI_OK);
  assert_slice(u.path, "");
}

static void uri_08_refuses_malformed_input(void **state)
{
  (void)state;
  const char *b = "http://a/b/c/d;p?q";
  expect_refused(b, "a b", URI_E_SYNTAX);
  expect_refused(b, "a\tb", URI_E_CONTROL_CHAR);
  expect_refused(b, "a\nb", URI_E_CONTROL_CHAR);
  expect_refused(b, "a\x7f", URI_E_CONTROL_CHAR);
  expect_refused(b, "a\x01", URI_E_CONTROL_CHAR);
  expect_refused(b, "%zz", URI_E_SYNTAX);
  expect_refused(b, "a%4", URI_E_SYNTAX);
  expect_refused(b, "a%", URI_E_SYNTAX);
  expect_refused(b, "caf\xc3\xa9.ts", URI_E_SYNTAX);
  expect_refused(b, "1a:b", URI_E_SYNTAX);
  expect_refused(b, ":b", URI_E_SYNTAX);
  expect_refused(b, "http://h:80x/", URI_E_SYNTAX);
  expect_refused(b, "http://[::g]/", URI_E_SYNTAX);
  expect_refused(b, "http://[::1/", URI_E_SYNTAX);
  expect_refused(b, "http://a@b@c/", URI_E_SYNTAX);
  expect_refused(b, "a[1].ts", URI_E_SYNTAX);
  expect_refused(b, "a.ts?x=<y>", URI_E_SYNTAX);
  expect_refused(b, "a.ts#x#y", URI_E_SYNTAX);
  expect_refused(b, "a\\b", URI_E_SYNTAX);
  expect_refused("/relative/base", "g", URI_E_NOT_ABSOLUTE);
  expect_refused("a b://x/", "g", URI_E_SYNTAX);
  /* bounds: URI_MAX_INPUT bytes are fine, one more is refused */
  char *big = malloc(URI_MAX_INPUT + 2);
  assert_non_null(big);
  memset(big, 'a', URI_MAX_INPUT + 1);
  big[URI_MAX_INPUT + 1] = '\0';
  expect_refused(b, big, URI_E_TOO_LONG);
  big[URI_MAX_INPUT] = '\0';
  char *out = NULL;
  assert_int_equal(uri_resolve_alloc(b, big, &out), URI_OK);
  assert_int_equal(strlen(out), strlen("http://a/b/c/") + URI_MAX_INPUT);
  free(out);
  free(big);
  /* NULLs and the zero value */
  assert_int_equal(uri_resolve(NULL, "g", (char[8]){0}, 8), URI_E_ARG);
  assert_int_equal(uri_resolve(b, NULL, (char[8]){0}, 8), URI_E_ARG);
  assert_int_equal(uri_resolve(b, "g", NULL, 8), URI_E_ARG);
  assert_int_equal(uri_resolve_alloc(b, "g", NULL), URI_E_ARG);
  enum uri_status zero = 0;
  assert_int_not_equal(zero, URI_OK);
  assert_string_equal(uri_status_code(zero), "unset");
}

static void uri_09_small_buffer_is_an_error(void **state)
{
  (void)state;
  char out[14];
  assert_int_equal(uri_resolve(RFC3986_BASE, "g", out, sizeof out), URI_E_BUFFER); /* needs 15 */
  assert_string_equal(out, "");
  char out15[15];
  assert_int_equal(uri_resolve(RFC3986_BASE, "g", out15, sizeof out15), URI_OK);
  assert_string_equal(out15, "http://a/b/c/g");
  assert_int_equal(uri_resolve(RFC3986_BASE, "g", out, 0), URI_E_ARG);
}

static void uri_10_is_http(void **state)
{
  (void)state;
  assert_true(uri_is_http("http://a/b"));
  assert_true(uri_is_http("HTTPS://cdn.example:8443/x.m3u8?Signature=y"));
  assert_true(uri_is_http("http://127.0.0.1:8080"));
  assert_false(uri_is_http("http:g"));          /* no authority */
  assert_false(uri_is_http("http:///x"));       /* empty host */
  assert_false(uri_is_http("ftp://a/b"));
  assert_false(uri_is_http("httpx://a/b"));
  assert_false(uri_is_http("/local/file.ts"));
  assert_false(uri_is_http("file:///local/file.ts"));
  assert_false(uri_is_http("http://a b/"));
  assert_false(uri_is_http(NULL));
}

/* A path "//c" without an authority would re-parse with authority "c". */
static void uri_11_ambiguous_result_refused(void **state)
{
  (void)state;
  expect_refused("http:/a/b", "..//c", URI_E_AMBIGUOUS);
  expect_refused("g:x", "/..//c", URI_E_AMBIGUOUS);
  expect_resolves("http://h/a/b", "..//c", "http://h//c");
}

/* RFC 3986 5.1: the base's fragment is not used; its dot segments are
 * removed (6.2.2.3) so no result contains dot segments. */
static void uri_12_base_fragment_and_dots(void **state)
{
  (void)state;
  expect_resolves("http://a/b/../c/d?q#frag", "", "http://a/c/d?q");
  expect_resolves("http://a/b/../c/d?q#frag", "#x", "http://a/c/d?q#x");
  expect_resolves("http://a/b/./c/d", "e", "http://a/b/c/e");
  expect_resolves("g:h", "i", "g:i");
  expect_resolves("g:a/b", "../../c", "g:/c"); /* 5.2.4 literally: rule C leaves "/c" */
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(uri_01_rfc3986_normal_examples),
      cmocka_unit_test(uri_02_rfc3986_abnormal_examples),
      cmocka_unit_test(uri_03_relative_segment_drops_signed_query),
      cmocka_unit_test(uri_04_absolute_and_network_path_references),
      cmocka_unit_test(uri_05_dot_segments_and_absolute_paths),
      cmocka_unit_test(uri_06_queries_with_slash_star_tilde),
      cmocka_unit_test(uri_07_parse_components),
      cmocka_unit_test(uri_08_refuses_malformed_input),
      cmocka_unit_test(uri_09_small_buffer_is_an_error),
      cmocka_unit_test(uri_10_is_http),
      cmocka_unit_test(uri_11_ambiguous_result_refused),
      cmocka_unit_test(uri_12_base_fragment_and_dots),
  };
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  return cmocka_run_group_tests_name("uri", tests, NULL, NULL);
}
