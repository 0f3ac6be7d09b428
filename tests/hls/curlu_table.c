/* Prints, for each of the 42 RFC 3986 5.4 examples, the expected result,
 * ours (uri_resolve) and libcurl's (CURLU: set the base, then the reference
 * as CURLUPART_URL, which libcurl resolves as a redirect would).  Used to
 * produce the table in docs/hls.md:  build-X/bin/hls_curlu_table */
#include "rfc3986_examples.h"
#include "uri.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

static void curl_resolve(const char *ref, char *out, size_t outlen)
{
  CURLU *h = curl_url();
  char *res = NULL;
  CURLUcode rc = h ? curl_url_set(h, CURLUPART_URL, RFC3986_BASE, 0) : CURLUE_OUT_OF_MEMORY;
  if (rc == CURLUE_OK) rc = curl_url_set(h, CURLUPART_URL, ref, 0);
  if (rc == CURLUE_OK) rc = curl_url_get(h, CURLUPART_URL, &res, 0);
  if (rc == CURLUE_OK)
    snprintf(out, outlen, "%s", res);
  else
    snprintf(out, outlen, "(refused: %s)", curl_url_strerror(rc));
  curl_free(res);
  curl_url_cleanup(h);
}

static int row(const struct rfc3986_example *e, int *ours_ok, int *curl_ok)
{
  char ours[URI_MAX_OUTPUT], theirs[512];
  enum uri_status st = uri_resolve(RFC3986_BASE, e->ref, ours, sizeof ours);
  if (st != URI_OK) snprintf(ours, sizeof ours, "(error: %s)", uri_status_code(st));
  curl_resolve(e->ref, theirs, sizeof theirs);
  *ours_ok += strcmp(ours, e->expected) == 0;
  *curl_ok += strcmp(theirs, e->expected) == 0;
  return printf("| `%s` | `%s` | `%s` | `%s`%s |\n", e->ref[0] ? e->ref : "\"\"", e->expected, ours, theirs,
                strcmp(theirs, e->expected) == 0 ? "" : " **differs**");
}

int main(void)
{
  int ours_ok = 0, curl_ok = 0;
  curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
  printf("base `%s`, libcurl %s\n\n", RFC3986_BASE, v->version);
  printf("| reference | RFC 3986 | exactav uri_resolve | libcurl CURLU |\n|---|---|---|---|\n");
  for (size_t i = 0; i < RFC3986_NORMAL_COUNT; i++) row(&RFC3986_NORMAL[i], &ours_ok, &curl_ok);
  for (size_t i = 0; i < RFC3986_ABNORMAL_COUNT; i++) row(&RFC3986_ABNORMAL[i], &ours_ok, &curl_ok);
  printf("\nexactav: %d of 42 right; libcurl: %d of 42 right\n", ours_ok, curl_ok);
  return ours_ok == 42 ? 0 : 1;
}
