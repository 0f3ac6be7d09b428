/* situation.c - parse SITUATION.json into struct sit_situation (situation.h).
 *
 * Every helper takes the JSON path of the field it reads, so an error message
 * always names the field ("candidates[1].cost.contract.categories.egress[0]
 * .up_to: must be a decimal").  Structural problems fail; absent candidate
 * data is kept absent (the conditions turn it into UNKNOWN).
 */
#include "situation.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "num.h"

struct pctx {
    char *err;
    size_t errlen;
};

static int fail(struct pctx *c, const char *path, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s: %s", path, msg);
    return -1;
}

/* Joins a parent path and a key into buf. */
static const char *sub(char *buf, size_t len, const char *parent, const char *key)
{
    /* A field path longer than buf is cut; it only names the field. */
    if (snprintf(buf, len, "%s%s%s", parent, parent[0] ? "." : "", key) < 0)
        buf[0] = '\0';
    return buf;
}

static const char *idx(char *buf, size_t len, const char *parent, size_t i)
{
    if (snprintf(buf, len, "%s[%zu]", parent, i) < 0)
        buf[0] = '\0';
    return buf;
}

/* Reads a string; absent is an error only when required. Returns 1 when
 * present, 0 when absent, -1 on error. */
static int get_str(struct pctx *c, const json_t *o, const char *path, const char *key,
                   char *dst, size_t dlen, int required)
{
    char p[256];
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return required ? fail(c, sub(p, sizeof p, path, key), "required string is missing") : 0;
    if (!json_is_string(v) || num_json_is_number(v))
        return fail(c, sub(p, sizeof p, path, key), "must be a string");
    if (json_string_length(v) >= dlen || json_string_length(v) != strlen(json_string_value(v)))
        return fail(c, sub(p, sizeof p, path, key), "string too long or contains NUL (max %zu)",
                    dlen - 1);
    memcpy(dst, json_string_value(v), json_string_length(v) + 1);
    return 1;
}

/* Reads a non-negative integer up to max. Same return convention. */
static int get_int(struct pctx *c, const json_t *o, const char *path, const char *key,
                   int64_t max, int64_t *dst, int required)
{
    char p[256];
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return required ? fail(c, sub(p, sizeof p, path, key), "required integer is missing") : 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
        return fail(c, sub(p, sizeof p, path, key), "must be an integer in [0, %lld]",
                    (long long)max);
    *dst = json_integer_value(v);
    return 1;
}

/* Why a decimal was refused: it is never rounded to fit (num.h). */
#define NUM_REFUSED                                                                        \
    "must be a non-negative decimal <= %lld that micro-units (1e-6) hold exactly (at most " \
    "6 significant decimals); it is never rounded"

/* Reads a non-negative decimal (micro-units) up to max_units. */
static int get_dec(struct pctx *c, const json_t *o, const char *path, const char *key,
                   int64_t max_units, int64_t *dst, int required)
{
    char p[256];
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return required ? fail(c, sub(p, sizeof p, path, key), "required decimal is missing") : 0;
    int64_t x;
    if (num_from_json(v, max_units, &x) != 0 || x < 0)
        return fail(c, sub(p, sizeof p, path, key), NUM_REFUSED, (long long)max_units);
    *dst = x;
    return 1;
}

static int get_bool(struct pctx *c, const json_t *o, const char *path, const char *key, bool *dst)
{
    char p[256];
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return fail(c, sub(p, sizeof p, path, key), "must be true or false");
    *dst = json_is_true(v);
    return 1;
}

/* Optional object: returns it, NULL when absent; sets *bad on wrong type. */
static const json_t *get_obj(struct pctx *c, const json_t *o, const char *path, const char *key,
                             int required, int *bad)
{
    char p[256];
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (required)
            *bad = fail(c, sub(p, sizeof p, path, key), "required object is missing");
        return NULL;
    }
    if (!json_is_object(v)) {
        *bad = fail(c, sub(p, sizeof p, path, key), "must be an object");
        return NULL;
    }
    return v;
}

#define MS_MAX 9000000000000000LL /* generous bound for epoch milliseconds */
#define AGE_MAX 3153600000LL      /* 100 years in seconds */
#define COUNT_MAX 1000000000000LL

static int parse_cohort(struct pctx *c, const json_t *o, const char *path, struct sit_cohort *d)
{
    if (get_str(c, o, path, "channel", d->channel, SIT_STR, 1) < 0 ||
        get_str(c, o, path, "region", d->region, SIT_STR, 1) < 0 ||
        get_str(c, o, path, "isp", d->isp, SIT_STR, 1) < 0 ||
        get_str(c, o, path, "client", d->client, SIT_STR, 1) < 0 ||
        get_str(c, o, path, "build", d->build, SIT_STR, 1) < 0 ||
        get_str(c, o, path, "rendition", d->rendition, SIT_STR, 1) < 0)
        return -1;
    return 0;
}

static int parse_qoe_policy(struct pctx *c, const json_t *o, struct sit_qoe_policy *q)
{
    const char *p = "policy.qoe";
    if (get_int(c, o, p, "min_samples", COUNT_MAX, &q->min_samples, 1) < 0 ||
        get_dec(c, o, p, "min_start_success_ratio", 1, &q->min_start_success_ratio, 1) < 0 ||
        get_dec(c, o, p, "max_startup_p90_ms", NUM_MAX_UNITS, &q->max_startup_p90_ms, 1) < 0 ||
        get_dec(c, o, p, "max_rebuffer_ratio", 1, &q->max_rebuffer_ratio, 1) < 0 ||
        get_int(c, o, p, "max_age_s", AGE_MAX, &q->max_age_s, 1) < 0 ||
        get_dec(c, o, p, "startup_tie_ms", NUM_MAX_UNITS, &q->startup_tie_ms, 1) < 0)
        return -1;
    return 0;
}

static int parse_order(struct pctx *c, const json_t *pol, struct sit_policy *p)
{
    const json_t *a = json_object_get(pol, "order");
    if (!json_is_array(a) || json_array_size(a) == 0 ||
        json_array_size(a) > SIT_MAX_CANDIDATES)
        return fail(c, "policy.order", "must be a non-empty array of at most %d path ids",
                    SIT_MAX_CANDIDATES);
    p->n_order = json_array_size(a);
    p->order = calloc(p->n_order, sizeof *p->order);
    if (!p->order)
        return fail(c, "policy.order", "out of memory");
    for (size_t i = 0; i < p->n_order; i++) {
        const json_t *v = json_array_get(a, i);
        char path[64];
        if (!json_is_string(v) || num_json_is_number(v) || json_string_length(v) == 0 ||
            json_string_length(v) >= SIT_STR || strlen(json_string_value(v)) != json_string_length(v))
            return fail(c, idx(path, sizeof path, "policy.order", i), "must be a path id");
        strcpy(p->order[i], json_string_value(v));
        for (size_t j = 0; j < i; j++)
            if (!strcmp(p->order[j], p->order[i]))
                return fail(c, idx(path, sizeof path, "policy.order", i), "duplicate '%s'",
                            p->order[i]);
    }
    return 0;
}

/* How the service answers the refusal (issue 17): http_status, and
 * retry_after_s only with a status that carries Retry-After (429, 503). */
static int parse_refusal_answer(struct pctx *c, const json_t *r, struct sit_policy *p)
{
    int st = get_int(c, r, "policy.refusal", "http_status", 599, &p->refusal_http_status, 0);
    if (st < 0)
        return -1;
    if (st > 0 && p->refusal_http_status < 400)
        return fail(c, "policy.refusal.http_status", "must be an integer in [400, 599]");
    int ra = get_int(c, r, "policy.refusal", "retry_after_s", 86400, &p->refusal_retry_after_s, 0);
    if (ra < 0)
        return -1;
    p->refusal_has_retry = ra > 0;
    if (ra > 0 && p->refusal_http_status != 429 && p->refusal_http_status != 503)
        return fail(c, "policy.refusal.retry_after_s",
                    "only with an http_status of 429 or 503 (the answers that carry Retry-After)");
    return 0;
}

static int parse_refusal(struct pctx *c, const json_t *pol, struct sit_policy *p)
{
    int bad = 0;
    const json_t *r = get_obj(c, pol, "policy", "refusal", 0, &bad);
    strcpy(p->refusal_id, "refuse-new-sessions");
    strcpy(p->refusal_text, "new admission requests of this cohort are refused; sessions "
                            "already playing are not migrated");
    if (bad)
        return -1;
    if (!r)
        return 0;
    if (get_str(c, r, "policy.refusal", "id", p->refusal_id, sizeof p->refusal_id, 1) < 0 ||
        get_str(c, r, "policy.refusal", "description", p->refusal_text, sizeof p->refusal_text,
                0) < 0)
        return -1;
    return parse_refusal_answer(c, r, p);
}

static int parse_policy(struct pctx *c, const json_t *root, struct sit_policy *p)
{
    int bad = 0;
    const json_t *pol = get_obj(c, root, "", "policy", 1, &bad);
    if (!pol)
        return -1;
    const json_t *content = get_obj(c, pol, "policy", "content", 1, &bad);
    const json_t *qoe = content ? get_obj(c, pol, "policy", "qoe", 1, &bad) : NULL;
    const json_t *res = qoe ? get_obj(c, pol, "policy", "resources", 1, &bad) : NULL;
    const json_t *cost = res ? get_obj(c, pol, "policy", "cost", 1, &bad) : NULL;
    const json_t *acc = cost ? get_obj(c, pol, "policy", "access", 0, &bad) : NULL;
    if (bad || !cost)
        return -1;
    if (get_str(c, pol, "policy", "id", p->id, SIT_STR, 1) < 0 ||
        get_str(c, pol, "policy", "version", p->version, SIT_STR, 1) < 0 ||
        get_str(c, pol, "policy", "intent_version", p->intent_version, SIT_STR, 1) < 0 ||
        get_int(c, pol, "policy", "max_evidence_age_s", AGE_MAX, &p->max_evidence_age_s, 1) < 0 ||
        get_str(c, content, "policy.content", "profile_id", p->profile_id, SIT_STR, 1) < 0 ||
        parse_qoe_policy(c, qoe, &p->qoe) < 0 ||
        get_int(c, res, "policy.resources", "max_age_s", AGE_MAX, &p->resources_max_age_s, 1) < 0 ||
        get_str(c, res, "policy.resources", "budget_owner", p->budget_owner, SIT_STR, 0) < 0 ||
        get_str(c, cost, "policy.cost", "currency", p->currency, SIT_STR, 1) < 0 ||
        get_dec(c, cost, "policy.cost", "budget_per_step", NUM_MAX_UNITS, &p->budget_per_step,
                1) < 0 ||
        get_dec(c, cost, "policy.cost", "tie_abs", NUM_MAX_UNITS, &p->tie_abs, 1) < 0)
        return -1;
    p->access_max_age_s = p->max_evidence_age_s;
    if (acc && get_int(c, acc, "policy.access", "max_age_s", AGE_MAX, &p->access_max_age_s, 0) < 0)
        return -1;
    if (parse_order(c, pol, p) < 0)
        return -1;
    return parse_refusal(c, pol, p);
}

static int parse_action(struct pctx *c, const json_t *root, struct sit_action *a)
{
    int bad = 0;
    const json_t *act = get_obj(c, root, "", "action", 1, &bad);
    const json_t *coh = act ? get_obj(c, act, "action", "cohort", 1, &bad) : NULL;
    if (!coh)
        return -1;
    if (parse_cohort(c, coh, "action.cohort", &a->cohort) < 0 ||
        get_str(c, act, "action", "program_version", a->program_version, SIT_STR, 1) < 0 ||
        get_int(c, act, "action", "max_allocations", COUNT_MAX, &a->max_allocations, 1) < 0 ||
        get_dec(c, act, "action", "max_rate_per_s", NUM_MAX_UNITS, &a->max_rate_per_s, 1) < 0 ||
        get_int(c, act, "action", "window_s", AGE_MAX, &a->window_s, 1) < 0)
        return -1;
    if (a->window_s == 0 || a->max_allocations == 0)
        return fail(c, "action", "window_s and max_allocations must be positive (a bounded step)");
    return 0;
}

static int parse_access(struct pctx *c, const json_t *cand, const char *path, struct sit_access *a)
{
    int bad = 0;
    char p[128];
    const json_t *o = get_obj(c, cand, path, "access", 0, &bad);
    if (bad)
        return -1;
    if (!o)
        return 0;
    a->present = true;
    sub(p, sizeof p, path, "access");
    char st[16];
    int r = get_str(c, o, p, "status", st, sizeof st, 0);
    if (r < 0)
        return -1;
    if (r == 1) {
        a->has_status = true;
        if (!strcmp(st, "PASS"))
            a->status = COND_PASS;
        else if (!strcmp(st, "VIOLATION"))
            a->status = COND_VIOLATION;
        else if (!strcmp(st, "UNKNOWN"))
            a->status = COND_UNKNOWN;
        else
        {
            char q[160];
            return fail(c, sub(q, sizeof q, p, "status"), "must be PASS, VIOLATION or UNKNOWN");
        }
    }
    r = get_int(c, o, p, "observed_at_ms", MS_MAX, &a->observed_at_ms, 0);
    a->has_observed = r == 1;
    return r < 0 ? -1 : 0;
}

static int parse_qoe(struct pctx *c, const json_t *cand, const char *path, struct sit_qoe *q)
{
    int bad = 0;
    char p[128];
    const json_t *o = get_obj(c, cand, path, "qoe", 0, &bad);
    if (bad)
        return -1;
    if (!o) {
        const json_t *src = json_object_get(cand, "qoe_source");
        q->classes_missing = json_is_object(src) &&
                             json_is_string(json_object_get(src, "reason")) &&
                             !strcmp(json_string_value(json_object_get(src, "reason")), "qoe_classes_missing");
        return 0;
    }
    q->present = true;
    sub(p, sizeof p, path, "qoe");
    const json_t *coh = get_obj(c, o, p, "cohort", 0, &bad);
    if (bad)
        return -1;
    if (coh) {
        char cp[160];
        if (parse_cohort(c, coh, sub(cp, sizeof cp, p, "cohort"), &q->cohort) < 0)
            return -1;
        q->has_cohort = true;
    }
    int r1 = get_int(c, o, p, "observed_at_ms", MS_MAX, &q->observed_at_ms, 0);
    int r2 = get_int(c, o, p, "attempts", COUNT_MAX, &q->attempts, 0);
    int r3 = get_int(c, o, p, "successes", COUNT_MAX, &q->successes, 0);
    int r4 = get_int(c, o, p, "failures", COUNT_MAX, &q->failures, 0);
    int r5 = get_int(c, o, p, "unknown", COUNT_MAX, &q->unknown, 0);
    int r6 = get_dec(c, o, p, "startup_p50_ms", NUM_MAX_UNITS, &q->startup_p50_ms, 0);
    int r7 = get_dec(c, o, p, "startup_p90_ms", NUM_MAX_UNITS, &q->startup_p90_ms, 0);
    int r8 = get_dec(c, o, p, "rebuffer_ratio", 1, &q->rebuffer_ratio, 0);
    int r9 = get_bool(c, o, p, "complete", &q->complete);
    if (r1 < 0 || r2 < 0 || r3 < 0 || r4 < 0 || r5 < 0 || r6 < 0 || r7 < 0 || r8 < 0 || r9 < 0)
        return -1;
    q->has_observed = r1 == 1;
    q->has_counts = r2 == 1 && r3 == 1 && r4 == 1 && r5 == 1;
    q->has_p50 = r6 == 1;
    q->has_p90 = r7 == 1;
    q->has_rebuffer = r8 == 1;
    q->has_complete = r9 == 1;
    return 0;
}

static int parse_enum(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static const char *const resource_names[SIT_RES_N] = {"origin", "shield", "cdn"};
static const char *const metric_names[SIT_MET_N] = {"rps", "bytes_per_s"};

const char *sit_resource_name(enum sit_resource r) { return resource_names[r]; }
const char *sit_metric_name(enum sit_metric m) { return metric_names[m]; }

static int parse_item(struct pctx *c, const json_t *o, const char *p, struct sit_item *it)
{
    char rs[16], ms[16];
    if (!json_is_object(o))
        return fail(c, p, "must be an object");
    if (get_str(c, o, p, "resource", rs, sizeof rs, 1) < 0 ||
        get_str(c, o, p, "metric", ms, sizeof ms, 1) < 0)
        return -1;
    int r = parse_enum(rs, resource_names, SIT_RES_N), m = parse_enum(ms, metric_names, SIT_MET_N);
    char q[200];
    if (r < 0)
        return fail(c, sub(q, sizeof q, p, "resource"), "must be origin, shield or cdn");
    if (m < 0)
        return fail(c, sub(q, sizeof q, p, "metric"), "must be rps or bytes_per_s");
    it->resource = (enum sit_resource)r;
    it->metric = (enum sit_metric)m;
    if (get_dec(c, o, p, "limit", NUM_MAX_UNITS, &it->limit, 1) < 0 ||
        get_dec(c, o, p, "margin", NUM_MAX_UNITS, &it->margin, 1) < 0 ||
        get_dec(c, o, p, "background_upper", NUM_MAX_UNITS, &it->background_upper, 1) < 0 ||
        get_dec(c, o, p, "step_upper", NUM_MAX_UNITS, &it->step_upper, 1) < 0)
        return -1;
    int got = get_dec(c, o, p, "commitments_upper", NUM_MAX_UNITS, &it->commitments_upper, 0);
    it->has_commitments = got == 1;
    return got < 0 ? -1 : 0;
}

static int parse_window(struct pctx *c, const json_t *o, const char *p, struct sit_window *w)
{
    char q[200];
    if (!json_is_object(o))
        return fail(c, p, "must be an object");
    if (get_int(c, o, p, "start_ms", MS_MAX, &w->start_ms, 1) < 0 ||
        get_int(c, o, p, "end_ms", MS_MAX, &w->end_ms, 1) < 0)
        return -1;
    if (w->end_ms <= w->start_ms)
        return fail(c, sub(q, sizeof q, p, "end_ms"), "must be after start_ms");
    const json_t *a = json_object_get(o, "items");
    if (!json_is_array(a) || json_array_size(a) > SIT_MAX_ITEMS)
        return fail(c, sub(q, sizeof q, p, "items"), "must be an array of at most %d items",
                    SIT_MAX_ITEMS);
    w->items = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof *w->items);
    if (!w->items)
        return fail(c, p, "out of memory");
    w->n_items = json_array_size(a);
    for (size_t i = 0; i < w->n_items; i++) {
        char ip[220];
        snprintf(ip, sizeof ip, "%s.items[%zu]", p, i);
        if (parse_item(c, json_array_get(a, i), ip, &w->items[i]) < 0)
            return -1;
    }
    return 0;
}

static int parse_resources(struct pctx *c, const json_t *cand, const char *path,
                           struct sit_resources *r)
{
    int bad = 0;
    char p[128], q[160];
    const json_t *o = get_obj(c, cand, path, "resources", 0, &bad);
    if (bad)
        return -1;
    if (!o)
        return 0;
    r->present = true;
    sub(p, sizeof p, path, "resources");
    int r1 = get_int(c, o, p, "observed_at_ms", MS_MAX, &r->observed_at_ms, 0);
    int r2 = get_bool(c, o, p, "model_valid", &r->model_valid);
    if (r1 < 0 || r2 < 0)
        return -1;
    r->has_observed = r1 == 1;
    r->has_model_valid = r2 == 1;
    const json_t *a = json_object_get(o, "windows");
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > SIT_MAX_WINDOWS)
        return fail(c, sub(q, sizeof q, p, "windows"), "must be an array of at most %d windows",
                    SIT_MAX_WINDOWS);
    r->windows = calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof *r->windows);
    if (!r->windows)
        return fail(c, p, "out of memory");
    r->n_windows = json_array_size(a);
    for (size_t i = 0; i < r->n_windows; i++) {
        char wp[180];
        snprintf(wp, sizeof wp, "%s.windows[%zu]", p, i);
        if (parse_window(c, json_array_get(a, i), wp, &r->windows[i]) < 0)
            return -1;
    }
    return 0;
}

static int parse_tiers(struct pctx *c, const json_t *a, const char *p, struct sit_category *cat)
{
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > SIT_MAX_TIERS)
        return fail(c, p, "must be a non-empty array of at most %d tiers", SIT_MAX_TIERS);
    cat->n_tiers = json_array_size(a);
    cat->tiers = calloc(cat->n_tiers, sizeof *cat->tiers);
    if (!cat->tiers)
        return fail(c, p, "out of memory");
    for (size_t i = 0; i < cat->n_tiers; i++) {
        char tp[220], q[240];
        if (snprintf(tp, sizeof tp, "%s[%zu]", p, i) < 0)
            tp[0] = '\0';
        const json_t *t = json_array_get(a, i);
        struct sit_tier *tier = &cat->tiers[i];
        if (!json_is_object(t))
            return fail(c, tp, "must be an object");
        const json_t *up = json_object_get(t, "up_to");
        if (!up)
            return fail(c, sub(q, sizeof q, tp, "up_to"), "required (null = no upper bound)");
        tier->bounded = !json_is_null(up);
        if (tier->bounded && get_dec(c, t, tp, "up_to", NUM_MAX_UNITS, &tier->up_to, 1) < 0)
            return -1;
        if (get_dec(c, t, tp, "unit_price", SIT_MAX_PRICE_UNITS, &tier->unit_price, 1) < 0)
            return -1;
        /* Tiers are cumulative and strictly increasing; only the last may be
         * unbounded.  Anything else is an ambiguous contract. */
        if (i > 0 && !cat->tiers[i - 1].bounded)
            return fail(c, tp, "follows an unbounded tier");
        if (i > 0 && tier->bounded && tier->up_to <= cat->tiers[i - 1].up_to)
            return fail(c, sub(q, sizeof q, tp, "up_to"), "must increase from tier to tier");
        if (i == 0 && tier->bounded && tier->up_to == 0)
            return fail(c, sub(q, sizeof q, tp, "up_to"), "must be positive");
    }
    return 0;
}

static struct sit_category *find_cat(struct sit_cost *k, const char *name)
{
    for (size_t i = 0; i < k->n_categories; i++)
        if (!strcmp(k->categories[i].name, name))
            return &k->categories[i];
    return NULL;
}

/* Reads {NAME: amount} into the matching category field at byte offset off. */
static int parse_usage(struct pctx *c, const json_t *o, const char *p, struct sit_cost *k,
                       size_t off)
{
    const char *name;
    const json_t *v;
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o))
        return fail(c, p, "must be an object {category: amount}");
    json_object_foreach((json_t *)o, name, v)
    {
        char q[260];
        snprintf(q, sizeof q, "%s.%s", p, name);
        int64_t x;
        if (num_from_json(v, NUM_MAX_UNITS, &x) != 0 || x < 0)
            return fail(c, q, NUM_REFUSED, (long long)NUM_MAX_UNITS);
        struct sit_category *cat = find_cat(k, name);
        if (!cat) {
            /* Usage the contract cannot price: cost becomes UNKNOWN. */
            if (!k->unpriced[0] && strlen(name) < SIT_STR)
                strcpy(k->unpriced, name);
            else if (!k->unpriced[0])
                strcpy(k->unpriced, "?");
            continue;
        }
        *(int64_t *)((char *)cat + off) = x;
    }
    return 0;
}

static int parse_categories(struct pctx *c, const json_t *o, const char *p, struct sit_cost *k)
{
    const json_t *cats = json_object_get(json_object_get(o, "contract"), "categories");
    char q[200];
    snprintf(q, sizeof q, "%s.contract.categories", p);
    if (!json_is_object(cats) || json_object_size(cats) == 0 ||
        json_object_size(cats) > SIT_MAX_CATEGORIES)
        return fail(c, q, "must be an object of 1..%d categories", SIT_MAX_CATEGORIES);
    k->categories = calloc(json_object_size(cats), sizeof *k->categories);
    if (!k->categories)
        return fail(c, q, "out of memory");
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)cats, name, v)
    {
        char tp[260];
        snprintf(tp, sizeof tp, "%s.%s", q, name);
        struct sit_category *cat = &k->categories[k->n_categories++];
        if (strlen(name) >= SIT_STR || !name[0])
            return fail(c, tp, "category name empty or too long");
        strcpy(cat->name, name);
        if (parse_tiers(c, v, tp, cat) < 0)
            return -1;
    }
    return 0;
}

static int parse_cost(struct pctx *c, const json_t *cand, const char *path, struct sit_cost *k)
{
    int bad = 0;
    char p[128], q[200];
    const json_t *o = get_obj(c, cand, path, "cost", 0, &bad);
    if (bad)
        return -1;
    if (!o)
        return 0;
    k->present = true;
    sub(p, sizeof p, path, "cost");
    int r = get_str(c, o, p, "currency", k->currency, SIT_STR, 0);
    if (r < 0)
        return -1;
    k->has_currency = r == 1;
    if (parse_categories(c, o, p, k) < 0)
        return -1;
    const json_t *su = json_object_get(o, "step_usage");
    if (!json_is_object(su))
        return fail(c, sub(q, sizeof q, p, "step_usage"), "required object {low, high}");
    char q2[220], q3[220];
    snprintf(q, sizeof q, "%s.baseline_usage", p);
    snprintf(q2, sizeof q2, "%s.step_usage.low", p);
    snprintf(q3, sizeof q3, "%s.step_usage.high", p);
    if (parse_usage(c, json_object_get(o, "baseline_usage"), q, k,
                    offsetof(struct sit_category, baseline)) < 0 ||
        parse_usage(c, json_object_get(su, "low"), q2, k,
                    offsetof(struct sit_category, step_low)) < 0 ||
        parse_usage(c, json_object_get(su, "high"), q3, k,
                    offsetof(struct sit_category, step_high)) < 0)
        return -1;
    for (size_t i = 0; i < k->n_categories; i++)
        if (k->categories[i].step_high < k->categories[i].step_low)
            return fail(c, q3, "%s: high is below low", k->categories[i].name);
    return 0;
}

static int parse_candidate(struct pctx *c, const json_t *o, size_t i, struct sit_candidate *d)
{
    char path[64];
    idx(path, sizeof path, "candidates", i);
    if (!json_is_object(o))
        return fail(c, path, "must be an object");
    if (get_str(c, o, path, "path_id", d->path_id, SIT_STR, 1) < 0)
        return -1;
    if (!d->path_id[0])
        return fail(c, path, "path_id must not be empty");
    if (parse_access(c, o, path, &d->access) < 0 || parse_qoe(c, o, path, &d->qoe) < 0 ||
        parse_resources(c, o, path, &d->resources) < 0 || parse_cost(c, o, path, &d->cost) < 0)
        return -1;
    return 0;
}

static int parse_candidates(struct pctx *c, const json_t *root, struct sit_situation *s)
{
    const json_t *a = json_object_get(root, "candidates");
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > SIT_MAX_CANDIDATES)
        return fail(c, "candidates", "must be a non-empty array of at most %d candidates",
                    SIT_MAX_CANDIDATES);
    s->candidates = calloc(json_array_size(a), sizeof *s->candidates);
    if (!s->candidates)
        return fail(c, "candidates", "out of memory");
    for (size_t i = 0; i < json_array_size(a); i++) {
        s->n_candidates = i + 1;
        if (parse_candidate(c, json_array_get(a, i), i, &s->candidates[i]) < 0)
            return -1;
    }
    return 0;
}

/* Every candidate must appear exactly once, and in policy.order: the last
 * tie-break must be total, never "whatever came first in the file". */
static int check_ids(struct pctx *c, const struct sit_situation *s)
{
    for (size_t i = 0; i < s->n_candidates; i++) {
        char path[64];
        snprintf(path, sizeof path, "candidates[%zu].path_id", i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(s->candidates[i].path_id, s->candidates[j].path_id))
                return fail(c, path, "duplicate path id '%s'", s->candidates[i].path_id);
        size_t k = 0;
        while (k < s->policy.n_order && strcmp(s->policy.order[k], s->candidates[i].path_id))
            k++;
        if (k == s->policy.n_order)
            return fail(c, "policy.order", "does not list candidate '%s'",
                        s->candidates[i].path_id);
    }
    return 0;
}

int sit_parse(const char *json, size_t len, struct sit_situation *s, char *err, size_t errlen)
{
    assert(json && s && err && errlen > 0);
    struct pctx c = {err, errlen};
    memset(s, 0, sizeof *s);
    if (len > SIT_MAX_INPUT_BYTES)
        return fail(&c, "(file)", "larger than %u bytes", SIT_MAX_INPUT_BYTES);
    json_error_t je;
    /* Numbers keep their text: a decimal is read exactly or refused (num.h). */
    json_t *root = num_json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fail(&c, "(json)", "line %d column %d: %s", je.line, je.column, je.text);
    int rc = -1;
    if (!json_is_object(root)) {
        fail(&c, "(root)", "must be an object");
        goto out;
    }
    int r = get_int(&c, root, "", "decision_time_ms", MS_MAX, &s->decision_time_ms, 0);
    if (r < 0)
        goto out;
    s->has_decision_time = r == 1;
    if (parse_policy(&c, root, &s->policy) < 0 || parse_action(&c, root, &s->action) < 0 ||
        parse_candidates(&c, root, s) < 0 || check_ids(&c, s) < 0)
        goto out;
    rc = 0;
out:
    json_decref(root);
    if (rc != 0)
        sit_free(s);
    return rc;
}

void sit_free(struct sit_situation *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_candidates; i++) {
        struct sit_candidate *d = &s->candidates[i];
        for (size_t w = 0; w < d->resources.n_windows; w++)
            free(d->resources.windows[w].items);
        free(d->resources.windows);
        for (size_t k = 0; k < d->cost.n_categories; k++)
            free(d->cost.categories[k].tiers);
        free(d->cost.categories);
    }
    free(s->candidates);
    free(s->policy.order);
    memset(s, 0, sizeof *s);
}
