/* fb_step.c - resource feedback for `stepctl next` (see feedback.h): the
 * queries of policy.feedback.prometheus over the step's window, their
 * judgement, the record that lets it be recomputed, and the next step's
 * forecast taken from them. */
#include "feedback.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

static const struct sit_candidate *candidate(const struct sit_situation *s, const char *path_id)
{
    for (size_t i = 0; i < s->n_candidates; i++)
        if (!strcmp(s->candidates[i].path_id, path_id))
            return &s->candidates[i];
    return NULL;
}

static void set_result(struct fb_result *out, const struct fb_verdict *v)
{
    out->status = v->status;
    snprintf(out->reason, sizeof out->reason, "%s", v->reason);
    snprintf(out->detail, sizeof out->detail, "%s", v->detail);
}

/* A body is stored as text only when it is valid UTF-8 without NUL (JSON
 * strings hold nothing else); otherwise it is marked, and read back as a
 * body that is not JSON, which is what it was. */
static bool storable(const char *body, size_t len)
{
    json_t *s = json_stringn(body, len);
    bool ok = s && memchr(body, '\0', len) == NULL;
    json_decref(s);
    return ok;
}

static json_t *query_json(const struct fb_obs *o, int64_t queried_at_ms,
                          const struct fb_verdict *v)
{
    json_t *q = json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:s,s:s}", "resource",
                          sit_resource_name(o->resource), "metric", sit_metric_name(o->metric),
                          "promql", o->promql, "queried_at_ms", (json_int_t)queried_at_ms,
                          "http_status", (json_int_t)o->http_status, "status",
                          cond_status_name(v->status), "reason", v->reason, "detail", v->detail);
    if (o->transport_error[0])
        json_object_set_new(q, "error", json_string(o->transport_error));
    if (o->body && storable(o->body, o->len))
        json_object_set_new(q, "answer", json_stringn(o->body, o->len));
    else if (o->body)
        json_object_set_new(q, "answer_not_text", json_true());
    else
        json_object_set_new(q, "answer", json_null());
    return q;
}

/* The next step's forecast from what was observed (docs/controller.md,
 * "The next step's forecast"): one window [now, now + window_s) whose items
 * are the decision's (limit: the smallest, margin: the largest of its
 * windows), background_upper the step's observed maximum, commitments left
 * to the ledger, step_upper per allocation x the next step's allocations.
 * NULL when an item of the decision has no query. */
static int64_t scaled_step(const struct fb_step *st, const struct fb_policy *p,
                           enum sit_resource r, enum sit_metric m, int64_t decided_step)
{
    if (p->has_per_alloc[r][m])
        return (int64_t)((__int128)p->per_alloc[r][m] * st->next_max);
    /* decided step_upper / granted allocations x next allocations, rounded up */
    __int128 num = (__int128)decided_step * st->next_max;
    int64_t den = st->granted_max > 0 ? st->granted_max : 1;
    return (int64_t)((num + den - 1) / den);
}

static json_t *next_item(const struct fb_step *st, const struct fb_policy *p,
                         const struct sit_candidate *c, enum sit_resource r, enum sit_metric m,
                         int64_t observed_max)
{
    int64_t limit = -1, margin = 0, step = 0;
    for (size_t k = 0; k < c->resources.n_windows; k++)
        for (size_t i = 0; i < c->resources.windows[k].n_items; i++) {
            const struct sit_item *it = &c->resources.windows[k].items[i];
            if (it->resource != r || it->metric != m)
                continue;
            limit = limit < 0 || it->limit < limit ? it->limit : limit;
            margin = it->margin > margin ? it->margin : margin;
            step = it->step_upper > step ? it->step_upper : step;
        }
    if (limit < 0)
        return NULL;
    int64_t vals[4] = {limit, margin, observed_max < 0 ? 0 : observed_max,
                       scaled_step(st, p, r, m, step)};
    char txt[4][48];
    for (int i = 0; i < 4; i++)
        num_format(vals[i] > FB_SATURATED / 4 ? FB_SATURATED / 4 : vals[i], txt[i], sizeof txt[i]);
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "resource", sit_resource_name(r), "metric",
                     sit_metric_name(m), "limit", txt[0], "margin", txt[1], "background_upper",
                     txt[2], "step_upper", txt[3]);
}

static json_t *next_forecast(const struct fb_step *st, const struct fb_policy *p,
                             const struct sit_candidate *c, const int64_t *max)
{
    json_t *items = json_array();
    bool every = true;
    for (size_t k = 0; k < c->resources.n_windows && every; k++)
        for (size_t i = 0; i < c->resources.windows[k].n_items && every; i++) {
            const struct sit_item *it = &c->resources.windows[k].items[i];
            size_t q = 0;
            while (q < p->n && (p->q[q].resource != it->resource || p->q[q].metric != it->metric))
                q++;
            every = q < p->n;
        }
    for (size_t q = 0; q < p->n && every; q++) {
        json_t *it = next_item(st, p, c, p->q[q].resource, p->q[q].metric, max[q]);
        if (it)
            json_array_append_new(items, it);
    }
    if (!every || json_array_size(items) == 0) {
        json_decref(items);
        return NULL;
    }
    return json_pack("{s:I,s:b,s:[{s:I,s:I,s:o}]}", "observed_at_ms", (json_int_t)st->now_ms,
                     "model_valid", 1, "windows", "start_ms", (json_int_t)st->now_ms, "end_ms",
                     (json_int_t)(st->now_ms + st->next_window_s * 1000), "items", items);
}

/* The judgement of n observations, into out (record and forecast). */
static int judge(const struct fb_step *st, const struct fb_policy *p,
                 const struct sit_candidate *c, const struct fb_obs *o, const int64_t *at,
                 size_t n, int64_t step_s, struct fb_result *out)
{
    struct fb_verdict v[FB_MAX_QUERIES], all;
    int64_t max[FB_MAX_QUERIES];
    json_t *checks = json_array(), *queries = json_array();
    for (size_t i = 0; i < n; i++) {
        max[i] = -1;
        fb_check_one(c, &o[i], st->from_ms, st->now_ms, step_s, checks, &v[i], &max[i]);
        json_array_append_new(queries, query_json(&o[i], at[i], &v[i]));
    }
    fb_combine(v, n, &all);
    set_result(out, &all);
    out->record = json_pack("{s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:s,s:s,s:s}", "url", p->url,
                            "start_ms", (json_int_t)st->from_ms, "end_ms",
                            (json_int_t)st->now_ms, "step_s", (json_int_t)step_s, "timeout_ms",
                            (json_int_t)p->timeout_ms, "queries", queries, "checks", checks,
                            "status", cond_status_name(all.status), "reason", all.reason,
                            "detail", all.detail);
    if (all.status == COND_PASS)
        out->resources = next_forecast(st, p, c, max);
    return out->record ? 0 : -1;
}

/* Reads the policy and the candidate; 1 when there is nothing to query
 * (used false, or an UNKNOWN already set), 0 to go on. */
static int prepare(const struct fb_step *st, struct fb_policy *p,
                   const struct sit_candidate **c, struct fb_result *out)
{
    char err[300];
    memset(out, 0, sizeof *out);
    if (fb_policy_parse(st->situation, st->situation_len, p, err, sizeof err) != 0) {
        out->used = true;
        struct fb_verdict v = {COND_UNKNOWN, "resources_feedback_invalid", ""};
        snprintf(v.detail, sizeof v.detail, "the recorded policy cannot be read: %s", err);
        set_result(out, &v);
        return 1;
    }
    out->used = p->present;
    *c = candidate(st->s, st->path_id);
    if (p->present && !*c) {
        struct fb_verdict v = {COND_UNKNOWN, "resources_feedback_invalid",
                               "the granted path is no candidate of its decision"};
        set_result(out, &v);
        return 1;
    }
    return p->present ? 0 : 1;
}

/* Everything one run holds (on the heap: 16 queries of 2 KiB each). */
struct run {
    struct fb_policy p;
    char promql[FB_MAX_QUERIES][FB_MAX_PROMQL];
    struct fb_obs o[FB_MAX_QUERIES];
    struct fb_answer a[FB_MAX_QUERIES];
    int64_t at[FB_MAX_QUERIES];
};

int fb_run(const struct fb_step *st, struct fb_result *out)
{
    assert(st && out);
    struct run *r = calloc(1, sizeof *r);
    const struct sit_candidate *c = NULL;
    if (!r)
        return -1;
    if (prepare(st, &r->p, &c, out) != 0) {
        free(r);
        return 0;
    }
    int64_t step_s = fb_step_for(st->from_ms, st->now_ms, r->p.step_s);
    for (size_t i = 0; i < r->p.n; i++) {
        struct fb_answer *a = &r->a[i];
        if (fb_expand(r->p.q[i].promql, st->path_id, r->promql[i], sizeof r->promql[i]) != 0)
            snprintf(a->error, sizeof a->error, "the path id cannot be placed in the query");
        else
            fb_prom_query(r->p.url, r->promql[i], st->from_ms, st->now_ms, step_s,
                          r->p.timeout_ms, a);
        r->o[i] = (struct fb_obs){r->p.q[i].resource, r->p.q[i].metric, r->promql[i],
                                  a->http_status, a->body, a->len, a->error};
        r->at[i] = a->queried_at_ms;
    }
    int rc = judge(st, &r->p, c, r->o, r->at, r->p.n, step_s, out);
    for (size_t i = 0; i < r->p.n; i++)
        fb_answer_free(&r->a[i]);
    free(r);
    return rc;
}

/* One recorded query back into an observation.  0 or -1 (not a record
 * this build wrote). */
static int recorded_obs(const json_t *q, const struct fb_query *pq, struct fb_obs *o,
                        int64_t *at)
{
    static const char not_text[] = "\xff"; /* read back as what it was: not JSON */
    const json_t *ans = json_object_get(q, "answer");
    const char *err = json_string_value(json_object_get(q, "error"));
    *o = (struct fb_obs){pq->resource, pq->metric, json_string_value(json_object_get(q, "promql")),
                         (long)json_integer_value(json_object_get(q, "http_status")), NULL, 0,
                         err ? err : ""};
    *at = json_integer_value(json_object_get(q, "queried_at_ms"));
    if (json_is_true(json_object_get(q, "answer_not_text"))) {
        o->body = not_text;
        o->len = sizeof not_text - 1;
    } else if (json_is_string(ans)) {
        o->body = json_string_value(ans);
        o->len = json_string_length(ans);
    }
    return o->promql ? 0 : -1;
}

int fb_recheck(const struct fb_step *st, const json_t *recorded, struct fb_result *out)
{
    assert(st && recorded && out);
    struct run *r = calloc(1, sizeof *r);
    const struct sit_candidate *c = NULL;
    if (!r)
        return -1;
    int rc = prepare(st, &r->p, &c, out);
    const json_t *qs = json_object_get(recorded, "queries");
    if (rc == 0 && json_array_size(qs) != r->p.n)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < r->p.n; i++)
        rc = recorded_obs(json_array_get(qs, i), &r->p.q[i], &r->o[i], &r->at[i]);
    if (rc == 0)
        rc = judge(st, &r->p, c, r->o, r->at, r->p.n,
                   json_integer_value(json_object_get(recorded, "step_s")), out);
    free(r);
    return rc < 0 ? -1 : 0;
}

void fb_result_free(struct fb_result *r)
{
    json_decref(r->record);
    json_decref(r->resources);
    r->record = r->resources = NULL;
}
