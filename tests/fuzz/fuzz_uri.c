/* libFuzzer target for verifier/uri.h: the input is "base\nreference".
 * Checks that a resolved URI re-parses, has a scheme, contains no dot
 * segment in its path, and resolves to itself against the same base. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uri.h"

static int has_dot_segment(struct uri_slice path)
{
  size_t i = 0;
  while (i <= path.len) {
    size_t j = i;
    while (j < path.len && path.ptr[j] != '/') j++;
    size_t n = j - i;
    if ((n == 1 && path.ptr[i] == '.') || (n == 2 && path.ptr[i] == '.' && path.ptr[i + 1] == '.')) return 1;
    i = j + 1;
  }
  return 0;
}

static void check_result(const char *base, const char *res)
{
  struct uri_parts u;
  if (uri_parse(res, &u) != URI_OK || !u.scheme.defined || has_dot_segment(u.path)) {
    fprintf(stderr, "bad result <%s>\n", res);
    abort();
  }
  char *again = NULL;
  if (uri_resolve_alloc(base, res, &again) != URI_OK || strcmp(again, res) != 0) {
    fprintf(stderr, "not a fixed point: <%s> -> <%s>\n", res, again ? again : "(error)");
    abort();
  }
  free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 2 * URI_MAX_INPUT + 64) return 0;
  char *buf = malloc(size + 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  char *nl = memchr(buf, '\n', size);
  const char *base = "http://a/b/c/d;p?q", *ref = buf;
  if (nl) {
    *nl = '\0';
    base = buf;
    ref = nl + 1;
  }
  char *res = NULL;
  enum uri_status st = uri_resolve_alloc(base, ref, &res);
  if ((st == URI_OK) != (res != NULL)) abort();
  if (st == URI_OK) {
    if (strlen(res) + 1 > URI_MAX_OUTPUT) abort();
    check_result(base, res);
    char small[32];
    enum uri_status st2 = uri_resolve(base, ref, small, sizeof small);
    if (st2 != (strlen(res) < sizeof small ? URI_OK : URI_E_BUFFER)) abort();
  }
  (void)uri_is_http(base);
  (void)uri_is_http(ref);
  free(res);
  free(buf);
  return 0;
}
