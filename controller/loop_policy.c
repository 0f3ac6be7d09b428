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
    int64_t rate_ceil = (s->action.max_rate_per_s + NUM_MICRO - 1) / NUM_MICRO;
    p->max_decision_age_s = 300;
    p->url_ttl_s = 300;
    p->expected_play_s = 3600;
    p->max_burst = rate_ceil < 1 ? 1 : rate_ceil > TB_MAX_BURST ? TB_MAX_BURST : rate_ceil;
    p->steps_factor = 2;
    p->steps_max_allocations = s->action.max_allocations;
    p->steps_max_rate_micro = s->action.max_rate_per_s;
}

static int parse_steps(const json_t *st, struct lpol *p, char *err, size_t errlen)
{
    if (opt_int(st, "policy.steps", "factor", 2, 1000, &p->steps_factor, err, errlen) < 0 ||
        opt_int(st, "policy.steps", "max_allocations", 1, 1000000000000LL,
                &p->steps_max_allocations, err, errlen) < 0)
        return -1;
    const json_t *r = json_object_get(st, "max_rate_per_s");
    if (r && !json_is_null(r) &&
        (num_from_json(r, NUM_MAX_UNITS, &p->steps_max_rate_micro) != 0 ||
         p->steps_max_rate_micro <= 0)) {
        snprintf(err, errlen, "policy.steps.max_rate_per_s: must be a positive decimal with at "
                              "most 6 decimals");
        return -1;
    }
    return 0;
}

int lpol_parse(const char *json, size_t len, const struct sit_situation *s, struct lpol *p,
               char *err, size_t errlen)
{
    assert(json && s && p);
    defaults(s, p);
    json_t *root = json_loadb(json, len, 0, NULL);
    if (!root) {
        snprintf(err, errlen, "(json): not readable");
        return -1;
    }
    const json_t *pol = json_object_get(root, "policy");
    int bad = 0;
    const json_t *g = opt_obj(pol, "grant", "policy.grant", &bad, err, errlen);
    const json_t *st = bad ? NULL : opt_obj(pol, "steps", "policy.steps", &bad, err, errlen);
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
    json_decref(root);
    return rc;
}
