/* num.c - exact decimals as int64 micro-units (see num.h). */
#include "num.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The significant digits of a decimal, and what they are multiplied by. */
struct digits {
    char sig[20];   /* without leading zeros; the last one is not 0 */
    size_t n;       /* 0: the value is zero */
    long zeros;     /* trailing zeros dropped from sig */
    bool too_many;  /* more than 19 significant digits: never exact in int64 */
};

static void add_digit(struct digits *d, char c)
{
    if (c == '0') {
        if (d->n > 0)
            d->zeros++;
        return;
    }
    for (; d->zeros > 0; d->zeros--) {
        if (d->n == sizeof d->sig)
            d->too_many = true;
        else
            d->sig[d->n++] = '0';
    }
    if (d->n == sizeof d->sig)
        d->too_many = true;
    else
        d->sig[d->n++] = c;
}

/* sig x 10^scale as an int64 <= limit; -1 when not an integer or too big. */
static int digits_value(const struct digits *d, long scale, int64_t limit, int64_t *out)
{
    if (d->n == 0) {
        *out = 0;
        return 0;
    }
    if (d->too_many || scale < 0 || (long)d->n + scale > 19)
        return -1; /* a non-zero digit below the unit, or far beyond any limit */
    int64_t v = 0;
    for (size_t i = 0; i < d->n; i++) {
        int k = d->sig[i] - '0';
        if (v > (limit - k) / 10)
            return -1;
        v = v * 10 + k;
    }
    for (long i = 0; i < scale; i++) {
        if (v > limit / 10)
            return -1;
        v *= 10;
    }
    *out = v;
    return 0;
}

/* Reads [-]DIGITS[.DIGITS][(e|E)[+|-]DIGITS] (the exponent only when
 * allow_exp) from s[0..n) into micro-units, exactly. */
static int parse_decimal(const char *s, size_t n, bool allow_exp, int64_t max_units, int64_t *out)
{
    assert(max_units > 0 && max_units <= NUM_MAX_UNITS);
    const char *end = s + n;
    struct digits d = {.n = 0};
    bool neg = s < end && *s == '-';
    s += neg;
    long nint = 0, nfrac = 0, exp = 0;
    for (; s < end && *s >= '0' && *s <= '9'; s++, nint++)
        add_digit(&d, *s);
    if (s < end && *s == '.') {
        for (s++; s < end && *s >= '0' && *s <= '9'; s++, nfrac++)
            add_digit(&d, *s);
        if (nfrac == 0)
            return -1;
    }
    if (allow_exp && s < end && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = s < end && *s == '-';
        s += s < end && (*s == '-' || *s == '+');
        if (s == end)
            return -1;
        for (; s < end && *s >= '0' && *s <= '9'; s++)
            exp = exp < 100000000 ? exp * 10 + (*s - '0') : exp; /* saturates */
        exp = eneg ? -exp : exp;
    }
    if (s != end || nint == 0)
        return -1;
    int64_t v;
    if (digits_value(&d, exp - nfrac + d.zeros + 6, max_units * NUM_MICRO, &v) != 0)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

int num_from_string(const char *s, int64_t max_units, int64_t *out)
{
    assert(s && out);
    return parse_decimal(s, strlen(s), false, max_units, out);
}

bool num_json_is_number(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 1 && json_string_value(v)[0] == '\0';
}

int num_from_json(const json_t *v, int64_t max_units, int64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i > max_units || i < -max_units)
            return -1;
        *out = (int64_t)i * NUM_MICRO;
        return 0;
    }
    if (num_json_is_number(v))
        return parse_decimal(json_string_value(v) + 1, json_string_length(v) - 1, true,
                             max_units, out);
    if (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v))
        return num_from_string(json_string_value(v), max_units, out);
    return -1; /* a jansson real has lost its digits: never read one */
}

void num_format(int64_t micro, char *buf, size_t len)
{
    const char *sign = micro < 0 ? "-" : "";
    uint64_t a = micro < 0 ? (uint64_t)0 - (uint64_t)micro : (uint64_t)micro;
    char frac[8];
    snprintf(frac, sizeof frac, "%06llu", (unsigned long long)(a % NUM_MICRO));
    for (int i = 5; i >= 0 && frac[i] == '0'; i--)
        frac[i] = '\0';
    snprintf(buf, len, "%s%llu%s%s", sign, (unsigned long long)(a / NUM_MICRO),
             frac[0] ? "." : "", frac);
}

json_t *num_to_json(int64_t micro)
{
    /* Go through the decimal text so the real is the closest double to the
     * exact decimal value (identical on every run: replay compares it). */
    char buf[48];
    num_format(micro, buf, sizeof buf);
    return json_real(strtod(buf, NULL));
}
