/* fb_background.c - decide's background_upper from Prometheus (see
 * feedback.h): where a situation leaves an item's background_upper out and
 * policy.feedback.prometheus.background declares a query for its resource
 * and metric, the maximum of that query over the range before the decision
 * time, times the factor, rounded up.  The query and the answer go into the
 * item (background_source), and the completed situation is the one decided
 * and recorded, so replay recomputes it without Prometheus. */
#include "feedback.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

struct bg_ctx {
    struct fb_policy p;
    int64_t decision_ms;
    char promql[FB_MAX_PROMQL];
    char *err;
    size_t errlen;
};

static const struct fb_query *query_for(const struct fb_policy *p, const json_t *item)
{
    const char *r = json_string_value(json_object_get(item, "resource"));
    const char *m = json_string_value(json_object_get(item, "metric"));
    for (size_t i = 0; r && m && i < p->n_bg; i++)
        if (!strcmp(r, sit_resource_name(p->bg[i].resource)) &&
            !strcmp(m, sit_metric_name(p->bg[i].metric)))
            return &p->bg[i];
    return NULL;
}

/* The series' largest point; 0, or 1 with err. */
static int series_max(const struct fb_answer *a, const struct fb_point **top, struct fb_series *s,
                      char *err, size_t errlen)
{
    char why[300];
    if (!a->body || a->http_status != 200) {
        snprintf(err, errlen, "HTTP %ld: %s", a->http_status, a->error[0] ? a->error : "not 200");
        if (a->body && fb_parse(a->body, a->len, s, why, sizeof why) != FB_PARSE_OK)
            snprintf(err, errlen, "HTTP %ld: %.200s", a->http_status, why);
        fb_series_free(s);
        return 1;
    }
    enum fb_parse_rc rc = fb_parse(a->body, a->len, s, why, sizeof why);
    if (rc != FB_PARSE_OK || s->n == 0) {
        snprintf(err, errlen, "%.200s", rc != FB_PARSE_OK ? why : "the series has no point");
        return 1;
    }
    *top = &s->pts[0];
    for (size_t i = 1; i < s->n; i++)
        *top = s->pts[i].micro > (*top)->micro ? &s->pts[i] : *top;
    return 0;
}

/* Fills one item from its query for path_id.  0, 1 refused, -1. */
static int fill_item(struct bg_ctx *x, const char *path_id, const struct fb_query *q, json_t *item)
{
    char where[160], why[300];
    snprintf(where, sizeof where, "background_upper of %.64s %s/%s from Prometheus", path_id,
             sit_resource_name(q->resource), sit_metric_name(q->metric));
    if (fb_expand(q->promql, path_id, x->promql, sizeof x->promql) != 0) {
        snprintf(x->err, x->errlen, "%s: the path id cannot be placed in the query", where);
        return 1;
    }
    int64_t from = x->decision_ms - x->p.bg_range_s * 1000;
    int64_t step = fb_step_for(from, x->decision_ms, x->p.step_s);
    struct fb_answer a;
    struct fb_series s = {0};
    const struct fb_point *top = NULL;
    fb_prom_query(x->p.url, x->promql, from, x->decision_ms, step, x->p.timeout_ms, &a);
    if (series_max(&a, &top, &s, why, sizeof why) != 0) {
        snprintf(x->err, x->errlen, "%s: %.300s", where, why);
        fb_answer_free(&a);
        return 1;
    }
    /* max x factor, rounded up; a negative maximum is no background */
    __int128 v = top->micro < 0 ? 0 : (__int128)top->micro * x->p.bg_factor_micro;
    int64_t bg = (int64_t)((v + NUM_MICRO - 1) / NUM_MICRO);
    char bg_text[48], factor[48];
    num_format(bg > FB_SATURATED / 4 ? FB_SATURATED / 4 : bg, bg_text, sizeof bg_text);
    num_format(x->p.bg_factor_micro, factor, sizeof factor);
    json_object_set_new(item, "background_upper", json_string(bg_text));
    json_object_set_new(
        item, "background_source",
        json_pack("{s:s,s:I,s:I,s:I,s:I,s:s,s:s,s:s%}", "promql", x->promql, "start_ms",
                  (json_int_t)from, "end_ms", (json_int_t)x->decision_ms, "step_s",
                  (json_int_t)step, "queried_at_ms", (json_int_t)a.queried_at_ms,
                  "observed_max_text", top->text, "factor", factor, "answer", a.body, a.len));
    fb_series_free(&s);
    fb_answer_free(&a);
    return 0;
}

static int fill_candidate(struct bg_ctx *x, json_t *cand)
{
    const char *path_id = json_string_value(json_object_get(cand, "path_id"));
    json_t *w, *it;
    size_t i, k;
    int filled = 0;
    json_array_foreach(json_object_get(json_object_get(cand, "resources"), "windows"), i, w)
        json_array_foreach(json_object_get(w, "items"), k, it)
    {
        const struct fb_query *q = json_is_object(it) ? query_for(&x->p, it) : NULL;
        if (!path_id || !q || json_object_get(it, "background_upper"))
            continue;
        int rc = fill_item(x, path_id, q, it);
        if (rc != 0)
            return rc;
        filled = 2;
    }
    return filled;
}

int fb_fill_background(const char *text, size_t len, char **out, size_t *out_len, char *err,
                       size_t errlen)
{
    *out = NULL;
    struct bg_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    x->err = err;
    x->errlen = errlen;
    json_t *root = NULL;
    int rc = 0; /* an unreadable policy is decide's to report */
    if (fb_policy_parse(text, len, &x->p, err, errlen) == 0 && x->p.n_bg > 0)
        root = num_json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    const json_t *dt = json_object_get(root, "decision_time_ms");
    json_t *c;
    size_t i;
    bool any = false;
    if (json_is_integer(dt)) {
        x->decision_ms = json_integer_value(dt);
        json_array_foreach(json_object_get(root, "candidates"), i, c)
        {
            int f = json_is_object(c) ? fill_candidate(x, c) : 0;
            any |= f == 2;
            if (f == 1 || f < 0) {
                rc = f;
                break;
            }
        }
    }
    if (rc == 0 && any) {
        *out = num_json_dumps(root, 0);
        *out_len = *out ? strlen(*out) : 0;
        rc = *out ? 0 : -1;
    }
    json_decref(root);
    free(x);
    return rc;
}
