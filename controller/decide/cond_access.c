/* cond_access.c - the access condition: is the path's access method (signed
 * URLs, host and path scope) compatible?  The situation carries the status
 * of that check; this condition only refuses to use it when it is missing or
 * not fresh (policy.access.max_age_s, default policy.max_evidence_age_s).
 */
#include "cond.h"

#include <string.h>

void cond_access(const struct sit_situation *s, const struct sit_candidate *c, int64_t t_ms,
                 struct cond_result *out)
{
    memset(out, 0, sizeof *out);
    const struct sit_access *a = &c->access;
    out->data = json_pack("{s:I}", "max_age_s", (json_int_t)s->policy.access_max_age_s);
    if (!a->present || !a->has_status || !a->has_observed) {
        cond_set(out, COND_UNKNOWN, "access_missing", "no dated access check for path %s",
                 c->path_id);
        return;
    }
    json_object_set_new(out->data, "given_status", json_string(cond_status_name(a->status)));
    json_object_set_new(out->data, "observed_at_ms", json_integer(a->observed_at_ms));
    int age = cond_freshness(t_ms, a->observed_at_ms, s->policy.access_max_age_s);
    if (age == 1)
        cond_set(out, COND_UNKNOWN, "access_after_decision_time",
                 "the access check was observed after the decision time");
    else if (age == 2)
        cond_set(out, COND_UNKNOWN, "access_stale", "the access check is %lld s old (max %lld s)",
                 (long long)((t_ms - a->observed_at_ms) / 1000),
                 (long long)s->policy.access_max_age_s);
    else if (a->status == COND_PASS)
        cond_set(out, COND_PASS, "access_compatible", "the access check passed");
    else if (a->status == COND_VIOLATION)
        cond_set(out, COND_VIOLATION, "access_incompatible", "the access check failed");
    else
        cond_set(out, COND_UNKNOWN, "access_unknown", "the access check reported UNKNOWN");
}
