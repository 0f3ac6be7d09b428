/* loop_policy.c - policy.grant and policy.steps (see loop_policy.h). */
#include "loop_policy.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "num.h"
#include "tbucket.h"

#define DAY_S 86400LL

/* An optional integer member in [min, max]; 0 or -1 with err set. */
static int opt_int(const json_t *o, const char *path, const char *key, int64_t min, int64_t max,
                   int64_t *dst, char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        snprintf(err, errlen, "%s.%s: must be an integer in [%lld, %lld]", path, key,
                 (long long)min, (long long)max);
        return -1;
    }
    *dst = json_integer_value(v);
    return 0;
}

static const json_t *opt_obj(const json_t *o, const char *key, const char *path, int *bad,
                             char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    if (v && !json_is_null(v) && !json_is_object(v)) {
        snprintf(err, errlen, "%s: must be an object", path);
        *bad = 1;
    }
    return json_is_object(v) ? v : NULL;
}

static void defaults(const struct sit_situation *s, struct lpol *p)
{
    /* The whole tokens the rate gives per second, rounded down (never toward
     * admitting more), at least one. */
    int64_t rate_floor = s->action.max_rate_per_s / NUM_MICRO;
    p->max_decision_age_s = 300;
    p->url_ttl_s = 300;
    p->expected_play_s = 3600;
    p->max_burst = rate_floor < 1 ? 1 : rate_floor > TB_MAX_BURST ? TB_MAX_BURST : rate_floor;
    p->steps_factor_micro = 2 * NUM_MICRO;
    p->steps_max_allocations = s->action.max_allocations;
    p->steps_max_rate_micro = s->action.max_rate_per_s;
    p->sessions_keep = false; /* steer_away */
    p->content_step_sessions = false; /* policy.loop.content_from "path" */
    p->content_from_named = false;
}

/* An optional decimal member in (min, max] micro-units, read exactly
 * (num.h): a value micro-units cannot hold is refused, never rounded. */
static int opt_dec(const json_t *o, const char *path, const char *key, int64_t above,
                   int64_t max_units, int64_t *dst, char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    int64_t x;
    if (!v || json_is_null(v))
        return 0;
    if (num_from_json(v, max_units, &x) != 0 || x <= above) {
        char lo[48];
        num_format(above, lo, sizeof lo);
        snprintf(err, errlen, "%s.%s: must be a decimal above %s and at most %lld that "
                              "micro-units (1e-6) hold exactly; it is never rounded",
                 path, key, lo, (long long)max_units);
        return -1;
    }
    *dst = x;
    return 0;
}

static int parse_steps(const json_t *st, struct lpol *p, char *err, size_t errlen)
{
    if (opt_dec(st, "policy.steps", "factor", NUM_MICRO, 1000, &p->steps_factor_micro, err,
                errlen) < 0 ||
        opt_int(st, "policy.steps", "max_allocations", 1, 1000000000000LL,
                &p->steps_max_allocations, err, errlen) < 0 ||
        opt_dec(st, "policy.steps", "max_rate_per_s", 0, NUM_MAX_UNITS, &p->steps_max_rate_micro,
                err, errlen) < 0)
        return -1;
    return 0;
}

/* policy.active_sessions: {"on_content_violation": "keep" | "steer_away"}. */
static int parse_sessions(const json_t *as, struct lpol *p, char *err, size_t errlen)
{
    const json_t *v = json_object_get(as, "on_content_violation");
    const char *t = json_string_value(v);
    if (!v || json_is_null(v))
        return 0;
    if (!t || (strcmp(t, "keep") && strcmp(t, "steer_away"))) {
        snprintf(err, errlen, "policy.active_sessions.on_content_violation: must be \"keep\" or "
                              "\"steer_away\"");
        return -1;
    }
    p->sessions_keep = !strcmp(t, "keep");
    return 0;
}

/* policy.loop.content_from: "path" | "step_sessions" (policy.loop's other
 * member, per_allocation_upper, is fb_policy.c's). */
static int parse_loop(const json_t *lo, struct lpol *p, char *err, size_t errlen)
{
    const json_t *v = json_object_get(lo, "content_from");
    const char *t = json_string_value(v);
    if (!v || json_is_null(v))
        return 0;
    if (!t || (strcmp(t, "path") && strcmp(t, "step_sessions"))) {
        snprintf(err, errlen, "policy.loop.content_from: must be \"step_sessions\" or \"path\"");
        return -1;
    }
    p->content_step_sessions = !strcmp(t, "step_sessions");
    p->content_from_named = true;
    return 0;
}

int lpol_parse(const char *json, size_t len, const struct sit_situation *s, struct lpol *p,
               char *err, size_t errlen)
{
    assert(json && s && p);
    defaults(s, p);
    /* Numbers keep their text (num_json_loadb): a decimal is read exactly. */
    json_t *root = num_json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
    if (!root) {
        snprintf(err, errlen, "(json): not readable");
        return -1;
    }
    const json_t *pol = json_object_get(root, "policy");
    int bad = 0;
    const json_t *g = opt_obj(pol, "grant", "policy.grant", &bad, err, errlen);
    const json_t *st = bad ? NULL : opt_obj(pol, "steps", "policy.steps", &bad, err, errlen);
    const json_t *as = bad ? NULL
                           : opt_obj(pol, "active_sessions", "policy.active_sessions", &bad, err,
                                     errlen);
    const json_t *lo = bad ? NULL : opt_obj(pol, "loop", "policy.loop", &bad, err, errlen);
    int rc = bad ? -1 : 0;
    if (rc == 0 && g &&
        (opt_int(g, "policy.grant", "max_decision_age_s", 1, 365 * DAY_S, &p->max_decision_age_s,
                 err, errlen) < 0 ||
         opt_int(g, "policy.grant", "url_ttl_s", 1, 7 * DAY_S, &p->url_ttl_s, err, errlen) < 0 ||
         opt_int(g, "policy.grant", "expected_play_s", 0, 7 * DAY_S, &p->expected_play_s, err,
                 errlen) < 0 ||
         opt_int(g, "policy.grant", "max_burst", 1, TB_MAX_BURST, &p->max_burst, err, errlen) < 0))
        rc = -1;
    if (rc == 0 && st && parse_steps(st, p, err, errlen) < 0)
        rc = -1;
    if (rc == 0 && as && parse_sessions(as, p, err, errlen) < 0)
        rc = -1;
    if (rc == 0 && lo && parse_loop(lo, p, err, errlen) < 0)
        rc = -1;
    json_decref(root);
    return rc;
}

int64_t lpol_grow(int64_t granted, int64_t factor_micro, int64_t ceiling)
{
    assert(granted >= 0 && factor_micro > NUM_MICRO && ceiling >= 0);
    /* floor(granted x factor): 128 bits hold the product exactly. */
    __int128 v = (__int128)granted * factor_micro / NUM_MICRO;
    return v > ceiling ? ceiling : (int64_t)v;
}
