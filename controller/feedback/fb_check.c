/* fb_check.c - observed load against the forecast (see feedback.h).
 *
 * The forecast of a window is the upper bound the grant's decision used:
 * background_upper + commitments_upper + step_upper (the margin is the
 * policy's safety room, not part of the model).  A window's observed
 * maximum above it: the step behaved outside the model (VIOLATION).  What
 * cannot be read is never a pass: no answer, an error, no series, several
 * series, NaN or an infinity, a series that stopped before the end of the
 * step (stale), or an observation no forecast window covers: UNKNOWN.
 */
#include "feedback.h"

#include <stdio.h>
#include <string.h>

#include "num.h"

static void verdict(struct fb_verdict *v, enum cond_status st, const char *reason,
                    const char *item, const char *fmt_detail)
{
    v->status = st;
    snprintf(v->reason, sizeof v->reason, "%s", reason);
    snprintf(v->detail, sizeof v->detail, "%s: %s", item, fmt_detail);
}

static const char *parse_reason(enum fb_parse_rc rc)
{
    switch (rc) {
    case FB_PARSE_NO_SERIES:
        return "resources_feedback_no_data";
    case FB_PARSE_SEVERAL:
        return "resources_feedback_several_series";
    case FB_PARSE_NOT_A_NUMBER:
        return "resources_feedback_nan";
    default:
        return "resources_feedback_error";
    }
}

static const struct sit_item *item_of(const struct sit_window *w, const struct fb_obs *o)
{
    for (size_t i = 0; i < w->n_items; i++)
        if (w->items[i].resource == o->resource && w->items[i].metric == o->metric)
            return &w->items[i];
    return NULL;
}

static json_t *window_check(const struct sit_window *w, const struct fb_obs *o, int64_t forecast,
                            const struct fb_point *top, size_t points)
{
    char f[48], m[48];
    num_format(forecast, f, sizeof f);
    num_format(top->micro, m, sizeof m);
    return json_pack("{s:I,s:I,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:b}", "start_ms",
                     (json_int_t)w->start_ms, "end_ms", (json_int_t)w->end_ms, "resource",
                     sit_resource_name(o->resource), "metric", sit_metric_name(o->metric),
                     "forecast_upper", f, "observed_max", m, "observed_max_text", top->text,
                     "observed_max_at_ms", (json_int_t)top->t_ms, "points", (json_int_t)points,
                     "ok", top->micro <= forecast);
}

/* The series' points inside [from, to] compared per forecast window.
 * Returns the number of points no window with this item covers. */
static size_t compare(const struct sit_candidate *c, const struct fb_obs *o,
                      const struct fb_series *s, int64_t from, int64_t to, json_t *checks,
                      bool *over, const struct fb_point **worst)
{
    size_t uncovered = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct fb_point *p = &s->pts[i];
        bool covered = false;
        for (size_t k = 0; k < c->resources.n_windows && !covered; k++) {
            const struct sit_window *w = &c->resources.windows[k];
            covered = p->t_ms >= w->start_ms && p->t_ms < w->end_ms && item_of(w, o) &&
                      item_of(w, o)->has_commitments;
        }
        uncovered += (p->t_ms >= from && p->t_ms <= to) && !covered;
    }
    for (size_t k = 0; k < c->resources.n_windows; k++) {
        const struct sit_window *w = &c->resources.windows[k];
        const struct sit_item *it = item_of(w, o);
        const struct fb_point *top = NULL;
        size_t n = 0;
        for (size_t i = 0; i < s->n && it; i++) {
            const struct fb_point *p = &s->pts[i];
            if (p->t_ms < from || p->t_ms > to || p->t_ms < w->start_ms || p->t_ms >= w->end_ms)
                continue;
            n++;
            top = !top || p->micro > top->micro ? p : top;
        }
        if (!top || !it->has_commitments)
            continue;
        int64_t forecast = it->background_upper + it->commitments_upper + it->step_upper;
        json_array_append_new(checks, window_check(w, o, forecast, top, n));
        if (top->micro > forecast && !*over) {
            *over = true;
            *worst = top;
        }
    }
    return uncovered;
}

/* The points of s inside [from, to]: how many, the newest time and the
 * largest value. */
static size_t in_step(const struct fb_series *s, int64_t from, int64_t to, int64_t *newest,
                      int64_t *max)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->pts[i].t_ms < from || s->pts[i].t_ms > to)
            continue;
        *newest = n == 0 || s->pts[i].t_ms > *newest ? s->pts[i].t_ms : *newest;
        *max = n == 0 || s->pts[i].micro > *max ? s->pts[i].micro : *max;
        n++;
    }
    return n;
}

static void judge_series(const struct sit_candidate *c, const struct fb_obs *o,
                         const struct fb_series *s, int64_t from, int64_t to, int64_t step_s,
                         json_t *checks, const char *item, struct fb_verdict *v, int64_t *max)
{
    int64_t newest = 0;
    char d[400];
    if (in_step(s, from, to, &newest, max) == 0) {
        verdict(v, COND_UNKNOWN, "resources_feedback_no_data", item,
                "the series has no point in the step's window");
        return;
    }
    if (newest < to - 2 * step_s * 1000) {
        snprintf(d, sizeof d, "the series' newest point (%lld ms) is more than two query steps "
                              "older than the end of the step (%lld ms)",
                 (long long)newest, (long long)to);
        verdict(v, COND_UNKNOWN, "resources_feedback_stale", item, d);
        return;
    }
    bool over = false;
    const struct fb_point *worst = NULL;
    size_t uncovered = compare(c, o, s, from, to, checks, &over, &worst);
    if (over) {
        snprintf(d, sizeof d, "observed %s at %lld ms, above the forecast upper bound (background "
                              "+ commitments + step) of its window",
                 worst->text, (long long)worst->t_ms);
        verdict(v, COND_VIOLATION, "resources_outside_model", item, d);
    } else if (uncovered) {
        snprintf(d, sizeof d, "%zu observation(s) in no forecast window with this item and its "
                              "commitments", uncovered);
        verdict(v, COND_UNKNOWN, "resources_feedback_no_forecast", item, d);
    } else
        verdict(v, COND_PASS, "resources_within_model", item,
                "every window's observed maximum is within its forecast upper bound");
}

void fb_check_one(const struct sit_candidate *c, const struct fb_obs *o, int64_t from_ms,
                  int64_t to_ms, int64_t step_s, json_t *checks, struct fb_verdict *v,
                  int64_t *max)
{
    char item[64], err[300], d[400];
    snprintf(item, sizeof item, "%s/%s", sit_resource_name(o->resource),
             sit_metric_name(o->metric));
    if (!o->body) {
        snprintf(d, sizeof d, "Prometheus did not answer: %.256s", o->transport_error);
        verdict(v, COND_UNKNOWN, "resources_feedback_error", item, d);
        return;
    }
    struct fb_series s;
    enum fb_parse_rc rc = fb_parse(o->body, o->len, &s, err, sizeof err);
    if (rc == FB_PARSE_OK && o->http_status != 200) {
        fb_series_free(&s);
        rc = FB_PARSE_SHAPE;
        snprintf(err, sizeof err, "a series with HTTP status %ld", o->http_status);
    }
    if (rc != FB_PARSE_OK) {
        snprintf(d, sizeof d, "HTTP %ld: %s", o->http_status, err);
        verdict(v, COND_UNKNOWN, parse_reason(rc), item, d);
        return;
    }
    judge_series(c, o, &s, from_ms, to_ms, step_s, checks, item, v, max);
    fb_series_free(&s);
}

void fb_combine(const struct fb_verdict *v, size_t n, struct fb_verdict *out)
{
    const struct fb_verdict *first_unknown = NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i].status == COND_VIOLATION) {
            *out = v[i];
            return;
        }
        if (v[i].status != COND_PASS && !first_unknown)
            first_unknown = &v[i];
    }
    if (first_unknown) {
        *out = *first_unknown;
        return;
    }
    out->status = COND_PASS;
    snprintf(out->reason, sizeof out->reason, "resources_within_model");
    snprintf(out->detail, sizeof out->detail,
             "every query's observed maximum is within the decision's forecast upper bounds");
}
