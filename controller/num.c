/* num.c - exact decimals as int64 micro-units (see num.h). */
#include "num.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int num_from_string(const char *s, int64_t max_units, int64_t *out)
{
    assert(s && out && max_units > 0 && max_units <= NUM_MAX_UNITS);
    int neg = 0;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    int64_t whole = 0, frac = 0;
    int nwhole = 0, nfrac = 0;
    for (; *s >= '0' && *s <= '9'; s++, nwhole++) {
        whole = whole * 10 + (*s - '0');
        if (whole > max_units)
            return -1;
    }
    if (*s == '.') {
        s++;
        for (; *s >= '0' && *s <= '9'; s++, nfrac++) {
            if (nfrac >= 6)
                return -1; /* more precision than we can hold exactly */
            frac = frac * 10 + (*s - '0');
        }
        if (nfrac == 0)
            return -1;
    }
    if (*s != '\0' || nwhole == 0)
        return -1;
    for (int i = nfrac; i < 6; i++)
        frac *= 10;
    int64_t v = whole * NUM_MICRO + frac;
    if (v > max_units * NUM_MICRO)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

static int from_real(double d, int64_t max_units, int64_t *out)
{
    if (!isfinite(d) || fabs(d) > (double)max_units)
        return -1;
    /* Rounding to the nearest micro-unit undoes binary representation error
     * of decimal literals such as 0.085 (= 0.08499999999999999...). */
    *out = llround(d * (double)NUM_MICRO);
    return 0;
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
    if (json_is_real(v))
        return from_real(json_real_value(v), max_units, out);
    if (json_is_string(v))
        return num_from_string(json_string_value(v), max_units, out);
    return -1;
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
