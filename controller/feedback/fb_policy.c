/* fb_policy.c - policy.feedback.prometheus and policy.loop.per_allocation_upper
 * (see feedback.h; fields: docs/controller.md).  Read from the recorded
 * situation text, so a review uses the policy its decision was made under. */
#include "feedback.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

static int bad(char *err, size_t errlen, const char *field, const char *rule)
{
    snprintf(err, errlen, "%s: %s", field, rule);
    return -1;
}

static int int_in(const json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *dst)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return -1;
    *dst = json_integer_value(v);
    return 0;
}

static int resource_of(const char *s, enum sit_resource *r)
{
    for (int i = 0; i < SIT_RES_N; i++)
        if (s && !strcmp(s, sit_resource_name((enum sit_resource)i))) {
            *r = (enum sit_resource)i;
            return 0;
        }
    return -1;
}

static int metric_of(const char *s, enum sit_metric *m)
{
    for (int i = 0; i < SIT_MET_N; i++)
        if (s && !strcmp(s, sit_metric_name((enum sit_metric)i))) {
            *m = (enum sit_metric)i;
            return 0;
        }
    return -1;
}

static int one_query(const json_t *q, size_t i, struct fb_query *all, const char *base,
                     char *err, size_t errlen)
{
    char field[96];
    snprintf(field, sizeof field, "%s[%zu]", base, i);
    struct fb_query *d = &all[i];
    const char *promql = json_string_value(json_object_get(q, "promql"));
    if (!json_is_object(q) ||
        resource_of(json_string_value(json_object_get(q, "resource")), &d->resource) != 0)
        return bad(err, errlen, field, "resource must be origin, shield or cdn");
    if (metric_of(json_string_value(json_object_get(q, "metric")), &d->metric) != 0)
        return bad(err, errlen, field, "metric must be rps or bytes_per_s");
    if (!promql || !promql[0] || strlen(promql) >= FB_MAX_PROMQL ||
        strlen(promql) != json_string_length(json_object_get(q, "promql")))
        return bad(err, errlen, field, "promql must be a non-empty string of at most 2047 bytes");
    for (size_t k = 0; k < i; k++)
        if (all[k].resource == d->resource && all[k].metric == d->metric)
            return bad(err, errlen, field, "a second query for the same resource and metric");
    snprintf(d->promql, sizeof d->promql, "%s", promql);
    return 0;
}

/* {"range_s": 3600, "factor": "1.2", "queries": [...]}: decide's background_upper. */
static int background(const json_t *bg, struct fb_policy *p, char *err, size_t errlen)
{
    static const char base[] = "policy.feedback.prometheus.background";
    const json_t *qs = json_object_get(bg, "queries"), *f = json_object_get(bg, "factor");
    p->bg_range_s = 3600;
    p->bg_factor_micro = NUM_MICRO;
    if (!json_is_object(bg))
        return bad(err, errlen, base, "must be an object");
    if (json_object_get(bg, "range_s") &&
        int_in(bg, "range_s", 1, 7 * 86400, &p->bg_range_s) != 0)
        return bad(err, errlen, "policy.feedback.prometheus.background.range_s",
                   "must be an integer in [1, 604800]");
    if (f && (num_from_json(f, 1000, &p->bg_factor_micro) != 0 || p->bg_factor_micro < NUM_MICRO))
        return bad(err, errlen, "policy.feedback.prometheus.background.factor",
                   "must be a decimal in [1, 1000] that micro-units hold exactly");
    if (!json_is_array(qs) || json_array_size(qs) == 0 || json_array_size(qs) > FB_MAX_QUERIES)
        return bad(err, errlen, "policy.feedback.prometheus.background.queries",
                   "must be an array of 1 to 16 queries");
    for (p->n_bg = 0; p->n_bg < json_array_size(qs); p->n_bg++)
        if (one_query(json_array_get(qs, p->n_bg), p->n_bg, p->bg,
                      "policy.feedback.prometheus.background.queries", err, errlen) != 0)
            return -1;
    return 0;
}

static int prometheus(const json_t *pr, struct fb_policy *p, char *err, size_t errlen)
{
    const char *url = json_string_value(json_object_get(pr, "url"));
    const json_t *qs = json_object_get(pr, "queries");
    if (!json_is_object(pr))
        return bad(err, errlen, "policy.feedback.prometheus", "must be an object");
    if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) ||
        strlen(url) >= sizeof p->url)
        return bad(err, errlen, "policy.feedback.prometheus.url",
                   "must be an http:// or https:// URL of at most 511 bytes");
    snprintf(p->url, sizeof p->url, "%s", url);
    if (int_in(pr, "timeout_ms", 1, 60000, &p->timeout_ms) != 0)
        return bad(err, errlen, "policy.feedback.prometheus.timeout_ms",
                   "must be an integer in [1, 60000]");
    if (int_in(pr, "step_s", 1, 3600, &p->step_s) != 0)
        return bad(err, errlen, "policy.feedback.prometheus.step_s",
                   "must be an integer in [1, 3600]");
    if (!json_is_array(qs) || json_array_size(qs) == 0 || json_array_size(qs) > FB_MAX_QUERIES)
        return bad(err, errlen, "policy.feedback.prometheus.queries",
                   "must be an array of 1 to 16 queries");
    for (p->n = 0; p->n < json_array_size(qs); p->n++)
        if (one_query(json_array_get(qs, p->n), p->n, p->q, "policy.feedback.prometheus.queries",
                      err, errlen) != 0)
            return -1;
    p->present = true;
    const json_t *bg = json_object_get(pr, "background");
    return bg ? background(bg, p, err, errlen) : 0;
}

/* {"origin": {"rps": "0.5", "bytes_per_s": 250000}, ...}: exact decimals. */
static int per_allocation(const json_t *pa, struct fb_policy *p, char *err, size_t errlen)
{
    const char *rk, *mk;
    const json_t *rv, *mv;
    if (!json_is_object(pa))
        return bad(err, errlen, "policy.loop.per_allocation_upper", "must be an object");
    json_object_foreach((json_t *)pa, rk, rv)
    {
        enum sit_resource r;
        if (resource_of(rk, &r) != 0 || !json_is_object(rv))
            return bad(err, errlen, "policy.loop.per_allocation_upper",
                       "keys are origin, shield, cdn, each an object of metrics");
        json_object_foreach((json_t *)rv, mk, mv)
        {
            enum sit_metric m;
            int64_t x;
            if (metric_of(mk, &m) != 0 || num_from_json(mv, NUM_MAX_UNITS, &x) != 0 || x < 0)
                return bad(err, errlen, "policy.loop.per_allocation_upper",
                           "each metric (rps, bytes_per_s) is a decimal >= 0 that micro-units "
                           "hold exactly");
            p->has_per_alloc[r][m] = true;
            p->per_alloc[r][m] = x;
        }
    }
    return 0;
}

int fb_policy_parse(const char *json, size_t len, struct fb_policy *p, char *err, size_t errlen)
{
    assert(json && p && err);
    memset(p, 0, sizeof *p);
    json_t *root = num_json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
    const json_t *pol = json_object_get(root, "policy");
    const json_t *fb = json_object_get(pol, "feedback");
    const json_t *pr = json_object_get(fb, "prometheus");
    const json_t *pa = json_object_get(json_object_get(pol, "loop"), "per_allocation_upper");
    int rc = 0;
    if (!root)
        rc = bad(err, errlen, "(json)", "not readable");
    else if (fb && !json_is_object(fb))
        rc = bad(err, errlen, "policy.feedback", "must be an object");
    else if (pr && prometheus(pr, p, err, errlen) != 0)
        rc = -1;
    else if (pa && per_allocation(pa, p, err, errlen) != 0)
        rc = -1;
    json_decref(root);
    return rc;
}

int fb_expand(const char *promql, const char *path_id, char *out, size_t n)
{
    static const char var[] = "${path_id}";
    size_t o = 0, vl = sizeof var - 1, pl = strlen(path_id);
    /* The id goes inside a PromQL string: only characters that need no
     * quoting, so a path id can never change the query's meaning. */
    for (size_t i = 0; i < pl; i++)
        if (!isalnum((unsigned char)path_id[i]) && !strchr("._:-", path_id[i]))
            return -1;
    for (const char *s = promql; *s;) {
        bool is_var = !strncmp(s, var, vl);
        size_t add = is_var ? pl : 1;
        if (o + add >= n)
            return -1;
        memcpy(out + o, is_var ? path_id : s, add);
        o += add;
        s += is_var ? vl : 1;
    }
    out[o] = '\0';
    return 0;
}

int fb_policy_check(const char *json, size_t len, char *err, size_t errlen)
{
    struct fb_policy *p = malloc(sizeof *p); /* 16 queries of 2 KiB: not on the stack */
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = fb_policy_parse(json, len, p, err, errlen);
    free(p);
    return rc;
}
