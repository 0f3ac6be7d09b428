/* fb_parse.c - one Prometheus query_range answer, read exactly (see
 * feedback.h).
 *
 * Prometheus writes sample values as strings of Go's shortest float
 * formatting ("0.0024999999999999988", "9.999999999999997e-07", "NaN",
 * "+Inf").  A value is read digit by digit and rounded UP to the
 * micro-unit, so a rounding step can only move an observation toward
 * VIOLATION; the string is kept as written for the record.  Times are JSON
 * numbers with at most millisecond digits; num_json_loadb keeps their text
 * so they are read exactly too.
 */
#include "feedback.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

#define EXP_LIMIT 10000 /* beyond it a value is 0 or saturated either way */

/* The decimal D x 10^exp10 being read: D's digits without leading zeros. */
struct dec {
    char d[FB_VALUE_TEXT];
    size_t n;
    long exp10;
    bool neg;
};

/* [-|+]DIGITS[.DIGITS][(e|E)[-|+]DIGITS] into *x.  0 or -1. */
static int read_dec(const char *s, size_t n, struct dec *x)
{
    const char *e = s + n;
    memset(x, 0, sizeof *x);
    x->neg = s < e && *s == '-';
    s += s < e && (*s == '-' || *s == '+');
    size_t nint = 0, nfrac = 0;
    for (; s < e && *s >= '0' && *s <= '9'; s++, nint++)
        if (x->n || *s != '0')
            x->d[x->n++] = *s; /* n < FB_VALUE_TEXT: the text is shorter */
    if (s < e && *s == '.') {
        for (s++; s < e && *s >= '0' && *s <= '9'; s++, nfrac++) {
            if (x->n || *s != '0')
                x->d[x->n++] = *s;
            x->exp10--;
        }
    }
    if (nint + nfrac == 0)
        return -1;
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = s < e && *s == '-';
        s += s < e && (*s == '-' || *s == '+');
        long ev = 0;
        size_t nexp = 0;
        for (; s < e && *s >= '0' && *s <= '9'; s++, nexp++)
            ev = ev < EXP_LIMIT ? ev * 10 + (*s - '0') : ev; /* saturates */
        if (nexp == 0)
            return -1;
        x->exp10 += eneg ? -ev : ev;
    }
    return s == e ? 0 : -1;
}

/* |D| x 10^(exp10 + 6), rounded away from zero when a non-zero digit is
 * dropped and round_away (the caller makes that "up"), saturated at
 * FB_SATURATED.  128 bits hold every intermediate product. */
static int64_t to_micro(const struct dec *x, bool round_away)
{
    long scale = x->exp10 + 6;
    if (x->n == 0)
        return 0;
    if (scale + (long)x->n > 20)
        return FB_SATURATED; /* at least 10^20 */
    long keep = scale >= 0 ? (long)x->n : (long)x->n + scale;
    __int128 v = 0;
    for (long i = 0; i < keep; i++)
        v = v * 10 + (x->d[i] - '0');
    for (long i = 0; i < scale; i++)
        v *= 10;
    bool dropped_nonzero = false;
    for (long i = keep < 0 ? 0 : keep; i < (long)x->n; i++)
        dropped_nonzero |= x->d[i] != '0';
    if (dropped_nonzero && round_away)
        v += 1;
    return v > FB_SATURATED ? FB_SATURATED : (int64_t)v;
}

int fb_value_micro(const char *s, size_t n, int64_t *out)
{
    struct dec x;
    if (n == 0 || n >= FB_VALUE_TEXT || read_dec(s, n, &x) != 0)
        return -1;
    /* Up: a positive value rounds away from zero, a negative one toward it. */
    int64_t m = to_micro(&x, !x.neg);
    *out = x.neg ? -m : m;
    return 0;
}

static bool not_a_number(const char *s)
{
    return !strcmp(s, "NaN") || !strcmp(s, "+Inf") || !strcmp(s, "-Inf") || !strcmp(s, "Inf");
}

/* One [time, "value"] pair. */
static enum fb_parse_rc point(const json_t *pair, struct fb_point *p, char *err, size_t errlen)
{
    const json_t *t = json_array_get(pair, 0), *v = json_array_get(pair, 1);
    int64_t t_micro;
    if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_string(v)) {
        snprintf(err, errlen, "a sample is not [time, \"value\"]");
        return FB_PARSE_SHAPE;
    }
    const char *s = json_string_value(v);
    if (not_a_number(s)) {
        snprintf(err, errlen, "a sample is %s, not a number", s);
        return FB_PARSE_NOT_A_NUMBER;
    }
    /* Times: seconds with at most millisecond digits (Prometheus's own). */
    if (num_from_json(t, 100000000000LL, &t_micro) != 0 || t_micro % 1000 != 0 ||
        json_string_length(v) != strlen(s) || fb_value_micro(s, strlen(s), &p->micro) != 0) {
        snprintf(err, errlen, "a sample's time or value is not an exact decimal");
        return FB_PARSE_BAD_VALUE;
    }
    p->t_ms = t_micro / 1000;
    snprintf(p->text, sizeof p->text, "%s", s);
    return FB_PARSE_OK;
}

static enum fb_parse_rc series(const json_t *values, struct fb_series *out, char *err,
                               size_t errlen)
{
    size_t n = json_array_size(values);
    if (!json_is_array(values)) {
        snprintf(err, errlen, "the series has no \"values\" array");
        return FB_PARSE_SHAPE;
    }
    if (n > FB_MAX_POINTS) {
        snprintf(err, errlen, "the series has more than %d points", FB_MAX_POINTS);
        return FB_PARSE_SHAPE;
    }
    out->pts = calloc(n ? n : 1, sizeof *out->pts);
    if (!out->pts) {
        snprintf(err, errlen, "out of memory");
        return FB_PARSE_SHAPE;
    }
    for (out->n = 0; out->n < n; out->n++) {
        enum fb_parse_rc rc = point(json_array_get(values, out->n), &out->pts[out->n], err, errlen);
        if (rc != FB_PARSE_OK) {
            fb_series_free(out);
            return rc;
        }
    }
    return FB_PARSE_OK;
}

static enum fb_parse_rc answer(const json_t *root, struct fb_series *out, char *err,
                               size_t errlen)
{
    const char *status = json_string_value(json_object_get(root, "status"));
    if (status && !strcmp(status, "error")) {
        const char *e = json_string_value(json_object_get(root, "error"));
        snprintf(err, errlen, "Prometheus: %.200s", e ? e : "error without a message");
        return FB_PARSE_ERROR_STATUS;
    }
    const json_t *data = json_object_get(root, "data");
    const char *type = json_string_value(json_object_get(data, "resultType"));
    const json_t *result = json_object_get(data, "result");
    if (!status || strcmp(status, "success") || !type || strcmp(type, "matrix") ||
        !json_is_array(result)) {
        snprintf(err, errlen, "not a query_range answer (status success, a matrix result)");
        return FB_PARSE_SHAPE;
    }
    if (json_array_size(result) == 0) {
        snprintf(err, errlen, "the query returned no series");
        return FB_PARSE_NO_SERIES;
    }
    if (json_array_size(result) > 1) {
        snprintf(err, errlen, "the query returned %zu series where one is expected",
                 json_array_size(result));
        return FB_PARSE_SEVERAL;
    }
    return series(json_object_get(json_array_get(result, 0), "values"), out, err, errlen);
}

enum fb_parse_rc fb_parse(const char *body, size_t len, struct fb_series *out, char *err,
                          size_t errlen)
{
    assert(out && err);
    memset(out, 0, sizeof *out);
    err[0] = '\0';
    if (!body || len > FB_MAX_BODY) {
        snprintf(err, errlen, "no answer, or more than %d bytes", FB_MAX_BODY);
        return FB_PARSE_NOT_JSON;
    }
    json_t *root = num_json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        snprintf(err, errlen, "the answer is not a JSON object");
        return FB_PARSE_NOT_JSON;
    }
    enum fb_parse_rc rc = answer(root, out, err, errlen);
    json_decref(root);
    return rc;
}

void fb_series_free(struct fb_series *s)
{
    free(s->pts);
    s->pts = NULL;
    s->n = 0;
}

const char *fb_parse_rc_name(enum fb_parse_rc rc)
{
    static const char *const names[] = {"ok",        "not_json",      "error",
                                        "shape",     "no_data",       "several_series",
                                        "not_a_number", "bad_value"};
    return (size_t)rc < sizeof names / sizeof names[0] ? names[rc] : "unknown";
}
