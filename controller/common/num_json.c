/* num_json.c - JSON parsing that keeps the text of every non-integer number
 * (see num.h).
 *
 * jansson turns 0.0200004 into the nearest binary double before anyone can
 * look at it, and offers no hook for the token's text.  So the text is
 * rewritten first: every number token with a fraction or an exponent that
 * follows the JSON grammar becomes the string "\u0000TOKEN", then jansson
 * parses that with JSON_ALLOW_NUL.  The rewrite maps tokens one to one, so
 * the result has exactly the structure of the input; a string of the input
 * that holds \u0000 itself is left to jansson's own refusal (the input is
 * parsed as given), so a marker can never come from the input.  Errors are
 * always reported on the input as given (its lines and columns).
 */
#include "num.h"

#include <stdlib.h>
#include <string.h>

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of a JSON number at s (RFC 8259 section 6), 0 when there is none;
 * *real: it has a fraction or an exponent. */
static size_t number_len(const char *s, const char *end, bool *real)
{
    const char *p = s;
    *real = false;
    if (p < end && *p == '-')
        p++;
    if (p < end && *p == '0')
        p++;
    else if (p < end && is_digit(*p))
        while (p < end && is_digit(*p))
            p++;
    else
        return 0;
    if (p < end && *p == '.') {
        const char *f = ++p;
        while (p < end && is_digit(*p))
            p++;
        if (p == f)
            return 0;
        *real = true;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const char *e = p;
        while (p < end && is_digit(*p))
            p++;
        if (p == e)
            return 0;
        *real = true;
    }
    return (size_t)(p - s);
}

/* Skips a string starting at s[0] == '"'; returns the position after its
 * closing quote (or end).  *nul: it contains the escape \u0000. */
static const char *skip_string(const char *s, const char *end, bool *nul)
{
    for (s++; s < end && *s != '"'; s++) {
        if (*s != '\\')
            continue;
        if (end - s >= 6 && !memcmp(s + 1, "u0000", 5))
            *nul = true;
        if (end - s > 1)
            s++; /* the escaped character; \uXXXX's digits need no care */
    }
    return s < end ? s + 1 : end;
}

/* The rewritten text (malloc'd, *outlen), or NULL when it is not needed or
 * not possible (no real number; \u0000 in a string; out of memory). */
static char *mark_numbers(const char *in, size_t len, size_t *outlen)
{
    static const char open[] = "\"\\u0000";
    const char *p = in, *end = in + len;
    bool nul = false, any = false;
    char *out = len <= (SIZE_MAX - 16) / 4 ? malloc(len * 4 + 16) : NULL;
    char *o = out;
    while (out && p < end && !nul) {
        bool real = false;
        size_t n = 0;
        if (*p == '"') {
            const char *q = skip_string(p, end, &nul);
            memcpy(o, p, (size_t)(q - p));
            o += q - p;
            p = q;
            continue;
        }
        if ((*p == '-' || is_digit(*p)) && (n = number_len(p, end, &real)) > 0 && real) {
            memcpy(o, open, sizeof open - 1);
            o += sizeof open - 1;
            memcpy(o, p, n);
            o += n;
            *o++ = '"';
            p += n;
            any = true;
            continue;
        }
        n = n ? n : 1; /* an integer, or any other byte: as is */
        memcpy(o, p, n);
        o += n;
        p += n;
    }
    if (!out || nul || !any) {
        free(out);
        return NULL;
    }
    *outlen = (size_t)(o - out);
    return out;
}

json_t *num_json_loadb(const char *text, size_t len, size_t flags, json_error_t *err)
{
    size_t n = 0;
    char *marked = mark_numbers(text, len, &n);
    if (!marked)
        return json_loadb(text, len, flags, err); /* nothing to keep, or refused as given */
    json_t *root = json_loadb(marked, n, flags | JSON_ALLOW_NUL, err);
    free(marked);
    if (!root) {
        /* Report the error where it is in the input as given. */
        json_t *again = json_loadb(text, len, flags, err);
        json_decref(again);
    }
    return root;
}

char *num_json_dumps(const json_t *root, size_t flags)
{
    static const char open[] = "\"\\u0000";
    char *text = json_dumps(root, flags);
    if (!text)
        return NULL;
    /* Every marker string "\u0000TOKEN" becomes TOKEN again; the token is
     * digits, sign, point and exponent, so nothing in it was escaped. */
    char *o = text;
    const char *p = text, *end = text + strlen(text);
    while (p < end) {
        if (*p != '"') {
            *o++ = *p++;
            continue;
        }
        bool nul = false;
        const char *q = skip_string(p, end, &nul);
        if ((size_t)(q - p) >= sizeof open && !memcmp(p, open, sizeof open - 1)) {
            size_t n = (size_t)(q - p) - (sizeof open - 1) - 1; /* without the quotes */
            memmove(o, p + sizeof open - 1, n);
            o += n;
        } else {
            memmove(o, p, (size_t)(q - p));
            o += q - p;
        }
        p = q;
    }
    *o = '\0';
    return text;
}
