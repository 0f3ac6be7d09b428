/* fuzz_redact.c - URL and header redaction on arbitrary bytes.
 *
 * The input's first byte picks where a secret is planted, the rest is cut
 * in two halves A and B that surround it:
 *   0  a query value           http://h/A?q&x=SECRET&B
 *   1  the userinfo            http://u:SECRET@h/A?B
 *   2  a path token            http://h/A/t=SECRET/B
 *   3  a query value, with a policy that keeps another name
 *   4  a header value          A x=SECRET B   (redact_text_dup)
 * The secret is made of bytes that occur nowhere in the input nor in the
 * fixed text around it nor in the replacement strings, so the invariant is
 * exact: NO BYTE of the secret appears in the output.  Also: no crash, URL
 * redaction is idempotent, and a URL it wrote passes redact_text_is_clean
 * (what `exactav evidence import` asks of a report).  Text redaction is not
 * always idempotent (a word that only looks like a URL, "a=b&x://...", is
 * cut differently the second time), so a pathological header value exactav
 * recorded may be refused on import: never a secret let through. */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"

/* Bytes absent from every fixed string used below and from REDACTED /
 * REDACTED-UNPARSEABLE-URL. */
static const char SECRET_ALPHABET[] = "0123456789wzjyg";

/* Up to 8 secret bytes not present in data; false when fewer than 2. */
static bool make_secret(const uint8_t *data, size_t size, char out[9])
{
    size_t n = 0;
    for (const char *c = SECRET_ALPHABET; *c && n < 8; c++)
        if (!memchr(data, *c, size))
            out[n++] = *c;
    out[n] = '\0';
    return n >= 2;
}

static void assert_no_secret_byte(const char *out, const char *secret)
{
    for (const char *c = secret; *c; c++)
        assert(strchr(out, *c) == NULL);
}

static char *build(int where, const char *a, const char *b, const char *secret)
{
    size_t n = strlen(a) + strlen(b) + strlen(secret) + 64;
    char *u = malloc(n);
    if (!u)
        return NULL;
    switch (where) {
    case 0: snprintf(u, n, "http://h/%s?q&x=%s&%s", a, secret, b); break;
    case 1: snprintf(u, n, "http://u:%s@h/%s?%s", secret, a, b); break;
    case 2: snprintf(u, n, "http://h/%s/t=%s/%s", a, secret, b); break;
    case 3: snprintf(u, n, "http://h/?%s&keep=v&x=%s&%s", a, secret, b); break;
    default: snprintf(u, n, "%s x=%s %s", a, secret, b); break;
    }
    return u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char secret[9];
    if (size < 1 || !make_secret(data, size, secret))
        return 0;
    int where = data[0] % 5;
    size_t rest = size - 1, half = rest / 2;
    char *a = malloc(half + 1), *b = malloc(rest - half + 1);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    memcpy(a, data + 1, half);
    a[half] = '\0';
    memcpy(b, data + 1 + half, rest - half);
    b[rest - half] = '\0';
    char *input = build(where, a, b, secret);
    const char *keep[] = {"keep"};
    struct redact_policy pol = {.keep = keep, .n_keep = 1};
    if (input && where == 4) {
        char *out = redact_text_dup(input, &pol);
        if (out)
            assert_no_secret_byte(out, secret);
        free(out);
    } else if (input) {
        char *once = redact_url_dup(input, where == 3 ? &pol : NULL);
        if (once) {
            assert_no_secret_byte(once, secret);
            assert(redact_text_is_clean(once));
            char *twice = redact_url_dup(once, where == 3 ? &pol : NULL);
            assert(twice && strcmp(once, twice) == 0);
            free(twice);
        }
        free(once);
        char origin[64];
        redact_url_origin(input, origin, sizeof origin);
        if (where == 1)
            assert_no_secret_byte(origin, secret);
    }
    free(input);
    free(a);
    free(b);
    return 0;
}
