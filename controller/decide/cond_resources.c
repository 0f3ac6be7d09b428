/* cond_resources.c - P_forecast v1, resource admission.
 *
 * For every window that overlaps the horizon [T, T + window_s) and every
 * item: background_upper + commitments_upper + step_upper + margin <= limit.
 * Stale inputs or a model that no longer describes operation: UNKNOWN (no
 * conclusion is drawn from them, not even a violation).  With usable inputs
 * any false inequality is a VIOLATION naming window and item.  Otherwise a
 * horizon not covered by the windows, or a window lacking one of the five
 * required items (origin rps and bytes/s, shield rps and bytes/s, CDN
 * bytes/s), is UNKNOWN: there is no applicable forecast for that part.
 */
#include "cond.h"

#include <stdlib.h>
#include <string.h>

#include "num.h"

static bool overlaps(const struct sit_window *w, int64_t from, int64_t to)
{
    return w->start_ms < to && w->end_ms > from;
}

/* Is [from, to) covered by the union of the windows?  Repeatedly extends the
 * covered prefix with any window that starts inside it (n <= 64, so the
 * quadratic walk is cheap and needs no sorting). */
static bool covered(const struct sit_resources *r, int64_t from, int64_t to)
{
    int64_t reach = from;
    bool grew = true;
    while (reach < to && grew) {
        grew = false;
        for (size_t i = 0; i < r->n_windows; i++) {
            const struct sit_window *w = &r->windows[i];
            if (w->start_ms <= reach && w->end_ms > reach) {
                reach = w->end_ms;
                grew = true;
            }
        }
    }
    return reach >= to;
}

static bool has_required_items(const struct sit_window *w, const char **missing)
{
    static const struct {
        enum sit_resource r;
        enum sit_metric m;
        const char *name;
    } req[] = {{SIT_RES_ORIGIN, SIT_MET_RPS, "origin/rps"},
               {SIT_RES_ORIGIN, SIT_MET_BYTES_PER_S, "origin/bytes_per_s"},
               {SIT_RES_SHIELD, SIT_MET_RPS, "shield/rps"},
               {SIT_RES_SHIELD, SIT_MET_BYTES_PER_S, "shield/bytes_per_s"},
               {SIT_RES_CDN, SIT_MET_BYTES_PER_S, "cdn/bytes_per_s"}};
    for (size_t k = 0; k < sizeof req / sizeof req[0]; k++) {
        bool found = false;
        for (size_t i = 0; i < w->n_items && !found; i++)
            found = w->items[i].resource == req[k].r && w->items[i].metric == req[k].m;
        if (!found) {
            *missing = req[k].name;
            return false;
        }
    }
    return true;
}

static json_t *item_json(const struct sit_window *w, const struct sit_item *it, int64_t total)
{
    json_t *o = json_pack("{s:I,s:I,s:s,s:s}", "start_ms", (json_int_t)w->start_ms, "end_ms",
                          (json_int_t)w->end_ms, "resource", sit_resource_name(it->resource),
                          "metric", sit_metric_name(it->metric));
    json_object_set_new(o, "background_upper", num_to_json(it->background_upper));
    json_object_set_new(o, "commitments_upper", num_to_json(it->commitments_upper));
    /* Only marked when taken from the ledger, so records made before the
     * ledger existed replay unchanged (absent: the situation's value). */
    if (it->commitments_from_ledger)
        json_object_set_new(o, "commitments_source", json_string("ledger"));
    json_object_set_new(o, "step_upper", num_to_json(it->step_upper));
    json_object_set_new(o, "margin", num_to_json(it->margin));
    json_object_set_new(o, "total", num_to_json(total));
    json_object_set_new(o, "limit", num_to_json(it->limit));
    json_object_set_new(o, "ok", json_boolean(total <= it->limit));
    return o;
}

/* Checks every overlapping window; fills data.checks; reports the first
 * violation and the first missing item. */
static void check_windows(const struct sit_resources *r, int64_t from, int64_t to,
                          struct cond_result *out, const struct sit_window **bad_w,
                          const struct sit_item **bad_i, const char **missing)
{
    json_t *checks = json_array();
    for (size_t i = 0; i < r->n_windows; i++) {
        const struct sit_window *w = &r->windows[i];
        if (!overlaps(w, from, to))
            continue;
        if (!*missing)
            has_required_items(w, missing);
        for (size_t k = 0; k < w->n_items; k++) {
            const struct sit_item *it = &w->items[k];
            if (!it->has_commitments) { /* neither given nor taken from the ledger */
                if (!*missing)
                    *missing = "commitments_upper";
                continue;
            }
            /* each part <= 1e18 micro: the sum of four fits int64 */
            int64_t total = it->background_upper + it->commitments_upper + it->step_upper + it->margin;
            json_array_append_new(checks, item_json(w, it, total));
            if (total > it->limit && !*bad_w) {
                *bad_w = w;
                *bad_i = it;
            }
        }
    }
    json_object_set_new(out->data, "checks", checks);
}

static bool usable(const struct sit_situation *s, const struct sit_resources *r, int64_t t,
                   struct cond_result *out)
{
    if (!r->present || !r->has_observed) {
        cond_set(out, COND_UNKNOWN, "resources_missing", "no dated resource forecast");
        return false;
    }
    json_object_set_new(out->data, "observed_at_ms", json_integer(r->observed_at_ms));
    int age = cond_freshness(t, r->observed_at_ms, s->policy.resources_max_age_s);
    if (age) {
        cond_set(out, COND_UNKNOWN, age == 1 ? "resources_after_decision_time" : "resources_stale",
                 "the forecast inputs are %s",
                 age == 1 ? "from after the decision time" : "older than policy.resources.max_age_s");
        return false;
    }
    if (!r->has_model_valid || !r->model_valid) {
        cond_set(out, COND_UNKNOWN, "resources_model_invalid",
                 "the forecast model is not declared valid for current operation");
        return false;
    }
    return true;
}

void cond_resources(const struct sit_situation *s, const struct sit_candidate *c, int64_t t_ms,
                    struct cond_result *out)
{
    memset(out, 0, sizeof *out);
    const struct sit_resources *r = &c->resources;
    int64_t to = t_ms + s->action.window_s * 1000;
    out->data = json_pack("{s:I,s:I,s:I}", "horizon_start_ms", (json_int_t)t_ms,
                          "horizon_end_ms", (json_int_t)to, "max_age_s",
                          (json_int_t)s->policy.resources_max_age_s);
    if (!usable(s, r, t_ms, out))
        return;
    const struct sit_window *bw = NULL;
    const struct sit_item *bi = NULL;
    const char *missing = NULL;
    check_windows(r, t_ms, to, out, &bw, &bi, &missing);
    if (bw)
        cond_set(out, COND_VIOLATION, "resources_limit_exceeded",
                 "window [%lld, %lld) %s/%s: background + commitments + step + margin > limit",
                 (long long)bw->start_ms, (long long)bw->end_ms, sit_resource_name(bi->resource),
                 sit_metric_name(bi->metric));
    else if (!covered(r, t_ms, to))
        cond_set(out, COND_UNKNOWN, "resources_horizon_not_covered",
                 "the forecast windows do not cover [%lld, %lld)", (long long)t_ms, (long long)to);
    else if (missing && !strcmp(missing, "commitments_upper"))
        cond_set(out, COND_UNKNOWN, "resources_commitments_missing",
                 "an item has no commitments_upper and none was taken from the ledger");
    else if (missing)
        cond_set(out, COND_UNKNOWN, "resources_item_missing",
                 "a window overlapping the horizon has no %s forecast", missing);
    else
        cond_set(out, COND_PASS, "resources_fit",
                 "every window and item fits: upper forecasts plus margin stay within limits");
}
