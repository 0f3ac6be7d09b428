/* next_access.c - `next` takes the step's access from availability probes.
 *
 * An observations file without `access` used to leave the next step's
 * access missing, which closed the grant for good (access_missing).  Now,
 * as `decide` does (access_probe.h), the newest probe of the granted path in
 * the grant's channel and rendition, observed at or before the review time,
 * gives it; policy.access.max_age_s still judges its freshness. */
#include "next.h"

#include "access_probe.h"

int nxt_access_fill(const char *evidence_path, const struct grt_grant *g, int64_t now_ms,
                    json_t *obs, json_t **source)
{
    *source = NULL;
    if (json_object_get(obs, "access"))
        return 0; /* a hand-written access wins */
    json_t *c = json_pack("{s:s}", "path_id", g->path_id);
    int f = c ? acp_fill_candidate(evidence_path, c, g->cohort.channel, g->cohort.rendition,
                                   now_ms)
              : -1;
    if (f == 1) {
        json_t *a = json_object_get(c, "access");
        if (json_object_set(obs, "access", a) == 0)
            *source = json_incref(a);
        else
            f = -1;
    }
    json_decref(c);
    return f < 0 ? -1 : 0;
}
